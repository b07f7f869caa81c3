// Container format writer (version 18, the compact container; versions 2 to 17 on request), validating
// parser (versions 1 to 18) and summary. Every multi-byte integer is
// little-endian and is written and read one byte at a time, so the bytes do not depend on
// the host. Offsets below are those of docs/format.md; changing any of them changes the
// bytes of a stream and therefore needs a new format version.
#include "format/container.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "format/crc32.hpp"
#include "util/byte_io.hpp"
#include "util/number_text.hpp"

namespace factz::detail {
namespace {

// Header field offsets (docs/format.md, "Header").
constexpr std::size_t kOffMagic = 0;
constexpr std::size_t kOffVersion = 4;
constexpr std::size_t kOffDtype = 6;
constexpr std::size_t kOffComponents = 7;
constexpr std::size_t kOffNdims = 8;
constexpr std::size_t kOffMode = 9;
constexpr std::size_t kOffCoder = 10;
constexpr std::size_t kOffFlags = 11;
constexpr std::size_t kOffNx = 12;
constexpr std::size_t kOffNy = 20;
constexpr std::size_t kOffNz = 28;
constexpr std::size_t kOffBoundMode = 36;
constexpr std::size_t kOffReserved = 37;  // 3 bytes, zero
constexpr std::size_t kReservedSize = 3;
constexpr std::size_t kOffBoundValue = 40;
constexpr std::size_t kOffEb = 48;
constexpr std::size_t kOffTile = 52;
constexpr std::size_t kOffAnchorStride = 54;
constexpr std::size_t kOffSectionCount = 56;
static_assert(kOffSectionCount + 4 == kHeaderCrcOffset && kHeaderCrcOffset + 4 == kHeaderSize);

// Section table entry offsets (docs/format.md, "Section table").
constexpr std::size_t kEntId = 0;
constexpr std::size_t kEntFlags = 4;
constexpr std::size_t kEntOffset = 8;
constexpr std::size_t kEntStoredSize = 16;
constexpr std::size_t kEntRawSize = 24;
constexpr std::size_t kEntCrc = 32;
constexpr std::size_t kEntEntryCrc = 36;  // CRC-32C of the entry's bytes [0, 36)
static_assert(kEntEntryCrc + 4 == kSectionEntrySize);

// Names indexed by id (docs/format.md); index 0 is not a valid id, 9 is reserved (container.hpp).
constexpr std::array<const char*, kLastSectionId + 1> kSectionNames = {
    nullptr,       "meta",         "tile_bounds", "codes_u",     "codes_v",          "exact_index",
    "exact_values", "outliers",    "bound_ids_u", "bound_ids_v", "mask",             "masked_values",
    "source",      "mask_and_values", "codes_w"};

bool known_section(uint32_t id) { return id >= 1 && id <= kLastSectionId; }

std::string label(uint32_t id) {
  return "section " + std::to_string(id) + " (" + section_name(id) + ")";
}

Status with_context(const Status& s, const std::string& context) {
  return Status(s.code(), context + ": " + s.message());
}

// ---- Little-endian byte access ---------------------------------------------------------
uint16_t get_u16(const uint8_t* p) { return static_cast<uint16_t>(load_le(p, 2)); }
uint32_t get_u32(const uint8_t* p) { return static_cast<uint32_t>(load_le(p, 4)); }
uint64_t get_u64(const uint8_t* p) { return load_le(p, 8); }

// Elements of the field (nx*ny*nz) when the dimensions are within kMaxElements, else 0.
uint64_t element_count(const Header& h) {
  if (h.nx == 0 || h.ny == 0 || h.nz == 0) return 0;
  if (h.nx > kMaxElements || h.ny > kMaxElements / h.nx) return 0;
  const uint64_t nxy = h.nx * h.ny;
  if (h.nz > kMaxElements / nxy) return 0;
  return nxy * h.nz;
}

uint64_t raw_size_limit(const Header& h) {
  return kMaxRawBytesPerValue * element_count(h) * h.components + kRawSizeSlack;
}

// The one check of header field values, shared by writer (invalid_argument) and parser
// (corrupt_stream). Returns an empty string when the header is acceptable. The version
// is checked by the callers, since it maps to its own error code.
std::string header_problem(const Header& h) {
  if (h.dtype != kDtypeFloat32 && h.dtype != kDtypeFloat64) return "unknown data type " + std::to_string(h.dtype);
  if (h.components < 1 || h.components > kMaxComponents)
    return "component count " + std::to_string(h.components) + " (must be 1, 2 or 3)";
  if (h.ndims != 2 && !(h.ndims == 3 && h.components != 2))
    return "ndims " + std::to_string(h.ndims) + " (2, or 3 for scalar and 3D vector fields)";
  if (h.components == 3 && h.ndims != 3) return "3 components in a 2D field (3D vector fields only)";
  if (h.mode > kModeContourTree || (h.mode == kModeContourTree && h.components != 1))
    return "unknown mode " + std::to_string(h.mode) + (h.mode == kModeContourTree ? " for a vector field" : "");
  if (h.coder > kCoderContext) return "unknown coder " + std::to_string(h.coder);
  // Versions 15 to 17 are the context-coded scalar versions, and coder 2 is theirs alone.
  if (is_context_version(h.version) != (h.coder == kCoderContext))
    return "coder " + std::to_string(h.coder) + " in a version " + std::to_string(h.version) +
           " stream (coder 2, the context coder, is that of versions 15 to 17, and only theirs)";
  if (is_context_version(h.version) && h.components != 1)
    return std::to_string(h.components) + " components in a version " + std::to_string(h.version) +
           " stream (versions 15 to 17 hold scalar fields)";
  if ((h.flags & ~kHeaderFlagZstd) != 0)
    return "reserved header flag bits set (flags " + std::to_string(h.flags) + ")";
  if (h.ndims == 2 && h.nz != 1) return "nz " + std::to_string(h.nz) + " (must be 1 for 2D fields)";
  // A 3D scalar stream needs nz >= 2 (nz 1 is a 2D field); a 3D vector field is told apart
  // by its three components and may be flat.
  if (h.ndims == 3 && h.nz < 2 && h.components != 3)
    return "nz " + std::to_string(h.nz) + " (must be at least 2 for 3D scalar fields)";
  if (h.nx == 0 || h.ny == 0) return "empty dimensions";
  if (element_count(h) == 0)
    return "dimensions " + std::to_string(h.nx) + " x " + std::to_string(h.ny) +
           " exceed 2^40 elements";
  if (h.bound_mode > kBoundRel) return "unknown bound mode " + std::to_string(h.bound_mode);
  if (!std::isfinite(h.bound_value) || h.bound_value < 0)
    return "bound value is not a finite non-negative number";
  if (!std::isfinite(h.eb) || h.eb < 0) return "eb is not a finite non-negative number";
  if (h.tile == 0) return "tile size 0";
  return {};
}

void encode_header(const Header& h, uint32_t section_count, uint8_t* p) {
  std::memcpy(p + kOffMagic, kMagic, 4);
  store_le(p + kOffVersion, h.version, 2);
  p[kOffDtype] = h.dtype;
  p[kOffComponents] = h.components;
  p[kOffNdims] = h.ndims;
  p[kOffMode] = h.mode;
  p[kOffCoder] = h.coder;
  p[kOffFlags] = h.flags;
  store_le(p + kOffNx, h.nx, 8);
  store_le(p + kOffNy, h.ny, 8);
  store_le(p + kOffNz, h.nz, 8);
  p[kOffBoundMode] = h.bound_mode;
  std::memset(p + kOffReserved, 0, kReservedSize);
  store_le(p + kOffBoundValue, std::bit_cast<uint64_t>(h.bound_value), 8);
  store_le(p + kOffEb, std::bit_cast<uint32_t>(h.eb), 4);
  store_le(p + kOffTile, h.tile, 2);
  store_le(p + kOffAnchorStride, h.anchor_stride, 2);
  store_le(p + kOffSectionCount, section_count, 4);
  store_le(p + kHeaderCrcOffset, crc32c({p, kHeaderCrcOffset}), 4);
}

// Where the fixed-size fields both headers have lie in each (the compact header's are
// docs/format.md, "Compact container"; it has the layout version at offset 6).
struct FixedFields {
  std::size_t dtype, components, ndims, mode, coder, flags, bound_mode, bound_value, eb;
};
constexpr FixedFields kClassicFields{kOffDtype, kOffComponents, kOffNdims, kOffMode,     kOffCoder,
                                     kOffFlags, kOffBoundMode,  kOffBoundValue, kOffEb};
constexpr std::size_t kCompactOffLayout = 6;
constexpr FixedFields kCompactFields{7, 8, 9, 10, 11, 12, 13, 14, 22};
constexpr std::size_t kCompactFixedSize = 26;  // the varints start here

void decode_fixed_fields(const uint8_t* p, const FixedFields& at, Header& h) {
  h.dtype = p[at.dtype];
  h.components = p[at.components];
  h.ndims = p[at.ndims];
  h.mode = p[at.mode];
  h.coder = p[at.coder];
  h.flags = p[at.flags];
  h.bound_mode = p[at.bound_mode];
  h.bound_value = std::bit_cast<double>(get_u64(p + at.bound_value));
  h.eb = std::bit_cast<float>(get_u32(p + at.eb));
}

Header decode_header(const uint8_t* p) {
  Header h;
  h.version = get_u16(p + kOffVersion);
  decode_fixed_fields(p, kClassicFields, h);
  h.nx = get_u64(p + kOffNx);
  h.ny = get_u64(p + kOffNy);
  h.nz = get_u64(p + kOffNz);
  h.tile = get_u16(p + kOffTile);
  h.anchor_stride = get_u16(p + kOffAnchorStride);
  return h;
}

void encode_entry(const ParsedContainer::Entry& e, uint8_t* p) {
  store_le(p + kEntId, e.id, 4);
  store_le(p + kEntFlags, e.flags, 4);
  store_le(p + kEntOffset, e.offset, 8);
  store_le(p + kEntStoredSize, e.stored_size, 8);
  store_le(p + kEntRawSize, e.raw_size, 8);
  store_le(p + kEntCrc, e.crc, 4);
  store_le(p + kEntEntryCrc, crc32c({p, kEntEntryCrc}), 4);
}

ParsedContainer::Entry decode_entry(const uint8_t* p) {
  return {get_u32(p + kEntId),         get_u32(p + kEntFlags),  get_u64(p + kEntOffset),
          get_u64(p + kEntStoredSize), get_u64(p + kEntRawSize), get_u32(p + kEntCrc)};
}

Result<Header> check_header(const Header& h);

// Magic, version, header checksum and field values of a classic stream; `stream` holds at
// least the 64-byte header.
Result<Header> parse_header(std::span<const uint8_t> stream) {
  const uint8_t* p = stream.data();
  if (std::memcmp(p + kOffMagic, kMagic, 4) != 0)
    return corrupt_stream("bad magic: not a FaCTz stream");
  // Magic and version keep their offsets in every version, so a reader can always say
  // which version it was given; the rest of the layout may change, hence before the CRC.
  const uint16_t version = get_u16(p + kOffVersion);
  if (version < kOldestReadableVersion || version > kNewestLayoutVersion)
    return Status(Code::unsupported_version,
                  "format version " + std::to_string(version) + " (this build reads versions " +
                      std::to_string(kOldestReadableVersion) + " to " + std::to_string(kFormatVersion) + ")");
  if (crc32c(stream.first(kHeaderCrcOffset)) != get_u32(p + kHeaderCrcOffset))
    return corrupt_stream("header checksum mismatch");
  for (std::size_t i = 0; i < kReservedSize; ++i)
    if (p[kOffReserved + i] != 0) return corrupt_stream("header: reserved bytes are not zero");
  return check_header(decode_header(p));
}

// The field values and the rules between version, data type, components and mode, of a
// header read from either container (its checksum already checked).
Result<Header> check_header(const Header& h) {
  if (std::string problem = header_problem(h); !problem.empty())
    return corrupt_stream("header: " + problem);
  // Version 1 had vector fields only, and an ANS blob this build no longer decodes.
  if (h.version == 1 && h.coder == kCoderAns)
    return Status(Code::unsupported_version,
                  "format version 1 stream coded with the version 1 ANS blob (pre-release); this build "
                  "reads version 1 streams coded with Huffman only: recompress the field");
  if (h.version == 1 && (h.components != 2 || h.ndims != 2 || h.mode > kModeSpeculative))
    return corrupt_stream("header: a version 1 stream holds a 2D vector field in mode none, block or speculative");
  // Version 6 is the float64 version: float64 streams are version 6, or 7 / 9 with a
  // predictor byte, or 11 on the lattice; a version 6 stream is float64.
  if ((h.dtype == kDtypeFloat64 && h.version < kFormatVersionFloat64) ||
      (h.version == kFormatVersionFloat64 && h.dtype != kDtypeFloat64))
    return corrupt_stream("header: data type " + std::to_string(h.dtype) + " in a version " + std::to_string(h.version) +
                          " stream (float64 streams are version 6, or 7 or 9 with a predictor byte, or 11 or 14 on the "
                          "lattice; version 6 streams are float64)");
  // Versions 8, 10, 12 and 13 are the 3D vector versions: 3D vector streams are version 8,
  // 10 or 12 (masked), 13 when float64, and those versions hold 3D vector fields; version 10
  // only in mode speculative.
  if ((h.components == 3) != is_vector3d_version(h.version))
    return corrupt_stream("header: " + std::to_string(h.components) + " component(s) in a version " +
                          std::to_string(h.version) + " stream (3D vector streams are versions 8, 10, 12 and 13, " +
                          "and those versions hold 3D vector fields)");
  // Version 13 is the float64 3D vector version: a float64 3D vector stream is version 13,
  // and a version 13 stream is one.
  if ((h.version == kFormatVersionFloat64Vector3D) != (h.components == 3 && h.dtype == kDtypeFloat64))
    return corrupt_stream("header: data type " + std::to_string(h.dtype) + " in a version " +
                          std::to_string(h.version) +
                          " 3D vector stream (float64 3D vector streams are version 13, and version 13 streams are "
                          "float64 3D vector fields)");
  if (h.version == kFormatVersionSegmented3D && h.mode != kModeSpeculative)
    return corrupt_stream("header: mode " + std::to_string(h.mode) +
                          " in a version 10 stream (only 3D speculative streams are version 10)");
  // Versions 7 and 9 name a predictor: only a speculative 2D vector stream does.
  if (has_predictor_byte(h.version) && !may_carry_predictor(h.components, h.mode))
    return corrupt_stream("header: mode " + std::to_string(h.mode) + " with " + std::to_string(h.components) +
                          " component(s) in a version " + std::to_string(h.version) +
                          " stream (only speculative 2D vector streams are versions 7 and 9)");
  // Versions 22 and 23 hold scalar fields.
  if (is_scalar_interp_version(h.version) && h.components != 1)
    return corrupt_stream("header: " + std::to_string(h.components) + " components in a version " +
                          std::to_string(h.version) + " stream (versions 22 and 23 hold scalar fields)");
  // Versions 11, 14, 16 and 17 are the scalar lattice versions: only a contour-tree scalar stream.
  if (is_scalar_lattice_version(h.version) && (h.components != 1 || h.mode != kModeContourTree))
    return corrupt_stream("header: mode " + std::to_string(h.mode) + " with " + std::to_string(h.components) +
                          " component(s) in a version " + std::to_string(h.version) +
                          " stream (only contour-tree scalar streams are versions 11, 14, 16 and 17)");
  return h;
}

// Table entry checks that need no section data: id, flags, sizes, contiguous placement.
// `expected_offset` is where the section must start (end of the previous one).
Status check_entry(const ParsedContainer::Entry& e, std::size_t index, const Header& h, uint16_t format_version,
                   uint64_t expected_offset, uint64_t stream_size,
                   std::span<const ParsedContainer::Entry> previous) {
  const std::string where = "section table entry " + std::to_string(index);
  if (!known_section(e.id))
    return corrupt_stream(where + ": unknown section id " + std::to_string(e.id));
  if ((e.id >= kFirstVersion8Section && !is_vector3d_version(h.version)) ||
      (e.id >= kFirstVersion7Section && h.version < kFormatVersionPredictor) ||
      (e.id >= kFirstVersion4Section && h.version < kFormatVersionWithSource) ||
      (e.id >= kFirstVersion3Section && h.version < kFormatVersionWithMask))
    return corrupt_stream(where + ": " + label(e.id) + " in a version " + std::to_string(h.version) + " stream");
  for (const auto& prev : previous)
    if (prev.id == e.id) return corrupt_stream(where + ": duplicate " + label(e.id));
  const std::string sec = label(e.id);
  constexpr uint32_t kKnownFlags = kSectionFlagZstd | kSectionFlagShuffle4 | kSectionFlagShuffle8;
  if ((e.flags & ~kKnownFlags) != 0) return corrupt_stream(sec + ": reserved flag bits set");
  if ((e.flags & (kSectionFlagShuffle4 | kSectionFlagShuffle8)) != 0) {
    // Byte-shuffled: one width, under the zstd stage, of exact values, in version 23 only.
    if ((e.flags & kSectionFlagShuffle4) != 0 && (e.flags & kSectionFlagShuffle8) != 0)
      return corrupt_stream(sec + ": shuffled with two widths (flag bits 1 and 2 both set)");
    if ((e.flags & kSectionFlagZstd) == 0)
      return corrupt_stream(sec + ": byte-shuffled but not zstd-compressed");
    if (e.id != kSectionExactValues)
      return corrupt_stream(sec + ": byte-shuffled (only " + label(kSectionExactValues) + " may be)");
    if (format_version != kFormatVersionCompactShuffled)
      return corrupt_stream(sec + ": byte-shuffled in a format version " + std::to_string(format_version) +
                            " stream (only version " + std::to_string(kFormatVersionCompactShuffled) + " holds such sections)");
  }
  if (e.offset > stream_size || e.stored_size > stream_size - e.offset)
    return corrupt_stream(sec + " lies outside the stream (offset " + std::to_string(e.offset) +
                          ", size " + std::to_string(e.stored_size) + ", stream has " +
                          std::to_string(stream_size) + " bytes; truncated?)");
  if (e.offset < expected_offset)
    return corrupt_stream(sec + " overlaps the preceding data (offset " +
                          std::to_string(e.offset) + ", expected " +
                          std::to_string(expected_offset) + ")");
  if (e.offset > expected_offset)
    return corrupt_stream(sec + " leaves a gap before it (offset " + std::to_string(e.offset) +
                          ", expected " + std::to_string(expected_offset) + ")");
  if (e.raw_size > raw_size_limit(h))
    return corrupt_stream(sec + ": raw size " + std::to_string(e.raw_size) +
                          " is implausible for the field size");
  if ((e.flags & kSectionFlagZstd) != 0) {
    if ((h.flags & kHeaderFlagZstd) == 0)
      return corrupt_stream(sec + " is compressed but the header zstd flag is clear");
    if (e.stored_size >= e.raw_size)
      return corrupt_stream(sec + ": compressed size is not smaller than the raw size");
    // A zstd block holds at most 128 KiB and costs at least a 3-byte header plus one byte,
    // so no frame expands by more than 2^15; 2^16 leaves room for the frame header.
    if (e.raw_size / kMaxZstdExpansion > e.stored_size)
      return corrupt_stream(sec + ": raw size " + std::to_string(e.raw_size) +
                            " is more than zstd can expand " + std::to_string(e.stored_size) + " bytes to");
  } else if (e.stored_size != e.raw_size) {
    return corrupt_stream(sec + ": raw size differs from stored size of an uncompressed section");
  }
  return Status::Ok();
}

// ---- The compact container (version 18; docs/format.md, "Compact container") ---------
// Fixed part: magic, version 18, layout version, data type, components, ndims, mode, coder,
// flags, bound mode, bound value (f64), eb (f32); then varints nx, ny, nz, tile, anchor
// stride, section count; then per section: id (u8), flags (u8), varint stored size, varint
// raw size (only when flag bit 0 is set), section CRC (u32); then the CRC-32C of everything
// before it.
// Header and table of a compact stream, its CRC included.
std::vector<uint8_t> encode_compact_prefix(const Header& h, const std::vector<ParsedContainer::Entry>& entries,
                                           uint16_t version) {
  std::vector<uint8_t> out(kMagic, kMagic + 4);
  put_le(out, version, 2);
  out.push_back(static_cast<uint8_t>(h.version));
  for (uint8_t b : {h.dtype, h.components, h.ndims, h.mode, h.coder, h.flags, h.bound_mode}) out.push_back(b);
  put_le(out, std::bit_cast<uint64_t>(h.bound_value), 8);
  put_le(out, std::bit_cast<uint32_t>(h.eb), 4);
  for (uint64_t v : {h.nx, h.ny, h.nz, uint64_t{h.tile}, uint64_t{h.anchor_stride}, uint64_t{entries.size()}})
    put_varint(out, v);
  for (const auto& e : entries) {
    out.push_back(static_cast<uint8_t>(e.id));
    out.push_back(static_cast<uint8_t>(e.flags));
    put_varint(out, e.stored_size);
    if ((e.flags & kSectionFlagZstd) != 0) put_varint(out, e.raw_size);
    put_le(out, e.crc, 4);
  }
  put_le(out, crc32c(out), 4);
  return out;
}

// Reads a compact stream's header and table fields one after the other; every read checks
// the bounds, and a varint must be canonical (its shortest form, at most 64 bits) so that a
// stream has one encoding.
class CompactReader {
 public:
  explicit CompactReader(std::span<const uint8_t> s) : r_(s), size_(s.size()) { r_.skip(kCompactFixedSize); }
  std::size_t at() const { return r_.pos(); }
  Status varint(uint64_t& v, const char* what) {
    v = 0;
    for (int i = 0; i < 10; ++i) {
      uint8_t b = 0;
      if (!r_.u8(b)) return truncated();
      if (i == 9 && b > 1) return corrupt_stream(std::string("header: ") + what + " does not fit 64 bits");
      v |= uint64_t{b & 0x7fu} << (7 * i);
      if ((b & 0x80) == 0) {
        if (b == 0 && i > 0) return corrupt_stream(std::string("header: ") + what + " is not in its shortest varint form");
        return Status::Ok();
      }
    }
    return corrupt_stream(std::string("header: ") + what + " is a varint of more than 10 bytes");
  }
  Status bytes(int n, uint64_t& v) { return r_.le(n, v) ? Status::Ok() : truncated(); }
  Status truncated() const {
    return corrupt_stream("stream truncated in the header or section table (" + std::to_string(size_) + " bytes)");
  }

