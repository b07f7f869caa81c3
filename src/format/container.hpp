// The FaCTz container: in format versions 1 to 17 (the classic container) a 64-byte header, a table of
// 40-byte section entries, then the sections back to back; in version 18 (the compact container)
// the same fields with varint sizes and one checksum for header and table, then the sections. docs/format.md is the byte-level contract;
// this file and container.cpp implement exactly that text.
//
// Invariants every parsed stream satisfies (parse_container checks them all):
//  - every byte is covered by a CRC-32C (header, each table entry, each section; in the
//    compact container header and table share one);
//  - sections follow the table without gaps, in table order, and end the stream;
//  - no reserved bit or value is set; each section id is known and appears once.
// Decoding untrusted bytes never reads out of bounds: it returns corrupt_stream (or
// unsupported_version) with a message naming what is wrong.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "factz/status.hpp"

namespace factz::detail {

/// Largest raw / stored ratio accepted for a zstd-compressed section (see validate).
inline constexpr uint64_t kMaxZstdExpansion = uint64_t(1) << 16;

// ---- Fixed sizes and limits of format version 2 -------------------------------------
/// The newest version this build reads and writes. Version 2 changed the ANS blob (order-1
/// contexts, lanes per plane, sparse planes) and added scalar streams; the container layout
/// is that of version 1, so version 1 streams coded with Huffman are still read. Version 3
/// adds the mask sections (missing vertices), version 4 the `source` section (where the
/// field came from: a netCDF or HDF5 variable). Version 5 changes the codes of a masked
/// vector stream in mode none or block: a missing vertex has no symbol (streams/tiled_lists.hpp
/// spread_valid_symbols). A writer picks the lowest version that holds its sections and
/// layout (stream_version): a stream without either is version 2, byte for byte what
/// earlier builds wrote and readable by them; builds that stop at an older version refuse a
/// newer stream as unsupported (docs/format.md). Version 6 is every float64 stream (data
/// type 2, issue 18): 8-byte exact and masked values, the f64 bound in the meta section, the
/// layout of version 5 otherwise; a float32 stream is never version 6. Version 7 is every
/// speculative stream whose meta section names its predictor (a byte after the bound-id
/// range, the radius and the f64 bound; the cubic predictor, kernels/interpolation.hpp),
/// float32 or float64; a speculative stream made with the linear predictor has no such
/// byte and keeps the version of its other contents. Version 8 is every 3D vector stream
/// (components 3, ndims 3; issue 22): the `codes_w` section, and the layout of the 3D
/// speculative mode (docs/format.md); a version 8 stream is a 3D vector field. Version 9 is
/// version 7 with segmented codes (streams/code_segments.hpp: the codes sections of a 2D
/// speculative stream cut at phase boundaries, one blob per segment); this build writes every
/// 2D speculative stream with a predictor byte as version 9 and still reads version 7.
/// Version 10 is a 3D vector stream in mode speculative with segmented codes (version 8 with
/// the codes sections of version 9); 3D streams of modes none and block stay version 8, and
/// version 8 speculative streams are still read. Version 11 is a contour-tree scalar stream
/// on the step's lattice. Version 12 is a 3D vector stream with missing vertices, in any
/// mode: the `mask_and_values` section (its masked values are triples), codes that leave the
/// missing vertices out in modes none and block (as version 5), and the segmented codes of
/// version 10 in mode speculative; an unmasked 3D stream stays version 8 or 10, byte for byte.
/// Version 13 is every float64 3D vector stream (data type 2, components 3; issue 22 with
/// issue 18's values), in any mode, masked or not: the layout of versions 10 (speculative:
/// segmented codes) and 8 (none, block), the f64 bound in the meta section, exact values as
/// f64 and the masked values of `mask_and_values` (when present: then the codes leave the
/// missing vertices out, as in version 12) as u64 triples. Float32 3D streams keep 8, 10, 12.
/// Version 14 is version 11 (a contour-tree scalar stream on the lattice) whose exact values
/// are coded against the decoder's predictions (scalar/exact_residuals.hpp); the writer
/// keeps version 11 where the raw values are as small.
/// Versions 15, 16 and 17 are the scalar layouts of versions 2 / 3 / 6, 11 and 14 with their
/// codes written by the context coder (coder 2, codec/context_coder.hpp): a scalar stream
/// holds coder 2 exactly when it is one of these versions.
/// Version 18 is the compact container (docs/format.md, "Compact container"): the same
/// header fields and sections in fewer bytes (varint dimensions and sizes, an 8-byte-or-so
/// table entry, one CRC for header and table), so that a small stream is not a third
/// container. Its header holds the version 2 to 17 of the layout of its sections (the
/// version a 64-byte-header stream of the same sections carries), which the parsed Header's
/// `version` is; offset 4 holds 18, so that a build that reads only up to 17 refuses it as
/// unsupported. Every stream this build writes is a compact one (18 to 23); versions 1 to 17 are read.
/// Version 19 is the compact container of a stream that holds a `source` section (12) with a
/// record of version 2 (coordinates coded as differences, format/source_record.cpp), which
/// since version 19 may also be a scalar or a 3D vector stream: until version 18 only 2D
/// vector streams carried one (record version 1), and older readers would call a version 2
/// record or a 3D stream's source section damaged; this version makes them answer
/// unsupported instead. It is written exactly then (compact_version_for), so every stream
/// without a source section stays version 18, byte for byte; a version 19 stream has no
/// classic form. Version 18 (and classic) 2D streams with a record of version 1 are read.
/// Version 20 is version 19 with a record of version 3, which also holds the auxiliary
/// variables its components' attributes name (CF `coordinates`, `grid_mapping`): written
/// exactly when the record has some (the record's first byte says so), so every other stream
/// with a record stays version 19; builds that read up to 19 answer unsupported.
/// Version 21 is version 20 with a record of version 4, whose auxiliary variables may have
/// dimensions of their own (CF cell bounds): written exactly then, every other stream as before.
/// Version 22 is the compact container of a scalar stream on the interpolation predictor
/// (layout versions 22 and 23, below), with or without a source section (a record of version
/// 2 to 4, which its first byte names): written exactly for those layouts, so that builds that
/// read up to 21 answer unsupported; every other stream as before. It has no classic container.
/// Version 23 is the compact container of any stream this build writes whose `exact_values`
/// section (6) is stored byte-shuffled before the zstd stage (section flag bit 1 or 2,
/// kSectionFlagShuffle4 / 8): layout 2 to 17, 22 or 23, with or without a source section
/// (its record names its own version, 2 to 4, as in version 22). Written exactly when a
/// section is shuffled, so that builds that read up to 22 answer unsupported; a version 23
/// stream without a shuffled section is corrupt. It has no classic container.
inline constexpr uint16_t kFormatVersion = 23;
inline constexpr uint16_t kFormatVersionCompact = 18;
inline constexpr uint16_t kFormatVersionCompactSource = 19;
inline constexpr uint16_t kFormatVersionCompactAuxiliary = 20;
inline constexpr uint16_t kFormatVersionCompactOwnDimensions = 21;
inline constexpr uint16_t kFormatVersionCompactInterp = 22;
inline constexpr uint16_t kFormatVersionCompactShuffled = 23;
/// Whether a compact version is one of the streams with a source section (19, 20, 21).
inline constexpr bool is_source_version(uint16_t v) {
  return v == kFormatVersionCompactSource || v == kFormatVersionCompactAuxiliary ||
         v == kFormatVersionCompactOwnDimensions;
}
/// Whether offset 4's version is one of the compact container's (18 to 23).
inline constexpr bool is_compact_version(uint16_t v) {
  return v == kFormatVersionCompact || is_source_version(v) || v == kFormatVersionCompactInterp ||
         v == kFormatVersionCompactShuffled;
}
/// Whether a compact version's source record (if any) names its own version (22, 23).
inline constexpr bool record_names_own_version(uint16_t v) {
  return v == kFormatVersionCompactInterp || v == kFormatVersionCompactShuffled;
}
/// The source record version a stream of format version `v` holds: 4 in version 21, 3 in
/// version 20, 2 in version 19, 1 in the 2D vector streams of versions 4 to 18; 0 in versions
/// 22 and 23, where the record names its own (2 to 4).
inline constexpr uint8_t source_record_version(uint16_t v) {
  return record_names_own_version(v)               ? 0
         : v == kFormatVersionCompactOwnDimensions ? 4
         : v == kFormatVersionCompactAuxiliary   ? 3
         : v == kFormatVersionCompactSource      ? 2
                                                 : 1;
}
/// The newest layout version of the classic container (a compact stream's layout byte is
/// 2 .. this, or 22 / 23 in a version 22 stream).
inline constexpr uint16_t kNewestLayoutVersion = 17;
inline constexpr uint16_t kFormatVersionWithoutMask = 2;
inline constexpr uint16_t kFormatVersionWithMask = 3;
inline constexpr uint16_t kFormatVersionWithSource = 4;
inline constexpr uint16_t kFormatVersionPackedTiledCodes = 5;
inline constexpr uint16_t kFormatVersionFloat64 = 6;
inline constexpr uint16_t kFormatVersionPredictor = 7;
inline constexpr uint16_t kFormatVersionVector3D = 8;
inline constexpr uint16_t kFormatVersionSegmentedCodes = 9;
inline constexpr uint16_t kFormatVersionSegmented3D = 10;
inline constexpr uint16_t kFormatVersionScalarLattice = 11;  ///< scalar codes on the step's lattice
inline constexpr uint16_t kFormatVersionMasked3D = 12;
inline constexpr uint16_t kFormatVersionFloat64Vector3D = 13;  ///< every float64 3D vector stream
inline constexpr uint16_t kFormatVersionScalarLatticeCoded = 14;  ///< version 11 with coded exact values
inline constexpr uint16_t kFormatVersionScalarContext = 15;  ///< versions 2, 3, 6 with context-coded codes
inline constexpr uint16_t kFormatVersionScalarLatticeContext = 16;  ///< version 11 with context-coded codes
inline constexpr uint16_t kFormatVersionScalarLatticeCodedContext = 17;  ///< version 14 with context-coded codes
/// Layout versions 22 and 23: a scalar stream (mode none or contour-tree) on the
/// interpolation predictor (scalar/scalar_interp.hpp) with the sections of version 2 / 3 / 6:
/// codes of the valid vertices in index order, exact values in the predictor's walk order;
/// 23 with context-coded codes. Only in a version 22 compact container.
inline constexpr uint16_t kFormatVersionScalarInterp = 22;
inline constexpr uint16_t kFormatVersionScalarInterpContext = 23;
inline constexpr bool is_scalar_interp_version(uint16_t v) { return v == 22 || v == 23; }
/// Versions whose codes are context-coded (coder 2), and the layout version each extends.
inline constexpr bool is_context_version(uint16_t v) { return (v >= 15 && v <= 17) || v == 23; }
/// Whether a scalar stream's codes are on the lattice (versions 11, 14, 16, 17) and whether
/// its exact values are coded (14, 17).
inline constexpr bool is_scalar_lattice_version(uint16_t v) { return v == 11 || v == 14 || v == 16 || v == 17; }
inline constexpr bool is_scalar_coded_exact_version(uint16_t v) { return v == 14 || v == 17; }
inline constexpr uint16_t kOldestReadableVersion = 1;
inline constexpr uint8_t kMagic[4] = {'F', 'C', 'T', 'Z'};
inline constexpr std::size_t kHeaderSize = 64;        ///< bytes, header CRC included
inline constexpr std::size_t kHeaderCrcOffset = 60;   ///< header CRC covers bytes [0, 60)
inline constexpr std::size_t kSectionEntrySize = 40;  ///< bytes per section table entry
inline constexpr uint32_t kMaxSections = 256;
inline constexpr uint64_t kMaxElements = uint64_t{1} << 40;  ///< cap on nx * ny * nz
inline constexpr uint8_t kMaxComponents = 3;  ///< 3: 3D vector fields only
/// Sanity cap on a section's raw size: kMaxRawBytesPerValue * nx*ny*nz*components +
/// kRawSizeSlack. Rejects absurd declared sizes before anything is allocated for them.
inline constexpr uint64_t kMaxRawBytesPerValue = 32;
inline constexpr uint64_t kRawSizeSlack = uint64_t{1} << 24;

// ---- Header field values -------------------------------------------------------------
inline constexpr uint8_t kDtypeFloat32 = 1;
/// float64: 2D vector and 2D/3D scalar streams, format version 6 (7 with a predictor byte);
/// 3D vector streams, version 13.
inline constexpr uint8_t kDtypeFloat64 = 2;
inline constexpr uint8_t kModeNone = 0;         ///< plain error-bounded baseline
inline constexpr uint8_t kModeBlock = 1;        ///< FaCTz-B
inline constexpr uint8_t kModeSpeculative = 2;  ///< FaCTz-S
inline constexpr uint8_t kModeContourTree = 3;  ///< TopoSZ, scalar streams only (components 1)
inline constexpr uint8_t kCoderHuffman = 0;
inline constexpr uint8_t kCoderAns = 1;
inline constexpr uint8_t kCoderContext = 2;  ///< scalar streams of versions 15-17 only
inline constexpr uint8_t kBoundAbs = 0;  ///< bound_value is the absolute bound
inline constexpr uint8_t kBoundRel = 1;  ///< bound_value is a fraction of the value range
/// Header flag bit 0: at least one section is stored zstd-compressed.
inline constexpr uint8_t kHeaderFlagZstd = 0x01;
/// Section flag bit 0: the stored bytes are a zstd frame of the raw bytes.
inline constexpr uint32_t kSectionFlagZstd = 0x01;
/// Section flag bit 1 (bit 2): the zstd frame holds the raw bytes byte-shuffled with width 4
/// (8), shuffle_bytes; only with bit 0, never both, only on `exact_values` (6), only in a
/// format version 23 stream (docs/format.md, "Byte-shuffled sections").
inline constexpr uint32_t kSectionFlagShuffle4 = 0x02;
inline constexpr uint32_t kSectionFlagShuffle8 = 0x04;
/// The shuffle width a section's flags name: 4, 8, or 0 (not shuffled).
inline constexpr unsigned shuffle_width(uint32_t flags) {
  return (flags & kSectionFlagShuffle4) ? 4u : (flags & kSectionFlagShuffle8) ? 8u : 0u;
}

// ---- Section ids (their names appear in error messages and `factz info`) -------------
// Contents are defined per mode in docs/format.md. Adding an id means adding its name in
// container.cpp and bumping the format version.
inline constexpr uint32_t kSectionMeta = 1;          ///< mode-specific small parameters
inline constexpr uint32_t kSectionTileBounds = 2;    ///< per-tile bound ids
inline constexpr uint32_t kSectionCodesU = 3;        ///< quantization codes of u
inline constexpr uint32_t kSectionCodesV = 4;        ///< quantization codes of v
inline constexpr uint32_t kSectionExactIndex = 5;    ///< indices of exactly stored vertices
inline constexpr uint32_t kSectionExactValues = 6;   ///< values of exactly stored vertices
inline constexpr uint32_t kSectionOutliers = 7;      ///< out-of-range codes
inline constexpr uint32_t kSectionBoundIdsU = 8;     ///< per-vertex bound ids (speculative; both components)
// Id 9 (`bound_ids_v`, a per-component id stream) is reserved by docs/format.md and never
// written: no constant names it, but the container still knows its name and accepts it, as
// the spec's section table says.
inline constexpr uint32_t kSectionMask = 10;          ///< missing vertices, run-length coded (version 3)
inline constexpr uint32_t kSectionMaskedValues = 11;  ///< the missing vertices' stored bits (version 3)
inline constexpr uint32_t kSectionSource = 12;        ///< the source record: variable, dimensions, attributes (version 4)
/// `mask` and `masked_values` in one section, instead of the two (version 7: a speculative
/// stream with a predictor byte writes this one; one table entry less)
inline constexpr uint32_t kSectionMaskAndValues = 13;
inline constexpr uint32_t kSectionCodesW = 14;        ///< quantization codes of w (3D vector fields, version 8)
inline constexpr uint32_t kLastSectionId = 14;        ///< ids are 1..kLastSectionId
/// The first id a stream may hold only from version 3 on.
inline constexpr uint32_t kFirstVersion3Section = kSectionMask;
/// The first id a stream may hold only from version 4 on.
inline constexpr uint32_t kFirstVersion4Section = kSectionSource;
/// The first id a stream may hold only from version 7 on.
inline constexpr uint32_t kFirstVersion7Section = kSectionMaskAndValues;
/// The first id a stream may hold only from version 8 on (and only in a 3D vector stream).
inline constexpr uint32_t kFirstVersion8Section = kSectionCodesW;

/// The lowest format version that holds sections with these ids: 4 with a `source`
/// section, else 3 with mask sections, else 2; 5 for a masked stream whose codes leave out
/// the missing vertices (`packed_tiled_codes`: the vector modes none and block,
/// tiled_codes_are_packed); 6 for every float64 stream (`dtype` kDtypeFloat64), whatever its
/// sections; 9 for every stream whose meta section ends with a predictor byte
/// (`predictor_byte`: a speculative vector stream not made with the linear predictor, whose
/// codes are segmented), float32 or float64, and for every stream with a `mask_and_values`
/// section (7 is never written since version 9; it is still read); 8 for every
/// stream with a `codes_w` section (a 3D vector field), 12 when it also holds
/// `mask_and_values` (a 3D vector field with missing vertices); 13 for every float64 stream
/// with a `codes_w` section (a float64 3D vector field, masked or not).
/// write_container requires exactly this version, so every stream has one version for its
/// contents.
uint16_t stream_version(std::span<const uint32_t> section_ids, bool packed_tiled_codes = false,
                        uint8_t dtype = kDtypeFloat32, bool predictor_byte = false);

/// Whether a stream of this header may carry a predictor byte in its meta section (and so
/// be version 7): a 2D vector field in mode speculative. The container does not read the
/// meta section; the speculative decoder checks the byte against the version
/// (streams/vector_stream.hpp parse_speculative_meta).
bool may_carry_predictor(uint8_t components, uint8_t mode);

/// Whether a stream of this version holds a 3D vector field (and only such a stream may):
/// versions 8, 10, 12 and 13.
bool is_vector3d_version(uint16_t version);

/// Whether a version's stream names its predictor in the meta section (versions 7 and 9).
bool has_predictor_byte(uint16_t version);

/// Whether a stream of this header writes its tiled codes without the missing vertices
/// when it is masked (format version 5 on): a 2D vector field in mode none or block.
bool tiled_codes_are_packed(uint8_t components, uint8_t mode);

/// The two containers: `classic` (versions 1 to 17: 64-byte header, 40-byte table entries),
/// `compact` (version 18, what write_container writes unless told otherwise).
enum class ContainerLayout : uint8_t { classic, compact };

/// The header fields, as written (offsets in docs/format.md, "Header"). `version` is the
/// layout version of the sections (2 to 17, 1 for old streams), also in a compact stream.
struct Header {
  uint16_t version = kFormatVersionWithoutMask;  ///< stream_version: 2, 3 (mask), 4 (source), 5 (packed tiled codes), 6 (float64), 7 (predictor byte), 8 (3D vector), 11 (scalar lattice), 12 (masked 3D vector), 13 (float64 3D vector), 14 (scalar lattice, coded exact values)
  uint8_t dtype = kDtypeFloat32;  ///< kDtypeFloat32, or kDtypeFloat64 (version 6 or 7)
  uint8_t components = 2;  ///< 1 (scalar), 2 (u, v), or 3 (u, v, w: 3D only, version 8)
  uint8_t ndims = 2;       ///< 2, or 3 for scalar fields (components 1) and 3D vector fields (components 3)
  uint8_t mode = kModeNone;
  uint8_t coder = kCoderHuffman;
  /// Derived by write_container from the sections (kHeaderFlagZstd); the value passed in
  /// is ignored. Parsed headers carry the stored flags.
  uint8_t flags = 0;
  uint64_t nx = 0, ny = 0, nz = 1;  ///< extents, x fastest; nz is 1 for 2D
  uint8_t bound_mode = kBoundAbs;
  double bound_value = 0;  ///< as the user gave it: absolute value or relative fraction
  float eb = 0;            ///< absolute bound actually used (finite, >= 0); float64 streams: float_bound of the meta section's f64 bound
  uint16_t tile = 32;      ///< tile edge in vertices, > 0
  uint16_t anchor_stride = 0;  ///< speculative anchor spacing; 0 when unused
};

/// One section as a mode produces it.
struct Section {
  uint32_t id = 0;           ///< one of the kSection* ids, unique within a stream
  std::vector<uint8_t> raw;  ///< the section's content before the optional zstd stage
  bool zstd = false;         ///< offer it to the zstd stage (kept only if it shrinks)
  /// With zstd: also offer the zstd stage the bytes shuffled with this width (4 or 8; 0: no),
  /// kept (flag kSectionFlagShuffle4 / 8, format version 23) only where strictly smaller.
  /// Only `exact_values` (6) may be shuffled.
  uint8_t shuffle = 0;
  /// CRC-32C of `raw` when the caller already has it (the CUDA backend folds it from device
  /// checksums of the payloads); used when the section is stored raw, recomputed otherwise.
  std::optional<uint32_t> raw_crc = std::nullopt;
};

/// The byte shuffle of width `w` (docs/format.md, "Byte-shuffled sections"): for g = 0 .. w-1 in
/// turn, the bytes in[j] with j mod w = g, in increasing j. Any size (the groups differ by at
/// most one byte). unshuffle_bytes is its inverse.
std::vector<uint8_t> shuffle_bytes(std::span<const uint8_t> in, unsigned w);
std::vector<uint8_t> unshuffle_bytes(std::span<const uint8_t> in, unsigned w);

/// Compresses `in` into `out` (replacing out's content). Used for the zstd stage; taken as
/// a callback so the format layer stays independent of the codec layer.
using Compressor = std::function<Status(std::span<const uint8_t> in, std::vector<uint8_t>& out)>;
/// Decompresses `in` into `out`; `raw_size` is the size the container declares. It must
/// fail (not truncate, not pad) when the data does not decode to exactly raw_size bytes,
/// and should allocate only as output is produced, since raw_size comes from the stream.
using Decompressor = std::function<Status(std::span<const uint8_t> in, uint64_t raw_size,
                                          std::vector<uint8_t>& out)>;

/// The zstd stage of one section, as write_container runs it: `raw`'s zstd frame or, with
/// `shuffle` (4 or 8; 0: not offered), the frame of its byte shuffle, the smaller where it is
/// strictly smaller than the raw bytes (the plain frame on a tie). `flags` the entry flags of
/// what is kept: 0 (the raw bytes; `frame` untouched), kSectionFlagZstd, or that with
/// kSectionFlagShuffle4 / 8; `frame` the kept frame. A failing compressor's Status is passed on.
Status zstd_stage_section(std::span<const uint8_t> raw, unsigned shuffle, const Compressor& zstd,
                          std::vector<uint8_t>& frame, uint32_t& flags);

/// Serializes the header and sections (in the given order); the header's version must be
/// stream_version of the sections (without a predictor byte, or, for a header that
/// may_carry_predictor, with one: the caller knows its meta section). Sections with `zstd` set are
/// passed to `*zstd` and stored compressed when the result is strictly smaller; `zstd`
/// null means no section is compressed. Returns invalid_argument for a header that
/// parse_container would reject, unknown or duplicate section ids, more than kMaxSections
/// sections, or a section above the raw-size cap; a failing compressor's Status is passed
/// on with the section named. `layout` compact (the default) writes a version 18 stream (19 to
/// 21: compact_version_for; 22 for the scalar interpolation layouts; 23 when a section offered
/// the byte shuffle is stored shuffled) whose layout byte is `header.version`; classic writes
/// the 64-byte header of `header.version` (invalid_argument for a stream of version 19 to 23).
Result<std::vector<uint8_t>> write_container(const Header& header, std::vector<Section> sections,
                                             const Compressor* zstd,
                                             ContainerLayout layout = ContainerLayout::compact);

/// The version a compact stream of these sections carries at offset 4 when this build writes
/// it: 19 with a `source` section whose record is of version 2 (`record_version`, the
/// section's first byte), 20 with one of version 3, 21 with one of version 4, else 18.
uint16_t compact_version_for(std::span<const uint32_t> section_ids, uint8_t record_version = 2);

/// A validated stream: header plus one entry per section, in table (and stream) order.
struct ParsedContainer {
  Header header;
  struct Entry {
    uint32_t id;
    uint32_t flags;        ///< kSectionFlagZstd or 0
    uint64_t offset;       ///< from the start of the stream
    uint64_t stored_size;  ///< bytes in the stream
    uint64_t raw_size;     ///< bytes after decompression (== stored_size when not compressed)
    uint32_t crc;          ///< CRC-32C of the stored bytes
  };
  std::vector<Entry> entries;
  ContainerLayout layout = ContainerLayout::classic;  ///< which container the stream is in
  uint64_t data_offset = 0;  ///< where the first section starts (header and table end)
  uint16_t compact_version = kFormatVersionCompact;  ///< offset 4 of a compact stream: 18 to 23
  /// The version at offset 4: `header.version` in a classic stream, 18 to 23 in a compact one.
  uint16_t format_version() const {
    return layout == ContainerLayout::compact ? compact_version : header.version;
  }
};

/// Validates the header, the section table and every section checksum of `stream`.
/// Errors: unsupported_version when the version is outside kOldestReadableVersion ..
/// kFormatVersion, or for a version 1 stream coded with the version 1 ANS blob;
/// corrupt_stream otherwise.
Result<ParsedContainer> parse_container(std::span<const uint8_t> stream);

/// The raw bytes of section `id` of a stream accepted by parse_container (`parsed` must
/// come from that same `stream`; bounds are rechecked, checksums are not). Decompresses
/// through `*zstd` when the section is flagged; invalid_argument when it is flagged and
/// `zstd` is null, corrupt_stream when the section is missing or decompresses badly.
Result<std::vector<uint8_t>> read_section(std::span<const uint8_t> stream,
                                          const ParsedContainer& parsed, uint32_t id,
                                          const Decompressor* zstd);

/// The same stream in the other container (or the same one): the header fields and the
/// stored bytes of every section unchanged, only the header and table re-encoded. The input
/// is validated first (parse_container's errors). For tests and for writing streams that
/// builds before version 18 read.
Result<std::vector<uint8_t>> recontain(std::span<const uint8_t> stream, ContainerLayout layout);

/// The stream at the start of `bytes`, which may go on with other data (streams stored back to
/// back, as FactzCodec's chunks): its length, taken from its header and table (either
/// container) and checked by parse_container on exactly that many bytes; parse_container's
/// errors otherwise (a table that runs past the bytes: corrupt_stream, "truncated").
Result<uint64_t> leading_stream_size(std::span<const uint8_t> bytes);

/// The components byte of a stream's header (offset 7 of a classic header, 8 of a compact
/// one), unvalidated; 0 when the bytes do not start with the magic and a version this build
/// reads.
int peek_components(std::span<const uint8_t> stream);

/// Whether the stream has a section with this id.
bool has_section(const ParsedContainer& parsed, uint32_t id);

/// "codes_u" etc. for known ids, "section_<id>" otherwise.
std::string section_name(uint32_t id);

/// Multi-line human-readable summary of a parsed stream, for `factz info`.
std::string describe_container(const ParsedContainer& parsed);

}  // namespace factz::detail
