// The TopoSZ encoder's steps (src/scalar/toposz_encoder.hpp): a repair that its search
// budget suspends, resumed later, protects exactly what a repair done at once protects,
// so the race of steps (scalar_codec.cpp) never changes a step's quantization by putting
// it aside; for both quantizers (values and lattice). The steps raced stay below the
// persistence threshold, and why: a pair one step apart would have the threshold's
// persistence and stay in the decoded tree.
#include <gtest/gtest.h>

#include <cstring>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <string>
#include <random>
#include <span>
#include <vector>

#include "scalar/contour_tree_core.hpp"
#include "scalar/mesh_links.hpp"
#include "scalar/scalar_interp.hpp"
#include "scalar/toposz_encoder.hpp"

namespace factz {
namespace {

// Terraces with wide plateaus and some noise: nodes on plateaus, level components that
// span many vertices, and several rounds of repair at a coarse bound.
std::vector<float> terraces(int64_t nx, int64_t ny, int64_t nz, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(size_t(nx * ny * nz));
  size_t i = 0;
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x, ++i) {
        const float h = 4.0f * std::sin(0.23f * float(x)) * std::cos(0.19f * float(y)) + std::sin(0.3f * float(z));
        v[i] = i % 3 == 0 ? std::round(h) : h + 0.4f * u(rng);
      }
  return v;
}

// Past in.max_rounds a step quantizes once more with every value exact, and its round ends
// the step: quantizations() counts that quantization too, since the race writes a step's
// stream again exactly when that count moves (a race that refreshed streams only after
// repairs kept the quantization before the last resort, with its false cases, on a field
// that ran out of rounds: sea-ice fraction replicated to 200 x 98 x 240).
TEST(TopoSZSteps, TheLastResortIsAQuantizationOfItsOwn) {
  int last_resorts = 0;
  for (auto [nx, ny, nz] : {std::tuple{70, 60, 1}, {24, 20, 12}})
    for (bool lattice : {false, true})
      for (bool interp : {false, true}) {
        if (lattice && interp) continue;
        const std::vector<float> f = terraces(nx, ny, nz, 5);
        const detail::ScalarGrid g{nx, ny, nz};
        const double range = detail::scalar_range(f);
        const double p_abs = 1e-2 * range;
        const ContourTree tree = detail::compute_contour_tree(f, g, {}, p_abs, {}, 1);
        detail::TopoInput in{f, g, {}, {}, float(0.1 * range), p_abs, &tree, 1, nullptr,
                             detail::scalar_max_magnitude(f)};
        in.max_rounds = 1;
        SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) +
                     (lattice ? " lattice" : interp ? " interpolation" : " values"));
        detail::TopoStep s(in, float(p_abs), 0, lattice, false, interp);
        detail::CtWorkspace work;
        EXPECT_EQ(s.quantizations(), 1u);  // round 0
        for (int r = 0; r < 5 && !s.done(); ++r) {
          const uint64_t before = s.quantizations();
          const detail::TopoRound a = s.advance(work);
          const bool last_resort = s.rounds() > in.max_rounds;
          // A repair or the last resort quantizes once more; a round that finds the trees
          // equal does not.
          EXPECT_EQ(s.quantizations(), before + (a == detail::TopoRound::repaired || last_resort ? 1 : 0));
          if (!last_resort) continue;
          ++last_resorts;
          EXPECT_EQ(a, detail::TopoRound::done);
          ASSERT_EQ(s.quantized().exact.size(), f.size());
          EXPECT_EQ(std::memcmp(s.quantized().recon.data(), f.data(), f.size() * sizeof(float)), 0);
        }
        EXPECT_TRUE(s.done());
        EXPECT_EQ(s.advance(work), detail::TopoRound::done);
      }
  EXPECT_GT(last_resorts, 0);  // some of these steps need more than one repair
}