 private:
  ByteReader r_;  // positioned after the fixed part (the caller checked it is there)
  std::size_t size_;
};

// Header and table of a compact stream (magic and version 18 or 19 already seen): the fields,
// the CRC, then the same field checks as a classic header. Fills parsed's header, entries with
// their offsets unchecked, layout, compact_version and data_offset.
Status parse_compact_prefix(std::span<const uint8_t> stream, ParsedContainer& parsed) {
  if (stream.size() < kCompactFixedSize)
    return corrupt_stream("stream truncated in the header (" + std::to_string(stream.size()) + " of at least " +
                          std::to_string(kCompactFixedSize) + " bytes)");
  const uint8_t* p = stream.data();
  Header h;
  h.version = p[kCompactOffLayout];
  decode_fixed_fields(p, kCompactFields, h);
  CompactReader r(stream);
  uint64_t tile = 0, stride = 0, count = 0;
  FACTZ_RETURN_IF_ERROR(r.varint(h.nx, "nx"));
  FACTZ_RETURN_IF_ERROR(r.varint(h.ny, "ny"));
  FACTZ_RETURN_IF_ERROR(r.varint(h.nz, "nz"));
  FACTZ_RETURN_IF_ERROR(r.varint(tile, "tile"));
  FACTZ_RETURN_IF_ERROR(r.varint(stride, "anchor stride"));
  FACTZ_RETURN_IF_ERROR(r.varint(count, "section count"));
  if (count > kMaxSections)
    return corrupt_stream("section count " + std::to_string(count) + " exceeds " + std::to_string(kMaxSections));
  std::vector<ParsedContainer::Entry> entries(count);
  for (auto& e : entries) {
    uint64_t id = 0, flags = 0, crc = 0;
    FACTZ_RETURN_IF_ERROR(r.bytes(1, id));
    FACTZ_RETURN_IF_ERROR(r.bytes(1, flags));
    FACTZ_RETURN_IF_ERROR(r.varint(e.stored_size, "a section's stored size"));
    e.raw_size = e.stored_size;
    if ((flags & kSectionFlagZstd) != 0) FACTZ_RETURN_IF_ERROR(r.varint(e.raw_size, "a section's raw size"));
    FACTZ_RETURN_IF_ERROR(r.bytes(4, crc));
    e.id = static_cast<uint32_t>(id);
    e.flags = static_cast<uint32_t>(flags);
    e.crc = static_cast<uint32_t>(crc);
  }
  uint64_t header_crc = 0;
  const std::size_t crc_at = r.at();
  FACTZ_RETURN_IF_ERROR(r.bytes(4, header_crc));
  if (crc32c(stream.first(crc_at)) != header_crc) return corrupt_stream("header checksum mismatch");
  // A version 22 stream holds layout 22 or 23 and only it and version 23 do; version 23 holds
  // any layout.
  const uint16_t container_version = get_u16(p + kOffVersion);
  const bool interp_container = container_version == kFormatVersionCompactInterp;
  const bool any_layout = container_version == kFormatVersionCompactShuffled;
  const bool classic_layout = h.version >= kFormatVersionWithoutMask && h.version <= kNewestLayoutVersion;
  if (any_layout ? !(classic_layout || is_scalar_interp_version(h.version))
      : interp_container ? !is_scalar_interp_version(h.version)
                         : !classic_layout)
    return corrupt_stream("header: layout version " + std::to_string(h.version) + " in a version " +
                          std::to_string(container_version) + " stream (" +
                          (interp_container ? std::string("22 or 23")
                           : any_layout     ? "2 to " + std::to_string(kNewestLayoutVersion) + ", 22 or 23"
                                            : "2 to " + std::to_string(kNewestLayoutVersion)) + ")");
  if (tile > UINT16_MAX || stride > UINT16_MAX)
    return corrupt_stream("header: tile " + std::to_string(tile) + " or anchor stride " + std::to_string(stride) +
                          " above 65535");
  h.tile = static_cast<uint16_t>(tile);
  h.anchor_stride = static_cast<uint16_t>(stride);
  Result<Header> checked = check_header(h);
  if (!checked.ok()) return checked.status();
  parsed.header = checked.value();
  parsed.entries = std::move(entries);
  parsed.layout = ContainerLayout::compact;
  parsed.compact_version = get_u16(p + kOffVersion);
  parsed.data_offset = r.at();
  return Status::Ok();
}

// Header and table of a classic stream (at least kHeaderSize bytes), offsets as stored.
Status parse_classic_prefix(std::span<const uint8_t> stream, ParsedContainer& parsed) {
  Result<Header> header = parse_header(stream);
  if (!header.ok()) return header.status();
  parsed.header = header.value();
  const uint32_t count = get_u32(stream.data() + kOffSectionCount);
  if (count > kMaxSections)
    return corrupt_stream("section count " + std::to_string(count) + " exceeds " +
                          std::to_string(kMaxSections));
  const uint64_t table_end = kHeaderSize + uint64_t{kSectionEntrySize} * count;
  if (stream.size() < table_end)
    return corrupt_stream("stream truncated in the section table (" + std::to_string(count) +
                          " entries need " + std::to_string(table_end) + " bytes, stream has " +
                          std::to_string(stream.size()) + ")");
  parsed.entries.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* p = stream.data() + kHeaderSize + kSectionEntrySize * i;
    if (crc32c({p, kEntEntryCrc}) != get_u32(p + kEntEntryCrc))
      return corrupt_stream("section table entry " + std::to_string(i) + " checksum mismatch");
    parsed.entries.push_back(decode_entry(p));
  }
  parsed.layout = ContainerLayout::classic;
  parsed.data_offset = table_end;
  return Status::Ok();
}

// Magic, then the header and table of either container (everything before the sections):
// the compact one when the version is 18 or 19, else the classic one.
Status parse_prefix(std::span<const uint8_t> stream, ParsedContainer& parsed) {
  if (stream.empty()) return corrupt_stream("empty stream");
  if (std::memcmp(stream.data(), kMagic, std::min<std::size_t>(stream.size(), 4)) != 0)
    return corrupt_stream("bad magic: not a FaCTz stream");
  if (stream.size() >= kOffVersion + 2 && is_compact_version(get_u16(stream.data() + kOffVersion)))
    return parse_compact_prefix(stream, parsed);
  if (stream.size() < kHeaderSize)
    return corrupt_stream("stream truncated in the header (" + std::to_string(stream.size()) + " of " +
                          std::to_string(kHeaderSize) + " bytes)");
  return parse_classic_prefix(stream, parsed);
}

// Everything after the header and table that parse_prefix read from this `stream`: each
// entry's rules and place (a compact table's offsets are set here), the stream's end, the
// zstd flags and every section CRC.
Status check_sections(std::span<const uint8_t> stream, ParsedContainer& parsed) {
  const Header& h = parsed.header;
  uint64_t expected_offset = parsed.data_offset;
  bool any_compressed = false, any_shuffled = false;
  const std::span<const ParsedContainer::Entry> entries(parsed.entries);
  for (std::size_t i = 0; i < parsed.entries.size(); ++i) {
    ParsedContainer::Entry& e = parsed.entries[i];
    // The compact table stores no offsets: each section starts where the previous one ends.
    if (parsed.layout == ContainerLayout::compact) e.offset = expected_offset;
    FACTZ_RETURN_IF_ERROR(
        check_entry(e, i, h, parsed.format_version(), expected_offset, stream.size(), entries.first(i)));
    any_compressed = any_compressed || (e.flags & kSectionFlagZstd) != 0;
    any_shuffled = any_shuffled || shuffle_width(e.flags) != 0;
    expected_offset = e.offset + e.stored_size;
  }
  if (expected_offset != stream.size())
    return corrupt_stream("unexpected data after the last section (" +
                          std::to_string(stream.size() - expected_offset) + " bytes)");
  if ((h.flags & kHeaderFlagZstd) != 0 && !any_compressed)
    return corrupt_stream("header zstd flag is set but no section is compressed");
  if (parsed.format_version() == kFormatVersionCompactShuffled && !any_shuffled)
    return corrupt_stream("a version 23 stream without a byte-shuffled section (version 23 is the compact container of "
                          "the streams that hold one)");
  // A version 19 stream holds a source section, and a scalar or 3D vector stream holds one
  // only in version 19 (a 2D vector stream also in versions 4 to 18, with a record of version 1;
  // the stream layer checks the record's version).
  const bool source = std::any_of(parsed.entries.begin(), parsed.entries.end(),
                                  [](const ParsedContainer::Entry& e) { return e.id == kSectionSource; });
  if (source && h.components != 2 && !is_source_version(parsed.format_version()) &&
      !record_names_own_version(parsed.format_version()))
    return corrupt_stream(label(kSectionSource) + " in a " + std::to_string(h.components) +
                          "-component stream of format version " + std::to_string(parsed.format_version()) +
                          " (scalar and 3D vector streams hold it from version 19 on)");
  if (!source && is_source_version(parsed.format_version()))
    return corrupt_stream("a version " + std::to_string(parsed.format_version()) +
                          " stream without a source section (versions 19 and 20 are the compact container of "
                          "the streams that hold one)");

  for (const auto& e : parsed.entries) {
    if (crc32c(stream.subspan(e.offset, e.stored_size)) != e.crc)
      return corrupt_stream(label(e.id) + " checksum mismatch");
  }
  return Status::Ok();
}

// The bytes of a stream: header and table in `layout` (a compact one of `compact_version`),
// then the stored sections. Entries' offsets are set here.
std::vector<uint8_t> assemble(const Header& h, std::vector<ParsedContainer::Entry>& entries,
                              const std::vector<std::span<const uint8_t>>& stored, ContainerLayout layout,
                              uint16_t compact_version) {
  std::vector<uint8_t> out;
  uint64_t size = 0;
  for (const auto& e : entries) size += e.stored_size;
  if (layout == ContainerLayout::compact) {
    out = encode_compact_prefix(h, entries, compact_version);
  } else {
    out.resize(kHeaderSize + kSectionEntrySize * entries.size());
  }
  uint64_t offset = out.size();
  for (auto& e : entries) {
    e.offset = offset;
    offset += e.stored_size;
  }
  if (layout == ContainerLayout::classic) {
    encode_header(h, static_cast<uint32_t>(entries.size()), out.data());
    for (std::size_t i = 0; i < entries.size(); ++i)
      encode_entry(entries[i], out.data() + kHeaderSize + kSectionEntrySize * i);
  }
  out.reserve(out.size() + size);
  for (const auto& bytes : stored) out.insert(out.end(), bytes.begin(), bytes.end());
  return out;
}

// ---- describe_container helpers -----------------------------------------------------------
const char* mode_name(uint8_t m) {
  switch (m) {
    case kModeNone: return "none";
    case kModeBlock: return "block";
    case kModeSpeculative: return "speculative";
    case kModeContourTree: return "contour-tree";
  }
  return "unknown";
}
const char* coder_name(uint8_t c) {
  switch (c) {
    case kCoderHuffman: return "huffman";
    case kCoderAns: return "ans";
    case kCoderContext: return "context";
  }
  return "unknown";
}
const char* bound_mode_name(uint8_t b) {
  switch (b) {
    case kBoundAbs: return "ABS";
    case kBoundRel: return "REL";
  }
  return "unknown";
}

}  // namespace

