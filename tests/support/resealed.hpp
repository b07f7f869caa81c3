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
