// The TopoSZ encoder (toposz_encoder.hpp, docs/toposz.md "Compression").
//
// Only a few vertices are constrained. The quantizer rounds every other value to the
// nearest code, an error of at most step / 2 <= p_abs / 2, and by the stability of
// persistence diagrams such noise creates no pair of persistence above the threshold on
// its own. What it can break is local: which vertex is a node, and the order of values
// around the nodes and around pairs close to the threshold. So a node of the original tree
// is "protected": stored exactly, and the vertices of its box (for an extremum also those
// that could cross its value: within the quantization error of it, connected to it through
// such vertices) keep their side of it in (value, index) order. Each round recomputes the decoded field's
// tree and protects the vertices where it differs from the original's, with wider boxes
// for those that differ again; late rounds also store their boxes exactly, and past the
// last round the field is stored losslessly.
#include "scalar/toposz_encoder.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include "scalar/contour_tree_core.hpp"

namespace factz::detail {
namespace {

constexpr int64_t kMaxRounds = 40;      // then every vertex is stored exactly
constexpr int64_t kProtectRounds = 12;  // from then on offending boxes are stored exactly too
constexpr int64_t kMaxRadius = 16;

// Exact vertices and the side constraints around them.
class Protection {
 public:
  Protection(const TopoInput& in, float band) : in_(in), band_(band) {
    const size_t n = in.f.size();
    const float inf = std::numeric_limits<float>::infinity();
    iv_.lo.assign(n, -inf);
    iv_.hi.assign(n, inf);
    iv_.incl.assign(n, 0);
    exact_.assign(n, 0);
    stamp_.assign(n, 0);
  }

  const Intervals& intervals() const { return iv_; }
  std::span<const uint8_t> exact() const { return exact_; }

  // Stores c exactly; the vertices of its box of `radius` and, with `level_component`, of
  // the component of {|f - f(c)| <= band} around c keep their side of c.
  void protect(int64_t c, int64_t radius, bool level_component) {
    exact_[size_t(c)] = 1;
    stamp_[size_t(c)] = ++now_;
    if (level_component) keep_level_component(c);
    for_box(c, radius, [&](int64_t w) {
      if (stamp_[size_t(w)] == now_) return;
      stamp_[size_t(w)] = now_;
      keep_side(w, c);
    });
  }

  // Stores every valid vertex of the box exactly.
  void pin_box(int64_t c, int64_t radius) {
    for_box(c, radius, [&](int64_t w) { exact_[size_t(w)] = 1; });
  }

 private:
  bool valid(int64_t w) const { return in_.missing.empty() || !in_.missing[size_t(w)]; }

  // Tightens w's interval so that (g(w), w) stays on the side of (f(c), c) where (f(w), w) is.
  void keep_side(int64_t w, int64_t c) {
    const size_t i = size_t(w);
    const float fc = in_.f[size_t(c)];
    if (sos_less(in_.f[i], w, fc, c)) {
      const uint8_t equal_ok = w < c ? 2 : 0;
      if (fc < iv_.hi[i]) iv_.incl[i] = uint8_t((iv_.incl[i] & 1) | equal_ok);
      else if (fc == iv_.hi[i]) iv_.incl[i] = uint8_t(iv_.incl[i] & (1 | equal_ok));
      iv_.hi[i] = std::min(iv_.hi[i], fc);
    } else {
      const uint8_t equal_ok = w > c ? 1 : 0;
      if (fc > iv_.lo[i]) iv_.incl[i] = uint8_t((iv_.incl[i] & 2) | equal_ok);
      else if (fc == iv_.lo[i]) iv_.incl[i] = uint8_t(iv_.incl[i] & (2 | equal_ok));
      iv_.lo[i] = std::max(iv_.lo[i], fc);
    }
  }