// An extremum that offends holds its cap: the vertices of its branch within a step's noise
// of its value keep their side of it, also those that no vertex within that noise connects
// to it (a lower peak beside it, behind a dip deeper than the noise but within p). A 2D
// field: a region at 1 - 1.5 band with the global maximum (1) and lower peaks (1 - k band,
// k from 0.05 to 0.9) in it, each peak alone among the region's values; some peaks decode
// above the maximum in round 0 (the maximum offends) and some do not. After the first
// repair each peak is exact or held below the maximum's value, whether it crossed or not
// (sea-ice fraction replicated 2 x 2 x 2 kept one of its maxima offending for 40 rounds:
// each round another peak near the plateau at 1 decoded above it). The same for the
// minimum of the negated field.
TEST(TopoSZSteps, AnOffendingExtremumHoldsItsCap) {
  const int64_t nx = 48, ny = 12;
  const double p_abs = 0.1, band = p_abs / 2, step = p_abs;
  const int64_t apex = 6 * nx + 24;
  for (float sign : {1.0f, -1.0f}) {
    SCOPED_TRACE(sign > 0 ? "maximum" : "minimum");
    std::vector<float> f(size_t(nx * ny));
    std::vector<int64_t> peaks;
    constexpr double kDepth[] = {0.05, 0.3, 0.6, 0.9};
    constexpr double kTop = 0.98;  // off the quantizer's grid of steps from the ramp
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x) {
        const int64_t v = y * nx + x;
        const bool region = y >= 2 && y <= 9 && x >= 4 && x <= 43;
        double h = region ? kTop - 1.2 * band : 0.3 * double(x) / double(nx);
        if (v == apex) h = kTop;
        else if (region && (y == 4 || y == 7) && x % 4 == 2 && std::abs(x - 24) > 2) {
          h = kTop - kDepth[peaks.size() % 4] * band;
          peaks.push_back(v);
        }
        f[size_t(v)] = sign * float(h);
      }
    const detail::ScalarGrid g{nx, ny, 1};
    const ContourTree tree = detail::compute_contour_tree(f, g, {}, p_abs, {}, 1);
    ASSERT_TRUE(std::any_of(tree.nodes.begin(), tree.nodes.end(), [&](const CtNode& n) { return n.vertex == apex; }));
    for (int64_t v : peaks)  // the peaks are no nodes (their persistence is below p)
      ASSERT_FALSE(std::any_of(tree.nodes.begin(), tree.nodes.end(), [&](const CtNode& n) { return n.vertex == v; }));
    detail::TopoInput in{f, g, {}, {}, float(p_abs), p_abs, &tree, 1, nullptr, detail::scalar_max_magnitude(f)};
    detail::TopoStep s(in, float(step), 0);
    const float fa = f[size_t(apex)];
    auto beyond = [&](float val, int64_t v) { return sign > 0 ? detail::sos_less(fa, apex, val, v) : detail::sos_less(val, v, fa, apex); };
    int64_t crossed = 0;
    for (int64_t v : peaks) crossed += beyond(s.quantized().recon[size_t(v)], v);
    EXPECT_GT(crossed, 0);                        // the maximum offends in round 0
    EXPECT_LT(crossed, int64_t(peaks.size()));    // and some peaks stay on their side
    detail::CtWorkspace work;
    ASSERT_EQ(s.advance(work), detail::TopoRound::repaired);
    const detail::Constraints& c = s.constraints();
    for (int64_t v : peaks) {
      SCOPED_TRACE("peak " + std::to_string(v));
      if (c.exact[size_t(v)] != 0) continue;
      ASSERT_NE(c.slot[size_t(v)], detail::Constraints::kFree);
      const detail::Interval& iv = c.intervals[c.slot[size_t(v)]];
      if (sign > 0) EXPECT_LE(iv.hi, fa);
      else EXPECT_GE(iv.lo, fa);
      EXPECT_FALSE(beyond(s.quantized().recon[size_t(v)], v));
    }
    while (!s.done()) s.advance(work);
    EXPECT_LE(s.rounds(), in.max_rounds);  // settled before the last resort
  }
}