std::vector<uint8_t> shuffle_bytes(std::span<const uint8_t> in, unsigned w) {
  std::vector<uint8_t> out;
  out.reserve(in.size());
  for (std::size_t g = 0; g < w; ++g)
    for (std::size_t j = g; j < in.size(); j += w) out.push_back(in[j]);
  return out;
}

std::vector<uint8_t> unshuffle_bytes(std::span<const uint8_t> in, unsigned w) {
  std::vector<uint8_t> out(in.size());
  std::size_t at = 0;
  for (std::size_t g = 0; g < w; ++g)
    for (std::size_t j = g; j < in.size(); j += w) out[j] = in[at++];
  return out;
}

Status zstd_stage_section(std::span<const uint8_t> raw, unsigned shuffle, const Compressor& zstd,
                          std::vector<uint8_t>& frame, uint32_t& flags) {
  flags = 0;
  std::vector<uint8_t> packed, shuffled;
  FACTZ_RETURN_IF_ERROR(zstd(raw, packed));
  if (shuffle != 0 && raw.size() > shuffle) FACTZ_RETURN_IF_ERROR(zstd(shuffle_bytes(raw, shuffle), shuffled));
  // The shuffled frame only where strictly smaller than both others.
  if (!shuffled.empty() && shuffled.size() < packed.size() && shuffled.size() < raw.size()) {
    frame = std::move(shuffled);
    flags = kSectionFlagZstd | (shuffle == 8 ? kSectionFlagShuffle8 : kSectionFlagShuffle4);
  } else if (packed.size() < raw.size()) {
    frame = std::move(packed);
    flags = kSectionFlagZstd;
  }
  return Status::Ok();
}

