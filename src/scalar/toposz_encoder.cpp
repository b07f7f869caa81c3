// The TopoSZ encoder (toposz_encoder.hpp, docs/toposz.md "Compression").
//
// Only a few vertices are constrained. The quantizer rounds every other value to the
// nearest code, an error of at most step / 2 <= p_abs / 2, and by the stability of
// persistence diagrams such noise creates no pair of persistence above the threshold on
// its own. What it can break is local: which vertex is a node, and the order of values
// around the nodes and around pairs close to the threshold. So a node of the original tree
// is "protected": stored exactly, and the vertices of its box (for an extremum also those
// that could cross its value: within the quantization error of it, connected to it through
// such vertices; once it offends, through the vertices within p of it) keep their side of
// it in (value, index) order. Each round recomputes the decoded field's tree and protects
// the vertices where it differs from the original's, with wider boxes for those that
// differ again; late rounds also store their boxes exactly, and past the last round the
// field is stored losslessly. Constraints commute, so the level components are searched
// once per value after the boxes, and a repair can stop at its search budget and go on
// later with the same result.
#include "scalar/toposz_encoder.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <utility>

#include "scalar/mesh_links.hpp"
#include "streams/stream_common.hpp"  // float_bound
#include "streams/vector_stream.hpp"  // double_bound

