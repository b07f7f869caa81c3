// FaCTz public C++ API for scalar fields on 2D and 3D regular grids: mode `none` (pointwise
// bound only) and mode `contour_tree` (TopoSZ: the contour tree simplified at a persistence
// threshold is preserved exactly). Fields hold float32 values (ScalarField) or float64 values
// (ScalarField64): one implementation, templated on the value type, computes everything of a
// float64 field in double. Streams are FaCTz containers with one component: float32 streams
// are version 2, or 3 when the field has missing vertices; float64 streams are version 6
// (data type 2; docs/format.md, "Scalar streams").
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "factz/factz.hpp"
#include "factz/status.hpp"

namespace factz {

/// A scalar field of T = float (ScalarField) or double (ScalarField64) values.
template <class T>
struct ScalarFieldOf {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "scalar fields hold float or double");
  using value_type = T;
  int64_t nx = 0;  ///< vertices along x (fastest)
  int64_t ny = 0;  ///< vertices along y
  int64_t nz = 1;  ///< vertices along z (1 for a 2D field)
  std::vector<T> values;  ///< nx * ny * nz values, index = (z * ny + y) * nx + x
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
/// A float32 scalar field.
using ScalarField = ScalarFieldOf<float>;
/// A float64 scalar field: ordered, bounded, quantized and stored in double (exact values and
/// missing vertices keep all 64 bits); its streams are float64 streams (format version 6).
using ScalarField64 = ScalarFieldOf<double>;

enum class ScalarMode : uint8_t {
  none = 0,          ///< one uniform pointwise bound
  contour_tree = 3,  ///< TopoSZ: keeps the simplified contour tree (header mode byte 3)
};

/// Where a contour_tree compression stands, after each round of repair.
struct ScalarProgress {
  int64_t step = 0;            ///< which of the candidates raced (0 .. 27, docs/toposz.md "Steps")
  int64_t round = 0;           ///< 0: the first reconstruction, then one per repair
  int64_t nodes_to_fix = 0;    ///< vertices where the decoded tree still differs (0: done)
  int64_t exact_vertices = 0;  ///< values in the exact-value section in this round
  double seconds = 0;          ///< since this step began
};
/// Called by compress_scalar on the calling thread; the library itself never prints. The
/// steps' rounds may interleave (docs/toposz.md, "Steps"); the last call is always the kept
/// step's last round, with nothing left to fix.
using ScalarProgressHook = std::function<void(const ScalarProgress&)>;

/// How a scalar stream predicts each value from the decoded ones (docs/toposz.md,
/// "Predictors"): `lorenzo` (index order, format versions up to 17), `interpolation` (a
/// multilevel cubic interpolation, layout versions 22 and 23), or `best`: both, the smaller
/// stream kept (mode none), both raced (mode contour_tree).
enum class ScalarPredictor : uint8_t { best = 0, lorenzo = 1, interpolation = 2 };

/// "best", "lorenzo" or "interpolation" (the names of --predictor and of the reports).
const char* scalar_predictor_name(ScalarPredictor p);

struct ScalarOptions {
  ScalarMode mode = ScalarMode::contour_tree;
  ScalarPredictor predictor = ScalarPredictor::best;
  /// smallest (default): all three coders, the smallest stream kept (ANS, then Huffman, then
  /// context on ties; contour_tree races its steps with ANS and writes the kept one with each);
  /// or ans / huffman / context.
  Coder coder = Coder::smallest;
  BoundMode bound_mode = BoundMode::rel;
  double bound = 1e-2;        ///< ABS value or REL fraction of the value range; finite, >= 0
  double persistence = 1e-2;  ///< contour_tree: threshold as a fraction of the value range, >= 0
  bool zstd = true;
  Policy policy = Policy::omp;
  int threads = 0;
  ScalarProgressHook progress{};  ///< contour_tree: optional, called after every round
  /// Where the field came from: the bytes of factz::encode_source_record (factz/io.hpp) of one
  /// component on the field's grid ((ny, nx) or (nz, ny, nx)), or empty. Stored as they are in
  /// section 12 (a stream of format version 19) and read back with factz::stream_source.
  std::vector<uint8_t> source{};
};

struct ScalarCompressStats {
  double eb_abs = 0;             ///< absolute pointwise bound used (float32 fields: a float)
  int64_t exact_vertices = 0;    ///< values in the exact-value section (own values, or a constrained vertex's shortest)
  int64_t iterations = 0;        ///< contour_tree: rounds of recompute + tighten
  /// contour_tree: rounds of every step raced (the kept step's `iterations` among them; a
  /// round suspended at the search budget counts once per part); the same for any thread count
  int64_t race_rounds = 0;
  /// contour_tree: of race_rounds, those a second thread ran ahead of the race and the race
  /// took (docs/toposz.md, "Steps"); 0 on one thread
  int64_t rounds_ahead = 0;
  double persistence_abs = 0;    ///< contour_tree: absolute persistence threshold used
  int64_t tree_nodes = 0;        ///< contour_tree: nodes of the original's simplified tree
  int64_t masked_vertices = 0;   ///< missing vertices (stored bit for bit in the mask sections)
  Coder coder = Coder::ans;      ///< the coder the stream holds (ans, huffman or context)
  ScalarPredictor predictor = ScalarPredictor::lorenzo;  ///< the predictor the stream holds
  std::vector<std::pair<std::string, double>> stage_seconds;
};

/// The missing vertices of a field: its mask plus every NaN value; empty when none is missing.
std::vector<uint8_t> missing_mask(const ScalarField& f);
std::vector<uint8_t> missing_mask(const ScalarField64& f);

/// Adds to f.mask the vertices that hold `fill` (a declared fill value, e.g. netCDF's
/// _FillValue; may be infinite; NaN adds nothing, NaN is always missing) or NaN; returns how
/// many vertices are missing in all. With nothing missing the mask stays (or becomes) empty.
int64_t mark_missing(ScalarField& f, std::optional<float> fill);
/// The same for a float64 field: `fill` is compared as a double.
int64_t mark_missing(ScalarField64& f, std::optional<double> fill);

/// Compresses a scalar field. invalid_argument on bad fields (empty, a mask of the wrong
/// size, an infinite value at a valid vertex) or options.
Result<std::vector<uint8_t>> compress_scalar(const ScalarField& field, const ScalarOptions& options,
                                             ScalarCompressStats* stats = nullptr);
/// Compresses a float64 scalar field into a float64 stream (version 6): the contour tree is
/// the doubles' (ordered as doubles: values that round to one float keep their order), the
/// bound is kept and checked in double (ScalarCompressStats::eb_abs is not rounded to a
/// float), exact values and missing vertices keep all 64 bits. Same options and errors.
Result<std::vector<uint8_t>> compress_scalar(const ScalarField64& field, const ScalarOptions& options,
                                             ScalarCompressStats* stats = nullptr);

/// Decompresses a scalar stream; a field with missing vertices comes back with its mask and
/// their stored bits. A vector stream given here (or a scalar stream given to `decompress`)
/// is a clear invalid_argument error; untrusted bytes never crash.
/// A float64 stream is refused (invalid_argument naming decompress_scalar64): values are
/// never narrowed.
Result<ScalarField> decompress_scalar(std::span<const uint8_t> stream, const DecompressOptions& options = {});
/// Decompresses a float64 scalar stream; a float32 stream is refused (invalid_argument naming
/// decompress_scalar), as is a vector stream.
Result<ScalarField64> decompress_scalar64(std::span<const uint8_t> stream, const DecompressOptions& options = {});
/// The value type of a scalar stream (which of the two decoders takes it); corrupt_stream
/// or invalid_argument (a vector stream) as the decoders would say.
Result<DType> scalar_stream_dtype(std::span<const uint8_t> stream);

/// Reads a scalar field: raw little-endian float32 of nx * ny * nz values (x fastest), or a
/// .npy array of dtype '<f4' in C order of shape (ny, nx) (2D), (nz, ny, nx) or (nz * ny, nx)
/// (3D), or flat. NaN values are missing vertices;
/// infinite values are left for mark_missing (a declared fill value) or for the consumers,
/// which reject them at valid vertices.
Result<ScalarField> read_scalar_field(const std::string& path, int64_t nx, int64_t ny, int64_t nz = 1);
/// Reads a float64 scalar field: raw little-endian float64 of nx * ny * nz values, or a .npy
/// array of dtype '<f8' in C order of shape (ny, nx) (2D), (nz, ny, nx) or (nz * ny, nx)
/// (3D), or flat. NaN values are missing vertices, as above.
Result<ScalarField64> read_scalar_field64(const std::string& path, int64_t nx, int64_t ny, int64_t nz = 1);

}  // namespace factz