uint16_t compact_version_for(std::span<const uint32_t> section_ids, uint8_t record_version) {
  const bool source = std::find(section_ids.begin(), section_ids.end(), kSectionSource) != section_ids.end();
  if (!source) return kFormatVersionCompact;
  return record_version >= 4   ? kFormatVersionCompactOwnDimensions
         : record_version == 3 ? kFormatVersionCompactAuxiliary
                               : kFormatVersionCompactSource;
}

uint16_t stream_version(std::span<const uint32_t> section_ids, bool packed_tiled_codes, uint8_t dtype,
                        bool predictor_byte) {
  const bool one_mask_section =
      std::find(section_ids.begin(), section_ids.end(), kSectionMaskAndValues) != section_ids.end();
  for (uint32_t id : section_ids) {
    if (id < kFirstVersion8Section) continue;
    if (dtype == kDtypeFloat64) return kFormatVersionFloat64Vector3D;
    return one_mask_section ? kFormatVersionMasked3D : kFormatVersionVector3D;
  }
  if (predictor_byte || one_mask_section) return kFormatVersionSegmentedCodes;
  if (dtype == kDtypeFloat64) return kFormatVersionFloat64;
  uint16_t version = kFormatVersionWithoutMask;
  for (uint32_t id : section_ids) {
    if (id >= kFirstVersion4Section) version = std::max(version, kFormatVersionWithSource);
    else if (id >= kFirstVersion3Section) version = std::max(version, kFormatVersionWithMask);
  }
  const bool masked = std::find(section_ids.begin(), section_ids.end(), kSectionMask) != section_ids.end();
  if (packed_tiled_codes && masked) version = kFormatVersionPackedTiledCodes;
  return version;
}

