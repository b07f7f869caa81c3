// Critical-point extraction: one exact signature per triangle, in parallel; output in
// triangle order whatever the thread count. One body serves float32 and float64 fields:
// the kernels' cell_signatures and signature_at are overloaded on the value type, so a
// float64 field is decided on its doubles (kernels/signature64.hpp).
#include <omp.h>

#include <cmath>
#include <type_traits>

#include "factz/topology.hpp"
#include "kernels/signature.hpp"
#include "kernels/signature64.hpp"
#include "topology/exec.hpp"
#include "util/big_vector.hpp"

namespace factz {

const char* cp_type_name(CpType t) {
  switch (t) {
    case CpType::saddle: return "saddle";
    case CpType::attracting_node: return "attracting_node";
    case CpType::repelling_node: return "repelling_node";
    case CpType::attracting_focus: return "attracting_focus";
    case CpType::repelling_focus: return "repelling_focus";
    case CpType::center: return "center";
    case CpType::degenerate: return "degenerate";
  }
  return "unknown";
}

namespace {

template <class Field>
std::vector<uint8_t> signatures_on_mesh_any(const Field& f, const std::vector<uint8_t>& missing, Exec exec) {
  const detail::Grid2D g{f.nx, f.ny};
  const int64_t nt = g.triangle_count();
  std::vector<uint8_t> sig;  // two bytes per vertex: huge pages before the zero fill
  detail::resize_fresh(sig, static_cast<size_t>(nt));
  const auto* u = f.u.data();
  const auto* v = f.v.data();
  const int64_t cw = g.nx - 1;
  const uint8_t* m = missing.empty() ? nullptr : missing.data();
#pragma omp parallel for schedule(static) num_threads(detail::thread_count(exec))
  for (int64_t i = 0; i < g.ny - 1; ++i)
    for (int64_t j = 0; j < cw; ++j) {
      uint8_t* out = &sig[size_t(2 * (i * cw + j))];
      const uint8_t off_mesh = detail::cell_masked_triangles(m, g.nx, i, j);
      if (off_mesh == 0) {
        detail::cell_signatures(g, i, j, u, v, out);
        continue;
      }
      // A triangle touching a missing vertex is not in the mesh; its values are never read.
      const int64_t t0 = 2 * (i * cw + j);
      for (int t = 0; t < 2; ++t)
        out[t] = (off_mesh >> t) & 1 ? detail::kNoCriticalPoint : detail::signature_at(g, t0 + t, u, v);
    }
  return sig;
}

// The barycentric coordinates of the zero, for display. A float field's products are exact
// in double as they stand; a double field's three vertices are first scaled by one power of
// two so that no product overflows (tiny values may lose bits: display only).
template <class T>
CriticalPoint describe(const detail::Grid2D& g, int64_t tri, uint8_t sig, const T* u, const T* v) {
  CriticalPoint cp;
  cp.triangle = tri;
  cp.row = (tri >> 1) / (g.nx - 1);
  cp.column = (tri >> 1) % (g.nx - 1);
  cp.type = CpType(sig - 1);
  int64_t idx[3];
  detail::triangle_vertices(g, tri, idx);
  double x[3], y[3];
  int shift = 0;
  if constexpr (std::is_same_v<T, double>) {
    double big = 0.0;
    for (int k = 0; k < 3; ++k) big = std::fmax(big, std::fmax(std::fabs(u[idx[k]]), std::fabs(v[idx[k]])));
    if (big > 0.0) shift = -std::ilogb(big);
  }
  for (int k = 0; k < 3; ++k) {
    x[k] = std::ldexp(double(u[idx[k]]), shift);
    y[k] = std::ldexp(double(v[idx[k]]), shift);
  }
  double m[3];
  for (int k = 0; k < 3; ++k) {
    const int a = (k + 1) % 3, b = (k + 2) % 3;
    m[k] = x[a] * y[b] - x[b] * y[a];
  }
  const double total = m[0] + m[1] + m[2];
  for (int k = 0; k < 3; ++k) cp.mu[k] = total != 0.0 ? m[k] / total : 1.0 / 3.0;
  return cp;
}

template <class Field>
Result<std::vector<uint8_t>> signatures_any(const Field& f, Exec exec) {
  FACTZ_RETURN_IF_ERROR(validate_field(f));
  return signatures_on_mesh_any(f, missing_mask(f), exec);
}

template <class Field>
Result<std::vector<CriticalPoint>> critical_points_any(const Field& f, Exec exec) {
  auto sig = signatures_any(f, exec);
  if (!sig.ok()) return sig.status();
  const detail::Grid2D g{f.nx, f.ny};
  std::vector<CriticalPoint> out;
  const auto& s = sig.value();
  for (size_t t = 0; t < s.size(); ++t) {
    if (s[t] != detail::kNoCriticalPoint) out.push_back(describe(g, int64_t(t), s[t], f.u.data(), f.v.data()));
  }
  return out;
}

}  // namespace

std::vector<uint8_t> detail::signatures_on_mesh(const VectorField2D& f, const std::vector<uint8_t>& missing,
                                                Exec exec) {
  return signatures_on_mesh_any(f, missing, exec);
}

std::vector<uint8_t> detail::signatures_on_mesh(const VectorField2D64& f, const std::vector<uint8_t>& missing,
                                                Exec exec) {
  return signatures_on_mesh_any(f, missing, exec);
}

Result<std::vector<uint8_t>> signatures(const VectorField2D& f, Exec exec) { return signatures_any(f, exec); }
Result<std::vector<uint8_t>> signatures(const VectorField2D64& f, Exec exec) { return signatures_any(f, exec); }

Result<std::vector<CriticalPoint>> critical_points(const VectorField2D& f, Exec exec) {
  return critical_points_any(f, exec);
}
Result<std::vector<CriticalPoint>> critical_points(const VectorField2D64& f, Exec exec) {
  return critical_points_any(f, exec);
}

}  // namespace factz
