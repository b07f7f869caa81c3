// The scalar streams' quantizer (scalar_quantizer.hpp).
#include "scalar/scalar_quantizer.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <cmath>
#include <type_traits>
#include <unordered_map>

#include "kernels/quantizer.hpp"
#include "codec/coder.hpp"
#include "scalar/exact_residuals.hpp"
#include "scalar/mesh_links.hpp"
#include "scalar/scalar_interp.hpp"

namespace factz::detail {

namespace {

template <class T>
std::vector<T> fill_values_of(std::span<const T> f, std::span<const uint8_t> missing) {
  constexpr size_t kMaxFillValues = 16;
  std::vector<T> out;
  for (size_t k = 0; k < missing.size(); ++k) {
    if (!missing[k] || std::isnan(f[k]) || std::find(out.begin(), out.end(), f[k]) != out.end()) continue;
    if (out.size() == kMaxFillValues) return {};
    out.push_back(f[k]);
  }
  return out;
}

// Whether vertex v may decode to `val`: within the bound, inside its interval (if any),
// on none of the fill values.
template <class T>
bool acceptable(T val, T fv, T eb, const IntervalOf<T>* iv, std::span<const T> fills) {
  return within_scalar_bound(val, fv, eb) && (!iv || iv->inside(val)) &&
         std::find(fills.begin(), fills.end(), val) == fills.end();
}

// The value of [a, b] (a <= b, finite) with the fewest significant bits: 0 when the
// interval holds it, else the leading bits that a and b share, the first bit where they
// differ set (b's) and every bit after it clear. Positive floats order as their bits.
template <class T>
T shortest_in(T a, T b) {
  if (a <= T(0) && b >= T(0)) return T(0);
  if (b < T(0)) return -shortest_in(-b, -a);
  using U = std::conditional_t<std::is_same_v<T, float>, uint32_t, uint64_t>;
  const U ua = std::bit_cast<U>(a), ub = std::bit_cast<U>(b);
  if (ua == ub) return a;
  const int k = std::bit_width(U(ua ^ ub)) - 1;
  return std::bit_cast<T>(U(ub & ~((U(1) << k) - 1)));
}

// The value a lattice stream stores for a constrained vertex that no code fits: any value
// within the bound, inside its interval and on no fill value keeps what the constraint
// asks, so it takes the shortest such value (shortest_in) rather than its own. Vertices of
// one interval then mostly share a value, and the exact-value section, which zstd codes,
// shrinks (the heated cylinder's 800 inflow vertices between a minimum and a maximum 6e-5
// apart). Its own value when the shortest is refused (a bound rounded outward, a fill
// value). The predictions' values keep their own: there a stored value also feeds the
// predictions after it, and shorter values moved the repairs (the 256^3 smooth field: 7
// rounds instead of 4, 20 % longer, for the same ratio). The interpolation predictor takes
// the shortest value, as the lattice does: there it gained on the real fields (heated
// cylinder 30.3 -> 44.2 at REL / P 1e-2, hurricane 19.5 -> 23.5) and the 256^3 smooth field
// kept its 4 rounds.
template <class T>
T stored_value(T fv, T eb, const IntervalOf<T>& iv, std::span<const T> fills) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  T lo = T(double(fv) - double(eb)), hi = T(double(fv) + double(eb));
  if (!within_scalar_bound(lo, fv, eb)) lo = std::nextafter(lo, kInf);
  if (!within_scalar_bound(hi, fv, eb)) hi = std::nextafter(hi, -kInf);
  const T ilo = (iv.incl & 1) ? iv.lo : std::nextafter(iv.lo, kInf);
  const T ihi = (iv.incl & 2) ? iv.hi : std::nextafter(iv.hi, -kInf);
  lo = std::max(lo, ilo);
  hi = std::min(hi, ihi);
  if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi)) return fv;
  const T x = shortest_in(lo, hi);
  return acceptable(x, fv, eb, &iv, fills) ? x : fv;
}

// The symbol of code q for vertex v when its value pred + q * step is acceptable (its value
// in `val`), else 0.
template <class T>
uint16_t try_code(int64_t q, T fv, T pred, T eb, T step, const IntervalOf<T>* iv, std::span<const T> fills, T& val) {
  if (q < -kScalarMaxCode || q > kScalarMaxCode) return 0;
  val = pred + T(q) * step;
  return acceptable(val, fv, eb, iv, fills) ? uint16_t(int64_t(kScalarCenter) + q) : 0;
}

// The symbol of vertex v (0: none accepted) and its value in `val`. Only the two codes that
// bracket f(v) are tried: a third one lies more than a step away, so it would never be
// within the bound in mode none (step 2 eb) and would only add error in mode contour-tree.
template <class T>
uint16_t choose_code(T fv, T pred, T eb, T step, const IntervalOf<T>* iv, std::span<const T> fills, T& val) {
  const double d = (double(fv) - double(pred)) / double(step);
  if (!std::isfinite(pred) || !(std::fabs(d) < double(kScalarMaxCode))) return 0;
  int64_t q0 = int64_t(d);  // llround(d), inline: truncation is exact below 2^52, and so is d - q0
  const double frac = d - double(q0);
  if (frac >= 0.5) ++q0;
  else if (frac <= -0.5) --q0;
  const int64_t other = d >= double(q0) ? q0 + 1 : q0 - 1;
  for (int64_t q : {q0, other})
    if (const uint16_t symbol = try_code(q, fv, pred, eb, step, iv, fills, val)) return symbol;
  return 0;
}

