// The TopoSZ encoder of mode contour-tree (docs/toposz.md, "Compression"): quantization
// codes that keep the simplified contour tree of the field. Templated on the field's value
// type T (float or double; the float instantiation is the float code).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "factz/contour_tree.hpp"
#include "factz/scalar.hpp"
#include "scalar/contour_tree_core.hpp"
#include "scalar/scalar_quantizer.hpp"

namespace factz::detail {

/// What the encoder needs besides the quantization step.
/// Rounds of repair before a step stores every value exactly (TopoStepOf::advance).
inline constexpr int64_t kMaxRounds = 40;

template <class T>
struct TopoInputOf {
  std::span<const T> f;
  ScalarGrid grid;
  std::span<const uint8_t> missing;  ///< empty, or nonzero per missing vertex
  std::span<const T> fills;          ///< fill_values: values a valid vertex must not decode to
  T eb = 0;                          ///< absolute pointwise bound
  double p_abs = 0;                  ///< absolute persistence threshold
  const ContourTree* tree = nullptr;  ///< of f simplified at p_abs
  int threads = 1;
  const ScalarProgressHook* progress = nullptr;  ///< may be null or empty
  double max_magnitude = 0;  ///< scalar_max_magnitude(f, missing): the exact values' grid (0: none)
  InterpOrder interp_order = InterpOrder::xyz;  ///< the interpolation candidates' walk order
  /// Every persistence pair of f (its tree at threshold 0), by (extremum, saddle), computed
  /// on the first call (TopoStepOf::advance calls it, from one thread at a time, only for a
  /// decoded pair stuck kMaxRadius rounds); may be null or empty: no such repair.
  const std::function<const std::vector<CtPair>&()>* all_pairs = nullptr;
  /// Rounds of repair before the last resort, which stores every value exactly (kMaxRounds;
  /// fewer only in tests).
  int64_t max_rounds = kMaxRounds;
};
using TopoInput = TopoInputOf<float>;

/// The bound (or step) a requested absolute value becomes in the field's type: float_bound
/// for a float field, double_bound for a float64 one (never rounded to a float). Defined for
/// float and double.
template <class T>
T bound_in(double value);

/// One racer of mode contour-tree (docs/toposz.md, "Steps"): a quantization step and the
/// quantizer (the lattice: version 11 streams).
template <class T>
struct StepChoiceOf {
  T step = 0;
  bool lattice = false;
  bool late_levels = false;  ///< TopoStepOf's repair policy
  bool interp = false;       ///< on the interpolation predictor (quantize_interp; never with lattice)
  bool coarse = false;       ///< above min(2 eb, p): its first protection has a search budget
  bool reach = false;        ///< the repairs' level components by the decoded error (TopoStepOf; interp only)
  bool operator==(const StepChoiceOf&) const = default;
};

/// The steps raced for absolute bound eb and threshold p_abs (0: none) on a field of n
/// vertices, in race order: fractions 1, 1/4, 1/2, 3/4, 3/8 of t = min(2 eb, p_abs) (eb
/// without a threshold), each on the predictions' values and on the lattice, every step
/// strictly below p_abs (by kStepBelowThreshold), then the same ten with late_levels; the
/// first max(2, 2^25 / n) of them, no candidate twice. A step of the field's type (float
/// bounds as float_bound gives them). With `interp` the interpolation predictor's fractions
/// 1/2 and 1 join each half of the ladder (at its head and after its first two rungs), 3/4
/// and 1/4 after its first four, and the first max(3, 2^25 / n) race; with `lorenzo` false
/// only those race. With `interp` and
/// a threshold, up to kCoarseInterpSteps steps above t (`coarse`) follow the first half's
/// last rung: 2 eb, eb / 2, eb / 8, those above kCoarseAbove t; 2 eb also follows the
/// second half's, with late_levels (the decoded noise then reaches past p / 2, so the
/// repairs, not stability, keep the tree; they pay where the field's nodes are few and far
/// apart in value). With `interp`, every interpolation candidate races again with `reach`
/// after all the others. At most 44 candidates. Where the limit (max(2, 2^25 / n), max(3,
/// 2^25 / n) with both predictors) leaves out some, the ones raced are, with `interp`, the
/// first rung, 2 eb with late_levels and `reach`, Lorenzo's t, t with late_levels and
/// `reach`, Lorenzo's t on the lattice with late_levels and the coarse steps with `reach`
/// before the others (in race order still); with Lorenzo alone the first ones.
inline constexpr double kStepBelowThreshold = 1.0 - 1.0 / 128;
inline constexpr int kCoarseInterpSteps = 3;
inline constexpr double kCoarseAbove = 1.2;
/// A coarse step's first protection searches at most this many vertices per vertex of the
/// field, or the step leaves the race (TopoStepOf::abandoned).
inline constexpr int64_t kCoarseSearch = 1;
/// With late_levels, a vertex that is no extremum of the original tree has its level
/// component protected once its box radius reaches this (the radius grows by one per
/// offense from 0, from 1 for a node: the sixth offense, a saddle node's fifth).
inline constexpr int kLateLevelOffense = 6;
std::vector<StepChoiceOf<float>> toposz_steps(float eb, double p_abs, size_t n, bool interp = false,
                                              bool lorenzo = true);
std::vector<StepChoiceOf<double>> toposz_steps(double eb, double p_abs, size_t n, bool interp = false,
                                               bool lorenzo = true);

/// What TopoStep::advance did.
enum class TopoRound {
  done,       ///< the decoded field has the original's tree: the quantization is final (the last resort
              ///< after kMaxRounds quantizes again, every value exact, and ends with done: see quantizations())
  repaired,   ///< the trees differed; the vertices involved are protected, quantized again
  suspended,  ///< the repair's level components went past the budget; the next call resumes it
};

/// One quantization step of the encoder: which vertices are stored exactly and the
/// intervals of the constrained ones (the protection), and the latest quantization under
/// them, repaired one round at a time until the decoded field's tree simplified at
/// in.p_abs equals *in.tree. Past the last round every value is stored exactly, so a step
/// never ends with a different tree.
template <class T>
class TopoStepOf {
 public:
  static constexpr int64_t kNoBudget = std::numeric_limits<int64_t>::max();