namespace factz::detail {
namespace {

constexpr int64_t kProtectRounds = 12;  // from then on offending boxes are stored exactly too
constexpr int64_t kMaxRadius = 16;
constexpr int kPartnerAfter = kMaxRadius;  // a decoded pair's saddle's radius before the repair below

// t = min(2 eb, p) is the largest step whose noise (step / 2) creates no pair of
// persistence above the threshold by stability; a step of eb (TopoSZ) lets two candidates
// lie within eb. A coarse step costs fewer bits per code but moves values more, so more of
// them cross the protected nodes' values and more rounds store more values exactly; the
// fine ones win where the original has many nodes close in value, so the steps race.
// Every candidate costs a quantization of the field and its state (about 12 bytes per
// vertex) during the race, so a large field races the first max(2, 2^25 / n) candidates
// only: at most max(2 n, 2^25) vertices' states.
//
// A pair whose two ends decode one step apart (neighbouring lattice values, or codes one
// apart on equal predictions) has a persistence of one step, give or take the rounding of
// the products, and a pair at or above the threshold stays: a step of exactly p turned
// pairs of nearby values, down to ties, into nodes of the decoded tree (at REL / P 1e-2,
// before the first repair, on the lattice: 434 false nodes on the 320 x 384 ocean
// temperature, 54 at 0.99 p; on the predictions' values 184 and 146; the 480 x 241
// geopotential 43 and 9, 39 and 15). So every step stays a little below p, by far more than
// that rounding.
//
// The repairs' level components (the vertices within a step's noise of an offending
// vertex, connected to it) keep a plateau from taking an extremum's place, and they are
// what stores most values exactly: a saddle's is a strip along its contour, and two nodes
// close in value leave the vertices between them no code. Offending vertices that are no
// extrema of the original tree (saddles, false nodes) often settle with their boxes alone,
// so each step also races with their level components held back until their box radius
// reaches kLateLevelOffense (late_levels): at REL / P 1e-2 on the 19 real scalar fields
// either policy wins on some (ocean temperature 17.6 -> 21.0 late, heated cylinder 24.0 ->
// 22.9), and racing both keeps the better.
//
// The interpolation predictor (scalar_interp.hpp) codes smooth fields in far fewer bits
// than Lorenzo, but a value's decoded value then depends on the values before it in the
// walk, as on Lorenzo's predictions' values: its steps race first, beside Lorenzo's.
// A field too large to race every candidate (more than 2^25 vertex states in all: a 256^3
// field races three) races those of the lowest leads, the earlier on ties: the first rung
// (the interpolation's half step, or Lorenzo's top step), then the interpolation's coarse
// step 2 eb with late level components and repairs by the decoded error, then Lorenzo's top
// step (sea-ice fraction replicated to 300 x 147 x 360, plateaus at 0 and 1: 1027676 bytes
// with it, 4300494 without; both after the last resort, every value exact), then the
// interpolation's top step t with late level components and reach, Lorenzo's t on the
// lattice with late level components, the coarse steps with reach, then the others in race
// order. Measured on fields of 3 to 17 M
// vertices against the ladder's first candidates (docs/benchmarks.md, "Large fields race
// the candidates that win"): at REL / P 1e-2 the smooth random 256^3 field 149989 -> 114274
// bytes (mode none 73265), a rougher one 1451992 -> 934982, an upsampled hurricane 129327
// -> 95142. Lorenzo alone keeps the ladder's order.
constexpr int kRest = 6;
template <class Rung>
int truncated_race_lead(const Rung& r, bool first_rung, bool late, bool reach) {
  if (first_rung && !late && !reach) return 0;
  if (r.interp && late && reach && r.coarse) return 1;
  if (!r.interp && !r.lattice && !late && r.top) return 2;
  if (r.interp && late && reach && r.top) return 3;
  if (r.lattice && late && !reach && r.top) return 4;
  if (r.interp && reach && r.coarse) return 5;
  return kRest;
}

template <class T>
std::vector<StepChoiceOf<T>> steps_of(T eb, double p_abs, size_t n, bool interp, bool lorenzo) {
  constexpr std::pair<double, bool> kLadder[] = {{1.0, false}, {0.25, false}, {1.0, true},    {0.25, true},
                                                 {0.5, false}, {0.5, true},   {0.75, false}, {0.75, true},
                                                 {0.375, false}, {0.375, true}};
  const double top = p_abs > 0 ? std::min(2.0 * double(eb), p_abs) : double(eb);
  // The interpolation predictor's fractions 1/2 and 1 (no lattice) join the ladder at its
  // head and after its first two rungs: 1/2, whose repairs stay small, first (the smooth
  // random 256^3 field: 4 rounds, 0.01 % of the values exact; at 1 without late level
  // components the first repair's take 12 s and leave a stream 13 times larger).
  struct Rung {
    double step;
    bool lattice, interp;
    bool coarse = false;  // above t
    bool early_only = false;  // raced without late_levels only
    bool top = false;         // the step t itself (below the threshold)
  };
  auto below_threshold = [&](double step) { return p_abs > 0 ? std::min(step, p_abs * kStepBelowThreshold) : step; };
  std::vector<Rung> rungs;
  for (size_t k = 0; k < std::size(kLadder); ++k) {
    if (interp && k == 0) rungs.push_back({below_threshold(top * 0.5), false, true});
    if (interp && k == 2) rungs.push_back({below_threshold(top), false, true, false, false, true});
    // 3/4 and 1/4 after the first four rungs: with the twins' repairs (reach) the 3D height
    // at REL / P 1e-2 keeps 3/4 (38965 -> 35530 bytes); without the twins these two rungs
    // gained 0.8 % in geometric mean (2026-12-06).
    if (interp && k == 4) {
      rungs.push_back({below_threshold(top * 0.75), false, true});
      rungs.push_back({below_threshold(top * 0.25), false, true});
    }
    if (lorenzo)
      rungs.push_back({below_threshold(top * kLadder[k].first), kLadder[k].second, false, false, false,
                       kLadder[k].first == 1.0});
  }
  // Steps above t, on the interpolation only: mode none's 2 eb and its quarters while they
  // stay above kCoarseAbove t, at the ladder's end (see toposz_encoder.hpp).
  if (interp && p_abs > 0)
    for (int k = 0; k < kCoarseInterpSteps; ++k) {
      const double step = 2.0 * double(eb) / double(int64_t(1) << (2 * k));
      if (!(step > top * kCoarseAbove)) break;
      rungs.push_back({step, false, true, true, k > 0});
    }
  std::vector<StepChoiceOf<T>> all;
  std::vector<int> lead;  // where a truncated race takes it from (lower first; kRest: in race order)
  for (bool reach : {false, true})
    for (bool late : {false, true})
      for (size_t i = 0; i < rungs.size(); ++i) {
        const Rung& r = rungs[i];
        if ((late && r.early_only) || (reach && (!r.interp || p_abs <= 0))) continue;
        const StepChoiceOf<T> c{bound_in<T>(r.step), r.lattice, late, r.interp, r.coarse, reach};
        if ((c.step > 0 || (eb == 0 && !r.lattice && !r.interp)) && std::find(all.begin(), all.end(), c) == all.end()) {
          all.push_back(c);
          lead.push_back(interp ? truncated_race_lead(r, i == 0, late, reach) : kRest);
        }
      }
  const size_t most = std::max<size_t>(interp && lorenzo ? 3 : 2, (size_t(1) << 25) / std::max<size_t>(n, 1));
  // A field too large to race every candidate races the `most` whose leads are lowest (the
  // earlier on ties), in race order.
  std::vector<size_t> order(all.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lead[a] < lead[b]; });
  order.resize(std::min(most, order.size()));
  std::sort(order.begin(), order.end());
  std::vector<StepChoiceOf<T>> steps;
  for (size_t k : order) steps.push_back(all[k]);
  if (steps.empty()) steps.push_back({eb, false, false, interp && !lorenzo});
  return steps;
}

}  // namespace

