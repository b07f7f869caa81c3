// factz info: describes every file factz writes, recognised by its magic: a FaCTz stream
// (FCTZ: a vector or scalar field; header, sections, source record), a multi-block file
// (FZMB: layout, bound, every block's stream), a flow field stream (FZFS) and a flow basis
// (FZFB). Everything is read through the parsers of the library (format/container.hpp,
// factz/multiblock.hpp, factz/multiblock3d.hpp, factz/flow.hpp), so info accepts exactly what the decoders accept.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "common.hpp"
#include "factz/flow.hpp"
#include "factz/io.hpp"
#include "factz/multiblock.hpp"
#include "factz/multiblock3d.hpp"
#include "format/container.hpp"
#include "streams/stream_common.hpp"
#include "streams/vector3d_stream.hpp"
#include "streams/vector_stream.hpp"
#include "util/number_text.hpp"

namespace {

using factz::cli::Args;
using factz::cli::Command;
using factz::cli::fail;
using factz::cli::StatsWriter;
using factz::cli::take;
using Bytes = std::vector<uint8_t>;

const Command kSpec{
    "info",
    "Describe a file factz writes: a FaCTz stream (vector or scalar field: header, sections, source record), a "
    "multi-block file (layout, bound, every block), a flow field stream or a flow basis.",
    "factz info -z IN [--basis BASIS] [--json]",
    {{"-z", 1, "FILE", "the file (stream, .fzmb, flow stream or basis); '-' reads stdin"},
     {"--basis", 1, "FILE",
      "flow field streams: the basis file they were compressed with; checks the stream against it (checksum, "
      "fingerprint) and counts its coefficients"},
     {"--json", 0, "", "print one JSON object on stdout"},
     {"--help", 0, "", "show this help"},
     {"-h", 0, "", "show this help"}}};

using factz::detail::shortest;

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char* mode_name(uint8_t m) {
  namespace d = factz::detail;
  switch (m) {
    case d::kModeNone: return "none";
    case d::kModeBlock: return "block";
    case d::kModeSpeculative: return "speculative";
    case d::kModeContourTree: return "contour-tree";
  }
  return "unknown";
}
const char* coder_name(uint8_t c) {
  return c == factz::detail::kCoderAns       ? "ans"
         : c == factz::detail::kCoderHuffman ? "huffman"
         : c == factz::detail::kCoderContext ? "context"
                                             : "unknown";
}
const char* bound_name(uint8_t b) { return b == factz::detail::kBoundRel ? "REL" : b == factz::detail::kBoundAbs ? "ABS" : "unknown"; }

std::string field_kind(const factz::detail::Header& h) {
  if (h.components == 2) return "2D vector field (u, v)";
  if (h.components == 3) return "3D vector field (u, v, w)";
  return std::to_string(int(h.ndims)) + "D scalar field";
}

/// Text lines "  key   value", aligned as describe_container aligns them.
struct Lines {
  std::string text;
  Lines& add(const std::string& key, const std::string& value) {
    char line[512];
    std::snprintf(line, sizeof line, "  %-15s %s\n", key.c_str(), value.c_str());
    text += line;
    return *this;
  }
};

std::string ratio_text(double raw, double stored) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f (ratio %.4g)", raw, stored > 0 ? raw / stored : 0.0);
  return buf;
}

// ---- FCTZ: one stream ---------------------------------------------------------------------

/// The absolute bound of a vector stream as its decoder uses it: a float64 stream's f64
/// bound (meta section), not the header's f32 rounding of it.
double vector_bound(std::span<const uint8_t> stream, const factz::detail::ParsedContainer& pc) {
  if (pc.header.dtype != factz::detail::kDtypeFloat64) return pc.header.eb;
  return take(factz::detail::stream_bound(stream, pc, &factz::detail::zstd_stage_decompressor()));
}