// An extremum of the tree (ConstraintsOf::kGridUp / kGridDown) coded instead of stored: the
// code whose value is the nearest at or beyond f(v) outward (up for a maximum), within the
// bound and its interval; 0 when none is.
template <class T>
uint16_t choose_outward(T fv, T pred, T eb, T step, const IntervalOf<T>* iv, std::span<const T> fills, bool up,
                        T& val) {
  const double d = (double(fv) - double(pred)) / double(step);
  if (!std::isfinite(pred) || !(std::fabs(d) < double(kScalarMaxCode))) return 0;
  auto inward = [&](int64_t q) { return up ? pred + T(q) * step < fv : pred + T(q) * step > fv; };
  int64_t q = int64_t(up ? std::ceil(d) : std::floor(d));
  if (inward(q)) q += up ? 1 : -1;  // the products rounded it inward
  return inward(q) ? 0 : try_code(q, fv, pred, eb, step, iv, fills, val);
}

// A saddle's value on the grid (ConstraintsOf::kGridSaddle) at vertex v = (x, y, z), the
// nearer of its two grid neighbours first, or its own value `fv` when neither may be taken:
// `gv` must be acceptable, every earlier valid vertex of the box on its side of (gv, v) by
// its decoded value r[w], every later one by its own value f[w] (its interval, narrowed to
// that side by the caller, then keeps it there whatever it decodes to).
template <class T>
T saddle_grid_value(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing, const T* r,
                    int64_t x, int64_t y, int64_t z, int64_t v, T pred, int t, T eb, const IntervalOf<T>* iv,
                    std::span<const T> fills) {
  const T fv = f[size_t(v)];
  T cand[2] = {grid_value(fv, pred, t, true), grid_value(fv, pred, t, false)};
  if (std::fabs(double(cand[1]) - double(fv)) < std::fabs(double(cand[0]) - double(fv))) std::swap(cand[0], cand[1]);
  for (const T gv : cand) {
    if (gv == fv || !acceptable(gv, fv, eb, iv, fills)) continue;
    bool ok = true;
    for_each_in_box(g, x, y, z, 1, [&](int64_t w) {
      if (!ok || w == v || (!missing.empty() && missing[size_t(w)])) return;
      const bool below = sos_less(f[size_t(w)], w, fv, v);
      const T val = w < v ? r[w] : f[size_t(w)];
      ok = below ? sos_less(val, w, gv, v) : sos_less(gv, v, val, w);
    });
    if (ok) return gv;
  }
  return fv;
}

// The intervals of the later box vertices of the saddles placed on the grid so far, each
// narrowed to its side of them (narrow_later_box); `flag` (one byte per vertex, allocated at
// the first placement) says which vertices have one, so that the others cost no lookup.
template <class T>
struct PlacedIntervals {
  std::vector<uint8_t> flag;
  std::unordered_map<int64_t, IntervalOf<T>> at;
  const IntervalOf<T>* find(int64_t v) const {
    if (flag.empty() || !flag[size_t(v)]) return nullptr;
    return &at.find(v)->second;
  }
};

// Narrows the interval of every later valid vertex w of the box of v (a saddle placed at
// gv) to its side of (gv, v), starting from a copy of its own interval the first time.
template <class T>
void narrow_later_box(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                      const ConstraintsOf<T>* c, int64_t x, int64_t y, int64_t z, int64_t v, T gv,
                      PlacedIntervals<T>& placed) {
  if (placed.flag.empty()) placed.flag.assign(size_t(g.size()), 0);
  for_each_in_box(g, x, y, z, 1, [&](int64_t w) {
    if (w <= v || (!missing.empty() && missing[size_t(w)])) return;
    const auto [at, added] = placed.at.try_emplace(w);
    if (added) {
      placed.flag[size_t(w)] = 1;
      const uint32_t own = c->slot[size_t(w)];
      if (own != ConstraintsOf<T>::kFree) at->second = c->intervals[own];
    }
    // (g(w), w) stays on the side of (gv, v) where (f(w), w) is of (f(v), v); w > v.
    if (sos_less(f[size_t(w)], w, f[size_t(v)], v)) at->second.keep_below(gv, false);
    else at->second.keep_above(gv, true);
  });
}

