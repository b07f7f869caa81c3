// factz convert: a FaCTz stream (magic FCTZ) in the other container (docs/format.md,
// "Compact container"). Every stream this build writes is format version 18, the compact
// container, which builds that read up to version 17 refuse as unsupported; `--container
// classic` writes the same header fields and section bytes in the classic container they
// read (64-byte header, 40-byte entries: about 200 bytes more). The values the stream decodes
// to do not change. Multi-block files hold one stream per block and are not converted here.
#include <iostream>
#include <string>

#include "common.hpp"
#include "factz/io.hpp"
#include "factz/multiblock.hpp"
#include "factz/multiblock3d.hpp"
#include "format/container.hpp"
#include "stats_writer.hpp"

namespace {

using factz::cli::Args;
using factz::cli::Command;
using factz::cli::fail;
using factz::cli::take;
using factz::detail::ContainerLayout;

const Command kSpec{
    "convert",
    "Write a FaCTz stream in the classic container that builds before format version 18 read, or back in the "
    "compact one: the same header fields and section bytes, the same decoded values.",
    "factz convert -z IN -o OUT --container classic|compact [--json]",
    {{"-z", 1, "IN", "a FaCTz stream (magic FCTZ; '-' reads stdin)"},
     {"-o", 1, "OUT", "the converted stream"},
     {"--container", 1, "KIND",
      "classic (versions 1 to 17: what builds that read up to version 17 take; a version 19, 20 or 21 stream has "
      "no classic form) | compact (version 18, or 19 for a stream with a source record, 20 when it keeps "
      "auxiliary variables: what factz compress writes)"},
     {"--json", 0, "", "print one JSON object on stdout"},
     {"--help", 0, "", "show this help"},
     {"-h", 0, "", "show this help"}}};

int run(const Args& a) {
  if (!a.has("-z")) fail("missing -z IN", 2);
  if (!a.has("-o")) fail("missing -o OUT", 2);
  if (!a.has("--container")) fail("missing --container classic|compact", 2);
  const std::string kind = a.get("--container");
  if (kind != "classic" && kind != "compact")
    fail("--container takes classic or compact, got '" + kind + "'", 2);
  const std::string in = a.get("-z"), out = a.get("-o");
  const auto bytes = take(factz::read_bytes(in));
  if (factz::is_multiblock(bytes) || factz::is_multiblock3d(bytes))
    fail(in + " is a multi-block file (FZMB): convert takes one stream (FCTZ); its blocks are not converted", 2);
  const auto parsed = take(factz::detail::parse_container(bytes));
  const bool classic = kind == "classic";
  const auto converted =
      take(factz::detail::recontain(bytes, classic ? ContainerLayout::classic : ContainerLayout::compact));
  factz::cli::check(factz::write_bytes(out, converted));
  // The same header in the other container: a classic one carries the layout version itself.
  const unsigned layout = parsed.header.version;
  factz::cli::StatsWriter s;
  const unsigned version = take(factz::detail::parse_container(converted)).format_version();
  s.text("container", kind).count("format_version", version);
  s.count("layout_version", layout).count("bytes_in", bytes.size()).count("bytes_out", converted.size());
  s.count("format_version_in", parsed.format_version());
  std::cout << (a.has("--json") ? s.object() : s.line()) << "\n";
  return 0;
}

const bool kRegistered = factz::cli::register_command(&kSpec, &run);

}  // namespace