  // Depth-first search from c through mesh edges between vertices within band of f(c):
  // the vertices whose decoded value could cross f(c) near c (a plateau around a node
  // included, however wide).
  void keep_level_component(int64_t c) {
    const Neighbourhood nb(in_.grid);
    const double fc = in_.f[size_t(c)];
    stack_.assign(1, c);
    while (!stack_.empty()) {
      const int64_t v = stack_.back();
      stack_.pop_back();
      for_each_neighbour(in_.grid, nb, v, [&](int64_t w) {
        if (stamp_[size_t(w)] == now_ || !valid(w) || std::fabs(double(in_.f[size_t(w)]) - fc) > double(band_)) return;
        stamp_[size_t(w)] = now_;
        keep_side(w, c);
        stack_.push_back(w);
      });
    }
  }

  template <class F>
  void for_box(int64_t c, int64_t r, F&& visit) const {
    const ScalarGrid& g = in_.grid;
    const int64_t x = c % g.nx, t = c / g.nx, y = t % g.ny, z = t / g.ny;
    const int64_t rz = g.nz > 1 ? r : 0;
    for (int64_t zz = std::max<int64_t>(0, z - rz); zz <= std::min(g.nz - 1, z + rz); ++zz)
      for (int64_t yy = std::max<int64_t>(0, y - r); yy <= std::min(g.ny - 1, y + r); ++yy)
        for (int64_t xx = std::max<int64_t>(0, x - r); xx <= std::min(g.nx - 1, x + r); ++xx) {
          const int64_t w = (zz * g.ny + yy) * g.nx + xx;
          if (valid(w)) visit(w);
        }
  }

  const TopoInput& in_;
  float band_;
  Intervals iv_;
  std::vector<uint8_t> exact_;
  std::vector<uint32_t> stamp_;  // the protect call that last reached a vertex
  uint32_t now_ = 0;
  std::vector<int64_t> stack_;
};

void report(const TopoInput& in, int64_t round, const CtComparison& c, const Quantized& q,
            std::chrono::steady_clock::time_point t0) {
  if (!in.progress || !*in.progress) return;
  ScalarProgress p;
  p.step = in.step_index;
  p.round = round;
  p.nodes_to_fix = int64_t(c.offending.size());
  p.exact_vertices = int64_t(q.exact.size());
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  (*in.progress)(p);
}

}  // namespace

int64_t toposz_quantize(const TopoInput& in, float step, Quantized& q) {
  const auto t0 = std::chrono::steady_clock::now();
  Protection guard(in, step / 2);  // the nearest code's error: what an unconstrained vertex moves
  std::vector<uint8_t> radius(in.f.size(), 0);
  for (const CtNode& node : in.tree->nodes) {
    radius[size_t(node.vertex)] = 1;
    // Any vertex of a plateau (or a flat cap) around an extremum could take its place, so
    // its whole level component keeps its side; a saddle's role is local (its box), and
    // holding a plateau on both sides of a saddle would pin it to one value, exactly.
    const bool extremum = node.type == CtNodeType::minimum || node.type == CtNodeType::maximum;
    guard.protect(node.vertex, 1, extremum);
  }
  for (int64_t round = 0;; ++round) {
    quantize(in.f, in.grid, in.missing, in.fills, in.eb, step, guard.exact(), &guard.intervals(), q);
    const ContourTree tg = compute_contour_tree(q.recon, in.grid, in.missing, in.p_abs, {}, in.threads);
    const CtComparison c = compare_contour_trees(*in.tree, tg);
    report(in, round, c, q, t0);
    if (c.same()) return round;
    if (round == kMaxRounds) {  // last resort: lossless, trivially the same tree
      const std::vector<uint8_t> all(in.f.size(), 1);
      quantize(in.f, in.grid, in.missing, in.fills, in.eb, step, all, nullptr, q);
      return round + 1;
    }
    for (int64_t v : c.offending) {
      uint8_t& r = radius[size_t(v)];
      r = uint8_t(std::min<int64_t>(r + 1, kMaxRadius));
      guard.protect(v, r, r >= 2);  // a vertex that offends again: its level component too
      if (round >= kProtectRounds) guard.pin_box(v, 1 + (round - kProtectRounds) / 2);
    }
  }
}

}  // namespace factz::detail