// The walk both quantizers share: vertices in index order; a missing vertex gets its
// stand-in (coder.missing); a vertex that is neither missing nor stored exactly by `c` gets
// coder.code's symbol (0: none accepted) for its value and interval; a vertex without a
// symbol is stored in the exact-value section (coder.exact after its value is recorded):
// its own value, or on the lattice stored_value's when an interval left it no code.
// out.recon holds the grid's values, zero, on entry (the coder writes through it).
template <class T, class Coder>
void quantize_walk(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing, T step,
                   const ConstraintsOf<T>* c, QuantizedOf<T>& out, Coder& coder) {
  out.symbols.clear();
  out.symbols.reserve(size_t(g.size()));
  out.exact.clear();
  out.exact_refs.clear();
  out.grid_shift = Coder::shortest_stored() && c && !c->all_exact ? c->grid_shift : 0;
  T* r = out.recon.data();
  PlacedIntervals<T> placed;  // the later box vertices of the saddles placed on the grid
  int64_t v = 0;
  for (int64_t z = 0; z < g.nz; ++z)
    for (int64_t y = 0; y < g.ny; ++y)
      for (int64_t x = 0; x < g.nx; ++x, ++v) {
        if (!missing.empty() && missing[size_t(v)]) {
          coder.missing(x, y, z, v);
          continue;
        }
        const T fv = f[size_t(v)];
        uint16_t symbol = 0;
        const bool constrained = c && !c->all_exact;
        const uint8_t kind = constrained ? c->exact[size_t(v)] : uint8_t(0);
        const uint32_t slot = constrained ? c->slot[size_t(v)] : ConstraintsOf<T>::kFree;
        const IntervalOf<T>* iv = slot == ConstraintsOf<T>::kFree ? nullptr : &c->intervals[slot];
        if (const IntervalOf<T>* narrowed = placed.find(v)) iv = narrowed;  // holds its own interval too
        const bool quantized = step > 0 && !(c && c->all_exact) && !kind;
        if (quantized) symbol = coder.code(fv, iv, x, y, z, v);
        else if (step > 0 && (kind == ConstraintsOf<T>::kGridUp || kind == ConstraintsOf<T>::kGridDown))
          symbol = coder.outward(fv, iv, x, y, z, v, kind == ConstraintsOf<T>::kGridUp);
        out.symbols.push_back(symbol);
        if (symbol == 0) {
          T val = quantized && iv && Coder::shortest_stored() ? stored_value(fv, coder.eb, *iv, coder.fills) : fv;
          if constexpr (Coder::shortest_stored()) {
            const T pred = lorenzo(r, g, x, y, z, v);
            out.exact_refs.push_back(pred);
            if (out.grid_shift > 0 && kind == ConstraintsOf<T>::kGridSaddle) {
              val = saddle_grid_value(f, g, missing, r, x, y, z, v, pred, out.grid_shift, coder.eb, iv, coder.fills);
              if (val != fv) narrow_later_box(f, g, missing, c, x, y, z, v, val, placed);
            } else if (out.grid_shift > 0 && kind >= ConstraintsOf<T>::kGridUp) {
              const T gv = grid_value(fv, pred, out.grid_shift, kind == ConstraintsOf<T>::kGridUp);
              if (acceptable(gv, fv, coder.eb, iv, coder.fills)) val = gv;
            }
          }
          out.exact.push_back(val);
          r[v] = val;
          coder.exact(val, v);
        }
      }
}

template <class T>
void quantize_of(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                 std::span<const T> fills, T eb, T step, const ConstraintsOf<T>* c, QuantizedOf<T>& out) {
  struct Values {  // codes on the predictions' values
    static constexpr bool shortest_stored() { return false; }
    const ScalarGrid& g;
    std::span<const T> fills;
    T eb, step;
    T* r;
    void missing(int64_t x, int64_t y, int64_t z, int64_t v) { r[v] = missing_stand_in(r, g, x, y, z, v); }
    uint16_t code(T fv, const IntervalOf<T>* iv, int64_t x, int64_t y, int64_t z, int64_t v) {
      return choose_code(fv, lorenzo(r, g, x, y, z, v), eb, step, iv, fills, r[v]);
    }
    uint16_t outward(T fv, const IntervalOf<T>* iv, int64_t x, int64_t y, int64_t z, int64_t v, bool up) {
      return choose_outward(fv, lorenzo(r, g, x, y, z, v), eb, step, iv, fills, up, r[v]);
    }
    void exact(T, int64_t) {}
  };
  out.recon.assign(size_t(g.size()), T(0));
  Values coder{g, fills, eb, step, out.recon.data()};
  quantize_walk(f, g, missing, step, c, out, coder);
}

// The lattice quantizer (quantize_lattice). `k` holds every vertex's lattice index, missing
// ones their stand-in's, as the decoder rebuilds them.
template <class T>
void quantize_lattice_of(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                         std::span<const T> fills, T eb, T step, const ConstraintsOf<T>* c, QuantizedOf<T>& out) {
  struct Lattice {
    static constexpr bool shortest_stored() { return true; }
    const ScalarGrid& g;
    std::span<const T> fills;
    T eb, step;
    T* r;
    std::vector<int64_t> k;
    void missing(int64_t x, int64_t y, int64_t z, int64_t v) {
      k[size_t(v)] = missing_stand_in(k.data(), g, x, y, z, v);
      r[v] = missing_stand_in(r, g, x, y, z, v);
    }
    // The symbol of lattice index kk for vertex v (pred: the Lorenzo prediction of its index)
    // when its value is acceptable, with k[v] and r[v] set; else 0.
    uint16_t take(int64_t kk, int64_t pred, T fv, const IntervalOf<T>* iv, int64_t v) {
      const int64_t q = kk - pred;
      if (q < -kScalarMaxCode || q > kScalarMaxCode || kk > kLatticeMaxIndex || kk < -kLatticeMaxIndex) return 0;
      const T val = lattice_value(kk, step);
      if (!acceptable(val, fv, eb, iv, fills)) return 0;
      k[size_t(v)] = kk;
      r[v] = val;
      return uint16_t(int64_t(kScalarCenter) + q);
    }
    uint16_t code(T fv, const IntervalOf<T>* iv, int64_t x, int64_t y, int64_t z, int64_t v) {
      const int64_t k0 = lattice_index(fv, step);
      const int64_t pred = lorenzo(k.data(), g, x, y, z, v);
      const int64_t other = double(fv) >= double(lattice_value(k0, step)) ? k0 + 1 : k0 - 1;
      for (int64_t kk : {k0, other})
        if (const uint16_t symbol = take(kk, pred, fv, iv, v)) return symbol;
      return 0;
    }
    uint16_t outward(T fv, const IntervalOf<T>* iv, int64_t x, int64_t y, int64_t z, int64_t v, bool up) {
      auto inward = [&](int64_t kk) { return up ? lattice_value(kk, step) < fv : lattice_value(kk, step) > fv; };
      int64_t kk = lattice_index(fv, step);
      if (inward(kk)) kk += up ? 1 : -1;
      return inward(kk) ? 0 : take(kk, lorenzo(k.data(), g, x, y, z, v), fv, iv, v);
    }
    void exact(T fv, int64_t v) { k[size_t(v)] = lattice_index(fv, step); }
  };
  out.recon.assign(size_t(g.size()), T(0));
  Lattice coder{g, fills, eb, step, out.recon.data(), std::vector<int64_t>(size_t(g.size()), 0)};
  quantize_walk(f, g, missing, step, c, out, coder);
}

