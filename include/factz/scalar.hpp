// FaCTz public C++ API for scalar fields on 2D and 3D regular grids: mode `none` (pointwise
// bound only) and mode `contour_tree` (TopoSZ: the contour tree simplified at a persistence
// threshold is preserved exactly). Streams are FaCTz container v2 with one component (docs/format.md).
#pragma once

#include <cstdint>
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

  int64_t size() const { return nx * ny * nz; }
  int ndims() const { return nz == 1 ? 2 : 3; }
};

enum class ScalarMode : uint8_t {
  none = 0,          ///< one uniform pointwise bound
  contour_tree = 3,  ///< TopoSZ: keeps the simplified contour tree (header mode byte 3)
};

struct ScalarOptions {
  ScalarMode mode = ScalarMode::contour_tree;
  Coder coder = Coder::ans;
  BoundMode bound_mode = BoundMode::rel;
  double bound = 1e-2;        ///< ABS value or REL fraction of the value range; finite, >= 0
  double persistence = 1e-2;  ///< contour_tree: threshold as a fraction of the value range, >= 0
  bool zstd = true;
  Policy policy = Policy::omp;
  int threads = 0;
};

struct ScalarCompressStats {
  double eb_abs = 0;             ///< absolute pointwise bound used
  int64_t exact_vertices = 0;    ///< values stored exactly
  int64_t iterations = 0;        ///< contour_tree: rounds of recompute + tighten
  double persistence_abs = 0;    ///< contour_tree: absolute persistence threshold used
  int64_t tree_nodes = 0;        ///< contour_tree: nodes of the original's simplified tree
  std::vector<std::pair<std::string, double>> stage_seconds;
};

/// Compresses a scalar field. invalid_argument on bad fields (NaN/Inf, empty) or options.
Result<std::vector<uint8_t>> compress_scalar(const ScalarField& field, const ScalarOptions& options,
                                             ScalarCompressStats* stats = nullptr);

/// Decompresses a scalar stream. A vector stream given here (or a scalar stream given to
/// `decompress`) is a clear invalid_argument error; untrusted bytes never crash.
Result<ScalarField> decompress_scalar(std::span<const uint8_t> stream, const DecompressOptions& options = {});

/// Reads a scalar field: raw little-endian float32 of nx * ny * nz values (x fastest), or a
/// .npy float32 array (2D fields: shape (ny, nx) or flat). Rejects NaN/Inf with their count
/// and first position.
Result<ScalarField> read_scalar_field(const std::string& path, int64_t nx, int64_t ny, int64_t nz = 1);

}  // namespace factz
