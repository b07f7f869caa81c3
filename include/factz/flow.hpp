// Divergence-free compression of incompressible flows (issue 9; docs/flow.md).
//
// Nodal velocities are fitted with matrix-valued divergence-free kernels
// Phi = (-Laplacian I + grad grad^T) phi, and the fit's coefficients are compressed with an
// absolute tolerance derived from the nodal error theorem (Pluzhnik et al., section 3).
// Every decompressed coefficient vector defines an analytically divergence-free field
// (periodic on periodic axes), whatever the compression error.
//
// A Basis (nodes, centers, kernel parameters, landmark weight maps) is built once per mesh
// and stored separately; the per-field stream holds only the coded coefficients.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "factz/status.hpp"

namespace factz::flow {

/// The radial function phi(t), t = distance / length.
enum class Radial : uint8_t {
  matern = 0,    ///< e^-t (t^2 + 3t + 3), global support
  wendland = 1,  ///< (1-t)_+^6 (35t^2 + 18t + 3), support t < 1
};

/// One term w * Phi(x, y; length) of a (multiscale) kernel mixture.
struct KernelTerm {
  Radial radial = Radial::matern;
  double length = 1;  ///< > 0; for Wendland the support radius
  double weight = 1;  ///< > 0
};

/// Fitting scheme (paper section 2.2).
enum class Method : uint8_t {
  global = 0,      ///< global Matern interpolation (dense SPD solve)
  nystrom2 = 1,    ///< two-level Matern Nystrom projection (orthonormal landmark space)
  hybrid = 2,      ///< one-level Nystrom + all-node Wendland residual interpolation
  multilevel = 3,  ///< Wendland residual interpolation on nested center sets (sparse)
  frame = 4,       ///< redundant Wendland frame, minimum-norm fit
};

/// One coefficient block: u(x) = sum_j Phi(x, z_j) a_j with kernel weights
/// a = weight_map * c / scale (weight_map empty: identity), c the stored coefficients.
struct Block {
  std::vector<KernelTerm> kernel;
  std::vector<uint32_t> centers;   ///< node indices
  int64_t rank = 0;                ///< stored coefficients of the block
  std::vector<double> weight_map;  ///< (dim * centers) x rank, row-major, or empty
  double scale = 1;                ///< stored coefficient = scale * kernel weight
  double norm_bound = 1;           ///< upper bound on ||A_b||_2 (nodal evaluation of c)
  bool orthonormal = false;        ///< A_b has orthonormal columns (Nystrom)
};

/// The reusable, per-mesh part of the representation.
struct Basis {
  int dim = 2;                  ///< 2 or 3
  int64_t n = 0;                ///< nodes
  std::vector<double> nodes;    ///< n x dim, row-major
  std::vector<double> periods;  ///< dim entries; 0 = not periodic on that axis
  Method method = Method::nystrom2;
  std::vector<Block> blocks;
  int64_t coefficients() const;
  /// Content hash tying field streams to their basis.
  uint64_t fingerprint() const;
};

struct BasisOptions {
  Method method = Method::nystrom2;
  int64_t landmarks = 32;                ///< per Nystrom level (clamped to the node count)
  std::vector<double> periods;           ///< empty or dim entries (0: not periodic)
  std::vector<double> matern_lengths;    ///< Matern mixture lengths; empty: extent / 4
  double wendland_beta = 6;              ///< Wendland support = beta * spacing * 2^level
  /// Training velocities (each n x dim, row-major) for residual-adaptive second-level
  /// landmarks (nystrom2); empty: farthest-point landmarks on both levels.
  std::vector<std::vector<double>> training;
};

/// Builds a basis for `nodes` (n x dim, row-major).
Result<Basis> build_basis(int dim, std::span<const double> nodes, const BasisOptions& options);

Result<std::vector<uint8_t>> serialize_basis(const Basis& basis);
/// Untrusted bytes give corrupt_stream / unsupported_version, never a crash.
Result<Basis> parse_basis(std::span<const uint8_t> bytes);

/// Coefficients of one field before compression.
struct Fit {
  std::vector<double> coefficients;  ///< basis.coefficients() entries, blocks in order
  double norm_u = 0;                 ///< ||u_X||_2
  double rep_error = 0;              ///< E_rep = ||u_X - A c||_2 (fit + solve residual)
};

/// Fits nodal velocities u (n x dim, row-major).
Result<Fit> fit(const Basis& basis, std::span<const double> u);

enum class CoefficientCoder : uint8_t {
  factz = 0,  ///< FaCTz backbone: ABS linear quantization + Huffman + zstd
  zfp = 1,    ///< ZFP fixed-accuracy on the 1D coefficient array (checked)
};

struct EncodeStats {
  double tolerance = 0;     ///< absolute coefficient tolerance eps (max-abs)
  double allowance = 0;     ///< tau: nodal l2 allowance for the compression error
  double bound = 0;         ///< theorem bound on ||u_X - A c~||_2 (absolute)
  double rel_bound = 0;     ///< bound / ||u_X||
  double rel_l2_error = 0;  ///< observed, after a full decode
  double max_abs_error = 0; ///< observed max nodal component error
  double rel_rep_error = 0; ///< E_rep / ||u_X||
  double coef_max_error = 0;///< observed max |c~ - c|
  int64_t stream_bytes = 0;
  double ratio = 0;         ///< raw float64 velocity bytes / stream bytes
};

/// How the coefficient tolerance follows from the theorem.
enum class ToleranceRule : uint8_t {
  /// eps = tau / (b sqrt(m)): the bound holds for any coefficient error <= eps.
  apriori = 0,
  /// Larger eps (steps of sqrt 2 from the a-priori one) while the theorem's bound with the
  /// coefficient errors actually decoded, E_rep + sum_j b_j ||dc_j|| (orthonormal:
  /// sqrt(E_rep^2 + b^2 ||dc||^2)), stays within the allowance. Still a rigorous bound on
  /// the nodal error; the smallest admissible stream is kept (never larger than apriori).
  measured = 1,
};

/// Codes a fit so that the relative l2 nodal error is at most rel_l2 (by the theorem).
/// invalid_argument when the fit error alone already exceeds it.
Result<std::vector<uint8_t>> encode(const Basis& basis, const Fit& fit, std::span<const double> u,
                                    double rel_l2, CoefficientCoder coder,
                                    EncodeStats* stats = nullptr,
                                    ToleranceRule rule = ToleranceRule::apriori);

/// fit + encode.
Result<std::vector<uint8_t>> compress(const Basis& basis, std::span<const double> u, double rel_l2,
                                      CoefficientCoder coder, EncodeStats* stats = nullptr,
                                      ToleranceRule rule = ToleranceRule::apriori);

/// The theorem's bound on ||u_X - A c~||_2 for a fit error E_rep and a max-abs
/// coefficient tolerance (orthonormal bases: sqrt(E_rep^2 + (b sqrt(m) tol)^2), otherwise
/// E_rep + b sqrt(m) tol, b = sqrt(sum of the blocks' norm bounds squared)).
double theorem_bound(const Basis& basis, double rep_error, double tolerance);

/// The coefficient tolerance recorded in a stream (header only; corrupt_stream if damaged).
Result<double> stream_tolerance(std::span<const uint8_t> stream);

/// The stored coefficients of a stream (validated against the basis fingerprint).
Result<std::vector<double>> decode_coefficients(const Basis& basis, std::span<const uint8_t> stream);

/// Nodal velocities (n x dim) of a stream.
Result<std::vector<double>> decompress(const Basis& basis, std::span<const uint8_t> stream);

/// Velocity (p x dim) and, when `gradient` is given, the analytic velocity gradient
/// (p x dim x dim, [point][i][k] = d u_i / d x_k) at arbitrary points (p x dim).
Status evaluate(const Basis& basis, std::span<const double> coefficients,
                std::span<const double> points, std::vector<double>& velocity,
                std::vector<double>* gradient = nullptr);

/// Analytic divergence at points: trace of the gradient from `evaluate`.
Result<std::vector<double>> divergence(const Basis& basis, std::span<const double> coefficients,
                                       std::span<const double> points);

const char* method_name(Method m);
Result<Method> method_from_name(const std::string& name);

// .npy arrays of float64 (C order), shape (rows,) or (rows, cols).
struct NpyArray {
  int64_t rows = 0;
  int64_t cols = 1;
  std::vector<double> data;
};
Result<NpyArray> read_npy(const std::string& path);
Result<NpyArray> parse_npy(std::span<const uint8_t> bytes);
Status write_npy(const std::string& path, int64_t rows, int64_t cols, std::span<const double> data);

}  // namespace factz::flow