// The interpolation quantizer (quantize_interp): each pass's rows shared among `threads`
// threads (interp_walk_parts), the exact values of each part collected apart and appended in
// walk order after the pass, so the result is the same for any number of threads.
template <class T>
void quantize_interp_of(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                        std::span<const T> fills, T eb, T step, const ConstraintsOf<T>* c, QuantizedOf<T>& out,
                        InterpOrder order, int threads) {
  const size_t n = size_t(g.size());
  out.recon.assign(n, T(0));
  out.symbols.assign(n, 0);  // by vertex; the missing ones' slots removed below
  out.exact.clear();
  out.exact_refs.clear();
  out.grid_shift = 0;
  T* r = out.recon.data();
  const bool all_exact = c && c->all_exact;
  const bool constrained = c && !all_exact;
  const InterpSteps<T> steps(step);
  std::vector<std::vector<T>> exact_of(size_t(std::max(threads, 1)));
  interp_walk_parts(g, r, threads, [&](int64_t v, T pred, int64_t h, int part) {
    if (!missing.empty() && missing[size_t(v)]) {
      r[v] = interp_stand_in(pred);
      return;
    }
    const T fv = f[size_t(v)];
    const uint8_t kind = constrained ? c->exact[size_t(v)] : uint8_t(0);
    const uint32_t slot = constrained ? c->slot[size_t(v)] : ConstraintsOf<T>::kFree;
    const IntervalOf<T>* iv = slot == ConstraintsOf<T>::kFree ? nullptr : &c->intervals[slot];
    uint16_t symbol = 0;
    const bool quantized = step > 0 && !all_exact && !kind;
    if (quantized) symbol = choose_code(fv, pred, eb, steps.at(h), iv, fills, r[v]);
    else if (step > 0 && (kind == ConstraintsOf<T>::kGridUp || kind == ConstraintsOf<T>::kGridDown))
      symbol = choose_outward(fv, pred, eb, steps.at(h), iv, fills, kind == ConstraintsOf<T>::kGridUp, r[v]);
    out.symbols[size_t(v)] = symbol;
    if (symbol == 0) {
      const T val = quantized && iv ? stored_value(fv, eb, *iv, fills) : fv;
      exact_of[size_t(part)].push_back(val);
      r[v] = val;
    }
  }, [&](int parts) {
    for (int p = 0; p < parts; ++p) {
      out.exact.insert(out.exact.end(), exact_of[size_t(p)].begin(), exact_of[size_t(p)].end());
      exact_of[size_t(p)].clear();
    }
  }, order);
  if (!missing.empty()) {
    size_t kept = 0;
    for (size_t v = 0; v < n; ++v)
      if (!missing[v]) out.symbols[kept++] = out.symbols[v];
    out.symbols.resize(kept);
  }
}

// The box of about 2^20 vertices choose_interp_order samples: each dimension cut to its
// centred share (the whole field when it is that small).
template <class T>
void centred_box(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing, ScalarGrid& box,
                 std::vector<T>& values, std::vector<uint8_t>& box_missing) {
  constexpr int64_t kSample = int64_t(1) << 20;
  box = g;
  const int dims = g.nz > 1 ? 3 : 2;
  const int64_t side = dims == 3 ? 128 : 1024;
  box.nx = std::min(g.nx, side);
  box.ny = std::min(g.ny, side);
  box.nz = std::min(g.nz, dims == 3 ? side : int64_t(1));
  while (box.nx * box.ny * box.nz < kSample && (box.nx < g.nx || box.ny < g.ny || box.nz < g.nz)) {
    // a thin grid: let the long dimensions take the share the short ones cannot
    if (box.nx < g.nx) box.nx = std::min(g.nx, box.nx * 2);
    if (box.ny < g.ny && box.nx * box.ny * box.nz < kSample) box.ny = std::min(g.ny, box.ny * 2);
    if (box.nz < g.nz && box.nx * box.ny * box.nz < kSample) box.nz = std::min(g.nz, box.nz * 2);
  }
  const int64_t x0 = (g.nx - box.nx) / 2, y0 = (g.ny - box.ny) / 2, z0 = (g.nz - box.nz) / 2;
  values.resize(size_t(box.size()));
  box_missing.assign(missing.empty() ? 0 : size_t(box.size()), 0);
  size_t k = 0;
  for (int64_t z = 0; z < box.nz; ++z)
    for (int64_t y = 0; y < box.ny; ++y)
      for (int64_t x = 0; x < box.nx; ++x, ++k) {
        const size_t v = size_t(((z + z0) * g.ny + (y + y0)) * g.nx + (x + x0));
        values[k] = f[v];
        if (!missing.empty()) box_missing[k] = missing[v];
      }
}