TEST(TopoSZSteps, ASuspendedRepairResumesToTheSameQuantization) {
  int64_t suspensions = 0, rounds = 0, policies_differ = 0;
  for (auto [nx, ny, nz] : {std::tuple{70, 60, 1}, {24, 20, 12}})
    for (double p_rel : {1e-2, 3e-2}) {
      const std::vector<float> f = terraces(nx, ny, nz, 5);
      const detail::ScalarGrid g{nx, ny, nz};
      const double range = detail::scalar_range(f);
      const double p_abs = p_rel * range;
      const ContourTree tree = detail::compute_contour_tree(f, g, {}, p_abs, {}, 1);
      const detail::TopoInput in{f, g, {}, {}, float(0.1 * range), p_abs, &tree, 1, nullptr, detail::scalar_max_magnitude(f)};
      for (float step : {float(p_abs), float(p_abs / 4)})
        for (bool lattice : {false, true}) {
          std::vector<uint16_t> standard;  // the final symbols of the standard repair policy
          for (bool late : {false, true}) {
            SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) + " p " +
                         std::to_string(p_rel) + " step " + std::to_string(step) + (lattice ? " lattice" : "") +
                         (late ? " late levels" : ""));
            detail::TopoStep at_once(in, step, 0, lattice, late), in_parts(in, step, 0, lattice, late);
            detail::CtWorkspace work_a, work_b;
            for (int r = 0; r < 45; ++r) {
              const detail::TopoRound a = at_once.advance(work_a);
              detail::TopoRound b = detail::TopoRound::suspended;
              for (int64_t budget = 1; b == detail::TopoRound::suspended; budget *= 3) {
                b = in_parts.advance(work_b, budget);
                suspensions += b == detail::TopoRound::suspended;
              }
              ASSERT_EQ(a, b);
              ASSERT_EQ(at_once.rounds(), in_parts.rounds());
              ASSERT_EQ(at_once.quantized().symbols, in_parts.quantized().symbols);
              ASSERT_EQ(at_once.quantized().exact, in_parts.quantized().exact);
              if (a == detail::TopoRound::done) break;
              ++rounds;
            }
            EXPECT_TRUE(at_once.done());
            if (!late) standard = at_once.quantized().symbols;
            else policies_differ += at_once.quantized().symbols != standard;
          }
        }
    }
  EXPECT_GT(rounds, 4);        // repairs happened
  EXPECT_GT(suspensions, 10);  // and were suspended, some more than once
  EXPECT_GT(policies_differ, 0);  // late level components are a candidate of their own
}

TEST(TopoSZSteps, TheStepsRacedStayBelowTheThreshold) {
  // (eb, p): p below eb, p = eb (REL = P), eb < p < 2 eb, p above 2 eb, no threshold.
  const std::pair<float, double> cases[] = {{1.0f, 0.1}, {1.0f, 1.0}, {1.0f, 1.5}, {1.0f, 10.0}, {1.0f, 0.0}};
  for (auto [eb, p] : cases) {
    SCOPED_TRACE("eb " + std::to_string(eb) + " p " + std::to_string(p));
    const auto steps = detail::toposz_steps(eb, p, 1000);
    ASSERT_EQ(steps.size(), 20u);  // five fractions, two quantizers, two repair policies
    for (size_t k = 0; k < 10; ++k) {  // the same ten steps again with late level components
      EXPECT_FALSE(steps[k].late_levels);
      EXPECT_TRUE(steps[k + 10].late_levels);
      EXPECT_EQ(steps[k].step, steps[k + 10].step);
      EXPECT_EQ(steps[k].lattice, steps[k + 10].lattice);
    }
    const double t = p > 0 ? std::min(2.0 * eb, p) : double(eb);
    double largest = 0;
    for (const auto& c : steps) {
      EXPECT_GT(c.step, 0.0f);
      EXPECT_LE(double(c.step), t);
      if (p > 0) {
        EXPECT_LT(double(c.step), p);
      }
      largest = std::max(largest, double(c.step));
    }
    // The top rung is t itself where t is below p (2 eb), else just below p.
    const double top = p > 0 && t >= p * detail::kStepBelowThreshold ? p * detail::kStepBelowThreshold : t;
    EXPECT_NEAR(largest, top, 1e-6 * top);
    EXPECT_FALSE(steps[0].lattice);  // the values' top step first, then the fine one
    EXPECT_TRUE(steps[2].lattice);
  }
  // A large field races the first two only (at most 2^25 vertex states in all); doubles
  // follow the same rule.
  EXPECT_EQ(detail::toposz_steps(1.0f, 1.0, size_t(1) << 24).size(), 2u);
  EXPECT_EQ(detail::toposz_steps(1.0f, 1.0, size_t(1) << 21).size(), 16u);
  const auto d = detail::toposz_steps(1.0, 1.0, 100);
  for (const auto& c : d) EXPECT_LT(c.step, 1.0);
}