bool may_carry_predictor(uint8_t components, uint8_t mode) {
  return components == 2 && mode == kModeSpeculative;
}

bool is_vector3d_version(uint16_t version) {
  return version == kFormatVersionVector3D || version == kFormatVersionSegmented3D ||
         version == kFormatVersionMasked3D || version == kFormatVersionFloat64Vector3D;
}

bool has_predictor_byte(uint16_t version) {
  return version == kFormatVersionPredictor || version == kFormatVersionSegmentedCodes;
}

bool tiled_codes_are_packed(uint8_t components, uint8_t mode) {
  return components == 2 && (mode == kModeNone || mode == kModeBlock);
}

std::string section_name(uint32_t id) {
  if (known_section(id)) return kSectionNames[id];
  return "section_" + std::to_string(id);
}

bool has_section(const ParsedContainer& parsed, uint32_t id) {
  for (const auto& e : parsed.entries)
    if (e.id == id) return true;
  return false;
}

Result<std::vector<uint8_t>> write_container(const Header& header, std::vector<Section> sections,
                                             const Compressor* zstd, ContainerLayout layout) {
  std::vector<uint32_t> ids;
  for (const auto& sec : sections) ids.push_back(sec.id);
  const bool packed = tiled_codes_are_packed(header.components, header.mode);
  const uint16_t version = stream_version(ids, packed, header.dtype);
  // The predictor byte lies in the meta section, which this layer does not read: the caller
  // says so through the version, and the speculative decoder checks the two agree.
  const bool with_predictor = may_carry_predictor(header.components, header.mode) &&
                              header.version == stream_version(ids, packed, header.dtype, true);
  if ((header.components == 3) != is_vector3d_version(version))
    return invalid_argument("a stream of " + std::to_string(header.components) +
                            " component(s) with these sections: 3D vector streams, and only they, hold codes_w "
                            "(version 8)");
  // The segmented codes of a 3D speculative stream (version 10) lie in its codes sections,
  // which this layer does not read either: the caller says so through the version.
  const bool segmented3d = header.components == 3 && header.mode == kModeSpeculative &&
                           version == kFormatVersionVector3D && header.version == kFormatVersionSegmented3D;
  // A scalar stream on the lattice (versions 11, 14), context-coded (15 to 17) or on the
  // interpolation predictor (22, 23) holds the sections of version 2, 3 or 6.
  const bool lattice = header.components == 1 &&
                       (is_scalar_lattice_version(header.version) || is_context_version(header.version) ||
                        is_scalar_interp_version(header.version));
  if (header.version != version && !with_predictor && !segmented3d && !lattice)
    return invalid_argument("header version " + std::to_string(header.version) + " for these sections: version " +
                            std::to_string(version) +
                            " (2, 3 with mask sections, 4 with a source section, 5 for masked tiled codes, 6 for "
                            "float64; 9 for a speculative stream with a predictor byte, 8 for a 3D vector field, 10 for a 3D "
                            "speculative one with segmented codes, 11 or 14 for a scalar stream on the lattice, 12 for a 3D "
                            "vector field with missing vertices, 15 to 17 for a context-coded scalar stream)");
  Header h = header;
  h.flags = 0;  // derived below
  if (std::string problem = header_problem(h); !problem.empty())
    return invalid_argument("header: " + problem);
  if (sections.size() > kMaxSections)
    return invalid_argument(std::to_string(sections.size()) + " sections (at most " +
                            std::to_string(kMaxSections) + ")");
  // The source record's version (its first byte) picks 19, 20 or 21.
  uint8_t record_version = 2;
  for (const auto& sec : sections)
    if (sec.id == kSectionSource && !sec.raw.empty()) record_version = sec.raw[0];
  uint16_t compact_version = is_scalar_interp_version(h.version) ? kFormatVersionCompactInterp
                                                                 : compact_version_for(ids, record_version);
  if (layout == ContainerLayout::classic && is_source_version(compact_version))
    return invalid_argument("a stream with a source section is format version " + std::to_string(compact_version) +
                            ", which has no classic container");
  if (layout == ContainerLayout::classic && compact_version == kFormatVersionCompactInterp)
    return invalid_argument("a scalar stream on the interpolation predictor is format version 22, which has no "
                            "classic container");
  const uint64_t limit = raw_size_limit(h);
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const uint32_t id = sections[i].id;
    if (!known_section(id)) return invalid_argument("unknown section id " + std::to_string(id));
    for (std::size_t j = 0; j < i; ++j)
      if (sections[j].id == id) return invalid_argument("duplicate " + label(id));
    if (sections[i].raw.size() > limit)
      return invalid_argument(label(id) + " is larger than the raw-size cap of the format");
  }

  // Optional zstd stage; afterwards sections[i].raw holds the stored bytes.
  const bool can_compress = zstd != nullptr && static_cast<bool>(*zstd);
  std::vector<ParsedContainer::Entry> entries(sections.size());
  std::vector<std::span<const uint8_t>> stored(sections.size());
  for (std::size_t i = 0; i < sections.size(); ++i) {
    Section& s = sections[i];
    ParsedContainer::Entry& e = entries[i];
    e.id = s.id;
    e.flags = 0;
    e.raw_size = s.raw.size();
    if (s.shuffle != 0 && (s.id != kSectionExactValues || (s.shuffle != 4 && s.shuffle != 8)))
      return invalid_argument(label(s.id) + ": byte shuffle of width " + std::to_string(s.shuffle) +
                              " offered (only " + label(kSectionExactValues) + ", width 4 or 8)");
    if (s.zstd && can_compress && !s.raw.empty()) {
      std::vector<uint8_t> frame;
      uint32_t flags = 0;
      if (Status st = zstd_stage_section(s.raw, s.shuffle, *zstd, frame, flags); !st.ok())
        return with_context(st, label(s.id));
      if (flags != 0) {
        s.raw = std::move(frame);
        e.flags = flags;
        h.flags |= kHeaderFlagZstd;
        if (shuffle_width(flags) != 0) compact_version = kFormatVersionCompactShuffled;
      }
    }
    e.stored_size = s.raw.size();
    e.crc = (e.flags == 0 && s.raw_crc) ? *s.raw_crc : crc32c(s.raw);
    stored[i] = s.raw;
  }
  if (layout == ContainerLayout::classic && compact_version == kFormatVersionCompactShuffled)
    return invalid_argument("a stream with a byte-shuffled section is format version 23, which has no classic container");
  return assemble(h, entries, stored, layout, compact_version);
}