/// The predictor and choices of a 3D speculative stream (nothing for other streams); a
/// damaged meta section is the decoder's error.
std::optional<factz::detail::Speculative3DChoices> choices3d(const Bytes& bytes,
                                                             const factz::detail::ParsedContainer& pc) {
  const auto& h = pc.header;
  if (h.components != 3 || h.ndims != 3 || h.mode != factz::detail::kModeSpeculative) return std::nullopt;
  return take(factz::detail::speculative3d_choices(bytes, pc));
}

/// Phase components predicted along one axis, and phase components whose codes are transformed.
std::pair<int64_t, int64_t> choice_counts(const factz::detail::Speculative3DChoices& c) {
  int64_t axes = 0, transforms = 0;
  for (uint8_t a : c.along) axes += a != 0;
  for (uint8_t t : c.transforms) transforms += t != 0;
  return {axes, transforms};
}

std::string predictor_text(const factz::detail::Speculative3DChoices& c) {
  if (c.predictor != factz::detail::kPredictor3DChosen) return "1 (cubic, the mean of each phase's axes)";
  const auto [axes, transforms] = choice_counts(c);
  return "2 (per-phase choices: " + std::to_string(axes) + " of " + std::to_string(c.along.size()) +
         " phase components along one axis, " + std::to_string(transforms) + " with transformed codes)";
}

/// A source record in --json: its format, file and variables (null without one).
std::string source_json(const std::optional<factz::SourceRecord>& source) {
  if (!source) return "null";
  std::string vars = "[";
  for (size_t k = 0; k < source->components.size(); ++k) vars += (k ? ", " : "") + quoted(source->components[k].name);
  return "{\"format\": " + quoted(factz::source_format_name(source->format)) + ", \"file\": " + quoted(source->file) +
         ", \"variables\": " + vars + "]}";
}

/// The "source record" line of a multi-block file's info (versions 5 to 8), or nothing.
template <class Index>
void add_trailer_line(Lines& l, const Index& index, const Bytes& bytes) {
  if (!index.has_source) return;
  const bool zstd = bytes[size_t(index.blocks_end + 8)] == 1;
  l.add("source record", std::to_string(index.file_bytes - index.blocks_end) + " bytes after the last block (" +
                             (zstd ? "zstd" : "raw") + "; file version " +
                             std::to_string(unsigned(bytes[4]) | unsigned(bytes[5]) << 8) + ")");
}

/// The version at offset 4 of the block stream at `offset` of a multi-block file (18 for a
/// compact container; its header fields were checked by the scan).
unsigned block_format_version(const Bytes& bytes, uint64_t offset) {
  return offset + 6 <= bytes.size() ? unsigned(bytes[offset + 4]) | unsigned(bytes[offset + 5]) << 8 : 0;
}