template <class T>
InterpOrder choose_interp_order_of(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                                   std::span<const T> fills, T eb, int threads, QuantizedOf<T>* kept_q) {
  if (g.nx * g.ny * g.nz <= 1) return InterpOrder::xyz;
  ScalarGrid box;
  std::vector<T> values;
  std::vector<uint8_t> box_missing;
  const bool whole = g.size() <= (int64_t(1) << 20);
  if (!whole) centred_box(f, g, missing, box, values, box_missing);
  const std::span<const T> ff = whole ? f : std::span<const T>(values);
  const std::span<const uint8_t> mm = whole ? missing : std::span<const uint8_t>(box_missing);
  const ScalarGrid& gg = whole ? g : box;
  size_t best = SIZE_MAX;
  InterpOrder kept = InterpOrder::xyz;
  for (uint8_t o = 0; o < kInterpOrderCount; ++o) {
    QuantizedOf<T> q;
    quantize_interp_of(ff, gg, mm, fills, eb, T(2) * eb, static_cast<const ConstraintsOf<T>*>(nullptr), q,
                       InterpOrder(o), threads);
    std::vector<uint8_t> coded;
    if (!q.symbols.empty() && !entropy_encode(EntropyCoder::ans, q.symbols, kScalarCenter, coded, threads).ok())
      return InterpOrder::xyz;
    const size_t size = coded.size() + q.exact.size() * sizeof(T);
    if (size < best) {
      best = size;
      kept = InterpOrder(o);
      if (whole && kept_q) *kept_q = std::move(q);
    }
  }
  return kept;
}

// The number of trailing zero bits of a value's pattern: the more, the shorter the value.
template <class T>
int trailing_zero_bits(T x) {
  using U = std::conditional_t<std::is_same_v<T, float>, uint32_t, uint64_t>;
  return std::countr_zero(std::bit_cast<U>(x));
}

// After values of a lattice quantization moved: the missing vertices' stand-ins and the
// exact values' references (exact_refs: the decoder's Lorenzo predictions on the values)
// computed again from q.recon, in index order, as the decoder meets them.
template <class T>
void refresh_lattice_refs(const ScalarGrid& g, std::span<const uint8_t> missing, QuantizedOf<T>& q) {
  T* r = q.recon.data();
  size_t e = 0, symbol = 0;
  int64_t v = 0;
  for (int64_t z = 0; z < g.nz; ++z)
    for (int64_t y = 0; y < g.ny; ++y)
      for (int64_t x = 0; x < g.nx; ++x, ++v) {
        if (!missing.empty() && missing[size_t(v)]) {
          r[v] = missing_stand_in(r, g, x, y, z, v);
          continue;
        }
        if (q.symbols[symbol++] != 0) continue;
        if (e < q.exact_refs.size()) q.exact_refs[e] = lorenzo(r, g, x, y, z, v);
        ++e;
      }
}

// The values [lo, hi] vertex v (now at `cur`) may take within `eb` of fv (as stored_value
// rounds the bound inward), within [lo, hi] as given, and on its side of every valid link
// neighbour in (value, index) order, the values `r` as they stand; false when none.
template <class T>
bool side_window(const ScalarGrid& g, const Neighbourhood& nb, std::span<const uint8_t> missing, const T* r,
                 int64_t v, T cur, T fv, T eb, T& lo, T& hi) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  T blo = T(double(fv) - double(eb)), bhi = T(double(fv) + double(eb));
  if (!within_scalar_bound(blo, fv, eb)) blo = std::nextafter(blo, kInf);
  if (!within_scalar_bound(bhi, fv, eb)) bhi = std::nextafter(bhi, -kInf);
  lo = std::max(lo, blo);
  hi = std::min(hi, bhi);
  for_each_neighbour(g, nb, v, [&](int64_t w) {
    if (!missing.empty() && missing[size_t(w)]) return;
    const T rw = r[w];
    if (sos_less(rw, w, cur, v)) lo = std::max(lo, w < v ? rw : std::nextafter(rw, kInf));
    else hi = std::min(hi, v < w ? rw : std::nextafter(rw, -kInf));
  });
  return lo <= hi && std::isfinite(lo) && std::isfinite(hi);
}

// shorten_lattice_exact: each exact value, in index order, replaced by the value with the
// fewest significant bits among those that keep its lattice index (no other decoded value
// moves), lie within the bound, on no fill value, and on the same side in (value, index)
// order of every valid link neighbour's decoded value (replacements before it included).
template <class T>
int64_t shorten_lattice_exact_of(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                                 std::span<const T> fills, T eb, T step, std::span<const uint8_t> held,
                                 QuantizedOf<T>& q) {
  if (!(step > T(0)) || q.exact.empty()) return 0;
  const Neighbourhood nb(g);
  T* r = q.recon.data();
  int64_t replaced = 0;
  size_t e = 0;
  size_t symbol = 0;
  for (int64_t v = 0; v < g.size(); ++v) {
    if (!missing.empty() && missing[size_t(v)]) continue;
    if (q.symbols[symbol++] != 0) continue;
    const size_t slot = e++;
    if (!held.empty() && held[size_t(v)]) continue;
    const T x = q.exact[slot], fv = f[size_t(v)];
    const int64_t k = lattice_index(x, step);
    if (k >= kLatticeMaxIndex || k <= -kLatticeMaxIndex || !std::isfinite(x)) continue;
    // Within the cell of its lattice index (the candidate is checked below, so the ends need
    // only be near), the bound and its side of every valid neighbour (ties broken by index, as
    // the tree breaks them).
    T lo = T((double(k) - 0.5) * double(step)), hi = T((double(k) + 0.5) * double(step));
    if (!side_window(g, nb, missing, r, v, x, fv, eb, lo, hi)) continue;
    const T y = shortest_in(lo, hi);  // within [lo, hi], so on the same side of every neighbour
    if (y == x || trailing_zero_bits(y) <= trailing_zero_bits(x) || lattice_index(y, step) != k ||
        !acceptable(y, fv, eb, static_cast<const IntervalOf<T>*>(nullptr), fills))
      continue;
    q.exact[slot] = y;
    r[v] = y;
    ++replaced;
  }
  if (replaced > 0) refresh_lattice_refs(g, missing, q);
  return replaced;
}