template <>
float bound_in<float>(double value) {
  return float_bound(value);
}
template <>
double bound_in<double>(double value) {
  return double_bound(value);
}

std::vector<StepChoiceOf<float>> toposz_steps(float eb, double p_abs, size_t n, bool interp, bool lorenzo) {
  return steps_of(eb, p_abs, n, interp, lorenzo);
}
std::vector<StepChoiceOf<double>> toposz_steps(double eb, double p_abs, size_t n, bool interp, bool lorenzo) {
  return steps_of(eb, p_abs, n, interp, lorenzo);
}

// The grid of the extrema's stored values (exact_residuals.hpp): 2^t units in the last
// place of the largest magnitude of the field at most step / kGridFraction apart, so that
// an extremum moves outward by less than that (0: no grid).
constexpr double kGridFraction = 1;

template <class T>
int grid_shift_for(const TopoInputOf<T>& in, T step) {
  const double m = in.max_magnitude;
  const double spacing = double(step) / kGridFraction;
  if (!(m > 0) || !(spacing > 0) || !std::isfinite(spacing)) return 0;
  constexpr int kMantissa = std::numeric_limits<T>::digits - 1;
  const int t = std::ilogb(spacing) - (std::ilogb(m) - kMantissa);
  constexpr int kWidth = int(sizeof(T)) * 8;
  return t < 2 ? 0 : std::min(t, kWidth - 2);
}

template <class T>
TopoStepOf<T>::TopoStepOf(const TopoInputOf<T>& in, T step, int64_t index, bool lattice, bool late_levels,
                          bool interp, int64_t budget, bool reach)
    : in_(in),
      progress_(in.progress),
      step_(step),
      index_(index),
      lattice_(lattice),
      interp_(interp && !lattice),
      reach_(reach && interp && !lattice),
      band_(step / 2),
      late_levels_(late_levels),
      t0_(std::chrono::steady_clock::now()) {
  const size_t n = in.f.size();
  cons_.exact.assign(n, 0);
  cons_.slot.assign(n, ConstraintsOf<T>::kFree);
  seen_.assign(n, 0);
  for (const CtNode& node : in.tree->nodes) {
    radius_[uint32_t(node.vertex)] = 1;
    // Any vertex of a plateau (or a flat cap) around an extremum could take its place, so
    // its whole level component keeps its side; a saddle's role is local (its box), and
    // holding a plateau on both sides of a saddle would pin it to one value, exactly.
    const bool extremum = node.type == CtNodeType::minimum || node.type == CtNodeType::maximum;
    if (extremum) extrema_.insert(uint32_t(node.vertex));
    protect(node.vertex, 1, extremum);
    // An extremum may be stored a fraction of a step outward (ConstraintsOf::kGridUp /
    // kGridDown), a saddle on the grid next to its own value where its box keeps its sides
    // (kGridSaddle), until it offends: protect() then stores its own value.
    cons_.exact[size_t(node.vertex)] = !extremum                         ? ConstraintsOf<T>::kGridSaddle
                                       : node.type == CtNodeType::maximum ? ConstraintsOf<T>::kGridUp
                                                                          : ConstraintsOf<T>::kGridDown;
  }
  if (lattice_) cons_.grid_shift = grid_shift_for(in_, step_);
  if (!protect_level_components(budget)) {
    abandoned_ = true;
    return;
  }
  quantize_all();
}