int info_stream(const Bytes& bytes, bool json) {
  const auto parsed = take(factz::detail::parse_container(bytes));
  const auto source = take(factz::stream_source(bytes));
  const auto& h = parsed.header;
  const double value_bytes = h.dtype == factz::detail::kDtypeFloat64 ? 8.0 : 4.0;
  const double raw = double(h.nx) * double(h.ny) * double(h.nz) * double(h.components) * value_bytes;
  if (!json) {
    std::string d = factz::detail::describe_container(parsed);
    const size_t first = d.find('\n') + 1;  // after "FaCTz stream (magic FCTZ), format version N"
    Lines extra;
    extra.add("field", field_kind(h)).add("raw bytes", ratio_text(raw, double(bytes.size())));
    if (const auto c = choices3d(bytes, parsed)) extra.add("predictor", predictor_text(*c));
    std::cout << d.substr(0, first) << extra.text << d.substr(first);
    if (source) std::cout << factz::describe_source_record(*source);
    return 0;
  }
  StatsWriter s, sections;
  std::ostringstream list;
  list << "[";
  for (size_t k = 0; k < parsed.entries.size(); ++k) {
    const auto& e = parsed.entries[k];
    StatsWriter one;
    one.count("id", e.id).text("name", factz::detail::section_name(e.id)).count("stored_bytes", e.stored_size);
    one.count("raw_bytes", e.raw_size).flag("zstd", (e.flags & factz::detail::kSectionFlagZstd) != 0);
    one.count("shuffle", factz::detail::shuffle_width(e.flags));  // byte-shuffle width, 0: none
    one.count("crc32c", e.crc);
    list << (k ? ", " : "") << one.object();
  }
  list << "]";
  s.text("kind", "stream").text("field", h.components >= 2 ? "vector" : "scalar").count("format_version", parsed.format_version());
  s.count("layout_version", h.version).text("container", parsed.layout == factz::detail::ContainerLayout::compact ? "compact" : "classic");
  s.count("stream_bytes", bytes.size()).text("dtype", h.dtype == factz::detail::kDtypeFloat32 ? "float32" : h.dtype == factz::detail::kDtypeFloat64 ? "float64" : "unknown");
  s.count("ndims", h.ndims).count("nx", h.nx).count("ny", h.ny).count("nz", h.nz).count("components", h.components);
  s.text("mode", mode_name(h.mode)).text("coder", coder_name(h.coder)).text("bound_mode", bound_name(h.bound_mode));
  const double eb = h.components == 2 ? vector_bound(bytes, parsed) : double(h.eb);
  s.num("bound", h.bound_value).num("eb_abs", eb).count("tile", h.tile).count("anchor_stride", h.anchor_stride);
  s.flag("zstd", (h.flags & factz::detail::kHeaderFlagZstd) != 0).num("raw_bytes", raw);
  s.num("ratio", raw / double(bytes.size()));
  if (const auto c = choices3d(bytes, parsed)) {
    const auto [axes, transforms] = choice_counts(*c);
    s.count("predictor", c->predictor).count("axis_choices", axes).count("code_transforms", transforms);
  }
  s.json("sections", list.str());
  s.json("source", source_json(source));
  std::cout << s.object() << "\n";
  return 0;
}

// ---- FZMB: a multi-block file -------------------------------------------------------------

/// Every block stream of a multi-block file (2D or 3D index), parsed in block order.
struct BlockScan {
  std::vector<factz::detail::Header> headers;
  std::vector<double> eb;  ///< each block's absolute bound (a float64 block's f64 one)
  std::string modes, coders;  ///< of all blocks, each once, in order of first use
  double eb_max = 0;
};
/// Parses every block stream of `index`; with `vector3d` (a 3D file) each must be a 3D vector
/// stream.
template <class Index>
BlockScan scan_blocks(const Bytes& bytes, const Index& index, bool vector3d) {
  BlockScan scan;
  for (int b = 0; b < index.layout.count(); ++b) {
    const auto& e = index.entries[size_t(b)];
    const std::span<const uint8_t> stream(bytes.data() + e.offset, e.length);
    auto parsed = factz::detail::parse_container(stream);
    if (!parsed.ok()) fail(parsed.status().to_string() + " (block " + std::to_string(b) + " of the multi-block file)");
    const auto& h = parsed->header;
    if (vector3d && h.components != 3)
      fail("corrupt_stream: block " + std::to_string(b) + " is not a 3D vector stream");
    scan.headers.push_back(h);
    scan.eb.push_back(vector_bound(stream, parsed.value()));
    if (scan.modes.find(mode_name(h.mode)) == std::string::npos)
      scan.modes += std::string(scan.modes.empty() ? "" : ", ") + mode_name(h.mode);
    if (scan.coders.find(coder_name(h.coder)) == std::string::npos)
      scan.coders += std::string(scan.coders.empty() ? "" : ", ") + coder_name(h.coder);
    scan.eb_max = std::max(scan.eb_max, scan.eb.back());
  }
  return scan;
}