// A ramp (no critical point but its ends) with one dent: a minimum and its saddle 2 d apart
// in value, astride the middle of a lattice cell of step p. A step of p rounds them to
// neighbouring lattice values, a persistence of exactly p, which a tree simplified at p
// keeps: the decoded tree has a pair the original does not. The largest lattice step raced
// rounds both to one lattice value (persistence 0) and the first quantization is right.
TEST(TopoSZSteps, AStepOfThePersistenceThresholdWouldKeepATinyPair) {
  const int64_t nx = 8, ny = 8;
  const float p = 1.0f, eb = 1.0f, d = 1e-3f;
  std::vector<float> f(size_t(nx * ny));
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) f[size_t(y * nx + x)] = 10.0f * float(x + 8 * y) + 0.5f;  // 10 p per x
  // (3, 3) at 270.5 p + d is the lowest neighbour of (4, 4); the dent below it at 270.5 p - d.
  f[size_t(3 * nx + 3)] = 270.5f + d;
  f[size_t(4 * nx + 4)] = 270.5f - d;
  const detail::ScalarGrid g{nx, ny, 1};
  const ContourTree full = detail::compute_contour_tree(f, g, {}, 0.0, {}, 1);
  const ContourTree tree = detail::compute_contour_tree(f, g, {}, double(p), {}, 1);
  ASSERT_GT(full.nodes.size(), tree.nodes.size());  // the dent is a pair, pruned at p
  const detail::TopoInput in{f, g, {}, {}, eb, double(p), &tree, 1, nullptr, detail::scalar_max_magnitude(f)};
  detail::CtWorkspace work;

  detail::TopoStep at_p(in, p, 0, /*lattice=*/true);
  EXPECT_EQ(at_p.quantized().recon[size_t(4 * nx + 4)], 270.0f);
  EXPECT_EQ(at_p.quantized().recon[size_t(3 * nx + 3)], 271.0f);
  EXPECT_EQ(at_p.advance(work), detail::TopoRound::repaired);

  float top = 0;
  for (const auto& c : detail::toposz_steps(eb, double(p), f.size()))
    if (c.lattice) top = std::max(top, c.step);
  ASSERT_LT(top, p);
  detail::TopoStep below(in, top, 0, /*lattice=*/true);
  EXPECT_EQ(below.quantized().recon[size_t(4 * nx + 4)], below.quantized().recon[size_t(3 * nx + 3)]);
  EXPECT_EQ(below.advance(work), detail::TopoRound::done);
  EXPECT_EQ(below.rounds(), 0);
}

std::vector<float> bundled_field(const std::string& name, size_t n) {
  std::ifstream file(std::string(FACTZ_TEST_DATA_DIR) + "/" + name, std::ios::binary);
  std::vector<float> v(n);
  file.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * sizeof(float)));
  EXPECT_TRUE(bool(file)) << name;
  return v;
}

// What a lattice stream's decoder rebuilds from q's symbols and exact values: every
// vertex's value (a missing one its stand-in) and, per exact value, its Lorenzo reference.
void decode_lattice(const detail::ScalarGrid& g, std::span<const uint8_t> missing, float step,
                    const detail::Quantized& q, std::vector<float>& r, std::vector<float>& refs) {
  std::vector<int64_t> k(size_t(g.size()), 0);
  r.assign(size_t(g.size()), 0.0f);
  refs.clear();
  size_t symbol = 0, e = 0;
  int64_t v = 0;
  for (int64_t z = 0; z < g.nz; ++z)
    for (int64_t y = 0; y < g.ny; ++y)
      for (int64_t x = 0; x < g.nx; ++x, ++v) {
        if (!missing.empty() && missing[size_t(v)]) {
          k[size_t(v)] = detail::missing_stand_in(k.data(), g, x, y, z, v);
          r[size_t(v)] = detail::missing_stand_in(r.data(), g, x, y, z, v);
          continue;
        }
        const uint16_t sym = q.symbols[symbol++];
        if (sym == 0) {
          refs.push_back(detail::lorenzo(r.data(), g, x, y, z, v));
          r[size_t(v)] = q.exact[e++];
          k[size_t(v)] = detail::lattice_index(r[size_t(v)], step);
        } else {
          k[size_t(v)] = detail::lorenzo(k.data(), g, x, y, z, v) + (int64_t(sym) - int64_t(detail::kScalarCenter));
          r[size_t(v)] = detail::lattice_value(k[size_t(v)], step);
        }
      }
}