template <class T>
void TopoStepOf<T>::quantize_all() {
  ++quantizations_;
  if (lattice_) quantize_lattice(in_.f, in_.grid, in_.missing, in_.fills, in_.eb, step_, &cons_, q_);
  else if (interp_)
    quantize_interp(in_.f, in_.grid, in_.missing, in_.fills, in_.eb, step_, &cons_, q_, in_.interp_order, in_.threads);
  else quantize(in_.f, in_.grid, in_.missing, in_.fills, in_.eb, step_, &cons_, q_);
}

template <class T>
TopoRound TopoStepOf<T>::advance(CtWorkspace& work, int64_t budget) {
  if (done_) return TopoRound::done;
  if (!repairing_) {
    const ContourTree tg = compute_contour_tree(q_.recon, in_.grid, in_.missing, in_.p_abs, {}, in_.threads, &work);
    const CtComparison c = compare_contour_trees(*in_.tree, tg);
    last_to_fix_ = int64_t(c.offending.size());
    report(&c);
    if (c.same()) {
      done_ = true;
      return TopoRound::done;
    }
    if (round_ == in_.max_rounds) {  // last resort: lossless, trivially the same tree
      cons_.all_exact = true;
      quantize_all();
      ++round_;
      last_to_fix_ = 0;
      done_ = true;
      report(nullptr);
      return TopoRound::done;
    }
    // A pair of the decoded field that the original's tree lacks, whose saddle has offended
    // kPartnerAfter rounds: its extremum's component dies lower (a maximum; a minimum's
    // higher) than in f, where a path from it to the rest dips past the extremum's own
    // saddle in f, which need not be a node of the tree (its pair is below p) and so is
    // never protected. Stored exactly with its level component, that saddle keeps the path
    // on its side (the 128 x 64 x 18 interpolated temperature at REL / P 1e-2: one pair
    // kept the interpolation's step for 20 rounds).
    std::vector<int64_t> partners;
    if (in_.all_pairs && *in_.all_pairs)
      for (const CtPair& pr : tg.pairs) {
        const auto seen = radius_.find(uint32_t(pr.saddle));
        if (seen == radius_.end() || seen->second < kPartnerAfter) continue;
        auto by_pair = [](const CtPair& a, const CtPair& b) {
          return a.extremum != b.extremum ? a.extremum < b.extremum : a.saddle < b.saddle;
        };
        const auto& tp = in_.tree->pairs;
        const auto at = std::lower_bound(tp.begin(), tp.end(), pr, by_pair);
        if (at != tp.end() && at->extremum == pr.extremum && at->saddle == pr.saddle) continue;
        const std::vector<CtPair>& ap = (*in_.all_pairs)();
        for (auto it = std::lower_bound(ap.begin(), ap.end(), CtPair{pr.extremum, -1, 0}, by_pair);
             it != ap.end() && it->extremum == pr.extremum; ++it)
          if (it->saddle != pr.saddle) partners.push_back(it->saddle);
      }
    for (int64_t v : partners) {
      uint8_t& r = radius_[uint32_t(v)];
      r = uint8_t(std::min<int64_t>(r + 1, kMaxRadius));
      protect(v, r, true);
    }
    for (int64_t v : c.offending) {
      uint8_t& r = radius_[uint32_t(v)];
      r = uint8_t(std::min<int64_t>(r + 1, kMaxRadius));
      // A vertex that offends again: its level component too (late_levels: once its box
      // radius reaches kLateLevelOffense, unless it is an extremum of the original tree).
      // An extremum's is searched through its cap (protect_level_group): what overtakes
      // it is a lower peak of its branch behind a dip deeper than a step's noise (sea-ice
      // fraction replicated 2 x 2 x 2, REL / P 1e-2: one maximum on the plateau at 1
      // offended for 40 rounds, each round another peak near 0.997 decoding above it, and
      // the field was stored losslessly, 836902 bytes; with the caps 593168). Saddles keep
      // the narrow search: held through their caps they store so many values exactly that
      // the 19 real fields grew by 6 % (geometric mean), 0.8 % when only from round 12 on.
      const bool extremum = extrema_.count(uint32_t(v)) != 0;
      const bool late = late_levels_ && !extremum;
      const bool level = r >= (late ? kLateLevelOffense : 2);
      protect(v, r, level, extremum && level);
      if (round_ >= kProtectRounds) pin_box(v, 1 + (round_ - kProtectRounds) / 2);
    }
    repairing_ = true;
  }
  if (!protect_level_components(budget)) return TopoRound::suspended;
  repairing_ = false;
  ++round_;
  quantize_all();
  return TopoRound::repaired;
}

