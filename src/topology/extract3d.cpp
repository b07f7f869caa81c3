// Critical-point extraction of 3D vector fields (issue 22): one exact signature per
// Freudenthal tetrahedron (kernels/tet.hpp), in parallel over rows of cubes; output in
// tetrahedron order whatever the thread count. A 3D field's validation and missing vertices
// are topology/missing.cpp's, as a 2D field's.
#include <omp.h>

#include <array>
#include <cmath>
#include <string>

#include "factz/topology3d.hpp"
#include "kernels/tet.hpp"
#include "kernels/tet64.hpp"
#include "topology/exec.hpp"
#include "topology/signatures3d.hpp"
#include "util/big_vector.hpp"

namespace factz {

const char* cp_type3_name(CpType3 t) {
  switch (t) {
    case CpType3::attracting_node: return "attracting_node";
    case CpType3::repelling_node: return "repelling_node";
    case CpType3::saddle_2_stable: return "saddle_2_stable";
    case CpType3::saddle_2_unstable: return "saddle_2_unstable";
    case CpType3::attracting_spiral: return "attracting_spiral";
    case CpType3::repelling_spiral: return "repelling_spiral";
    case CpType3::spiral_saddle_2_stable: return "spiral_saddle_2_stable";
    case CpType3::spiral_saddle_2_unstable: return "spiral_saddle_2_unstable";
    case CpType3::center: return "center";
    case CpType3::degenerate: return "degenerate";
  }
  return "unknown";
}

namespace {

/// One cube of the grid: corner k is corner 0 plus one step along each axis a whose bit a
/// is set in k; its values (of type T: float or double) are loaded once for the six tetrahedra.
template <class T>
struct Cube {
  int64_t base = 0;  ///< vertex index of corner 0
  int64_t off[8]{};  ///< index offset of each corner
  T u[8], v[8], w[8];
};

/// The signatures of the cube at c.base (its six tetrahedra, t = 0..5) into out[0..5]; `m`
/// the missing vertices or null. Vertex order, indices and axes are those of tet_vertices.
template <class T>
void cube_signatures(const T* u, const T* v, const T* w, const uint8_t* m, Cube<T>& c, uint8_t* out) {
  bool any_missing = false;
  for (int k = 0; k < 8; ++k) {
    const int64_t i = c.base + c.off[k];
    c.u[k] = u[i];
    c.v[k] = v[i];
    c.w[k] = w[i];
    any_missing = any_missing || (m && m[i]);
  }
  // A cube whose eight vectors are equal (a zero or constant region) has only flat images.
  bool constant = true;
  for (int k = 1; k < 8; ++k) constant = constant && c.u[k] == c.u[0] && c.v[k] == c.v[0] && c.w[k] == c.w[0];
  if (!any_missing && (constant || detail::strictly_one_sided(c.u, 8) || detail::strictly_one_sided(c.v, 8) ||
                       detail::strictly_one_sided(c.w, 8))) {
    for (int t = 0; t < 6; ++t) out[t] = 0;
    return;
  }
  for (int t = 0; t < 6; ++t) {
    int axes[3], corner[4] = {0, 0, 0, 7};
    for (int k = 0; k < 3; ++k) axes[k] = detail::tet_axis(t, k);
    corner[1] = 1 << axes[0];
    corner[2] = corner[1] | (1 << axes[1]);
    int64_t idx[4];
    T tu[4], tv[4], tw[4];
    bool off_mesh = false;
    for (int k = 0; k < 4; ++k) {
      idx[k] = c.base + c.off[corner[k]];
      off_mesh = off_mesh || (m && m[idx[k]]);  // not in the mesh: its values are never read
      tu[k] = c.u[corner[k]];
      tv[k] = c.v[corner[k]];
      tw[k] = c.w[corner[k]];
    }
    if (off_mesh || detail::strictly_one_sided(tu, 4) || detail::strictly_one_sided(tv, 4) ||
        detail::strictly_one_sided(tw, 4)) {
      out[t] = 0;
      continue;
    }
    detail::SosPoint3Of<T> p[4];
    for (int k = 0; k < 4; ++k) p[k] = {tu[k], tv[k], tw[k], idx[k]};
    out[t] = detail::flat_image(p) ? uint8_t(0) : detail::tet_signature(idx, axes, tu, tv, tw);
  }
}

// The barycentric coordinates of the zero, for display: mu_k = D_k / D with D the
// orientation determinant of the four vectors and D_k the same with vector k replaced by
// the origin, in double (products of three float differences neither overflow nor
// underflow there; for float64 values they may, and a non-finite mu shows as 0.25).
std::array<double, 4> barycentric(const double p[4][3]) {
  auto det = [](const double a[3], const double b[3], const double c[3], const double d[3]) {
    double r[3][3];
    for (int j = 0; j < 3; ++j) r[0][j] = b[j] - a[j], r[1][j] = c[j] - a[j], r[2][j] = d[j] - a[j];
    return r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0]) +
           r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
  };
  const double o[3] = {0.0, 0.0, 0.0};
  const double total = det(p[0], p[1], p[2], p[3]);
  std::array<double, 4> mu{};
  const double d[4] = {det(o, p[1], p[2], p[3]), det(p[0], o, p[2], p[3]), det(p[0], p[1], o, p[3]),
                       det(p[0], p[1], p[2], o)};
  for (int k = 0; k < 4; ++k) {
    const double m = total != 0.0 ? d[k] / total : 0.25;
    mu[size_t(k)] = std::isfinite(m) ? m : 0.25;
  }
  return mu;
}

