// Domain-decomposed compression of 3D vector fields (docs/multiblock.md, "3D blocks"): the
// global nx x ny x nz grid split into px x py x pz boxes that share their boundary vertex
// planes. Every vertex on a shared face is stored exactly by each block holding it, so every
// tetrahedron of the global Freudenthal mesh lies in exactly one block and sees the same
// values there as in the global field: the per-block guarantees add up to the global one.
// Each block is an ordinary 3D FaCTz stream (factz/compress3d.hpp); the multi-block file is
// the 2D one's ("FZMB", docs/format.md "Multi-block files") in version 3 (float32 blocks) or
// version 4 (float64 blocks), whose header adds nz and pz and whose index entries add z0 and nz.
//
// float32 fields (VectorField3D) and float64 fields (VectorField3D64) take the same calls: one
// implementation, templated on the field type (src/api/multiblock3d.cpp), whose block loop,
// file assembly and decoding loops are the 2D files' too (src/api/multiblock_common.hpp). A
// float64 field's blocks are float64 streams (format version 13), its shared faces keep all 64
// bits, and its file is decoded by the *3d64 calls; each decoder refuses the other's files.
//
// Nothing here needs MPI: the MPI driver only spreads this layout's blocks over ranks; the
// bytes of every block, and of the file, do not depend on how many ranks wrote them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/multiblock.hpp"

namespace factz {

/// Bits of Options::exact_edges for a 3D field: which outer faces are stored exactly (the
/// first four are the 2D EdgeBits).
enum FaceBits : uint8_t {
  kFaceXMin = 1,   ///< plane x = 0
  kFaceXMax = 2,   ///< plane x = nx - 1
  kFaceYMin = 4,   ///< plane y = 0
  kFaceYMax = 8,   ///< plane y = ny - 1
  kFaceZMin = 16,  ///< plane z = 0
  kFaceZMax = 32,  ///< plane z = nz - 1
  kFaceAll = 63,
};

/// Vertices [x0, x0 + nx) x [y0, y0 + ny) x [z0, z0 + nz) of the global grid.
struct BlockExtent3D {
  int64_t x0 = 0, y0 = 0, z0 = 0, nx = 0, ny = 0, nz = 0;
};

/// px x py x pz blocks; block b = (bz * py + by) * px + bx covers the bx-th band along x,
/// the by-th along y and the bz-th along z. Neighbouring blocks share one vertex plane.
struct BlockLayout3D {
  int64_t nx = 0, ny = 0, nz = 0;
  int px = 0, py = 0, pz = 0;
  std::vector<BlockExtent3D> blocks;  ///< px * py * pz, in block order