// Missing vertices: a disc of radius `radius` around (cx, cy) in every z-slice.
std::vector<uint8_t> disc_of(const detail::ScalarGrid& g, double cx, double cy, double radius) {
  std::vector<uint8_t> m(size_t(g.size()), 0);
  for (size_t k = 0; k < m.size(); ++k)
    m[k] = std::hypot(double(int64_t(k) % g.nx) - cx, double((int64_t(k) / g.nx) % g.ny) - cy) < radius;
  return m;
}

// Whether every edge between valid vertices has the same direction in `a` and `b`.
bool same_edges(const detail::ScalarGrid& g, std::span<const uint8_t> missing, const std::vector<float>& a,
                const std::vector<float>& b) {
  const detail::Neighbourhood nb(g);
  bool same = true;
  for (int64_t v = 0; v < g.size() && same; ++v) {
    if (!missing.empty() && missing[size_t(v)]) continue;
    detail::for_each_neighbour(g, nb, v, [&](int64_t n) {
      if (!missing.empty() && missing[size_t(n)]) return;
      if (detail::sos_less(a[size_t(n)], n, a[size_t(v)], v) != detail::sos_less(b[size_t(n)], n, b[size_t(v)], v))
        same = false;
    });
  }
  return same;
}

// The critical vertices of `r` (the ones move_regular_vertices holds).
std::vector<uint8_t> critical_of(const detail::ScalarGrid& g, std::span<const uint8_t> missing,
                                 const std::vector<float>& r) {
  const std::vector<uint16_t> t = detail::link_kinds(g, missing, std::span<const float>(r));
  std::vector<uint8_t> c(r.size(), 0);
  for (size_t v = 0; v < r.size(); ++v) c[v] = (missing.empty() || !missing[v]) && t[v] != detail::kRegularLink;
  return c;
}

// Checks move_regular_vertices on lattice step `s`, done (see the test below); counts the
// coded values it moved and the exact ones it shortened, and the critical vertices.
void check_refined(const detail::TopoInput& in, const detail::TopoStep& s, detail::CtWorkspace& work, int64_t& moved,
                   int64_t& shortened, int64_t& critical, int64_t& edges_moved) {
  const detail::ScalarGrid& g = in.grid;
  const detail::Quantized& o = s.quantized();
  detail::Quantized q = o;
  const bool changed = detail::move_regular_vertices(in, s, work, q);
  ASSERT_EQ(q.symbols.size(), o.symbols.size());
  ASSERT_EQ(q.exact.size(), o.exact.size());
  for (size_t k = 0; k < q.symbols.size(); ++k) ASSERT_EQ(q.symbols[k] == 0, o.symbols[k] == 0) << k;
  const float step = s.step();
  std::vector<float> r, refs;
  decode_lattice(g, in.missing, step, q, r, refs);
  EXPECT_EQ(refs, q.exact_refs);
  const std::vector<uint16_t> kinds = detail::link_kinds(g, in.missing, std::span<const float>(o.recon));
  const bool masked = !in.missing.empty();
  int64_t count = 0;
  size_t e = 0, symbol = 0;
  for (int64_t v = 0; v < g.size(); ++v) {
    if (masked && in.missing[size_t(v)]) continue;
    ASSERT_EQ(r[size_t(v)], q.recon[size_t(v)]) << v;  // the decoder's values
    const float x = o.recon[size_t(v)], y = q.recon[size_t(v)];
    const bool regular = kinds[size_t(v)] == detail::kRegularLink;
    critical += !regular;
    const bool exact = q.symbols[symbol++] == 0;
    if (exact) ++e;
    if (y == x) continue;
    ++count;
    EXPECT_TRUE(regular) << v;  // a critical vertex keeps its value
    EXPECT_LE(std::fabs(double(y) - double(in.f[size_t(v)])), double(in.eb)) << v;
    if (exact) {
      ++shortened;
      EXPECT_GT(std::countr_zero(std::bit_cast<uint32_t>(y)), std::countr_zero(std::bit_cast<uint32_t>(x))) << v;
      EXPECT_EQ(detail::lattice_index(y, step), detail::lattice_index(x, step)) << v;
    } else {
      ++moved;
    }
  }
  EXPECT_EQ(e, q.exact.size());
  EXPECT_EQ(changed, count > 0);
  EXPECT_EQ(detail::link_kinds(g, in.missing, std::span<const float>(q.recon)), kinds);  // every vertex's kind
  // With every edge's direction asked to stay (the fallback), it does.
  detail::Quantized edges = o;
  detail::relax_lattice_codes(in.f, g, in.missing, in.fills, in.eb, step, critical_of(g, in.missing, o.recon), {},
                              edges);
  detail::shorten_lattice_exact(in.f, g, in.missing, in.fills, in.eb, step, critical_of(g, in.missing, o.recon),
                                edges);
  EXPECT_TRUE(same_edges(g, in.missing, edges.recon, o.recon));
  edges_moved += edges.recon != o.recon;
  const ContourTree tq = detail::compute_contour_tree(q.recon, g, in.missing, in.p_abs, {}, 1);
  EXPECT_TRUE(compare_contour_trees(*in.tree, tq).same());
  // Every vertex held: nothing changes.
  const std::vector<uint8_t> all(size_t(g.size()), 1);
  detail::Quantized held = o;
  EXPECT_EQ(detail::shorten_lattice_exact(in.f, g, in.missing, in.fills, in.eb, step, all, held), 0);
  EXPECT_EQ(detail::relax_lattice_codes(in.f, g, in.missing, in.fills, in.eb, step, all, kinds, held), 0);
  EXPECT_EQ(held.exact, o.exact);
  EXPECT_EQ(held.symbols, o.symbols);
  EXPECT_EQ(held.recon, o.recon);
}