template <class Field>
CriticalPoint3D describe(const Field& f, int64_t tet, uint8_t sig) {
  CriticalPoint3D cp;
  cp.tetrahedron = tet;
  cp.t = int(tet % 6);
  const int64_t cell = tet / 6;
  cp.x = cell % (f.nx - 1);
  cp.y = (cell / (f.nx - 1)) % (f.ny - 1);
  cp.z = cell / ((f.nx - 1) * (f.ny - 1));
  cp.type = CpType3(sig - 1);
  int64_t idx[4];
  int axes[3];
  detail::tet_vertices(f.nx, f.ny, tet, idx, axes);
  double p[4][3];
  for (int k = 0; k < 4; ++k) {
    p[k][0] = f.u[size_t(idx[k])];
    p[k][1] = f.v[size_t(idx[k])];
    p[k][2] = f.w[size_t(idx[k])];
  }
  cp.mu = barycentric(p);
  return cp;
}

template <class Field>
std::vector<uint8_t> signatures_on_mesh_any(const Field& f, const std::vector<uint8_t>& missing, Exec exec) {
  using T = typename decltype(f.u)::value_type;
  const int64_t nx = f.nx, ny = f.ny, nz = f.nz;
  std::vector<uint8_t> sig;  // six bytes per vertex: huge pages before the zero fill
  detail::resize_fresh(sig, static_cast<size_t>(detail::tet_count(nx, ny, nz)));
  if (sig.empty()) return sig;
  const T* u = f.u.data();
  const T* v = f.v.data();
  const T* w = f.w.data();
  const uint8_t* m = missing.empty() ? nullptr : missing.data();
  const int64_t cx = nx - 1, cy = ny - 1, rows = cy * (nz - 1);
  // One row of cubes (fixed y, z) per iteration: rows write disjoint ranges of `sig`, so
  // the bytes do not depend on the schedule. Dynamic: cubes near critical points (and ties
  // that reach the symbolic perturbation) cost far more than the rest.
#pragma omp parallel num_threads(detail::thread_count(exec))
  {
    std::vector<uint8_t> quiet(static_cast<size_t>(nx));
#pragma omp for schedule(dynamic, 8)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t y = r % cy, z = r / cy;
      // The row's quiet cubes first, by a pass the compiler vectorizes: per x, the sign
      // classes shared by the four vertices (x, y or y + 1, z or z + 1), then per cube those
      // of its two x's. A class bit set for the whole cube is a component of one strict sign
      // at its eight corners: all six signatures are 0 (the zeros `sig` starts with), as
      // cube_signatures decides too, missing corners or not (each tetrahedron is off the mesh
      // or one-sided). The other cubes take cube_signatures.
      const int64_t row = (z * ny + y) * nx, rows4[4] = {row, row + nx, row + nx * ny, row + nx * ny + nx};
      for (int64_t x = 0; x < nx; ++x) {
        uint8_t shared = 0x3F;
        for (const int64_t at : rows4) shared &= detail::sign_class3(u[at + x], v[at + x], w[at + x]);
        quiet[size_t(x)] = shared;
      }
      Cube<T> c;
      for (int k = 0; k < 8; ++k) c.off[k] = (k & 1) + ((k >> 1) & 1) * nx + ((k >> 2) & 1) * nx * ny;
      for (int64_t x = 0; x < cx; ++x) {
        if ((quiet[size_t(x)] & quiet[size_t(x) + 1]) != 0) continue;
        c.base = row + x;
        cube_signatures(u, v, w, m, c, &sig[size_t(6 * (r * cx + x))]);
      }
    }
  }
  return sig;
}

template <class Field>
Result<std::vector<uint8_t>> signatures_any(const Field& f, Exec exec) {
  FACTZ_RETURN_IF_ERROR(validate_field(f));
  return signatures_on_mesh_any(f, missing_mask(f), exec);
}

template <class Field>
Result<std::vector<CriticalPoint3D>> critical_points_any(const Field& f, Exec exec) {
  auto sig = signatures_any(f, exec);
  if (!sig.ok()) return sig.status();
  std::vector<CriticalPoint3D> out;
  const auto& s = sig.value();
  for (size_t t = 0; t < s.size(); ++t)
    if (s[t] != 0) out.push_back(describe(f, int64_t(t), s[t]));
  return out;
}

}  // namespace

std::vector<uint8_t> detail::signatures_on_mesh(const VectorField3D& f, const std::vector<uint8_t>& missing,
                                                Exec exec) {
  return signatures_on_mesh_any(f, missing, exec);
}
std::vector<uint8_t> detail::signatures_on_mesh(const VectorField3D64& f, const std::vector<uint8_t>& missing,
                                                Exec exec) {
  return signatures_on_mesh_any(f, missing, exec);
}

Result<std::vector<uint8_t>> signatures(const VectorField3D& f, Exec exec) { return signatures_any(f, exec); }
Result<std::vector<uint8_t>> signatures(const VectorField3D64& f, Exec exec) { return signatures_any(f, exec); }
Result<std::vector<CriticalPoint3D>> critical_points(const VectorField3D& f, Exec exec) {
  return critical_points_any(f, exec);
}
Result<std::vector<CriticalPoint3D>> critical_points(const VectorField3D64& f, Exec exec) {
  return critical_points_any(f, exec);
}

}  // namespace factz
