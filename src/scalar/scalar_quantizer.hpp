// The scalar streams' quantizer (docs/toposz.md, "Compression"): a Lorenzo prediction from
// already decoded values and one code per valid vertex, symbol 0 meaning "stored exactly".
// The decoder (scalar_codec.cpp) shares the prediction and the missing vertices' stand-in,
// so encoder and decoder agree bit for bit; the encoder alone may restrict each vertex to a
// topological interval (toposz_encoder.cpp). T is the field's value type: a float64 field is
// predicted, quantized and bounded in double (its float instantiation is the float code).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "kernels/quantizer.hpp"
#include "scalar/grid.hpp"
#include "scalar/scalar_interp.hpp"

namespace factz::detail {

inline constexpr uint16_t kScalarCenter = 32768;  ///< symbol of code 0; symbol 0 = stored exactly
inline constexpr int64_t kScalarMaxCode = 32767;  ///< |code| <= kScalarMaxCode

/// Lorenzo prediction from decoded values `r` (outside the grid counts as 0), in a fixed
/// order of T operations so that encoder and decoder agree bit for bit.
template <class T>
inline T lorenzo(const T* r, const ScalarGrid& g, int64_t x, int64_t y, int64_t z, int64_t v) {
  const int64_t sy = g.nx, sz = g.nx * g.ny;
  const T a = x > 0 ? r[v - 1] : T(0);
  const T b = y > 0 ? r[v - sy] : T(0);
  const T ab = x > 0 && y > 0 ? r[v - 1 - sy] : T(0);
  if (g.nz == 1) return (a + b) - ab;
  const T c = z > 0 ? r[v - sz] : T(0);
  const T ac = x > 0 && z > 0 ? r[v - 1 - sz] : T(0);
  const T bc = y > 0 && z > 0 ? r[v - sy - sz] : T(0);
  const T abc = x > 0 && y > 0 && z > 0 ? r[v - 1 - sy - sz] : T(0);
  return ((((((a + b) + c) - ab) - ac) - bc) + abc);
}

/// The value a missing vertex holds for the predictions after it: the decoded value to its
/// left, else above, else below in z, else 0 (a constant extension of the valid values,
/// which a Lorenzo extrapolation across a wide mask would not be). Writer and decoder
/// compute it from the same decoded values.
template <class T>
inline T missing_stand_in(const T* r, const ScalarGrid& g, int64_t x, int64_t y, int64_t z, int64_t v) {
  if (x > 0) return r[v - 1];
  if (y > 0) return r[v - g.nx];
  if (z > 0) return r[v - g.nx * g.ny];
  return T(0);
}

/// The lattice streams (version 11, docs/toposz.md "Lattice codes"): every decoded value
/// is `T(k) * step` for an integer lattice index k, and the codes are the Lorenzo residuals
/// of k, so a value's error depends on its own value only (not on its neighbours' errors).
/// An exact vertex keeps the lattice index of its exact value for the predictions after it;
/// the index is clamped so that the 7-term integer predictions never overflow.
inline constexpr int64_t kLatticeMaxIndex = int64_t(1) << 40;

template <class T>
inline int64_t lattice_index(T val, T step) {
  const double d = double(val) / double(step);
  if (!(d < double(kLatticeMaxIndex))) return d != d ? 0 : kLatticeMaxIndex;
  if (!(d > -double(kLatticeMaxIndex))) return -kLatticeMaxIndex;
  return int64_t(std::llround(d));
}

template <class T>
inline T lattice_value(int64_t k, T step) { return T(k) * step; }

/// Whether `val` is finite and within `eb` of `fv`: for floats in double (the difference of
/// two floats is a double), for doubles exactly (kernels' within_bound).
template <class T>
inline bool within_scalar_bound(T val, T fv, T eb) {
  if (!std::isfinite(val)) return false;
  if constexpr (std::is_same_v<T, float>) return std::fabs(double(val) - double(fv)) <= double(eb);
  else return within_bound(val, fv, eb);
}

/// A vertex's topological interval: lo < g(v) < hi, equality allowed where flagged.
template <class T>
struct IntervalOf {
  T lo = -std::numeric_limits<T>::infinity();
  T hi = std::numeric_limits<T>::infinity();
  uint8_t incl = 0;  ///< bit 0: lo inclusive, bit 1: hi inclusive
  bool inside(T val) const {
    return (val > lo || ((incl & 1) && val == lo)) && (val < hi || ((incl & 2) && val == hi));
  }
  /// Narrows to values below `ref` (`equal_ok`: or equal); the tightest bound wins, equality
  /// allowed at a shared bound only if every constraint there allows it.
  void keep_below(T ref, bool equal_ok) {
    const uint8_t eq = equal_ok ? 2 : 0;
    if (ref < hi) incl = uint8_t((incl & 1) | eq);
    else if (ref == hi) incl = uint8_t(incl & (1 | eq));
    hi = hi < ref ? hi : ref;
  }
  /// Narrows to values above `ref` (`equal_ok`: or equal), as keep_below.
  void keep_above(T ref, bool equal_ok) {
    const uint8_t eq = equal_ok ? 1 : 0;
    if (ref > lo) incl = uint8_t((incl & 2) | eq);
    else if (ref == lo) incl = uint8_t(incl & (2 | eq));
    lo = lo > ref ? lo : ref;
  }
};
using Interval = IntervalOf<float>;

/// What the TopoSZ encoder asks of the quantizer: the vertices stored exactly, and an
/// interval for a few others (their slot in `intervals`; kFree: none). Only a few vertices
/// are constrained, so an interval costs memory only where there is one.
template <class T>
struct ConstraintsOf {
  static constexpr uint32_t kFree = 0xFFFFFFFFu;
  /// Per vertex: 0 quantized; kOwnValue stored exactly; kGridUp / kGridDown stored in the
  /// exact-value section on the grid of `grid_shift` (exact_residuals.hpp), the grid value
  /// next to its own upward / downward (a maximum / minimum of the tree: its neighbours keep
  /// their side of its own value, so one a fraction of a step outward keeps them there too),
  /// on the lattice only and where that value is acceptable; else its own value.
  ///
  /// kGridSaddle (a saddle of the tree): the grid value next to its own on either side (the
  /// nearer first) where that is acceptable and leaves every valid vertex of its 3 x 3 (x 3)
  /// box on the side of it where the vertex's own value lies in the order of (value, index):
  /// the box's earlier vertices by their decoded values, the later ones by their own values
  /// and, once the saddle is placed, by their intervals, which the walk narrows to that
  /// side. Else its own value.
  std::vector<uint8_t> exact;
  static constexpr uint8_t kOwnValue = 1, kGridUp = 2, kGridDown = 3, kGridSaddle = 4;
  int grid_shift = 0;  ///< 0: no grid values
  std::vector<uint32_t> slot;  ///< per vertex
  std::vector<IntervalOf<T>> intervals;
  bool all_exact = false;  ///< every vertex stored exactly (the encoder's last resort)
};
using Constraints = ConstraintsOf<float>;

/// What the quantizer hands to the stream: one symbol per valid vertex, the exact values in
/// index order, and the decoder's reconstruction of every vertex.
template <class T>
struct QuantizedOf {
  std::vector<uint16_t> symbols;
  std::vector<T> exact;
  std::vector<T> recon;
  /// On the lattice: per exact value, the decoder's Lorenzo prediction from `recon` at its
  /// vertex, which a version 14 stream codes it against (exact_residuals.hpp). Empty otherwise.
  std::vector<T> exact_refs;
  int grid_shift = 0;  ///< the grid of the exact values (ConstraintsOf::grid_shift; lattice only)
};
using Quantized = QuantizedOf<float>;

/// The values a valid vertex must not decode to: those the missing vertices hold (their fill
/// values; NaN equals nothing), so that declaring the fill value again on a decompressed
/// raw file finds the same missing vertices. Empty past 16 distinct values.
std::vector<float> fill_values(std::span<const float> f, std::span<const uint8_t> missing);
std::vector<double> fill_values(std::span<const double> f, std::span<const uint8_t> missing);

/// Quantizes `f` in index order. Of the two codes whose values bracket f(v) (the closer
/// first), the first that lies within `eb` of f(v), inside the vertex's interval and on none
/// of `fills` is taken, else the value is stored exactly; so every accepted value lies
/// within min(eb, step) of f(v). `c` (null: none) stores its exact vertices exactly and
/// holds the intervals. Missing vertices (`missing` nonzero; may be empty) get no symbol,
/// only their stand-in. For doubles "within eb" is decided exactly (kernels' within_bound:
/// the difference of two doubles need not be a double).
void quantize(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
              std::span<const float> fills, float eb, float step, const Constraints* c, Quantized& out);
void quantize(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
              std::span<const double> fills, double eb, double step, const ConstraintsOf<double>* c,
              QuantizedOf<double>& out);

/// The same on the lattice of `step` (> 0; kLatticeMaxIndex): of the two lattice values
/// that bracket f(v) (the closer first) the first within `eb`, inside the interval, on no
/// fill value and with a residual code within kScalarMaxCode is taken, else the value is
/// stored exactly. An unconstrained value thus decodes to a non-decreasing function of
/// itself alone (`lattice_value(lattice_index(f))` where that is within the bound), which
/// moves no other vertex and keeps the order of values up to ties.
void quantize_lattice(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                      std::span<const float> fills, float eb, float step, const Constraints* c, Quantized& out);
void quantize_lattice(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                      std::span<const double> fills, double eb, double step, const ConstraintsOf<double>* c,
                      QuantizedOf<double>& out);

/// After the race, on a finished lattice quantization: every coded vertex not flagged in
/// `held`, in index order, takes the lattice index nearest its (new) prediction (its own on a
/// tie) among those whose value lies within `eb` of f(v), on no fill value, and that keep,
/// with `kinds` (link_kinds of q.recon before any move, mesh_links.hpp), the kind of the
/// links of it and of each valid neighbour, or without them the side in (value, index) order
/// of every valid link neighbour, the values as they stand; the held ones keep their index
/// (their codes follow the new predictions). Returns how many moved, or -1 when a held
/// vertex's new residual left the code range (q is then left part-way: the caller starts
/// again from a copy). With the decoded field's critical vertices held, every critical
/// vertex, its kind and its value stay; with every edge's direction kept, the tree stays
/// (move_regular_vertices in toposz_encoder.hpp).
int64_t relax_lattice_codes(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                            std::span<const float> fills, float eb, float step, std::span<const uint8_t> held,
                            std::span<const uint16_t> kinds, Quantized& q);
int64_t relax_lattice_codes(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                            std::span<const double> fills, double eb, double step, std::span<const uint8_t> held,
                            std::span<const uint16_t> kinds, QuantizedOf<double>& q);

/// Which vertices relax_interp may move: those of the finest level (half-stride 1) only, or
/// those of every level.
enum class InterpMoves : uint8_t { finest, every_level };

/// After the race, on a finished interpolation quantization (quantize_interp's `q`, walk
/// `order`): the vertices (of the finest level, or of every level, as `moves` says) that are
/// free (not flagged in `held`, and every vertex whose prediction reads them free: decided
/// from the walk's end back, as a fixed vertex's prediction must stay and so must the values
/// it reads) each take, in the walk's order and against their new prediction, the code
/// nearest 0 whose value lies within `eb`, on no fill value and keeps the links as
/// relax_lattice_codes's `kinds` say; a stored one such a code where there is one, else the
/// shortest value within the bound and every edge's direction; a coded one that no code fits
/// (its prediction moved) is stored at its value. A vertex that is not free reads no moved
/// value and keeps its code. Missing vertices' stand-ins follow their predictions; `q.exact`
/// is listed again in the walk's order. Returns how many values moved (or were stored).
int64_t relax_interp(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                     std::span<const float> fills, float eb, float step, InterpOrder order, InterpMoves moves,
                     std::span<const uint8_t> held, std::span<const uint16_t> kinds, Quantized& q);
int64_t relax_interp(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                     std::span<const double> fills, double eb, double step, InterpOrder order, InterpMoves moves,
                     std::span<const uint8_t> held, std::span<const uint16_t> kinds, QuantizedOf<double>& q);

/// After the race, on a finished lattice quantization: each exact value not flagged in
/// `held`, in index order, replaced by the value with the fewest significant bits that keeps
/// its lattice index (so no other vertex's decoded value moves), lies within `eb` of f(v), on
/// no fill value, and on the same side in (value, index) order of every valid link
/// neighbour as its value now (the replacements before it included); `q.recon`, the missing
/// vertices' stand-ins and `q.exact_refs` follow. Returns how many values were replaced.
int64_t shorten_lattice_exact(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                              std::span<const float> fills, float eb, float step, std::span<const uint8_t> held,
                              Quantized& q);
int64_t shorten_lattice_exact(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                              std::span<const double> fills, double eb, double step, std::span<const uint8_t> held,
                              QuantizedOf<double>& q);

/// The same choice of code as quantize, on the interpolation predictor (scalar_interp.hpp,
/// format versions 22 and 23): vertices in interp_walk's order, each predicted from the
/// decoded values before it, with its level's step (InterpSteps: `step` at the finest level,
/// down to step / 2 at the coarse ones); a missing vertex takes its prediction (0 where that
/// is not finite) for the predictions after it. `out.symbols` lists the valid vertices' symbols in
/// index order (as the codes section holds them), `out.exact` the exact values in walk
/// order (as the decoder meets them). Constraints as in quantize: exact vertices keep their
/// own value (no grid values), intervals narrow the codes; a vertex whose interval left it no
/// code is stored with the shortest value of its interval and the bound, as on the lattice
/// (the heated cylinder at REL / P 1e-2: exact values 2281 -> 545 bytes after the zstd stage,
/// the contour-tree ratio 30.3 -> 44.2). Each pass's vertices are shared among `threads`
/// threads (interp_walk_parts); the result is the same for any number.
void quantize_interp(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                     std::span<const float> fills, float eb, float step, const Constraints* c, Quantized& out,
                     InterpOrder order, int threads = 1);
void quantize_interp(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                     std::span<const double> fills, double eb, double step, const ConstraintsOf<double>* c,
                     QuantizedOf<double>& out, InterpOrder order, int threads = 1);

/// The walk order whose mode-none codes (step 2 eb, no constraints) code shorter with ANS
/// (xyz on ties), counting each exact value at its size: on the whole field up to 2^20
/// vertices, else on a centred box of about 2^20 (a 1024 x 1024 square, a 128^3 cube, or
/// what the grid allows), so that the choice costs a fraction of a quantization. When it
/// quantized the whole field and `kept` is given, the kept order's quantization (mode none's:
/// step 2 eb, no constraints) is moved there, so that mode none need not quantize again.
InterpOrder choose_interp_order(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                                std::span<const float> fills, float eb, int threads, Quantized* kept = nullptr);
InterpOrder choose_interp_order(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                                std::span<const double> fills, double eb, int threads,
                                QuantizedOf<double>* kept = nullptr);

/// Which missing-vertex stand-in interp_walk's users give: the prediction where finite, else 0.
template <class T>
inline T interp_stand_in(T pred) { return std::isfinite(pred) ? pred : T(0); }

}  // namespace factz::detail