Result<ParsedContainer> parse_container(std::span<const uint8_t> stream) {
  ParsedContainer parsed;
  FACTZ_RETURN_IF_ERROR(parse_prefix(stream, parsed));
  FACTZ_RETURN_IF_ERROR(check_sections(stream, parsed));
  return parsed;
}

Result<uint64_t> leading_stream_size(std::span<const uint8_t> bytes) {
  ParsedContainer parsed;
  FACTZ_RETURN_IF_ERROR(parse_prefix(bytes, parsed));
  uint64_t end = parsed.data_offset;
  for (const auto& e : parsed.entries) {
    if (e.stored_size > bytes.size() - std::min<uint64_t>(end, bytes.size()))
      return corrupt_stream(label(e.id) + " lies outside the stream (it ends past the " +
                            std::to_string(bytes.size()) + " bytes given; truncated?)");
    end += e.stored_size;
  }
  FACTZ_RETURN_IF_ERROR(check_sections(bytes.first(end), parsed));
  return end;
}

int peek_components(std::span<const uint8_t> stream) {
  if (stream.size() < kOffVersion + 2 || std::memcmp(stream.data(), kMagic, 4) != 0) return 0;
  // Only a version this build reads says where the byte lies (a damaged one says nothing).
  const uint16_t version = get_u16(stream.data() + kOffVersion);
  if (version < kOldestReadableVersion || version > kFormatVersion) return 0;
  const std::size_t at = is_compact_version(version) ? kCompactFields.components : kOffComponents;
  return at < stream.size() ? stream[at] : 0;
}

