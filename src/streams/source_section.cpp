#include "streams/source_section.hpp"

#include <string>

#include "factz/io.hpp"
#include "streams/stream_common.hpp"

namespace factz::detail {

std::vector<uint64_t> record_grid(uint64_t nx, uint64_t ny, uint64_t nz, int ndims) {
  return ndims == 3 ? std::vector<uint64_t>{nz, ny, nx} : std::vector<uint64_t>{ny, nx};
}

Status check_source_bytes(std::span<const uint8_t> source, int components, std::span<const uint64_t> whole,
                          const std::string& what) {
  if (source.empty()) return Status::Ok();
  auto record = decode_source_record(source);
  if (!record.ok()) return invalid_argument(what + ": " + record.status().message());
  const Status s = check_source_record(record.value(), components, whole);
  if (!s.ok()) return invalid_argument(what + ": " + s.message());
  return Status::Ok();
}

Status check_source_option(int64_t nx, int64_t ny, const Options& o) {
  return check_source_bytes(o.source, 2, record_grid(uint64_t(nx), uint64_t(ny), 1, 2), "Options::source");
}

void append_source_section(std::span<const uint8_t> source, std::vector<Section>& sections) {
  if (source.empty()) return;
  sections.push_back({kSectionSource, std::vector<uint8_t>(source.begin(), source.end())});
}

namespace {

/// The decoded record of a parsed stream's source section (none without one), checked
/// against the header's grid.
Result<std::optional<SourceRecord>> read_source(std::span<const uint8_t> stream, const ParsedContainer& pc) {
  if (!has_section(pc, kSectionSource)) return std::optional<SourceRecord>();
  auto raw = read_section(stream, pc, kSectionSource, &zstd_stage_decompressor());
  if (!raw.ok()) return raw.status();
  auto record = decode_source_record(raw.value());
  if (!record.ok()) return record.status();
  // Version 20 holds a record of version 3, version 19 one of version 2, earlier versions one
  // of version 1.
  const uint8_t want = source_record_version(pc.format_version());  // 0: the record's own, 2 to 4
  if (want == 0 ? record->version < 2 : record->version != want)
    return corrupt_stream("section 12 (source): a record of version " + std::to_string(record->version) +
                          " in a stream of format version " + std::to_string(pc.format_version()) + " (which holds " +
                          std::to_string(want) + ")");
  const auto& h = pc.header;
  const Status s = check_source_record(record.value(), h.components, record_grid(h.nx, h.ny, h.nz, h.ndims));
  if (!s.ok()) return corrupt_stream("section 12 (source): " + s.message());
  return std::optional<SourceRecord>(std::move(record).value());
}

}  // namespace

Status check_source_section(std::span<const uint8_t> stream, const ParsedContainer& pc) {
  return read_source(stream, pc).status();
}

}  // namespace factz::detail

namespace factz {

Result<std::optional<SourceRecord>> stream_source(std::span<const uint8_t> stream) {
  auto parsed = detail::parse_container(stream);
  if (!parsed.ok()) return parsed.status();
  return detail::read_source(stream, parsed.value());
}

}  // namespace factz