template <class T>
void TopoStepOf<T>::report(const CtComparison* c) const {
  if (!progress_ || !*progress_) return;
  ScalarProgress p;
  p.step = index_;
  p.round = round_;
  p.nodes_to_fix = c ? int64_t(c->offending.size()) : last_to_fix_;
  p.exact_vertices = int64_t(q_.exact.size());
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  (*progress_)(p);
}

template <class T>
void TopoStepOf<T>::report_final() const {
  if (done_) report(nullptr);
}

// Stores c exactly; the vertices of its box of `radius` and, with `level_component`, of
// the component of {|f - f(c)| <= band} around c keep their side of c. The level component
// is only noted here (protect_level_components). Every constraint only narrows an
// interval to one side of a value (the tightest bound wins, equality allowed only if every
// constraint at that bound allows it) or stores a vertex exactly, so constraints commute
// and repeat harmlessly: their order, grouping and repetition never change the result.
template <class T>
void TopoStepOf<T>::protect(int64_t c, int64_t radius, bool level_component, bool wide) {
  cons_.exact[size_t(c)] = 1;
  for_box(c, radius, [&](int64_t w) {
    if (w != c) keep_side(w, c);
  });
  if (!level_component) return;
  const T fc = in_.f[size_t(c)];
  const auto [at, added] = (wide ? wide_of_value_ : level_of_value_).try_emplace(orderable_bits(fc), levels_.size());
  if (added) levels_.push_back({fc, {}, wide});
  levels_[at->second].members.push_back(uint32_t(c));
}

// Stores every valid vertex of the box exactly.
template <class T>
void TopoStepOf<T>::pin_box(int64_t c, int64_t radius) {
  for_box(c, radius, [&](int64_t w) { cons_.exact[size_t(w)] = 1; });
}

// Tightens w's interval so that (g(w), w) stays on the side of (f(c), c) where (f(w), w) is.
template <class T>
void TopoStepOf<T>::keep_side(int64_t w, int64_t c) {
  uint32_t& slot = cons_.slot[size_t(w)];
  if (slot == ConstraintsOf<T>::kFree) {
    slot = uint32_t(cons_.intervals.size());
    cons_.intervals.emplace_back();
  }
  IntervalOf<T>& iv = cons_.intervals[slot];
  const T fc = in_.f[size_t(c)];
  if (sos_less(in_.f[size_t(w)], w, fc, c)) iv.keep_below(fc, w < c);
  else iv.keep_above(fc, w > c);
}