// After the race, a lattice step's vertices that are regular in its decoded field move
// (move_regular_vertices, docs/toposz.md step 6): a coded one to the lattice index nearest its
// prediction, an exact one to a shorter value of its lattice index. Checked: the symbols
// that are 0 stay 0, the decoder rebuilds the new values and references, a critical vertex
// keeps its value, every moved one stays within the bound, every vertex keeps the number of
// components of its upper and lower links (and every edge its direction in the fallback),
// a shortened value has more trailing zero bits and its lattice index, and the tree is the
// original's. Every lattice step of the ladder (standard repairs) on terraces with and
// without missing vertices at four pairs of bounds, and on the bundled NCL temperature
// (128 x 64 x 14) at REL 1e-2 / P 3e-2, where the race's Lorenzo stream shrinks by 4 %
// (12168 -> 11690 bytes).
TEST(TopoSZSteps, RegularVerticesMoveAndKeepTheTree) {
  struct Case {
    std::vector<float> f;
    detail::ScalarGrid g;
    double rel, p;
    bool masked;
  };
  std::vector<Case> cases;
  for (auto [nx, ny, nz] : {std::tuple{70, 60, 1}, {24, 20, 12}})
    for (bool masked : {false, true})
      for (auto [rel, p] : {std::pair{1e-2, 1e-2}, {1e-2, 3e-2}, {3e-2, 3e-2}, {1e-3, 1e-2}})
        for (uint32_t seed : {7u, 8u})
          cases.push_back({terraces(nx, ny, nz, seed), {nx, ny, nz}, rel, p, masked});
  cases.push_back({bundled_field("ncl_nc4uvt_t_128x64x14.f32", 128 * 64 * 14), {128, 64, 14}, 1e-2, 3e-2, false});
  int64_t moved = 0, shortened = 0, critical = 0, nc4uvt = 0, masked = 0, edges_moved = 0;
  for (const Case& c : cases) {
    const detail::ScalarGrid& g = c.g;
    SCOPED_TRACE(std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz) + " REL " +
                 std::to_string(c.rel) + " P " + std::to_string(c.p) + (c.masked ? " masked" : ""));
    const std::vector<uint8_t> missing = c.masked ? disc_of(g, 9.0, 7.0, 4.0) : std::vector<uint8_t>{};
    const double range = detail::scalar_range(c.f, missing);
    const double p_abs = c.p * range;
    const float eb = detail::bound_in<float>(c.rel * range);
    const ContourTree tree = detail::compute_contour_tree(c.f, g, missing, p_abs, {}, 1);
    const detail::TopoInput in{c.f, g, missing, {}, eb, p_abs, &tree, 1, nullptr,
                               detail::scalar_max_magnitude(c.f, missing)};
    for (const auto& choice : detail::toposz_steps(eb, p_abs, c.f.size())) {
      if (!choice.lattice || choice.late_levels) continue;
      detail::TopoStep s(in, choice.step, 0, true);
      detail::CtWorkspace work;
      while (s.advance(work) != detail::TopoRound::done) {
      }
      const int64_t before = moved + shortened;
      check_refined(in, s, work, moved, shortened, critical, edges_moved);
      if (g.nz == 14) nc4uvt += moved + shortened - before;
      if (c.masked) masked += moved + shortened - before;
    }
  }
  EXPECT_GT(nc4uvt, 0);
  EXPECT_GT(moved, 0);
  EXPECT_GT(shortened, 0);
  EXPECT_GT(masked, 0);    // with missing vertices too
  EXPECT_GT(critical, 0);  // critical vertices exist, and keep their values
  EXPECT_GT(edges_moved, 0);
}