// Whether vertex v may move from `cur` to `val`: without `kinds`, every edge of v keeps its
// direction; with them (link_kinds of the values before any move), v and each valid
// neighbour keep the kind of their links (regular stays regular, a saddle keeps its arms),
// while edges may turn. Reads the values through `r` as they stand.
template <class T>
struct LinkRule {
  const ScalarGrid& g;
  const Neighbourhood& nb;
  std::span<const uint8_t> missing;
  std::vector<T>& r;
  std::span<const uint16_t> kinds;
  const uint8_t* table = link_table(g);

  uint16_t kind_now(int64_t v) const {
    return link_kind(LinkClassifierOf<T>{std::span<const T>(r), g, nb, missing}, table, v);
  }
  bool keeps(int64_t v, T cur, T val) {
    // Every edge keeping its direction keeps every link's kind too, and costs a comparison
    // per neighbour instead of classifying up to 15 links: tried first. The neighbours whose
    // edge to v turns are noted: the others' links see v on the same side as before, so
    // their kinds stay what they are now, which every move kept equal to `kinds`.
    std::array<int64_t, std::extent_v<decltype(Neighbourhood::offset)>> turned;
    size_t n_turned = 0;
    for_each_neighbour(g, nb, v, [&](int64_t w) {
      if (!missing.empty() && missing[size_t(w)]) return;
      if (sos_less(r[size_t(w)], w, cur, v) != sos_less(r[size_t(w)], w, val, v)) turned[n_turned++] = w;
    });
    if (n_turned == 0) return true;
    if (kinds.empty()) return false;
    const T saved = r[size_t(v)];
    r[size_t(v)] = val;
    bool same = kind_now(v) == kinds[size_t(v)];
    for (size_t k = 0; k < n_turned && same; ++k) same = kind_now(turned[k]) == kinds[size_t(turned[k])];
    r[size_t(v)] = saved;
    return same;
  }
};

// The first of centre, then centre +- 1, +- 2, ... (the side `up_first` says first at each
// distance) within [lo, hi] that `accept` takes, or `current` once the distance reaches its
// own (a vertex keeps its value on a tie) or when nothing in range is taken.
template <class Accept>
int64_t nearest_first(int64_t centre, int64_t lo, int64_t hi, int64_t current, bool up_first, Accept&& accept) {
  const int64_t reach = std::max(centre - lo, hi - centre);
  // The distances below the range's nearest point hold no candidate: start there, or at
  // `current`'s distance if that is nearer (it is returned as soon as the loop reaches it).
  const int64_t gap = lo > centre ? lo - centre : hi < centre ? centre - hi : 0;
  const int64_t own = current > centre ? current - centre : centre - current;
  for (int64_t d = std::min(gap, own); d <= reach; ++d) {
    if (current == centre + d || current == centre - d) return current;
    const int64_t pair[2] = {up_first ? centre + d : centre - d, up_first ? centre - d : centre + d};
    for (int k = 0; k < (d == 0 ? 1 : 2); ++k)
      if (pair[k] >= lo && pair[k] <= hi && accept(pair[k])) return pair[k];
  }
  return current;
}

// relax_lattice_codes: each coded regular vertex, in index order, takes the lattice index
// within the bound whose residual from its prediction is the smallest, on the same side of
// every valid link neighbour as it is now.
template <class T>
int64_t relax_lattice_codes_of(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                               std::span<const T> fills, T eb, T step, std::span<const uint8_t> held,
                               std::span<const uint16_t> kinds, QuantizedOf<T>& q) {
  if (!(step > T(0))) return 0;
  const size_t n = size_t(g.size());
  const Neighbourhood nb(g);
  LinkRule<T> rule{g, nb, missing, q.recon, kinds};
  std::vector<int64_t> k(n, 0), old_k(n, 0);  // the indices now and as the race left them
  T* r = q.recon.data();
  int64_t moved = 0;
  size_t symbol = 0;
  int64_t v = 0;
  for (int64_t z = 0; z < g.nz; ++z)
    for (int64_t y = 0; y < g.ny; ++y)
      for (int64_t x = 0; x < g.nx; ++x, ++v) {
        if (!missing.empty() && missing[size_t(v)]) {
          k[size_t(v)] = missing_stand_in(k.data(), g, x, y, z, v);
          old_k[size_t(v)] = missing_stand_in(old_k.data(), g, x, y, z, v);
          continue;
        }
        const size_t slot = symbol++;
        const uint16_t sym = q.symbols[slot];  // as the race left it: rewritten below
        if (sym == 0) {  // stored: its index follows its value
          k[size_t(v)] = old_k[size_t(v)] = lattice_index(r[v], step);
          continue;
        }
        const int64_t pred = lorenzo(k.data(), g, x, y, z, v);
        int64_t kv = lorenzo(old_k.data(), g, x, y, z, v) + (int64_t(sym) - int64_t(kScalarCenter));
        old_k[size_t(v)] = kv;
        if (held.empty() || !held[size_t(v)]) {
          const T fv = f[size_t(v)];
          const T cur = r[v];
          const int64_t lo = int64_t(std::floor((double(fv) - double(eb)) / double(step))) - 1;
          const int64_t hi = int64_t(std::ceil((double(fv) + double(eb)) / double(step))) + 1;
          const bool up_first = double(fv) / double(step) >= double(pred);  // f's side of the prediction first
          const int64_t best = nearest_first(pred, lo, hi, kv, up_first, [&](int64_t kk) {
            if (kk > kLatticeMaxIndex || kk < -kLatticeMaxIndex) return false;
            const T val = lattice_value(kk, step);
            return acceptable(val, fv, eb, static_cast<const IntervalOf<T>*>(nullptr), fills) &&
                   rule.keeps(v, cur, val);
          });
          if (best != kv) {
            kv = best;
            r[v] = lattice_value(kv, step);
            ++moved;
          }
        }
        const int64_t code = kv - pred;
        if (code < -kScalarMaxCode || code > kScalarMaxCode) return -1;  // a held vertex's new residual
        k[size_t(v)] = kv;
        q.symbols[slot] = uint16_t(int64_t(kScalarCenter) + code);
      }
  if (moved > 0) refresh_lattice_refs(g, missing, q);
  return moved;
}