// The pending level components, group by group; false when the budget (vertices visited)
// ran out: the group under way is searched again from its start on the next call.
template <class T>
bool TopoStepOf<T>::protect_level_components(int64_t& budget) {
  for (; next_level_ < levels_.size(); ++next_level_)
    if (!protect_level_group(levels_[next_level_], budget)) return false;
  levels_.clear();
  level_of_value_.clear();
  wide_of_value_.clear();
  next_level_ = 0;
  return true;
}

// Depth-first search through mesh edges between vertices within band of the group's value
// from each member not reached yet: the vertices whose decoded value could cross it near
// the member (a plateau around a node included, however wide). A wide group (an extremum
// that offended) is searched through the vertices within p of its value instead, and
// those of them within band keep their sides: its cap, where it is the extremum (its
// pair's saddle is at least p away), with the lower peaks that no vertex within band
// connects to it. Members of one value in one component share it (a plateau's nodes: one
// search instead of one each); every vertex of it keeps its side of each member, which the
// smallest and the largest member decide (a vertex of that value between them in index
// order may take either side, as each member on its other side allows).
template <class T>
bool TopoStepOf<T>::protect_level_group(const LevelGroup& group, int64_t& budget) {
  const Neighbourhood nb(in_.grid);
  const double fc = group.value;
  const double wide = std::max(double(band_), in_.p_abs);
  // How far w can move: a step's noise; on the lattice to its own lattice value; with reach_
  // as far as it moved in the quantization that offended (none before round 0's).
  auto can_cross = [&](uint32_t w) {
    const T fw = in_.f[w];
    const double off = std::fabs(double(fw) - fc);
    if (off > double(band_)) return false;
    if (lattice_ && off > std::fabs(double(lattice_value(lattice_index(fw, step_), step_)) - double(fw))) return false;
    if (reach_ && !q_.recon.empty() && off > std::fabs(double(q_.recon[w]) - double(fw))) return false;
    return true;
  };
  std::vector<uint32_t> reached;  // every vertex marked in seen_, to clear it afterwards
  std::vector<uint8_t> placed(group.members.size(), 0);  // member's component searched
  std::vector<uint32_t> in_component;                    // the members placed in the component searched
  auto clear = [&]() {
    for (uint32_t w : reached) seen_[w] = 0;
  };
  // Without reach_ a component is the same set in every round (it depends on f, the band and
  // the lattice only), so a member whose component was held once already keeps its side of
  // the smallest and the largest member of that time, which bracket it: keep_side(w, m) for
  // any member m between two members is implied by theirs (the same value; equality allowed
  // only where both allow it). Such a member starts no search; if a new member of this
  // round lies in its component, that member's search reaches it and holds the component as
  // before.
  const bool static_search = !reach_;
  auto key = [&](uint32_t m) { return uint64_t(m) * 2 + (group.wide ? 1 : 0); };
  for (uint32_t start : group.members) {
    if (seen_[start]) continue;
    if (static_search && held_.count(key(start))) continue;
    const size_t first = reached.size();
    seen_[start] = 1;
    reached.push_back(start);
    stack_.assign(1, start);
    while (!stack_.empty()) {
      if (--budget < 0) {
        clear();
        return false;
      }
      const int64_t v = stack_.back();
      stack_.pop_back();
      for_each_neighbour(in_.grid, nb, v, [&](int64_t w) {
        if (seen_[size_t(w)] || !valid(w)) return;
        if (group.wide ? std::fabs(double(in_.f[size_t(w)]) - fc) >= wide : !can_cross(uint32_t(w))) return;
        seen_[size_t(w)] = 1;
        reached.push_back(uint32_t(w));
        stack_.push_back(uint32_t(w));
      });
    }
    uint32_t lo = start, hi = start;  // the members in this component
    in_component.clear();
    for (size_t k = 0; k < group.members.size(); ++k) {
      const uint32_t m = group.members[k];
      if (placed[k] || !seen_[m]) continue;
      placed[k] = 1;
      in_component.push_back(m);
      lo = std::min(lo, m);
      hi = std::max(hi, m);
    }
    for (size_t k = first; k < reached.size(); ++k) {
      const uint32_t w = reached[k];
      if (group.wide && !can_cross(w)) continue;  // a narrow search reached only such vertices
      if (w != lo) keep_side(w, lo);
      if (w != hi) keep_side(w, hi);
    }
    if (static_search)
      for (uint32_t m : in_component) held_.insert(key(m));
  }
  clear();
  return true;
}

