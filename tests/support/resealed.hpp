// A stream rebuilt by the container writer from its own sections (zstd stage undone) with a
// changed header or changed sections: right checksums around forged contents, so that a test
// reaches the mode decoders' checks instead of stopping at a CRC mismatch. Header-only.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "format/container.hpp"
#include "streams/stream_common.hpp"

namespace factz::testing {

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