// relax_interp: the vertices (of the finest level, or of every level) that every reader lets
// move, each to the code nearest 0 its new prediction allows within the bound and the links.
template <class T>
int64_t relax_interp_of(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                        std::span<const T> fills, T eb, T step, InterpOrder order, InterpMoves moves,
                        std::span<const uint8_t> held, std::span<const uint16_t> kinds, QuantizedOf<T>& q) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  if (!(step > T(0))) return 0;
  const size_t n = size_t(g.size());
  std::vector<uint32_t> slot_of;  // symbol slot per vertex (masked fields)
  if (!missing.empty()) {
    slot_of.assign(n, 0);
    uint32_t k = 0;
    for (size_t v = 0; v < n; ++v) slot_of[v] = missing[v] ? 0 : k++;
  }
  // fixed[v]: v keeps its value. A held vertex keeps it (with InterpMoves::finest, so does
  // every vertex of a coarser level), and a fixed vertex's prediction must stay, so the values
  // it reads (c - h, c + h, c - 3h, c + 3h along its pass's axis, where inside the grid) are
  // fixed too. Readers come later in the walk than what they read, so the walk is gone
  // through from its end back (within a pass no vertex reads another); a vertex left free is
  // judged again in the walk below against whatever its sources then hold.
  const int64_t len[3] = {g.nx, g.ny, g.nz};
  const int64_t stride[3] = {1, g.nx, g.nx * g.ny};
  std::vector<uint8_t> fixed(n, 0);
  auto is_held = [&](int64_t v) {
    return !held.empty() && held[size_t(v)] && (missing.empty() || !missing[size_t(v)]);
  };
  const int64_t top = interp_top_stride(g);
  for (int64_t h = 1; h < top; h *= 2) {
    const std::array<InterpPass, 3> passes = interp_passes(h, order);  // interp_walk's, gone through backwards
    for (auto pass = passes.rbegin(); pass != passes.rend(); ++pass) {
      const int a = pass->axis;
      const int64_t* first = pass->first;
      const int64_t* step_of = pass->step;
      for (int64_t z = first[2]; z < g.nz; z += step_of[2])
        for (int64_t y = first[1]; y < g.ny; y += step_of[1])
          for (int64_t x = first[0]; x < g.nx; x += step_of[0]) {
            const int64_t v = z * stride[2] + y * stride[1] + x;
            if (is_held(v) || (moves == InterpMoves::finest && h > 1)) fixed[size_t(v)] = 1;
            if (!fixed[size_t(v)]) continue;
            const int64_t c = a == 0 ? x : a == 1 ? y : z;
            for (int64_t d : {-3, -1, 1, 3})
              if (c + d * h >= 0 && c + d * h < len[a]) fixed[size_t(v + d * h * stride[a])] = 1;
          }
    }
  }
  if (is_held(0) || (moves == InterpMoves::finest && top > 1)) fixed[0] = 1;
  const Neighbourhood nb(g);
  LinkRule<T> rule{g, nb, missing, q.recon, kinds};
  const InterpSteps<T> steps(step);
  T* r = q.recon.data();
  int64_t moved = 0;
  interp_walk(g, r, [&](int64_t v, T pred, int64_t h) {
    if (fixed[size_t(v)]) return;
    const T s1 = steps.at(h);
    if (!missing.empty() && missing[size_t(v)]) {  // its stand-in follows its prediction
      r[v] = interp_stand_in(pred);
      return;
    }
    const size_t slot = slot_of.empty() ? size_t(v) : slot_of[size_t(v)];
    const uint16_t sym = q.symbols[slot];
    const T fv = f[size_t(v)], cur = r[v];
    auto keeps_links = [&](T val) { return rule.keeps(v, cur, val); };
    const int64_t none = kScalarMaxCode + 1;  // no code keeps its value
    const int64_t old_code = int64_t(sym) - int64_t(kScalarCenter);
    const int64_t current = sym != 0 && pred + T(old_code) * s1 == cur ? old_code : none;
    int64_t best = current;
    T best_val = cur;
    if (std::isfinite(pred)) {
      const double lo = std::floor((double(fv) - double(eb) - double(pred)) / double(s1)) - 1;
      const double hi = std::ceil((double(fv) + double(eb) - double(pred)) / double(s1)) + 1;
      if (lo > -double(kScalarMaxCode) && hi < double(kScalarMaxCode))
        best = nearest_first(0, int64_t(lo), int64_t(hi), current, double(fv) >= double(pred), [&](int64_t code) {
          const T val = pred + T(code) * s1;
          if (!acceptable(val, fv, eb, static_cast<const IntervalOf<T>*>(nullptr), fills) || !keeps_links(val))
            return false;
          best_val = val;
          return true;
        });
    }
    if (best != none && best != current) {
      q.symbols[slot] = uint16_t(int64_t(kScalarCenter) + best);
      r[v] = best_val;
      ++moved;
      return;
    }
    if (best == current && current != none) return;  // keeps its code and value
    // No code: stored, at its value or a shorter one within the bound and its neighbours' sides.
    if (sym != 0) {
      q.symbols[slot] = 0;
      ++moved;
    }
    T lo = -kInf, hi = kInf;
    if (!side_window(g, nb, missing, r, v, cur, fv, eb, lo, hi)) return;
    const T y = shortest_in(lo, hi);  // every edge keeps its direction, so every link its kind
    if (y == cur || trailing_zero_bits(y) <= trailing_zero_bits(cur) ||
        !acceptable(y, fv, eb, static_cast<const IntervalOf<T>*>(nullptr), fills))
      return;
    r[v] = y;
    ++moved;
  }, order);
  if (moved == 0) return 0;
  // The exact values again in the walk's order (the decoder's), from the new symbols.
  q.exact.clear();
  std::vector<T> copy(q.recon);
  interp_walk(g, copy.data(), [&](int64_t v, T, int64_t) {
    if (!missing.empty() && missing[size_t(v)]) return;
    if (q.symbols[slot_of.empty() ? size_t(v) : slot_of[size_t(v)]] == 0) q.exact.push_back(r[v]);
  }, order);
  return moved;
}
}  // namespace