int info_multiblock(const Bytes& bytes, bool json) {
  const auto index = take(factz::parse_multiblock_index(bytes, bytes.size()));
  const auto source = take(factz::multiblock_source(bytes));
  const auto& L = index.layout;
  const BlockScan scan = scan_blocks(bytes, index, false);
  const std::string& modes = scan.modes;
  const std::string& coders = scan.coders;
  const double eb = scan.eb_max;
  const bool f64 = index.dtype == factz::DType::float64;
  const double raw = double(L.nx) * double(L.ny) * (f64 ? 16.0 : 8.0);  // u and v
  if (json) {
    std::ostringstream list;
    list << "[";
    for (int b = 0; b < L.count(); ++b) {
      const auto& x = L.blocks[size_t(b)];
      const auto& h = scan.headers[size_t(b)];
      StatsWriter one;
      one.count("block", b).count("x0", x.x0).count("y0", x.y0).count("nx", x.nx).count("ny", x.ny);
      one.count("offset", index.entries[size_t(b)].offset).count("bytes", index.entries[size_t(b)].length);
      one.text("mode", mode_name(h.mode)).text("coder", coder_name(h.coder)).num("eb_abs", scan.eb[size_t(b)]);
      one.count("format_version", block_format_version(bytes, index.entries[size_t(b)].offset)).count("layout_version", h.version);
      list << (b ? ", " : "") << one.object();
    }
    list << "]";
    StatsWriter s;
    s.text("kind", "multiblock").text("field", "vector").text("dtype", f64 ? "float64" : "float32");
    s.count("file_bytes", bytes.size());
    s.count("header_bytes", index.header_bytes).count("nx", L.nx).count("ny", L.ny).count("px", L.px).count("py", L.py);
    s.count("blocks", L.count()).text("bound_mode", bound_name(index.bound_mode)).num("bound", index.bound_value);
    s.num("eb_abs", eb).text("mode", modes).text("coder", coders).num("raw_bytes", raw);
    s.num("ratio", raw / double(bytes.size())).json("block_list", list.str()).json("source", source_json(source));
    std::cout << s.object() << "\n";
    return 0;
  }
  Lines l;
  l.add("file bytes", std::to_string(bytes.size()));
  l.add("field", "2D vector field (u, v), nx=" + std::to_string(L.nx) + " ny=" + std::to_string(L.ny) + ", " +
                     (f64 ? "float64" : "float32"));
  l.add("blocks", std::to_string(L.px) + " x " + std::to_string(L.py) + " = " + std::to_string(L.count()) +
                      " (shared boundary rows and columns stored exactly)");
  l.add("bound", std::string(bound_name(index.bound_mode)) + " " + shortest(index.bound_value) + " (eb " +
                     shortest(eb) + " absolute, the same in every block)");
  l.add("mode", modes).add("coder", coders);
  l.add("raw bytes", ratio_text(raw, double(bytes.size())));
  l.add("index bytes", std::to_string(index.header_bytes));
  add_trailer_line(l, index, bytes);
  std::string out = "FaCTz multi-block file (magic FZMB)\n" + l.text;
  char line[256];
  std::snprintf(line, sizeof line, "    %5s %8s %8s %8s %8s %14s %12s  %-11s %-7s %s\n", "block", "x0", "y0", "nx", "ny",
                "offset", "bytes", "mode", "coder", "eb");
  out += line;
  for (int b = 0; b < L.count(); ++b) {
    const auto& x = L.blocks[size_t(b)];
    const auto& h = scan.headers[size_t(b)];
    std::snprintf(line, sizeof line, "    %5d %8lld %8lld %8lld %8lld %14llu %12llu  %-11s %-7s %s\n", b,
                  static_cast<long long>(x.x0), static_cast<long long>(x.y0), static_cast<long long>(x.nx),
                  static_cast<long long>(x.ny), static_cast<unsigned long long>(index.entries[size_t(b)].offset),
                  static_cast<unsigned long long>(index.entries[size_t(b)].length), mode_name(h.mode),
                  coder_name(h.coder), shortest(scan.eb[size_t(b)]).c_str());
    out += line;
  }
  std::cout << out;
  if (source) std::cout << factz::describe_source_record(*source);
  return 0;
}

// ---- FZMB version 3: a multi-block file of a 3D vector field ------------------------------

