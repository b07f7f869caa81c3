// A stream rebuilt by the container writer from its own sections (zstd stage undone) with a
// changed header or changed sections: right checksums around forged contents, so that a test
// reaches the mode decoders' checks instead of stopping at a CRC mismatch. Header-only.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "format/container.hpp"
#include "format/crc32.hpp"
#include "streams/stream_common.hpp"

namespace factz::testing {

/// `stream` in the classic container (versions 1 to 17: the 64-byte header and 40-byte table
/// entries at the offsets docs/format.md gives), the same header fields and section bytes:
/// what a test that forges header or table bytes at those offsets works on. The writer writes
/// the compact container (version 18); both are read.
inline std::vector<uint8_t> classic(std::span<const uint8_t> stream) {
  auto r = detail::recontain(stream, detail::ContainerLayout::classic);
  if (!r.ok()) throw std::runtime_error("classic: " + r.status().to_string());
  return std::move(r.value());
}

/// `stream` in the compact container (version 18), the same header fields and section bytes:
/// what compress writes today for the input of a classic golden stream whose sections did not
/// change, so that comparing with it pins every section byte for byte.
inline std::vector<uint8_t> compact(std::span<const uint8_t> stream) {
  auto r = detail::recontain(stream, detail::ContainerLayout::compact);
  if (!r.ok()) throw std::runtime_error("compact: " + r.status().to_string());
  return std::move(r.value());
}

/// The parsed header of a valid stream (either container).
inline detail::Header header_of(std::span<const uint8_t> stream) {
  auto r = detail::parse_container(stream);
  if (!r.ok()) throw std::runtime_error("header_of: " + r.status().to_string());
  return r->header;
}

/// The layout version of a valid stream's sections (2 to 17; in a compact stream the byte
/// after the version 18, in a classic one the version itself).
inline uint16_t layout_version(std::span<const uint8_t> stream) { return header_of(stream).version; }

/// Writes the header checksum (bytes 60-63: CRC-32C of bytes 0-59, little-endian) of `stream`
/// again after a test changed header bytes in place, for headers the container writer refuses
/// to write (resealed below cannot make them).
inline void reseal_header_crc(std::vector<uint8_t>& stream) {
  if (stream.size() < 64) throw std::runtime_error("reseal_header_crc: shorter than a header");
  const uint32_t crc = detail::crc32c(std::span<const uint8_t>(stream.data(), 60));
  for (int b = 0; b < 4; ++b) stream[size_t(60 + b)] = uint8_t(crc >> (8 * b));
}

/// `stream` (a valid stream) with `change(header, sections)` applied, re-sealed; the sections
/// are handed over raw, in table order.
template <class Change>
std::vector<uint8_t> resealed(std::span<const uint8_t> stream, Change change) {
  auto pc = detail::parse_container(stream);
  if (!pc.ok()) throw std::runtime_error("resealed: " + pc.status().to_string());
  std::vector<detail::Section> sections;
  for (const auto& e : pc->entries) {
    auto raw = detail::read_section(stream, pc.value(), e.id, &detail::zstd_stage_decompressor());
    if (!raw.ok()) throw std::runtime_error("resealed: " + raw.status().to_string());
    sections.push_back({e.id, std::move(raw.value())});
  }
  detail::Header h = pc->header;
  change(h, sections);
  auto out = detail::write_container(h, std::move(sections), nullptr);
  if (!out.ok()) throw std::runtime_error("resealed: " + out.status().to_string());
  return std::move(out.value());
}

}  // namespace factz::testing