std::vector<float> fill_values(std::span<const float> f, std::span<const uint8_t> missing) {
  return fill_values_of(f, missing);
}
std::vector<double> fill_values(std::span<const double> f, std::span<const uint8_t> missing) {
  return fill_values_of(f, missing);
}

void quantize(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
              std::span<const float> fills, float eb, float step, const Constraints* c, Quantized& out) {
  quantize_of(f, g, missing, fills, eb, step, c, out);
}
void quantize(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
              std::span<const double> fills, double eb, double step, const ConstraintsOf<double>* c,
              QuantizedOf<double>& out) {
  quantize_of(f, g, missing, fills, eb, step, c, out);
}

void quantize_lattice(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                      std::span<const float> fills, float eb, float step, const Constraints* c, Quantized& out) {
  quantize_lattice_of(f, g, missing, fills, eb, step, c, out);
}
void quantize_lattice(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                      std::span<const double> fills, double eb, double step, const ConstraintsOf<double>* c,
                      QuantizedOf<double>& out) {
  quantize_lattice_of(f, g, missing, fills, eb, step, c, out);
}

void quantize_interp(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                     std::span<const float> fills, float eb, float step, const Constraints* c, Quantized& out,
                     InterpOrder order, int threads) {
  quantize_interp_of(f, g, missing, fills, eb, step, c, out, order, threads);
}
void quantize_interp(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                     std::span<const double> fills, double eb, double step, const ConstraintsOf<double>* c,
                     QuantizedOf<double>& out, InterpOrder order, int threads) {
  quantize_interp_of(f, g, missing, fills, eb, step, c, out, order, threads);
}

int64_t relax_interp(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                     std::span<const float> fills, float eb, float step, InterpOrder order, InterpMoves moves,
                     std::span<const uint8_t> held, std::span<const uint16_t> kinds, Quantized& q) {
  return relax_interp_of(f, g, missing, fills, eb, step, order, moves, held, kinds, q);
}
int64_t relax_interp(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                     std::span<const double> fills, double eb, double step, InterpOrder order, InterpMoves moves,
                     std::span<const uint8_t> held, std::span<const uint16_t> kinds, QuantizedOf<double>& q) {
  return relax_interp_of(f, g, missing, fills, eb, step, order, moves, held, kinds, q);
}
int64_t relax_lattice_codes(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                            std::span<const float> fills, float eb, float step, std::span<const uint8_t> held,
                            std::span<const uint16_t> kinds, Quantized& q) {
  return relax_lattice_codes_of(f, g, missing, fills, eb, step, held, kinds, q);
}
int64_t relax_lattice_codes(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                            std::span<const double> fills, double eb, double step, std::span<const uint8_t> held,
                            std::span<const uint16_t> kinds, QuantizedOf<double>& q) {
  return relax_lattice_codes_of(f, g, missing, fills, eb, step, held, kinds, q);
}
int64_t shorten_lattice_exact(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                              std::span<const float> fills, float eb, float step, std::span<const uint8_t> held,
                              Quantized& q) {
  return shorten_lattice_exact_of(f, g, missing, fills, eb, step, held, q);
}
int64_t shorten_lattice_exact(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                              std::span<const double> fills, double eb, double step, std::span<const uint8_t> held,
                              QuantizedOf<double>& q) {
  return shorten_lattice_exact_of(f, g, missing, fills, eb, step, held, q);
}

InterpOrder choose_interp_order(std::span<const float> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                                std::span<const float> fills, float eb, int threads, Quantized* kept) {
  return choose_interp_order_of(f, g, missing, fills, eb, threads, kept);
}
InterpOrder choose_interp_order(std::span<const double> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                                std::span<const double> fills, double eb, int threads, QuantizedOf<double>* kept) {
  return choose_interp_order_of(f, g, missing, fills, eb, threads, kept);
}

}  // namespace factz::detail