int info_multiblock3d(const Bytes& bytes, bool json) {
  const auto index = take(factz::parse_multiblock3d_index(bytes, bytes.size()));
  const auto source = take(factz::multiblock_source(bytes));
  const auto& L = index.layout;
  const BlockScan scan = scan_blocks(bytes, index, true);
  const std::vector<factz::detail::Header>& headers = scan.headers;
  const std::vector<double>& block_eb = scan.eb;
  const std::string& modes = scan.modes;
  const std::string& coders = scan.coders;
  const double eb = scan.eb_max;
  const bool f64 = index.dtype == factz::DType::float64;
  const double raw = double(L.nx) * double(L.ny) * double(L.nz) * (f64 ? 24.0 : 12.0);  // u, v and w
  if (json) {
    std::ostringstream list;
    list << "[";
    for (int b = 0; b < L.count(); ++b) {
      const auto& x = L.blocks[size_t(b)];
      const auto& h = headers[size_t(b)];
      StatsWriter one;
      one.count("block", b).count("x0", x.x0).count("y0", x.y0).count("z0", x.z0);
      one.count("nx", x.nx).count("ny", x.ny).count("nz", x.nz);
      one.count("offset", index.entries[size_t(b)].offset).count("bytes", index.entries[size_t(b)].length);
      one.text("mode", mode_name(h.mode)).text("coder", coder_name(h.coder)).num("eb_abs", block_eb[size_t(b)]);
      one.count("format_version", block_format_version(bytes, index.entries[size_t(b)].offset)).count("layout_version", h.version);
      list << (b ? ", " : "") << one.object();
    }
    list << "]";
    StatsWriter s;
    s.text("kind", "multiblock").text("field", "vector3d").text("dtype", f64 ? "float64" : "float32");
    s.count("file_bytes", bytes.size()).count("header_bytes", index.header_bytes);
    s.count("nx", L.nx).count("ny", L.ny).count("nz", L.nz).count("px", L.px).count("py", L.py).count("pz", L.pz);
    s.count("blocks", L.count()).text("bound_mode", bound_name(index.bound_mode)).num("bound", index.bound_value);
    s.num("eb_abs", eb).text("mode", modes).text("coder", coders).num("raw_bytes", raw);
    s.num("ratio", raw / double(bytes.size())).json("block_list", list.str()).json("source", source_json(source));
    std::cout << s.object() << "\n";
    return 0;
  }
  Lines l;
  l.add("file bytes", std::to_string(bytes.size()));
  l.add("field", "3D vector field (u, v, w), nx=" + std::to_string(L.nx) + " ny=" + std::to_string(L.ny) +
                     " nz=" + std::to_string(L.nz) + ", " + (f64 ? "float64" : "float32"));
  l.add("blocks", std::to_string(L.px) + " x " + std::to_string(L.py) + " x " + std::to_string(L.pz) + " = " +
                      std::to_string(L.count()) + " (shared boundary planes stored exactly)");
  l.add("bound", std::string(bound_name(index.bound_mode)) + " " + shortest(index.bound_value) + " (eb " +
                     shortest(eb) + " absolute, the same in every block)");
  l.add("mode", modes).add("coder", coders);
  l.add("raw bytes", ratio_text(raw, double(bytes.size())));
  l.add("index bytes", std::to_string(index.header_bytes));
  add_trailer_line(l, index, bytes);
  const unsigned version = unsigned(bytes[4]) | unsigned(bytes[5]) << 8;  // 3 or 4, 7 or 8 with a source record
  std::string out = std::string("FaCTz multi-block file (magic FZMB, version ") + std::to_string(version) +
                    (f64 ? ": 3D float64" : ": 3D") +
                    ")\n" + l.text;
  char line[256];
  std::snprintf(line, sizeof line, "    %5s %7s %7s %7s %7s %7s %7s %12s %10s  %-11s %-7s %s\n", "block", "x0", "y0",
                "z0", "nx", "ny", "nz", "offset", "bytes", "mode", "coder", "eb");
  out += line;
  for (int b = 0; b < L.count(); ++b) {
    const auto& x = L.blocks[size_t(b)];
    const auto& h = headers[size_t(b)];
    std::snprintf(line, sizeof line, "    %5d %7lld %7lld %7lld %7lld %7lld %7lld %12llu %10llu  %-11s %-7s %s\n", b,
                  static_cast<long long>(x.x0), static_cast<long long>(x.y0), static_cast<long long>(x.z0),
                  static_cast<long long>(x.nx), static_cast<long long>(x.ny), static_cast<long long>(x.nz),
                  static_cast<unsigned long long>(index.entries[size_t(b)].offset),
                  static_cast<unsigned long long>(index.entries[size_t(b)].length), mode_name(h.mode),
                  coder_name(h.coder), shortest(block_eb[size_t(b)]).c_str());
    out += line;
  }
  std::cout << out;
  if (source) std::cout << factz::describe_source_record(*source);
  return 0;
}

