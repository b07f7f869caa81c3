// The compact container (format versions 18 to 21, docs/format.md "Compact container") read from
// the bytes the way docs/format.md gives them, independently of src/format/container.cpp:
// where a stream's grid, section checksums and header checksum lie, and resealing, for the
// tests and the fuzzer that corrupt streams and recompute their checksums. Header-only.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "format/container.hpp"
#include "format/crc32.hpp"

namespace factz::testing {

inline constexpr uint16_t kCompactVersion = 18;
inline constexpr uint16_t kCompactSourceVersion = 19;  ///< a stream with a source section (record version 2)
inline constexpr uint16_t kCompactAuxiliaryVersion = 20;  ///< one whose record has auxiliary variables (version 3)
inline constexpr uint16_t kCompactOwnDimensionsVersion = 21;  ///< one whose auxiliaries have own dimensions (version 4)
inline constexpr std::size_t kCompactFixed = 26;         ///< bytes before the varints
inline constexpr std::size_t kCompactFlagsOffset = 12;   ///< the header flags byte

inline constexpr uint16_t kCompactInterpVersion = 22;    ///< a scalar stream on the interpolation predictor
inline constexpr uint16_t kCompactShuffledVersion = 23;  ///< a stream with a byte-shuffled section

/// Whether the bytes start like a compact stream (the version at offset 4 is 18 to 23).
inline bool is_compact(std::span<const uint8_t> s) {
  if (s.size() < 6) return false;
  const int version = s[4] | (s[5] << 8);
  return version >= kCompactVersion && version <= kCompactShuffledVersion;
}

/// Whether a stream holds a byte-shuffled section (which makes it format version 23).
inline bool has_shuffled_section(std::span<const uint8_t> s) {
  const auto p = detail::parse_container(s);
  if (!p.ok()) return false;
  for (const auto& e : p->entries)
    if (detail::shuffle_width(e.flags) != 0) return true;
  return false;
}

/// The compact version a stream this build writes carries: 23 where a section is stored
/// byte-shuffled, else `otherwise` (18 to 22, from what the stream holds).
inline uint16_t expected_compact_version(std::span<const uint8_t> s, uint16_t otherwise) {
  return has_shuffled_section(s) ? kCompactShuffledVersion : otherwise;
}

/// Where a compact stream's fields lie, as far as its bytes allow (`complete` when the
/// header CRC was reached).
struct CompactPlaces {
  uint64_t nx = 0, ny = 0, nz = 0;
  std::vector<std::pair<std::size_t, uint64_t>> section_crcs;  ///< (CRC offset, stored size)
  std::size_t header_crc = 0;  ///< offset of the header CRC
  bool complete = false;
};

inline CompactPlaces compact_places(std::span<const uint8_t> s) {
  CompactPlaces c;
  std::size_t at = kCompactFixed;
  auto varint = [&](uint64_t& v) {
    v = 0;
    for (int i = 0; i < 10 && at < s.size(); ++i) {
      const uint8_t b = s[at++];
      v |= uint64_t{b & 0x7fu} << (7 * i);
      if ((b & 0x80) == 0) return true;
    }
    return false;
  };
  uint64_t tile = 0, stride = 0, count = 0;
  if (s.size() < kCompactFixed || !varint(c.nx) || !varint(c.ny) || !varint(c.nz) || !varint(tile) ||
      !varint(stride) || !varint(count))
    return c;
  for (uint64_t i = 0; i < std::min<uint64_t>(count, 256); ++i) {
    if (s.size() - at < 2) return c;
    const uint8_t flags = s[at + 1];
    at += 2;
    uint64_t stored = 0, raw = 0;
    if (!varint(stored) || ((flags & 1) && !varint(raw)) || s.size() - at < 4) return c;
    c.section_crcs.push_back({at, stored});
    at += 4;
  }
  if (s.size() - at < 4) return c;
  c.header_crc = at;
  c.complete = true;
  return c;
}

/// Recomputes a compact stream's section checksums (where the sections lie inside the
/// stream) and its header checksum, so that a corruption, not a checksum, is what a decoder
/// meets. Does nothing where the header and table cannot be walked.
inline void reseal_compact(std::vector<uint8_t>& s) {
  const CompactPlaces c = compact_places(s);
  if (!c.complete) return;
  auto put_crc = [&](std::size_t at, std::size_t from, std::size_t n) {
    const uint32_t crc = detail::crc32c(std::span<const uint8_t>(s.data() + from, n));
    for (int b = 0; b < 4; ++b) s[at + std::size_t(b)] = uint8_t(crc >> (8 * b));
  };
  uint64_t off = c.header_crc + 4;
  for (const auto& [crc_at, stored] : c.section_crcs) {
    if (off > s.size() || stored > s.size() - off) break;
    put_crc(crc_at, off, stored);
    off += stored;
  }
  put_crc(c.header_crc, 0, c.header_crc);
}

/// `s` with its header's version byte set to `version` and resealed: a stream that claims
/// another format version, checksums and all.
inline std::vector<uint8_t> relabelled(std::vector<uint8_t> s, uint8_t version) {
  s[4] = version;
  reseal_compact(s);
  return s;
}

}  // namespace factz::testing
