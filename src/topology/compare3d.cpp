// Comparison of an original and a reconstructed 3D vector field: P1/P2/P3 per tetrahedron
// from the exact signatures, the masks, and pointwise error statistics (the 2D rules of
// compare.cpp with a third component).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "factz/topology3d.hpp"
#include "topology/exec.hpp"
#include "topology/mask_tally.hpp"
#include "topology/signatures3d.hpp"

namespace factz {

namespace {

template <class Field>
std::string dims_text(const Field& f) {
  return std::to_string(f.nx) + "x" + std::to_string(f.ny) + "x" + std::to_string(f.nz);
}

template <class Field>
Result<Comparison3D> compare_any(const Field& a, const Field& b, Exec exec) {
  if (a.nx != b.nx || a.ny != b.ny || a.nz != b.nz)
    return invalid_argument("fields differ in dimensions: " + dims_text(a) + " vs " + dims_text(b));
  FACTZ_RETURN_IF_ERROR(validate_field(a));
  FACTZ_RETURN_IF_ERROR(validate_field(b));
  // Each mask once: for the signatures and for the pointwise statistics below.
  const std::vector<uint8_t> ma = missing_mask(a), mb = missing_mask(b);
  const std::vector<uint8_t> x = detail::signatures_on_mesh(a, ma, exec);
  const std::vector<uint8_t> y = detail::signatures_on_mesh(b, mb, exec);
  Comparison3D c;
  const int64_t nt = int64_t(x.size());
  int64_t cp_a = 0, cp_b = 0, lost = 0, spurious = 0, changed = 0;
#pragma omp parallel for schedule(static) num_threads(detail::thread_count(exec)) \
    reduction(+ : cp_a, cp_b, lost, spurious, changed)
  for (int64_t t = 0; t < nt; ++t) {
    const uint8_t p = x[size_t(t)], q = y[size_t(t)];
    if ((p | q) == 0) continue;
    cp_a += p != 0;
    cp_b += q != 0;
    lost += p != 0 && q == 0;
    spurious += p == 0 && q != 0;
    changed += p != 0 && q != 0 && p != q;
  }
  c.cp_original = cp_a;
  c.cp_decompressed = cp_b;
  c.lost = lost;
  c.spurious = spurious;
  c.type_changed = changed;
  // Masks (mask_tally.hpp): a vertex missing in one field and not in the other is a
  // violation; pointwise statistics run over the vertices valid in both.
  const int64_t n = a.size();
  const detail::MaskTally masks = detail::tally_masks(ma, mb, n);
  c.masked_vertices = masks.masked;
  c.mask_mismatch = masks.mismatch;
  const int64_t valid = masks.valid;
  const uint8_t* skip_a = ma.empty() ? nullptr : ma.data();
  const uint8_t* skip_b = mb.empty() ? nullptr : mb.data();
  // min/max and the maxima are exact whatever the order; the sum of squares may differ in
  // its last bits between thread counts (statistics, not decisions).
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sq = 0;
  double e0 = 0, e1 = 0, e2 = 0;
#pragma omp parallel for schedule(static) num_threads(detail::thread_count(exec)) \
    reduction(min : lo) reduction(max : hi, e0, e1, e2) reduction(+ : sq)
  for (int64_t k = 0; k < n; ++k) {
    if ((skip_a && skip_a[k]) || (skip_b && skip_b[k])) continue;
    const double ua = a.u[size_t(k)], va = a.v[size_t(k)], wa = a.w[size_t(k)];
    const double du = ua - double(b.u[size_t(k)]), dv = va - double(b.v[size_t(k)]), dw = wa - double(b.w[size_t(k)]);
    lo = std::min({lo, ua, va, wa});
    hi = std::max({hi, ua, va, wa});
    e0 = std::max(e0, std::fabs(du));
    e1 = std::max(e1, std::fabs(dv));
    e2 = std::max(e2, std::fabs(dw));
    sq += du * du + dv * dv + dw * dw;
  }
  c.max_abs_error = {e0, e1, e2};
  c.value_range = valid > 0 ? hi - lo : 0.0;
  c.rmse = valid > 0 ? std::sqrt(sq / double(3 * valid)) : 0.0;
  c.nrmse = c.value_range > 0 ? c.rmse / c.value_range : 0.0;
  c.psnr = c.rmse > 0 ? 20.0 * std::log10(c.value_range / c.rmse) : std::numeric_limits<double>::infinity();
  return c;
}

}  // namespace

Result<Comparison3D> compare(const VectorField3D& a, const VectorField3D& b, Exec exec) {
  return compare_any(a, b, exec);
}
Result<Comparison3D> compare(const VectorField3D64& a, const VectorField3D64& b, Exec exec) {
  return compare_any(a, b, exec);
}

}  // namespace factz