// ---- FZFS and FZFB: flow files ------------------------------------------------------------

factz::flow::Basis read_basis(const std::string& path) {
  const auto bytes = take(factz::read_bytes(path));
  auto basis = factz::flow::parse_basis(bytes);
  if (!basis.ok()) fail(basis.status().to_string() + " (--basis " + path + ")");
  return std::move(basis).value();
}

int info_flow_stream(const Args& a, const Bytes& bytes, bool json) {
  const double tolerance = take(factz::flow::stream_tolerance(bytes));
  int64_t coefficients = -1;
  if (a.has("--basis")) {
    const auto basis = read_basis(a.get("--basis"));
    coefficients = int64_t(take(factz::flow::decode_coefficients(basis, bytes)).size());
  }
  if (json) {
    StatsWriter s;
    s.text("kind", "flow_stream").count("stream_bytes", bytes.size()).num("tolerance", tolerance);
    s.flag("checked_against_basis", coefficients >= 0);
    if (coefficients >= 0) s.count("coefficients", coefficients);
    std::cout << s.object() << "\n";
    return 0;
  }
  Lines l;
  l.add("stream bytes", std::to_string(bytes.size()));
  l.add("tolerance", shortest(tolerance) + " (max-abs error of the stored coefficients)");
  if (coefficients >= 0)
    l.add("coefficients", std::to_string(coefficients) + " (checksum and basis fingerprint match " + a.get("--basis") + ")");
  else
    l.add("basis", "not given: --basis FILE checks the stream against its basis and counts its coefficients");
  std::cout << "FaCTz flow field stream (magic FZFS; factz flow compress)\n" << l.text;
  return 0;
}

int info_flow_basis(const Bytes& bytes, bool json) {
  const auto basis = take(factz::flow::parse_basis(bytes));
  std::string periods;
  bool periodic = false;
  for (size_t k = 0; k < basis.periods.size(); ++k) {
    periods += (k ? ", " : "") + shortest(basis.periods[k]);
    periodic = periodic || basis.periods[k] != 0;
  }
  char fingerprint[32];
  std::snprintf(fingerprint, sizeof fingerprint, "0x%016llx", static_cast<unsigned long long>(basis.fingerprint()));
  if (json) {
    std::ostringstream list;
    list << "[";
    for (size_t b = 0; b < basis.blocks.size(); ++b) {
      const auto& k = basis.blocks[b];
      StatsWriter one;
      one.count("terms", k.kernel.size()).count("centers", k.centers.size()).count("rank", k.rank);
      one.flag("weight_map", !k.weight_map.empty()).flag("orthonormal", k.orthonormal);
      list << (b ? ", " : "") << one.object();
    }
    list << "]";
    StatsWriter s;
    s.text("kind", "flow_basis").count("file_bytes", bytes.size()).count("dim", basis.dim).count("nodes", basis.n);
    s.text("method", factz::flow::method_name(basis.method)).json("periods", "[" + periods + "]");
    s.count("blocks", basis.blocks.size()).count("coefficients", basis.coefficients()).text("fingerprint", fingerprint);
    s.json("block_list", list.str());
    std::cout << s.object() << "\n";
    return 0;
  }
  Lines l;
  l.add("file bytes", std::to_string(bytes.size()));
  l.add("dimension", std::to_string(basis.dim)).add("nodes", std::to_string(basis.n));
  l.add("method", factz::flow::method_name(basis.method));
  l.add("periods", periodic ? periods : "none");
  l.add("blocks", std::to_string(basis.blocks.size())).add("coefficients", std::to_string(basis.coefficients()));
  l.add("fingerprint", fingerprint);
  std::string out = "FaCTz flow basis (magic FZFB; factz flow basis)\n" + l.text;
  char line[256];
  std::snprintf(line, sizeof line, "    %5s %6s %9s %9s  %-10s %s\n", "block", "terms", "centers", "rank", "map",
                "orthonormal");
  out += line;
  for (size_t b = 0; b < basis.blocks.size(); ++b) {
    const auto& k = basis.blocks[b];
    std::snprintf(line, sizeof line, "    %5zu %6zu %9zu %9lld  %-10s %s\n", b, k.kernel.size(), k.centers.size(),
                  static_cast<long long>(k.rank), k.weight_map.empty() ? "identity" : "weights",
                  k.orthonormal ? "yes" : "no");
    out += line;
  }
  std::cout << out;
  return 0;
}

