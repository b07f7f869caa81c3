// Comparison of an original and a reconstructed field: P1/P2/P3 per triangle from the
// exact signatures, and pointwise error statistics. One body for float32 and float64 fields:
// a float64 pair is compared on its doubles (signatures and errors alike).
#include <algorithm>
#include <cmath>
#include <limits>

#include "factz/topology.hpp"
#include "topology/exec.hpp"
#include "topology/mask_tally.hpp"

namespace factz {

namespace {

template <class Field>
Result<Comparison> compare_any(const Field& a, const Field& b, Exec exec) {
  if (a.nx != b.nx || a.ny != b.ny)
    return invalid_argument("fields differ in dimensions: " + std::to_string(a.nx) + "x" +
                            std::to_string(a.ny) + " vs " + std::to_string(b.nx) + "x" +
                            std::to_string(b.ny));
  FACTZ_RETURN_IF_ERROR(validate_field(a));
  FACTZ_RETURN_IF_ERROR(validate_field(b));
  // Each mask once: for the signatures and for the pointwise statistics below.
  const std::vector<uint8_t> ma = missing_mask(a), mb = missing_mask(b);
  const std::vector<uint8_t> x = detail::signatures_on_mesh(a, ma, exec);
  const std::vector<uint8_t> y = detail::signatures_on_mesh(b, mb, exec);
  Comparison c;
  for (size_t t = 0; t < x.size(); ++t) {
    c.cp_original += x[t] != 0;
    c.cp_decompressed += y[t] != 0;
    if (x[t] != 0 && y[t] == 0) ++c.lost;
    if (x[t] == 0 && y[t] != 0) ++c.spurious;
    if (x[t] != 0 && y[t] != 0 && x[t] != y[t]) ++c.type_changed;
  }
  // Masks (mask_tally.hpp): a vertex missing in one field and not in the other is a
  // violation; pointwise statistics run over the vertices valid in both.
  const int64_t n = a.size();
  const detail::MaskTally masks = detail::tally_masks(ma, mb, n);
  c.masked_vertices = masks.masked;
  c.mask_mismatch = masks.mismatch;
  const int64_t valid = masks.valid;
  const uint8_t* skip_a = ma.empty() ? nullptr : ma.data();
  const uint8_t* skip_b = mb.empty() ? nullptr : mb.data();
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sq = 0;
  double e0 = 0, e1 = 0;
#pragma omp parallel for schedule(static) num_threads(detail::thread_count(exec)) \
    reduction(min : lo) reduction(max : hi, e0, e1) reduction(+ : sq)
  for (int64_t k = 0; k < n; ++k) {
    if ((skip_a && skip_a[k]) || (skip_b && skip_b[k])) continue;
    const double ua = a.u[k], va = a.v[k];
    const double du = ua - double(b.u[k]), dv = va - double(b.v[k]);
    lo = std::min({lo, ua, va});
    hi = std::max({hi, ua, va});
    e0 = std::max(e0, std::fabs(du));
    e1 = std::max(e1, std::fabs(dv));
    sq += du * du + dv * dv;
  }
  c.max_abs_error = {e0, e1};
  c.value_range = valid > 0 ? hi - lo : 0.0;
  c.rmse = valid > 0 ? std::sqrt(sq / double(2 * valid)) : 0.0;
  c.nrmse = c.value_range > 0 ? c.rmse / c.value_range : 0.0;
  c.psnr = c.rmse > 0 ? 20.0 * std::log10(c.value_range / c.rmse)
                      : std::numeric_limits<double>::infinity();
  return c;
}

}  // namespace

Result<Comparison> compare(const VectorField2D& a, const VectorField2D& b, Exec exec) {
  return compare_any(a, b, exec);
}

Result<Comparison> compare(const VectorField2D64& a, const VectorField2D64& b, Exec exec) {
  return compare_any(a, b, exec);
}

}  // namespace factz