  /// Protects the original tree's nodes and quantizes with `step` (> 0 with `lattice`),
  /// with quantize_lattice when `lattice`, else quantize: round 0. `index` is the step's
  /// number in the progress reports. The repairs protect a vertex's level component once
  /// its box radius is 2 (an extremum of the original tree: its first offense; another
  /// vertex: its second), or with `late_levels`, for a vertex that is no extremum, once the
  /// radius is kLateLevelOffense.
  ///
  /// The first protection's level components stop at `budget` vertices visited: the step
  /// is then abandoned() and not quantized (a coarse step's wide bands on a plateau), and is
  /// not to be advanced.
  ///
  /// A level component holds the vertices connected to the node through vertices within
  /// step / 2 of its value (an unconstrained vertex's largest move), and on the lattice only
  /// those whose own lattice value lies that far from their value or further (an
  /// unconstrained lattice vertex decodes to it, whatever the others do). With `reach` (the
  /// interpolation only) a repair's level components hold only the vertices whose error in
  /// the quantization that offended reaches the node's value: far fewer where the decoded
  /// values follow the field smoothly (the ERA-Interim geopotential at REL / P 1e-2: 3319 ->
  /// 1988 bytes), more rounds where the next quantization moves them (hence a candidate of
  /// its own).
  TopoStepOf(const TopoInputOf<T>& in, T step, int64_t index, bool lattice = false, bool late_levels = false,
             bool interp = false, int64_t budget = kNoBudget, bool reach = false);

  /// One round: compares the decoded field's tree with the original's (reported through
  /// in.progress); where they differ, protects the vertices involved and quantizes again.
  /// The level components searched in this call (vertices visited) stop at `budget`: the
  /// round is then suspended, and the next call goes on with it. `work` holds the tree's
  /// work arrays between calls.
  TopoRound advance(CtWorkspace& work, int64_t budget = kNoBudget);

