// The scalar streams' quantizer (scalar_quantizer.hpp).
#include "scalar/scalar_quantizer.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/quantizer.hpp"

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
  for (int64_t q : {q0, other}) {
    if (q < -kScalarMaxCode || q > kScalarMaxCode) continue;
    val = pred + T(q) * step;
    if (acceptable(val, fv, eb, iv, fills)) return uint16_t(int64_t(kScalarCenter) + q);
  }
  return 0;
}

template <class T>
void quantize_of(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                 std::span<const T> fills, T eb, T step, const ConstraintsOf<T>* c, QuantizedOf<T>& out) {
  const int64_t n = g.size();
  out.symbols.clear();
  out.symbols.reserve(size_t(n));
  out.recon.assign(size_t(n), T(0));
  out.exact.clear();
  T* r = out.recon.data();
  int64_t v = 0;
  for (int64_t z = 0; z < g.nz; ++z)
    for (int64_t y = 0; y < g.ny; ++y)
      for (int64_t x = 0; x < g.nx; ++x, ++v) {
        if (!missing.empty() && missing[size_t(v)]) {
          r[v] = missing_stand_in(r, g, x, y, z, v);
          continue;
        }
        const T fv = f[size_t(v)];
        uint16_t symbol = 0;
        if (step > 0 && (!c || (!c->all_exact && !c->exact[size_t(v)]))) {
          const uint32_t slot = c ? c->slot[size_t(v)] : ConstraintsOf<T>::kFree;
          const IntervalOf<T>* iv = slot == ConstraintsOf<T>::kFree ? nullptr : &c->intervals[slot];
          symbol = choose_code(fv, lorenzo(r, g, x, y, z, v), eb, step, iv, fills, r[v]);
        }
        out.symbols.push_back(symbol);
        if (symbol == 0) {
          out.exact.push_back(fv);
          r[v] = fv;
        }
      }
}

// The lattice quantizer (quantize_lattice). `k` holds every vertex's lattice index, missing
// ones their stand-in's, as the decoder rebuilds them.
template <class T>
void quantize_lattice_of(std::span<const T> f, const ScalarGrid& g, std::span<const uint8_t> missing,
                         std::span<const T> fills, T eb, T step, const ConstraintsOf<T>* c, QuantizedOf<T>& out) {
  const int64_t n = g.size();
  out.symbols.clear();
  out.symbols.reserve(size_t(n));
  out.recon.assign(size_t(n), T(0));
  out.exact.clear();
  std::vector<int64_t> lattice(size_t(n), 0);
  int64_t* k = lattice.data();
  T* r = out.recon.data();
  int64_t v = 0;
  for (int64_t z = 0; z < g.nz; ++z)
    for (int64_t y = 0; y < g.ny; ++y)
      for (int64_t x = 0; x < g.nx; ++x, ++v) {
        if (!missing.empty() && missing[size_t(v)]) {
          k[v] = missing_stand_in(k, g, x, y, z, v);
          r[v] = missing_stand_in(r, g, x, y, z, v);
          continue;
        }
        const T fv = f[size_t(v)];
        const int64_t k0 = lattice_index(fv, step);
        uint16_t symbol = 0;
        if (!c || (!c->all_exact && !c->exact[size_t(v)])) {
          const uint32_t slot = c ? c->slot[size_t(v)] : ConstraintsOf<T>::kFree;
          const IntervalOf<T>* iv = slot == ConstraintsOf<T>::kFree ? nullptr : &c->intervals[slot];
          const int64_t pred = lorenzo(k, g, x, y, z, v);
          const int64_t other = double(fv) >= double(lattice_value(k0, step)) ? k0 + 1 : k0 - 1;
          for (int64_t kk : {k0, other}) {
            const int64_t q = kk - pred;
            if (q < -kScalarMaxCode || q > kScalarMaxCode || kk > kLatticeMaxIndex || kk < -kLatticeMaxIndex) continue;
            const T val = lattice_value(kk, step);
            if (!acceptable(val, fv, eb, iv, fills)) continue;
            symbol = uint16_t(int64_t(kScalarCenter) + q);
            k[v] = kk;
            r[v] = val;
            break;
          }
        }
        out.symbols.push_back(symbol);
        if (symbol == 0) {
          out.exact.push_back(fv);
          k[v] = k0;
          r[v] = fv;
        }
      }
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

}  // namespace factz::detail