// What an interpolation stream's decoder rebuilds from q's symbols (index order) and exact
// values (walk order).
std::vector<float> decode_interp(const detail::ScalarGrid& g, std::span<const uint8_t> missing, float step,
                                 detail::InterpOrder order, const detail::Quantized& q) {
  std::vector<float> r(size_t(g.size()), 0.0f);
  std::vector<size_t> slot(r.size(), 0);
  for (size_t v = 0, k = 0; v < r.size(); ++v)
    if (missing.empty() || !missing[v]) slot[v] = k++;
  const detail::InterpSteps<float> steps(step);
  size_t e = 0;
  detail::interp_walk(g, r.data(), [&](int64_t v, float pred, int64_t h) {
    if (!missing.empty() && missing[size_t(v)]) {
      r[size_t(v)] = detail::interp_stand_in(pred);
      return;
    }
    const uint16_t sym = q.symbols[slot[size_t(v)]];
    r[size_t(v)] = sym == 0 ? q.exact.at(e++)
                            : pred + float(int64_t(sym) - int64_t(detail::kScalarCenter)) * steps.at(h);
  }, order);
  EXPECT_EQ(e, q.exact.size());
  return r;
}

// After the race, an interpolation step's vertices of the finest level (or of every level)
// move where they are regular in the decoded field and every vertex that reads them can move
// too (move_regular_vertices, relax_interp): the decoder rebuilds the new values, a coarser
// vertex (with InterpMoves::finest) or a critical one keeps its value, every moved one stays
// within the bound, every vertex keeps its links' numbers of components (every edge its
// direction in the fallback), and the tree is the original's; some stored values become
// codes, vertices before the last pass move, and with every level coarser vertices too. The
// interpolation's steps of the ladder on terraces (both walk orders, with and without missing
// vertices) and on the bundled NCL temperature (128 x 64 x 14) at REL / P 1e-2, whose kept
// stream went 13961 -> 11939 bytes with the finest level's moves.
TEST(TopoSZSteps, InterpolationLevelsMoveAndKeepTheTree) {
  struct Case {
    std::vector<float> f;
    detail::ScalarGrid g;
    double rel, p;
    bool masked;
    detail::InterpOrder order;
  };
  std::vector<Case> cases;
  for (auto [nx, ny, nz] : {std::tuple{70, 60, 1}, {24, 20, 12}})
    for (bool masked : {false, true})
      for (auto order : {detail::InterpOrder::xyz, detail::InterpOrder::zyx})
        cases.push_back({terraces(nx, ny, nz, 9), {nx, ny, nz}, 1e-2, 1e-2, masked, order});
  cases.push_back({bundled_field("ncl_nc4uvt_t_128x64x14.f32", 128 * 64 * 14), {128, 64, 14}, 1e-2, 1e-2, false,
                   detail::InterpOrder::xyz});
  cases.push_back({bundled_field("ncl_nc4uvt_t_128x64x14.f32", 128 * 64 * 14), {128, 64, 14}, 1e-2, 1e-2, false,
                   detail::InterpOrder::zyx});
  int64_t moved = 0, unstored = 0, masked_moved = 0, nc4uvt = 0, edges_moved = 0, not_last = 0;
  int64_t every_moved = 0, coarse_moved = 0;
  for (const Case& c : cases) {
    const detail::ScalarGrid& g = c.g;
    SCOPED_TRACE(std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" + std::to_string(g.nz) +
                 (c.masked ? " masked" : "") + " order " + std::to_string(int(c.order)));
    const std::vector<uint8_t> missing = c.masked ? disc_of(g, 9.0, 7.0, 4.0) : std::vector<uint8_t>{};
    const double range = detail::scalar_range(c.f, missing);
    const double p_abs = c.p * range;
    const float eb = detail::bound_in<float>(c.rel * range);
    const ContourTree tree = detail::compute_contour_tree(c.f, g, missing, p_abs, {}, 1);
    const detail::TopoInput in{c.f, g, missing, {}, eb, p_abs, &tree, 1, nullptr,
                               detail::scalar_max_magnitude(c.f, missing), c.order};
    const int last = c.order == detail::InterpOrder::zyx ? (g.nx > 1 ? 0 : g.ny > 1 ? 1 : 2)
                                                         : (g.nz > 1 ? 2 : g.ny > 1 ? 1 : 0);
    for (const auto& choice : detail::toposz_steps(eb, p_abs, c.f.size(), true, false)) {
      if (!choice.interp || choice.reach || choice.coarse) continue;
      detail::TopoStep s(in, choice.step, 0, false, choice.late_levels, true);
      detail::CtWorkspace work;
      while (s.advance(work) != detail::TopoRound::done) {
      }
      const detail::Quantized& o = s.quantized();
      const std::vector<uint16_t> kinds = detail::link_kinds(g, missing, std::span<const float>(o.recon));
      for (const auto moves : {detail::InterpMoves::finest, detail::InterpMoves::every_level}) {
        const bool every = moves == detail::InterpMoves::every_level;
        detail::Quantized q = o;
        const bool changed = detail::move_regular_vertices(in, s, work, q, moves);
        ASSERT_EQ(q.symbols.size(), o.symbols.size());
        const std::vector<float> r = decode_interp(g, missing, s.step(), c.order, q);
        int64_t count = 0;
        size_t slot = 0;
        for (int64_t v = 0; v < g.size(); ++v) {
          if (c.masked && missing[size_t(v)]) continue;
          ASSERT_EQ(r[size_t(v)], q.recon[size_t(v)]) << v;
          const uint16_t before = o.symbols[slot], after = q.symbols[slot];
          ++slot;
          const float x = o.recon[size_t(v)], y = q.recon[size_t(v)];
          if (y == x) continue;  // its code may differ: its prediction moved
          ++count;
          const int64_t coord[3] = {v % g.nx, (v / g.nx) % g.ny, v / (g.nx * g.ny)};
          const bool finest = coord[0] % 2 == 1 || coord[1] % 2 == 1 || coord[2] % 2 == 1;
          EXPECT_TRUE(finest || every) << v;  // the finest level, unless every level may move
          coarse_moved += !finest;
          not_last += coord[last] % 2 == 0;
          EXPECT_EQ(kinds[size_t(v)], detail::kRegularLink) << v;  // regular
          EXPECT_LE(std::fabs(double(y) - double(c.f[size_t(v)])), double(eb)) << v;
          unstored += !every && before == 0 && after != 0;
        }
        EXPECT_EQ(changed, count > 0);
        if (every) {
          every_moved += count;
        } else {
          moved += count;
          if (c.masked) masked_moved += count;
          if (g.nz == 14) nc4uvt += count;
        }
        EXPECT_EQ(detail::link_kinds(g, missing, std::span<const float>(q.recon)), kinds);  // every vertex's kind
        const ContourTree tq = detail::compute_contour_tree(q.recon, g, missing, p_abs, {}, 1);
        EXPECT_TRUE(compare_contour_trees(tree, tq).same());
      }
      // With every edge's direction asked to stay (the fallback), it does.
      for (const auto moves : {detail::InterpMoves::finest, detail::InterpMoves::every_level}) {
        detail::Quantized edges = o;
        detail::relax_interp(c.f, g, missing, {}, eb, s.step(), c.order, moves, critical_of(g, missing, o.recon), {},
                             edges);
        EXPECT_TRUE(same_edges(g, missing, edges.recon, o.recon));
        EXPECT_EQ(decode_interp(g, missing, s.step(), c.order, edges), edges.recon);
        edges_moved += edges.recon != o.recon;
      }
    }
  }
  EXPECT_GT(moved, nc4uvt);  // the synthetic fields too
  EXPECT_GT(nc4uvt, 0);
  EXPECT_GT(masked_moved, 0);
  EXPECT_GT(unstored, 0);  // some stored vertices became coded
  EXPECT_GT(not_last, 0);  // vertices before the last pass moved too
  EXPECT_GT(edges_moved, 0);
  EXPECT_GT(every_moved, 0);
  EXPECT_GT(coarse_moved, 0);  // with every level, vertices of coarser levels moved too
}

}  // namespace
}  // namespace factz