Result<std::vector<uint8_t>> recontain(std::span<const uint8_t> stream, ContainerLayout layout) {
  Result<ParsedContainer> parsed = parse_container(stream);
  if (!parsed.ok()) return parsed.status();
  // Version 1 (an old ANS-free Huffman stream) has no compact form: its layout byte would be 1.
  if (layout == ContainerLayout::compact && parsed->header.version < kFormatVersionWithoutMask)
    return invalid_argument("a version 1 stream stays in the classic container (recompress it for version 18)");
  const uint16_t v = parsed->format_version();
  if (layout == ContainerLayout::classic && parsed->layout == ContainerLayout::compact &&
      (is_source_version(v) || record_names_own_version(v)))
    return invalid_argument("a version " + std::to_string(v) + " stream (" +
                            (v == kFormatVersionCompactInterp     ? "a scalar stream on the interpolation predictor"
                             : v == kFormatVersionCompactShuffled ? "one with a byte-shuffled section"
                                                                  : "one with a source section") +
                            ") has no classic container");
  std::vector<ParsedContainer::Entry> entries = parsed->entries;
  std::vector<std::span<const uint8_t>> stored;
  for (const auto& e : entries) stored.push_back(stream.subspan(e.offset, e.stored_size));
  // A compact stream keeps its version; a classic one (a source record of version 1, if any)
  // becomes version 18.
  const uint16_t version = parsed->layout == ContainerLayout::compact ? parsed->compact_version : kFormatVersionCompact;
  return assemble(parsed->header, entries, stored, layout, version);
}