  int count() const { return px * py * pz; }
  /// The faces of block b shared with a neighbour (FaceBits).
  uint8_t shared_faces(int b) const;
};

/// Splits the (nx - 1) cells along x into px bands as make_block_layout does (the first
/// (nx - 1) % px bands take one more), likewise y and z. Every block needs at least one cell
/// along each axis it is split on (px <= nx - 1 when px > 1, the same for y and z).
Result<BlockLayout3D> make_block_layout3d(int64_t nx, int64_t ny, int64_t nz, int px, int py, int pz);

/// The value range over the three components of the valid vertices (as compress computes
/// a REL bound), for merge and absolute_bound (factz/multiblock.hpp).
ValueRange value_range_of(const VectorField3D& f);
ValueRange value_range_of(const VectorField3D64& f);

/// Copies block `e` out of a global field (its values and its mask).
VectorField3D extract_block(const VectorField3D& global, const BlockExtent3D& e);
VectorField3D64 extract_block(const VectorField3D64& global, const BlockExtent3D& e);

/// Compresses block b of `layout` whose values are `block` (extent-sized): ABS bound eb_abs
/// (the global one, absolute_bound) and the block's shared faces exact. A float64 block gives
/// a float64 stream.
Result<std::vector<uint8_t>> compress_block(const VectorField3D& block, const BlockLayout3D& layout, int b,
                                            const Options& o, double eb_abs, CompressStats* stats = nullptr);
Result<std::vector<uint8_t>> compress_block(const VectorField3D64& block, const BlockLayout3D& layout, int b,
                                            const Options& o, double eb_abs, CompressStats* stats = nullptr);

/// Header and index of a version 3 or 4 multi-block file, or 7 or 8 with a source record (docs/format.md).
struct MultiBlockIndex3D {
  BlockLayout3D layout;
  uint8_t bound_mode = 0;  ///< the user's bound as given (the blocks carry the absolute one)
  double bound_value = 0;
  DType dtype = DType::float32;  ///< the blocks' value type (version 3: float32, version 4: float64)
  std::vector<MultiBlockIndex::Entry> entries;  ///< one per block
  uint64_t header_bytes = 0;  ///< where the first block starts
  uint64_t blocks_end = 0;    ///< header_bytes + every length
  bool has_source = false;    ///< versions 7 and 8: a source record after the last block
  uint64_t source_bytes = 0;  ///< its length (0 when the file's size was not given)
  uint64_t file_bytes = 0;    ///< blocks_end, plus the record's trailer
};

/// Size of the header and index of a 3D file with `blocks` blocks.
uint64_t multiblock3d_header_size(int blocks);
/// Whether bytes (at least 6 of them) start a 3D multi-block file: the magic and version 3 or
/// 4 (7 or 8 with a source record). A reader tests this before the 2D parse, which refuses
/// them.
bool is_multiblock3d(std::span<const uint8_t> bytes);
/// Header and index for blocks whose streams have the given lengths (in block order) and value
/// type (float64: a version 4 file); version 7 or 8 when `o.source` is given (the file then
/// ends with multiblock_source_trailer(o.source)).
std::vector<uint8_t> multiblock3d_header(const BlockLayout3D& layout, const Options& o,
                                         std::span<const uint64_t> lengths, DType dtype = DType::float32);
/// Parses and validates header + index (bytes may be just the first multiblock3d_header_size
/// bytes, or the whole file; file_size, when not 0, must equal the end of the last block, or
/// of the source record's trailer in versions 7 and 8):
/// magic, version, both checksums, counts, extents equal to make_block_layout3d's,
/// contiguous byte ranges. Never allocates by a count it has not checked.
Result<MultiBlockIndex3D> parse_multiblock3d_index(std::span<const uint8_t> bytes, uint64_t file_size);
/// Reads and validates the header and index of the 3D multi-block file at `path` (only those
/// bytes are read).
Result<MultiBlockIndex3D> read_multiblock3d_index(const std::string& path);

/// One process, all blocks: the field split by layout (px, py, pz), each block compressed as
/// compress_block with the bound resolved over the whole field. The bytes do not depend on
/// the thread count. A float64 field gives a float64 file (version 4, float64 blocks).
/// `o.source` (a record of the whole field) goes after the last block (versions 7 and 8).
Result<std::vector<uint8_t>> compress_multiblock(const VectorField3D& field, const Options& o, int px, int py, int pz,
                                                 CompressStats* stats = nullptr);
Result<std::vector<uint8_t>> compress_multiblock(const VectorField3D64& field, const Options& o, int px, int py, int pz,
                                                 CompressStats* stats = nullptr);
/// Decodes a whole 3D multi-block file held in memory into the global field: every vertex
/// from its owner (the block whose extent minus its shared last planes holds it); missing
/// vertices come back with their bits and in the mask (empty when no block has any).
/// Every block's own header is checked against the index before the grid is allocated.
/// A float64 file (version 4) is invalid_argument naming decompress_multiblock3d64, and the
/// reverse.
Result<VectorField3D> decompress_multiblock3d(std::span<const uint8_t> file, const DecompressOptions& d = {});
Result<VectorField3D64> decompress_multiblock3d64(std::span<const uint8_t> file, const DecompressOptions& d = {});
/// Decodes block b alone (its whole extent, shared planes included) from a file in memory.
Result<VectorField3D> decompress_block3d(std::span<const uint8_t> file, int b, const DecompressOptions& d = {});
Result<VectorField3D64> decompress_block3d64(std::span<const uint8_t> file, int b, const DecompressOptions& d = {});

/// Half-open window [x0, x1) x [y0, y1) x [z0, z1) of the global grid.
struct Region3D {
  int64_t x0 = 0, y0 = 0, z0 = 0, x1 = 0, y1 = 0, z1 = 0;
};
/// Reads only the header, the index and the blocks owning a vertex of the window from the
/// file at `path`, and returns the window with its mask (empty when none is missing).
Result<VectorField3D> decompress_region3d(const std::string& path, const Region3D& r, const DecompressOptions& d = {},
                                          RegionStats* stats = nullptr);
/// decompress_region3d of a float64 file (version 4; a float32 file is invalid_argument naming
/// decompress_region3d).
Result<VectorField3D64> decompress_region3d64(const std::string& path, const Region3D& r,
                                              const DecompressOptions& d = {}, RegionStats* stats = nullptr);

}  // namespace factz