  bool done() const { return done_; }
  bool abandoned() const { return abandoned_; }
  /// The rounds of repair so far (0: the first quantization was right).
  int64_t rounds() const { return round_; }
  T step() const { return step_; }
  bool lattice() const { return lattice_; }
  bool interp() const { return interp_; }
  bool reach() const { return reach_; }
  int64_t index() const { return index_; }
  const QuantizedOf<T>& quantized() const { return q_; }
  /// What the step asks of the quantizer: the constraints of its last quantization and of
  /// the repair under way.
  const ConstraintsOf<T>& constraints() const { return cons_; }
  /// How many times the step has quantized the field (round 0, each repair, and the last
  /// resort that stores every value exactly): a stream written from quantized() is that
  /// quantization's while this count stays the same.
  uint64_t quantizations() const { return quantizations_; }
  /// Reports the step's last round again (the kept step, when another step's round came
  /// after it).
  void report_final() const;
  /// Where the step's reports go from now on (in.progress until then; may be null): a copy
  /// of a step advanced ahead of the race (race_steps) keeps its reports until the race
  /// takes that round.
  void report_to(const ScalarProgressHook* hook) { progress_ = hook; }

 private:
  // The vertices of one value whose level components are still to be protected, by index.
  struct LevelGroup {
    T value = 0;
    std::vector<uint32_t> members;
    bool wide = false;  // searched through the vertices within p of the value (an extremum's cap)
  };
  using ValueBits = decltype(orderable_bits(T{}));

  void protect(int64_t c, int64_t radius, bool level_component, bool wide = false);
  void pin_box(int64_t c, int64_t radius);
  void keep_side(int64_t w, int64_t c);
  bool protect_level_components(int64_t& budget);
  bool protect_level_group(const LevelGroup& group, int64_t& budget);
  bool valid(int64_t w) const { return in_.missing.empty() || !in_.missing[size_t(w)]; }
  void quantize_all();
  void report(const CtComparison* c) const;
  template <class F>
  void for_box(int64_t c, int64_t r, F&& visit) const;

  const TopoInputOf<T>& in_;
  const ScalarProgressHook* progress_;
  T step_;
  int64_t index_;
  bool lattice_;
  bool interp_;
  bool reach_;
  T band_;  // the nearest code's error: how far an unconstrained vertex moves
  ConstraintsOf<T> cons_;
  bool late_levels_;
  std::unordered_map<uint32_t, uint8_t> radius_;  // box radius of each protected vertex
  std::unordered_set<uint32_t> extrema_;          // the original tree's minima and maxima
  std::vector<uint8_t> seen_;                     // reached by the current level search
  std::vector<uint32_t> component_, stack_;
  std::vector<LevelGroup> levels_;  // the pending level components, by value
  std::unordered_map<ValueBits, size_t> level_of_value_;  // orderable value bits -> levels_ index
  std::unordered_map<ValueBits, size_t> wide_of_value_;   // the same for the wide groups
  // Where the search is the same in every round (no reach_), the members whose level
  // component (key: member * 2 + wide) has been searched and held on the sides of its
  // smallest and largest member, which bracket each of them.
  std::unordered_set<uint64_t> held_;
  size_t next_level_ = 0;
  bool repairing_ = false;  // a round's repair is under way (suspended)
  bool abandoned_ = false;  // the first protection ran out of its budget
  QuantizedOf<T> q_;
  uint64_t quantizations_ = 0;
  int64_t round_ = 0;
  int64_t last_to_fix_ = 0;
  bool done_ = false;
  std::chrono::steady_clock::time_point t0_;
};
using TopoStep = TopoStepOf<float>;

/// A finished lattice or interpolation step's regular vertices moved (docs/toposz.md, step
/// 6): `q` (a copy of `s.quantized()`, s done) has the vertices that are regular in the
/// decoded field moved within the bound: on the lattice each coded one to the index nearest
/// its prediction (relax_lattice_codes) and each exact one to a shorter value of its lattice
/// index (shorten_lattice_exact), on the interpolation those of the finest level, or of
/// every level (`moves`), whose readers may move too to the code nearest 0 (relax_interp);
/// the critical vertices of the decoded field keep their values. First each move keeps the
/// kinds of the links around it (the critical vertices and their kinds stay, not always the
/// tree); where the tree then differs, again keeping every edge's direction (the tree
/// stays). The tree is computed and compared each time, and `q` is given back unchanged (false) when it differs both times or when nothing
/// moved. True: `q` holds the moved quantization, whose decoded field has the original's
/// tree.
template <class T>
bool move_regular_vertices(const TopoInputOf<T>& in, const TopoStepOf<T>& s, CtWorkspace& work, QuantizedOf<T>& q,
                           InterpMoves moves = InterpMoves::finest);

}  // namespace factz::detail
