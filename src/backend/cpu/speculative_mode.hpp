// FaCTz-S: speculative per-point mode (paper sections 3.4-3.5, Algorithm 1).
// Anchors are stored exactly; every other vertex is predicted by interpolation from
// already reconstructed vertices (kernels/interpolation.hpp) and tries bound ids from the
// user's bound down, committing the first candidate under which all its incident
// triangles keep their exact signature on the current state. The decoder replays the
// same schedule with the same arithmetic.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "factz/field.hpp"
#include "factz/status.hpp"
#include "format/container.hpp"
#include "kernels/speculation.hpp"
#include "kernels/speculative_decode.hpp"  // kMissingVertex
#include "streams/code_segments.hpp"
#include "streams/vector_stream.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {

/// What the speculative frontend decided, per vertex. T: float, or double for a float64 field.
template <class T>
struct SpeculativeResultOf {
  /// The decoder's values. std::vector, the type of a field's planes, so that a plane given
  /// up by the caller (run_speculative's `state`) becomes this array without a copy.
  std::vector<T> recon_u, recon_v;
  /// One entry per target in schedule order (the stream's order: phase after phase, each
  /// phase's lattice row by row; anchors are not targets): 0 exact, 1..30 bound id,
  /// kZeroVectorId, kMissingVertex. sym_u, sym_v at the same positions: code + radius where
  /// 1 <= id <= 30 (else unspecified). In this order the payload is a compaction in place,
  /// and no per-vertex array beyond the values is needed.
  std::vector<uint16_t> ids, sym_u, sym_v;
  std::vector<uint8_t> anchor_missing;  ///< per anchor (row-major), when the field has missing vertices
  int64_t exact_vertices = 0;           ///< anchors, exact targets and zero vectors
  Predictor predictor = Predictor::linear;  ///< the predictor the schedule used
  /// The level-wise bound's tight step the schedule used (streams/speculative_trial.hpp:
  /// kNoTightLevel or kTrialTightStep), chosen by the trial or, when the trial's crop is the
  /// whole field, by the same estimate on the driver's own two runs.
  int64_t tight_step = 0;
};
using SpeculativeResult = SpeculativeResultOf<float>;
using SpeculativeResult64 = SpeculativeResultOf<double>;

/// Runs the schedule. `check` false skips the signature verification (tests only: it
/// shows that the check is what keeps the critical points). Vertices on the outer
/// rows/columns named by exact_edges (EdgeBits) are not speculated: they keep their
/// original value (id 0, or the zero-vector id for +0, +0). `missing` (optional, one byte
/// per vertex): the field is the filled working copy; triangles touching a missing vertex
/// are outside the mesh and never checked (kMaskedTriangle). `predictor`: the interpolation
/// (kernels/interpolation.hpp), recorded in the result and from there in the stream.
/// `state` (optional): f itself, whose planes the caller gives up: they are moved into
/// out.recon_u / recon_v and serve as the current state in place of a copy (one plane pair
/// less of memory). The driver reads a vertex's original only before its own commit, when
/// the state still holds it, so the result is the same; f's planes are empty afterwards.
void run_speculative(const VectorField2D& f, float eb, int64_t anchor_stride, int threads, bool check,
                     SpeculativeResult& out, uint8_t exact_edges = 0, const uint8_t* missing = nullptr,
                     Predictor predictor = kDefaultPredictor, VectorField2D* state = nullptr);
/// The same for a float64 field: predictions, codes, bound checks and signatures on doubles.
void run_speculative(const VectorField2D64& f, double eb, int64_t anchor_stride, int threads, bool check,
                     SpeculativeResult64& out, uint8_t exact_edges = 0, const uint8_t* missing = nullptr,
                     Predictor predictor = kDefaultPredictor, VectorField2D64* state = nullptr);

/// The stream payload of a result: ids in schedule order, the codes of coded targets, the
/// exact values (anchors, then exact targets: read from r's values, which hold the originals
/// there), and the result's predictor. The stream layer codes and assembles it. Takes r's
/// ids and symbols (compacted in place into `out`); r's values are left as they are. f gives
/// the dimensions only (its planes may have been given up to run_speculative).
void speculative_payload(const VectorField2D& f, int64_t anchor_stride, SpeculativeResult& r,
                         SpeculativePayload& out);
/// The same for a float64 field: the exact values are f64 pairs.
void speculative_payload(const VectorField2D64& f, int64_t anchor_stride, SpeculativeResult64& r,
                         SpeculativePayload& out);

/// Reconstructs the planes (nx * ny floats each) of a speculative stream from its parsed
/// input (streams/vector_stream.hpp: parse_speculative) on one team of threads for the
/// schedule (backend/cpu/speculative_reader.cpp). A deferred input's codes are decoded a
/// window at a time (code_windows, windows of at least `min_code_window` codes or a quarter
/// of the codes, whichever is more). With `missing` (the stream's mask), missing vertices
/// take their stand-ins.
Status decode_speculative(const Header& h, const SpeculativeDecodeInput& in, int threads, std::span<float> u,
                          std::span<float> v, const uint8_t* missing = nullptr,
                          int64_t min_code_window = kMinCodeWindow);
/// The same for a float64 stream (its bound: in.eb, the meta section's f64 one).
Status decode_speculative(const Header& h, const SpeculativeDecodeInput64& in, int threads, std::span<double> u,
                          std::span<double> v, const uint8_t* missing = nullptr,
                          int64_t min_code_window = kMinCodeWindow);

}  // namespace factz::detail
