#include "streams/mask_sections.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include "codec/mask_coder.hpp"
#include "streams/stream_common.hpp"
#include "util/byte_io.hpp"

namespace factz::detail {
namespace {

// masked_values layouts (the first byte).
constexpr uint8_t kOnePair = 0;    // u32 u bits, u32 v bits: every missing vertex holds them
constexpr uint8_t kPairTable = 1;  // varint pairs, the pairs, then a varint index per missing vertex
constexpr uint8_t kRawPairs = 2;   // u32 u bits, u32 v bits per missing vertex, in index order
// A float64 stream (format version 6) holds u64 bits in the same three layouts, and a 3D
// vector stream (format version 12) triples (u, v, w) where a 2D one holds pairs.

/// The unsigned integer of a value type's bits.
template <class T>
using BitsOf = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

void put_bits(ByteWriter& w, uint32_t b) { w.u32(b); }
void put_bits(ByteWriter& w, uint64_t b) { w.u64(b); }
bool get_bits(ByteReader& r, uint32_t& b) { return r.u32(b); }
bool get_bits(ByteReader& r, uint64_t& b) { return r.u64(b); }

/// One missing vertex's bits, a component per entry (the third is 0 in a 2D stream, so the
/// table's order is that of the (u, v) pairs it always was).
template <class T>
using Tuple = std::array<BitsOf<T>, 3>;

template <class T>
void append_mask_sections_any(std::span<const uint8_t> mask, int64_t nx, int64_t ny,
                              std::span<const std::span<const T>> planes, bool one_section,
                              std::vector<Section>& sections) {
  const size_t nc = planes.size();  // 2 (u, v) or 3 (u, v, w)
  auto tuple_at = [&](size_t k) {
    Tuple<T> t{};
    for (size_t c = 0; c < nc; ++c) t[c] = std::bit_cast<BitsOf<T>>(planes[c][k]);
    return t;
  };
  auto put_tuple = [nc](ByteWriter& w, const Tuple<T>& t) {
    for (size_t c = 0; c < nc; ++c) put_bits(w, t[c]);
  };
  // The mask: the count of missing vertices, then the bitmap (codec/mask_coder.hpp).
  const size_t missing = size_t(std::count_if(mask.begin(), mask.end(), [](uint8_t m) { return m != 0; }));
  ByteWriter mask_bytes;
  mask_bytes.varint(missing);
  std::vector<uint8_t> coded;
  encode_mask(mask, nx, ny, coded);
  mask_bytes.bytes().insert(mask_bytes.bytes().end(), coded.begin(), coded.end());

  // The values. Most often every missing vertex holds the same tuple (one fill value, one
  // NaN): one pair, found without listing the tuples. Else the distinct tuples, collected
  // while a table could still pay (at most half as many tuples as missing vertices); one
  // more means raw tuples.
  ByteWriter values;
  const size_t first = size_t(std::find_if(mask.begin(), mask.end(), [](uint8_t m) { return m != 0; }) - mask.begin());
  bool one = first < mask.size();
  if (one) {  // plane by plane, a chunk at a time, branch-free (vectorized)
    const Tuple<T> t0 = tuple_at(first);
    constexpr size_t kChunk = 4096;
    for (size_t c = 0; c < nc && one; ++c) {
      const T* x = planes[c].data();
      for (size_t k0 = first; k0 < mask.size() && one; k0 += kChunk) {
        const size_t k1 = std::min(mask.size(), k0 + kChunk);
        int differ = 0;
        for (size_t k = k0; k < k1; ++k) differ |= int(mask[k] != 0) & int(std::bit_cast<BitsOf<T>>(x[k]) != t0[c]);
        one = differ == 0;
      }
    }
  }
  if (one) {
    values.u8(kOnePair);
    put_tuple(values, tuple_at(first));
  } else {
    std::vector<Tuple<T>> bits;
    bits.reserve(missing);
    for (size_t k = 0; k < mask.size(); ++k)
      if (mask[k]) bits.push_back(tuple_at(k));
    std::map<Tuple<T>, uint64_t> table;
    const size_t cap = bits.size() / 2;
    for (const auto& b : bits) {
      table.try_emplace(b, 0);  // no node made for a tuple already there
      if (table.size() > cap) break;
    }
    if (table.size() <= cap) {  // complete: a table pays when tuples repeat
      values.u8(kPairTable);
      values.varint(table.size());
      uint64_t index = 0;
      for (auto& [tuple, at] : table) {
        at = index++;
        put_tuple(values, tuple);
      }
      for (const auto& b : bits) values.varint(table.at(b));
    } else {
      values.u8(kRawPairs);
      for (const auto& b : bits) put_tuple(values, b);
    }
  }
  if (one_section) {  // mask_and_values: the mask's size, the mask, the values
    ByteWriter both;
    both.varint(mask_bytes.bytes().size());
    both.bytes().insert(both.bytes().end(), mask_bytes.bytes().begin(), mask_bytes.bytes().end());
    both.bytes().insert(both.bytes().end(), values.bytes().begin(), values.bytes().end());
    Section bs{kSectionMaskAndValues, std::move(both.bytes())};
    bs.zstd = true;
    sections.push_back(std::move(bs));
    return;
  }
  Section ms{kSectionMask, std::move(mask_bytes.bytes())};
  Section vs{kSectionMaskedValues, std::move(values.bytes())};
  ms.zstd = vs.zstd = true;  // kept only where it shrinks them (repeated NaN payloads, tables)
  sections.push_back(std::move(ms));
  sections.push_back(std::move(vs));
}

}  // namespace

void append_mask_sections(std::span<const uint8_t> mask, int64_t nx, int64_t ny, std::span<const float> u,
                          std::span<const float> v, std::vector<Section>& sections, bool one_section) {
  const std::span<const float> planes[2] = {u, v};
  append_mask_sections_any<float>(mask, nx, ny, planes, one_section, sections);
}
void append_mask_sections(std::span<const uint8_t> mask, int64_t nx, int64_t ny, std::span<const double> u,
                          std::span<const double> v, std::vector<Section>& sections, bool one_section) {
  const std::span<const double> planes[2] = {u, v};
  append_mask_sections_any<double>(mask, nx, ny, planes, one_section, sections);
}
void append_mask_section3d(std::span<const uint8_t> mask, int64_t nx, int64_t rows, std::span<const float> u,
                           std::span<const float> v, std::span<const float> w, std::vector<Section>& sections) {
  const std::span<const float> planes[3] = {u, v, w};
  append_mask_sections_any<float>(mask, nx, rows, planes, true, sections);
}

void append_mask_section3d(std::span<const uint8_t> mask, int64_t nx, int64_t rows, std::span<const double> u,
                           std::span<const double> v, std::span<const double> w, std::vector<Section>& sections) {
  const std::span<const double> planes[3] = {u, v, w};
  append_mask_sections_any<double>(mask, nx, rows, planes, true, sections);
}

Result<bool> stream_has_mask(const ParsedContainer& pc) {
  const bool m = has_section(pc, kSectionMask), v = has_section(pc, kSectionMaskedValues);
  if (has_section(pc, kSectionMaskAndValues)) {
    if (m || v) return corrupt_stream("section mask_and_values beside mask or masked_values");
    return true;
  }
  if (m != v) return corrupt_stream(std::string("section ") + (m ? "mask" : "masked_values") + " without " +
                                    (m ? "masked_values" : "mask"));
  return m;
}

namespace {

/// The mask's bytes (want_mask) and the masked values' bytes (want_values) of a stream: the
/// two sections, each read only when wanted, or the two parts of mask_and_values (the first
/// prefixed by its size; that one section is read whole).
struct MaskParts {
  std::vector<uint8_t> mask, values;
};

/// The size of mask_and_values' mask part: the varint the section starts with (`r` at the
/// section's start), at most the section's `section_bytes` less that varint.
Result<uint64_t> mask_part_size(ByteReader& r, uint64_t section_bytes) {
  uint64_t size = 0;
  const size_t before = r.remaining();
  if (!r.varint(size) || size > section_bytes - (before - r.remaining()))
    return corrupt_stream("mask_and_values: invalid mask size");
  return size;
}

/// The count of missing vertices a coded mask starts with (a varint in [1, n]).
Result<uint64_t> missing_count(ByteReader& r, uint64_t n) {
  uint64_t missing = 0;
  if (!r.varint(missing) || missing == 0 || missing > n) return corrupt_stream("mask: invalid count");
  return missing;
}

Result<MaskParts> read_mask_parts(std::span<const uint8_t> stream, const ParsedContainer& pc, bool want_mask,
                                  bool want_values) {
  MaskParts parts;
  if (has_section(pc, kSectionMaskAndValues)) {
    auto both = read_section(stream, pc, kSectionMaskAndValues, &zstd_stage_decompressor());
    if (!both.ok()) return both.status();
    ByteReader r(both.value());
    auto part = mask_part_size(r, both->size());
    if (!part.ok()) return part.status();
    const size_t head = both->size() - r.remaining(), size = size_t(part.value());
    parts.mask.assign(both->begin() + std::ptrdiff_t(head), both->begin() + std::ptrdiff_t(head + size));
    parts.values.assign(both->begin() + std::ptrdiff_t(head + size), both->end());
    return parts;
  }
  if (want_mask) {
    auto coded = read_section(stream, pc, kSectionMask, &zstd_stage_decompressor());
    if (!coded.ok()) return coded.status();
    parts.mask = std::move(coded.value());
  }
  if (want_values) {
    auto values = read_section(stream, pc, kSectionMaskedValues, &zstd_stage_decompressor());
    if (!values.ok()) return values.status();
    parts.values = std::move(values.value());
  }
  return parts;
}

Status decode_mask_part(std::span<const uint8_t> coded, int64_t nx, int64_t ny, std::vector<uint8_t>& mask,
                        std::optional<uint64_t> expected_missing = std::nullopt) {
  ByteReader r(coded);
  auto count = missing_count(r, uint64_t(nx * ny));
  if (!count.ok()) return count.status();
  const uint64_t missing = count.value();
  if (expected_missing && missing != *expected_missing)
    return corrupt_stream("mask: " + std::to_string(missing) + " missing vertices recorded, the codes leave " +
                          std::to_string(*expected_missing));
  const size_t head = coded.size() - r.remaining();
  FACTZ_RETURN_IF_ERROR(decode_mask(coded.subspan(head), nx, ny, mask));
  uint64_t set = 0;
  for (uint8_t m : mask) set += m;
  if (set != missing)
    return corrupt_stream("mask: " + std::to_string(set) + " missing vertices decoded, " + std::to_string(missing) +
                          " recorded");
  return Status::Ok();
}

}  // namespace

Status read_mask(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t ny,
                 std::vector<uint8_t>& mask, std::optional<uint64_t> expected_missing) {
  auto parts = read_mask_parts(stream, pc, true, false);
  if (!parts.ok()) return parts.status();
  return decode_mask_part(parts->mask, nx, ny, mask, expected_missing);
}

Result<uint64_t> recorded_missing_count(std::span<const uint8_t> stream, const ParsedContainer& pc, uint64_t n) {
  const uint32_t id = has_section(pc, kSectionMaskAndValues) ? kSectionMaskAndValues : kSectionMask;
  const ParsedContainer::Entry* e = nullptr;
  for (const auto& entry : pc.entries)
    if (entry.id == id) e = &entry;
  if (!e) return corrupt_stream("missing section " + section_name(id));
  // Two varints at most (mask_and_values' mask size, then the count), read through the zstd
  // stage's first bytes: mask_and_values may hold every missing vertex's value.
  constexpr size_t kTwoVarints = 20;
  auto head = section_head(stream, *e, size_t(std::min<uint64_t>(kTwoVarints, e->raw_size)));
  if (!head.ok()) return head.status();
  std::span<const uint8_t> mask = head.value();
  if (id == kSectionMaskAndValues) {  // the mask part, after its size
    ByteReader r(mask);
    auto size = mask_part_size(r, e->raw_size);
    if (!size.ok()) return size.status();
    mask = mask.subspan(mask.size() - r.remaining());
    mask = mask.first(size_t(std::min<uint64_t>(mask.size(), size.value())));
  }
  ByteReader r(mask);
  return missing_count(r, n);
}

namespace {

template <class T>
Status apply_mask_sections_any(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t ny,
                               std::span<const std::span<T>> planes, std::vector<uint8_t>& mask) {
  using Bits = BitsOf<T>;
  const size_t nc = planes.size();  // 2 (u, v) or 3 (u, v, w)
  const uint64_t kTupleBytes = nc * sizeof(Bits);
  const int64_t n = nx * ny;
  const bool have_mask = mask.size() == size_t(n);  // the caller read it (read_mask)
  auto parts = read_mask_parts(stream, pc, !have_mask, true);
  if (!parts.ok()) return parts.status();
  if (!have_mask) FACTZ_RETURN_IF_ERROR(decode_mask_part(parts->mask, nx, ny, mask));
  uint64_t missing = 0;
  for (uint8_t m : mask) missing += m;
  ByteReader rv(parts->values);
  auto get_tuple = [&rv, nc](Tuple<T>& t) {
    for (size_t c = 0; c < nc; ++c)
      if (!get_bits(rv, t[c])) return false;
    return true;
  };
  uint8_t kind = 0;
  if (!rv.u8(kind)) return corrupt_stream("masked_values: empty");
  std::vector<Tuple<T>> table;
  if (kind == kOnePair || kind == kRawPairs) {
    const uint64_t tuples = kind == kOnePair ? 1 : missing;
    if (rv.remaining() != tuples * kTupleBytes) return corrupt_stream("masked_values: wrong size");
  } else if (kind == kPairTable) {
    uint64_t size = 0;
    if (!rv.varint(size) || size < 2 || size > missing || rv.remaining() < size * kTupleBytes)
      return corrupt_stream("masked_values: invalid table");
    table.resize(size_t(size));
    for (auto& t : table)
      if (!get_tuple(t)) return corrupt_stream("masked_values: table truncated");
  } else {
    return corrupt_stream("masked_values: unknown layout " + std::to_string(kind));
  }
  Tuple<T> b{};
  if (kind == kOnePair && !get_tuple(b)) return corrupt_stream("masked_values: truncated");
  for (int64_t k = 0; k < n; ++k) {
    if (!mask[size_t(k)]) continue;
    if (kind == kRawPairs && !get_tuple(b)) return corrupt_stream("masked_values: truncated");
    if (kind == kPairTable) {
      uint64_t index = 0;
      if (!rv.varint(index) || index >= table.size()) return corrupt_stream("masked_values: index out of range");
      b = table[size_t(index)];
    }
    for (size_t c = 0; c < nc; ++c) planes[c][size_t(k)] = std::bit_cast<T>(b[c]);
  }
  if (!rv.at_end()) return corrupt_stream("masked_values: trailing bytes");
  return Status::Ok();
}

}  // namespace

Status apply_mask_sections(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t ny,
                           std::span<float> u, std::span<float> v, std::vector<uint8_t>& mask) {
  const std::span<float> planes[2] = {u, v};
  return apply_mask_sections_any<float>(stream, pc, nx, ny, planes, mask);
}
Status apply_mask_sections(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t ny,
                           std::span<double> u, std::span<double> v, std::vector<uint8_t>& mask) {
  const std::span<double> planes[2] = {u, v};
  return apply_mask_sections_any<double>(stream, pc, nx, ny, planes, mask);
}
Status apply_mask_section3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t rows,
                            std::span<float> u, std::span<float> v, std::span<float> w, std::vector<uint8_t>& mask) {
  const std::span<float> planes[3] = {u, v, w};
  return apply_mask_sections_any<float>(stream, pc, nx, rows, planes, mask);
}

Status apply_mask_section3d(std::span<const uint8_t> stream, const ParsedContainer& pc, int64_t nx, int64_t rows,
                            std::span<double> u, std::span<double> v, std::span<double> w, std::vector<uint8_t>& mask) {
  const std::span<double> planes[3] = {u, v, w};
  return apply_mask_sections_any<double>(stream, pc, nx, rows, planes, mask);
}

}  // namespace factz::detail