Result<std::vector<uint8_t>> read_section(std::span<const uint8_t> stream,
                                          const ParsedContainer& parsed, uint32_t id,
                                          const Decompressor* zstd) {
  const ParsedContainer::Entry* entry = nullptr;
  for (const auto& e : parsed.entries)
    if (e.id == id) entry = &e;
  if (entry == nullptr) return corrupt_stream("missing " + label(id));
  if (entry->offset > stream.size() || entry->stored_size > stream.size() - entry->offset)
    return invalid_argument(label(id) + " lies outside the given stream (parsed from another?)");
  const auto stored = stream.subspan(entry->offset, entry->stored_size);
  if ((entry->flags & kSectionFlagZstd) == 0)
    return std::vector<uint8_t>(stored.begin(), stored.end());

  if (zstd == nullptr || !static_cast<bool>(*zstd))
    return invalid_argument(label(id) + " is zstd-compressed but no decompressor was given");
  std::vector<uint8_t> raw;
  if (Status st = (*zstd)(stored, entry->raw_size, raw); !st.ok())
    return with_context(st, label(id));
  if (raw.size() != entry->raw_size)
    return corrupt_stream(label(id) + " decompressed to " + std::to_string(raw.size()) +
                          " bytes, expected " + std::to_string(entry->raw_size));
  if (const unsigned w = shuffle_width(entry->flags); w != 0) return unshuffle_bytes(raw, w);
  return raw;
}

std::string describe_container(const ParsedContainer& parsed) {
  const Header& h = parsed.header;
  std::string s;
  char line[256];
  auto field = [&](const char* key, const std::string& value) {
    std::snprintf(line, sizeof line, "  %-15s %s\n", key, value.c_str());
    s += line;
  };
  uint64_t total = parsed.data_offset;
  for (const auto& e : parsed.entries) total += e.stored_size;

  s += "FaCTz stream (magic FCTZ), format version " + std::to_string(parsed.format_version());
  if (parsed.layout == ContainerLayout::compact)
    s += ": compact container, sections of format version " + std::to_string(h.version);
  s += "\n";
  field("stream bytes", std::to_string(total));
  field("data type", h.dtype == kDtypeFloat32   ? std::string("float32")
                     : h.dtype == kDtypeFloat64 ? std::string("float64")
                                                : "unknown (" + std::to_string(h.dtype) + ")");
  field("dimensions", std::to_string(h.ndims) + "D, nx=" + std::to_string(h.nx) +
                          " ny=" + std::to_string(h.ny) + " nz=" + std::to_string(h.nz));
  field("components", std::to_string(h.components));
  field("mode", mode_name(h.mode));
  if (h.components == 1)  // scalar streams: layouts 22 and 23 on the interpolation predictor
    field("predictor", is_scalar_interp_version(h.version)    ? "interpolation"
                       : is_scalar_lattice_version(h.version) ? "lorenzo (on the lattice)"
                                                              : "lorenzo");
  field("coder", coder_name(h.coder));
  field("bound", std::string(bound_mode_name(h.bound_mode)) + " " + shortest(h.bound_value));
  field("eb (absolute)", shortest(h.eb));
  field("tile", std::to_string(h.tile));
  field("anchor stride", h.anchor_stride == 0 ? "0 (unused)" : std::to_string(h.anchor_stride));
  field("zstd stage", (h.flags & kHeaderFlagZstd) != 0 ? "applied" : "not applied");
  field("sections", std::to_string(parsed.entries.size()));
  std::snprintf(line, sizeof line, "    %3s  %-13s %14s %14s  %-4s  %-7s  %s\n", "id", "name", "stored",
                "raw", "zstd", "shuffle", "crc32c");
  s += line;
  for (const auto& e : parsed.entries) {
    const unsigned w = shuffle_width(e.flags);
    std::snprintf(line, sizeof line, "    %3u  %-13s %14llu %14llu  %-4s  %-7s  0x%08x\n",
                  static_cast<unsigned>(e.id), section_name(e.id).c_str(),
                  static_cast<unsigned long long>(e.stored_size),
                  static_cast<unsigned long long>(e.raw_size),
                  (e.flags & kSectionFlagZstd) != 0 ? "yes" : "no", w == 8 ? "8 bytes" : w == 4 ? "4 bytes" : "no",
                  static_cast<unsigned>(e.crc));
    s += line;
  }
  return s;
}

}  // namespace factz::detail
