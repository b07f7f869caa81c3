// FaCTz public C++ API for scalar fields on 2D and 3D regular grids: mode `none` (pointwise
// bound only) and mode `contour_tree` (TopoSZ: the contour tree simplified at a persistence
// threshold is preserved exactly). Streams are FaCTz containers with one component: version
// 2, or 3 when the field has missing vertices (docs/format.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "factz/factz.hpp"
#include "factz/status.hpp"

namespace factz {

struct ScalarField {
  int64_t nx = 0;  ///< vertices along x (fastest)
  int64_t ny = 0;  ///< vertices along y
  int64_t nz = 1;  ///< vertices along z (1 for a 2D field)
  std::vector<float> values;  ///< nx * ny * nz values, index = (z * ny + y) * nx + x
  /// Missing vertices (land, gaps, fill values): empty for none, else nx * ny * nz bytes,
  /// nonzero where the vertex has no value. A NaN value is missing whatever the mask says
  /// (missing_mask). The mesh of a field with missing vertices is the triangulation minus
  /// every simplex that touches one; its contour tree is a forest, one tree per connected
  /// component of valid vertices (docs/toposz.md, "Missing vertices"). The bound applies to
  /// valid vertices (REL: of their range); missing vertices decode bit for bit.
  std::vector<uint8_t> mask{};

  int64_t size() const { return nx * ny * nz; }
  int ndims() const { return nz == 1 ? 2 : 3; }
};

enum class ScalarMode : uint8_t {
  none = 0,          ///< one uniform pointwise bound
  contour_tree = 3,  ///< TopoSZ: keeps the simplified contour tree (header mode byte 3)
};

/// Where a contour_tree compression stands, after each round of repair.
struct ScalarProgress {
  int64_t step = 0;            ///< which of the quantization steps tried (0, 1)
  int64_t round = 0;           ///< 0: the first reconstruction, then one per repair
  int64_t nodes_to_fix = 0;    ///< vertices where the decoded tree still differs (0: done)
  int64_t exact_vertices = 0;  ///< values stored exactly in this round
  double seconds = 0;          ///< since this step began
};
/// Called by compress_scalar on the calling thread; the library itself never prints. The
/// steps' rounds may interleave (docs/toposz.md, "Steps"); the last call is always the kept
/// step's last round, with nothing left to fix.
using ScalarProgressHook = std::function<void(const ScalarProgress&)>;

struct ScalarOptions {
  ScalarMode mode = ScalarMode::contour_tree;
  Coder coder = Coder::ans;
  BoundMode bound_mode = BoundMode::rel;
  double bound = 1e-2;        ///< ABS value or REL fraction of the value range; finite, >= 0
  double persistence = 1e-2;  ///< contour_tree: threshold as a fraction of the value range, >= 0
  bool zstd = true;
  Policy policy = Policy::omp;
  int threads = 0;
  ScalarProgressHook progress{};  ///< contour_tree: optional, called after every round
};

struct ScalarCompressStats {
  double eb_abs = 0;             ///< absolute pointwise bound used
  int64_t exact_vertices = 0;    ///< values stored exactly
  int64_t iterations = 0;        ///< contour_tree: rounds of recompute + tighten
  double persistence_abs = 0;    ///< contour_tree: absolute persistence threshold used
  int64_t tree_nodes = 0;        ///< contour_tree: nodes of the original's simplified tree
  int64_t masked_vertices = 0;   ///< missing vertices (stored bit for bit in the mask sections)
  std::vector<std::pair<std::string, double>> stage_seconds;
};

/// The missing vertices of a field: its mask plus every NaN value; empty when none is missing.
std::vector<uint8_t> missing_mask(const ScalarField& f);

/// Adds to f.mask the vertices that hold `fill` (a declared fill value, e.g. netCDF's
/// _FillValue; may be infinite; NaN adds nothing, NaN is always missing) or NaN; returns how
/// many vertices are missing in all. With nothing missing the mask stays (or becomes) empty.
int64_t mark_missing(ScalarField& f, std::optional<float> fill);

/// Compresses a scalar field. invalid_argument on bad fields (empty, a mask of the wrong
/// size, an infinite value at a valid vertex) or options.
Result<std::vector<uint8_t>> compress_scalar(const ScalarField& field, const ScalarOptions& options,
                                             ScalarCompressStats* stats = nullptr);

/// Decompresses a scalar stream; a field with missing vertices comes back with its mask and
/// their stored bits. A vector stream given here (or a scalar stream given to `decompress`)
/// is a clear invalid_argument error; untrusted bytes never crash.
Result<ScalarField> decompress_scalar(std::span<const uint8_t> stream, const DecompressOptions& options = {});

/// Reads a scalar field: raw little-endian float32 of nx * ny * nz values (x fastest), or a
/// .npy float32 array (2D fields: shape (ny, nx) or flat). NaN values are missing vertices;
/// infinite values are left for mark_missing (a declared fill value) or for the consumers,
/// which reject them at valid vertices.
Result<ScalarField> read_scalar_field(const std::string& path, int64_t nx, int64_t ny, int64_t nz = 1);

}  // namespace factz