template <class T>
template <class F>
void TopoStepOf<T>::for_box(int64_t c, int64_t r, F&& visit) const {
  const ScalarGrid& g = in_.grid;
  const int64_t x = c % g.nx, t = c / g.nx, y = t % g.ny, z = t / g.ny;
  for_each_in_box(g, x, y, z, r, [&](int64_t w) {
    if (valid(w)) visit(w);
  });
}

template class TopoStepOf<float>;
template class TopoStepOf<double>;

// A regular vertex keeps its upper and lower links connected, so moving its value between
// its neighbours' (every edge keeps its direction) changes no sublevel or superlevel set's
// topology at any level, and no critical vertex's value moves: the tree and its pairs'
// persistence stay. Keeping every edge's direction is what limits those moves (on a smooth
// field a step moves a value past its neighbours': MECCA temperature at REL / P 1e-2, 5054 of
// about 56 000 regular coded vertices moved), so the first try keeps only the kinds of the
// links (each vertex's numbers of upper and lower components): the same critical vertices
// of the same kinds at the same values, though which components a saddle joins may change,
// hence the comparison (it never differed on the 19 real fields; docs/benchmarks.md). A
// critical vertex of the decoded field may be a node or one end of a pair just below the
// threshold, whose persistence its value sets, so it keeps its value: moved too (the
// original tree's nodes held instead), the trees differed (MECCA: 15 false negatives, and 7
// offending vertices still after four rounds of holding those and their links).
template <class T>
bool move_regular_vertices(const TopoInputOf<T>& in, const TopoStepOf<T>& s, CtWorkspace& work, QuantizedOf<T>& q,
                           InterpMoves moves) {
  if (!(s.lattice() || s.interp()) || !s.done()) return false;
  const ScalarGrid& g = in.grid;
  // The link kinds of the decoded field: the first try's rule, and which vertices are held.
  const std::vector<uint16_t> kinds = link_kinds(g, in.missing, std::span<const T>(s.quantized().recon));
  std::vector<uint8_t> critical(kinds.size(), 0);
  for (size_t v = 0; v < kinds.size(); ++v)
    critical[v] = (in.missing.empty() || !in.missing[v]) && kinds[v] != kRegularLink;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::span<const uint16_t> rule = attempt == 0 ? std::span<const uint16_t>(kinds) : std::span<const uint16_t>();
    q = s.quantized();
    if (s.interp()) {
      if (relax_interp(in.f, g, in.missing, in.fills, in.eb, s.step(), in.interp_order, moves, critical, rule, q) == 0)
        continue;
    } else {
      const int64_t relaxed = relax_lattice_codes(in.f, g, in.missing, in.fills, in.eb, s.step(), critical, rule, q);
      if (relaxed < 0) q = s.quantized();
      const int64_t shortened = shorten_lattice_exact(in.f, g, in.missing, in.fills, in.eb, s.step(), critical, q);
      if (relaxed <= 0 && shortened == 0) continue;
    }
    const ContourTree tq = compute_contour_tree(q.recon, g, in.missing, in.p_abs, {}, in.threads, &work);
    const bool same = compare_contour_trees(*in.tree, tq).same();
    if (same) return true;
  }
  q = s.quantized();
  return false;
}

template bool move_regular_vertices(const TopoInputOf<float>&, const TopoStepOf<float>&, CtWorkspace&,
                                    QuantizedOf<float>&, InterpMoves);
template bool move_regular_vertices(const TopoInputOf<double>&, const TopoStepOf<double>&, CtWorkspace&,
                                    QuantizedOf<double>&, InterpMoves);

}  // namespace factz::detail
