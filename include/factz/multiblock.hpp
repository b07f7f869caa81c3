// Domain-decomposed compression (docs/multiblock.md): a global nx x ny grid split into
// px x py rectangular blocks that share their boundary rows and columns. Shared boundary
// vertices are stored exactly by both blocks, so every triangle of the global mesh lies in
// exactly one block and sees the same values there as in the global field: the per-block
// guarantees add up to the global one. Each block is an ordinary FaCTz stream; a
// multi-block file ("FZMB") puts an index (global offsets, sizes, byte ranges) in front of
// them, so one process or many can read it and any block decodes alone.
//
// float32 fields (VectorField2D) and float64 fields (VectorField2D64) take the same calls
// (one implementation, templated on the value type in multiblock.cpp): a float64 field's
// blocks are float64 streams (format version 6), its shared lines are stored with all 64
// bits, and its file is decoded by decompress_multiblock64 / decompress_region64.
//
// Nothing here needs MPI: the MPI driver (src/mpi) only distributes the blocks of this
// layout over ranks; the bytes of every block, and of the file, do not depend on how many
// ranks wrote them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "factz/factz.hpp"
#include "factz/io.hpp"  // SourceRecord

namespace factz {

/// Bits of Options::exact_edges: which outer rows/columns of a field are stored exactly.
enum EdgeBits : uint8_t {
  kEdgeXMin = 1,  ///< column x = 0
  kEdgeXMax = 2,  ///< column x = nx - 1
  kEdgeYMin = 4,  ///< row y = 0
  kEdgeYMax = 8,  ///< row y = ny - 1
  kEdgeAll = 15,
};

/// Vertices [x0, x0 + nx) x [y0, y0 + ny) of the global grid.
struct BlockExtent {
  int64_t x0 = 0, y0 = 0, nx = 0, ny = 0;
};

/// px x py blocks; block b = by * px + bx covers the bx-th column band and by-th row band.
/// Neighbouring blocks share one column (or row) of vertices.
struct BlockLayout {
  int64_t nx = 0, ny = 0;
  int px = 0, py = 0;
  std::vector<BlockExtent> blocks;  ///< px * py, in block order