// ---- Anything else ------------------------------------------------------------------------

[[noreturn]] void refuse(const std::string& name, const Bytes& bytes) {
  const std::string known =
      "factz writes FCTZ streams, FZMB multi-block files, FZFS flow field streams and FZFB flow bases";
  if (bytes.empty()) fail("corrupt_stream: " + name + " is empty; " + known);
  if (bytes.size() < 4)
    fail("corrupt_stream: " + name + " holds " + std::to_string(bytes.size()) + " byte(s), too few for a magic; " + known);
  auto starts = [&](const char* magic, size_t n) {
    return bytes.size() >= n && std::equal(bytes.begin(), bytes.begin() + int64_t(n), reinterpret_cast<const uint8_t*>(magic));
  };
  std::string what;
  if (starts("\x93NUMPY", 6)) what = "a NumPy .npy array (a field: compress it with factz compress)";
  else if (starts("CDF", 3)) what = "a netCDF-3 file (a field: compress a variable with factz compress -i FILE:VAR)";
  else if (starts("\x89HDF\r\n\x1a\n", 8))
    what = "an HDF5 or netCDF-4 file (a field: compress a variable with factz compress -i FILE:VAR)";
  else if (starts("\x89PNG", 4)) what = "a PNG image";
  char magic[64];
  std::snprintf(magic, sizeof magic, "0x%02x 0x%02x 0x%02x 0x%02x", bytes[0], bytes[1], bytes[2], bytes[3]);
  fail("corrupt_stream: " + name + " is not a file factz writes: bad magic " + magic +
       (what.empty() ? "" : ", " + what) + "; " + known);
}

int run(const Args& a) {
  if (!a.has("-z")) fail("missing -z IN", 2);
  const bool json = a.has("--json");
  const std::string name = a.get("-z");
  const Bytes bytes = take(factz::read_bytes(name));
  auto magic = [&](const char* m) { return bytes.size() >= 4 && std::equal(bytes.begin(), bytes.begin() + 4, m); };
  const bool flow_stream = magic("FZFS");
  if (a.has("--basis") && !flow_stream)
    fail("--basis applies to flow field streams (magic FZFS); " + name + " is not one", 2);
  if (magic("FCTZ")) return info_stream(bytes, json);
  if (factz::is_multiblock3d(bytes)) return info_multiblock3d(bytes, json);
  if (factz::is_multiblock(bytes)) return info_multiblock(bytes, json);
  if (flow_stream) return info_flow_stream(a, bytes, json);
  if (magic("FZFB")) return info_flow_basis(bytes, json);
  refuse(name, bytes);
}

const bool kRegistered = factz::cli::register_command(&kSpec, &run);

}  // namespace