  int count() const { return px * py; }
  /// The edges of block b that are shared with a neighbour (EdgeBits).
  uint8_t shared_edges(int b) const;
};

/// Splits the (nx - 1) cells along x as evenly as possible into px bands (the first
/// (nx - 1) % px bands take one more), the same along y. Every block needs at least one
/// cell along each axis it is split on: px <= nx - 1 when px > 1 (same for py).
Result<BlockLayout> make_block_layout(int64_t nx, int64_t ny, int px, int py);

/// The global extent's value range over both components {lo, hi}, for REL bounds that
/// must be resolved over the global field (MPI reduces the per-rank ranges). Doubles: a
/// float32 field's values are held exactly, a float64 field's are never rounded.
struct ValueRange {
  double lo = 0, hi = 0;
  bool empty = true;
};
ValueRange value_range_of(const VectorField2D& f);
ValueRange value_range_of(const VectorField2D64& f);
ValueRange merge(ValueRange a, ValueRange b);
/// The absolute bound compress() would use for the whole field: bound (ABS) or
/// bound * (hi - lo) (REL); invalid_argument for a bad bound.
Result<double> absolute_bound(const Options& o, ValueRange global);

/// Copies block `e` out of a global field (its values and its mask).
VectorField2D extract_block(const VectorField2D& global, const BlockExtent& e);
VectorField2D64 extract_block(const VectorField2D64& global, const BlockExtent& e);

/// Compresses block b of `layout` whose values are `block` (extent-sized): ABS bound
/// eb_abs (the global one, see absolute_bound) and the block's shared edges exact.
/// A float64 block gives a float64 stream.
Result<std::vector<uint8_t>> compress_block(const VectorField2D& block, const BlockLayout& layout, int b,
                                            const Options& o, double eb_abs, CompressStats* stats = nullptr);
Result<std::vector<uint8_t>> compress_block(const VectorField2D64& block, const BlockLayout& layout, int b,
                                            const Options& o, double eb_abs, CompressStats* stats = nullptr);

/// The multi-block file ("FZMB", docs/format.md "Multi-block files"): header, index, then
/// the block streams back to back in block order.
struct MultiBlockIndex {
  BlockLayout layout;
  uint8_t bound_mode = 0;  ///< the user's bound as given (the blocks carry the absolute one)
  double bound_value = 0;
  /// The blocks' value type: float32 (file version 1) or float64 (file version 2); every
  /// block stream must have it.
  DType dtype = DType::float32;
  struct Entry {
    uint64_t offset = 0, length = 0;  ///< byte range of the block's stream in the file
  };
  std::vector<Entry> entries;  ///< one per block
  uint64_t header_bytes = 0;   ///< where the first block starts
  uint64_t blocks_end = 0;     ///< header_bytes + every length: where the last block ends
  /// Versions 5 to 8 (1 to 4 with a source record): the record follows the last block
  /// (multiblock_source, docs/format.md "The source record of a multi-block file").
  bool has_source = false;
  /// The stored record's bytes (the trailer is 13 bytes more); 0 without one, or when the file's
  /// size was not given to the parse.
  uint64_t source_bytes = 0;
  uint64_t file_bytes = 0;  ///< blocks_end, plus the record's trailer when there is one
};

/// Size of the header and index of a file with `blocks` blocks.
uint64_t multiblock_header_size(int blocks);
/// The fixed header's size: the prefix a reader fetches first.
inline constexpr uint64_t kMultiBlockPrefixBytes = 48;
/// From the first kMultiBlockPrefixBytes bytes of a file: the size of its header and index
/// (what to read before parse_multiblock_index, or parse_multiblock3d_index for a 3D file,
/// versions 3 and 4, 7 and 8). corrupt_stream for a wrong magic, a bad header checksum or an
/// impossible block count.
Result<uint64_t> multiblock_header_size_from_prefix(std::span<const uint8_t> prefix);
/// The header's version for blocks of `dtype` in `dims` (2 or 3) dimensions: 1 to 4, or 5 to
/// 8 when the file carries a source record (`with_source`).
uint16_t multiblock_version(int dims, DType dtype, bool with_source);
/// What follows the last block of a file with a source record (versions 5 to 8): the
/// record's length (u64), its coding (u8: 0 raw, 1 a zstd frame, used with `zstd` where
/// shorter), the stored record (encode_source_record's bytes, Options::source, or their
/// frame) and a CRC-32C of all of it (u32). Empty for an empty record.
std::vector<uint8_t> multiblock_source_trailer(std::span<const uint8_t> record, bool zstd = true);
/// Header and index for blocks whose streams have the given lengths (in block order) and
/// value type (float64: a version 2 file); version 5 or 6 when `o.source` is given (the file
/// then ends with multiblock_source_trailer(o.source)).
std::vector<uint8_t> multiblock_header(const BlockLayout& layout, const Options& o,
                                       std::span<const uint64_t> lengths, DType dtype = DType::float32);
/// Reads and validates the header and index of the multi-block file at `path` (only those
/// bytes are read): the grid, the layout and the data type a reader needs before it decodes
/// (decompress_region or decompress_region64). io_error when the file cannot be read.
Result<MultiBlockIndex> read_multiblock_index(const std::string& path);
/// Whether bytes start with the multi-block magic.
bool is_multiblock(std::span<const uint8_t> bytes);
/// Parses and validates header + index (bytes may be just the first
/// multiblock_header_size bytes, or the whole file). file_size, when known, must equal
/// the end of the last block, or of the source record's trailer (versions 5 and 6). A 3D file
/// (versions 3, 4, 7 and 8) is unsupported_version naming parse_multiblock3d_index
/// (factz/multiblock3d.hpp).
Result<MultiBlockIndex> parse_multiblock_index(std::span<const uint8_t> bytes, uint64_t file_size);

/// One process, all blocks: the field split by layout (px, py), each block compressed as
/// compress_block with the bound resolved over the whole field. The bytes do not depend on
/// the thread count. A float64 field gives a float64 file (version 2, float64 blocks).
/// `o.source` (a record of the whole field, as compress takes it) goes after the last block
/// (versions 5 and 6), never into a block; invalid_argument when it does not describe the
/// field.
Result<std::vector<uint8_t>> compress_multiblock(const VectorField2D& field, const Options& o, int px, int py,
                                                 CompressStats* stats = nullptr);
Result<std::vector<uint8_t>> compress_multiblock(const VectorField2D64& field, const Options& o, int px, int py,
                                                 CompressStats* stats = nullptr);
/// Decodes a whole multi-block file held in memory. Missing vertices come back with their
/// bits and in the result's mask (empty when no block has any), as decompress gives them.
/// A float64 file is invalid_argument naming decompress_multiblock64 (and the reverse).
Result<VectorField2D> decompress_multiblock(std::span<const uint8_t> file, const DecompressOptions& d = {});
Result<VectorField2D64> decompress_multiblock64(std::span<const uint8_t> file, const DecompressOptions& d = {});

/// The source record of a multi-block file held in memory (2D or 3D), or none (versions 1 to
/// 4): checked as a stream's section 12 is (it must decode and describe the file's grid and
/// components; corrupt_stream otherwise, like a bad trailer length or checksum).
Result<std::optional<SourceRecord>> multiblock_source(std::span<const uint8_t> file);
/// The same for the file at `path`, reading only its header, index and trailer.
Result<std::optional<SourceRecord>> read_multiblock_source(const std::string& path);

/// Half-open window [x0, x1) x [y0, y1) of the global grid.
struct Region {
  int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};
struct RegionStats {
  int blocks_decoded = 0;
  uint64_t bytes_read = 0;  ///< header + index + the decoded blocks' streams
};
/// Reads only the header, the index and the blocks that intersect the region from the
/// file at `path`, and returns the region ((x1 - x0) x (y1 - y0)), with the region's mask
/// (empty when none of its vertices is missing).
Result<VectorField2D> decompress_region(const std::string& path, const Region& r, const DecompressOptions& d = {},
                                        RegionStats* stats = nullptr);
/// decompress_region of a float64 file (MultiBlockIndex::dtype; a float32 file is
/// invalid_argument naming decompress_region).
Result<VectorField2D64> decompress_region64(const std::string& path, const Region& r, const DecompressOptions& d = {},
                                            RegionStats* stats = nullptr);

}  // namespace factz
