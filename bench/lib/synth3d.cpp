#include "synth3d.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace factz::testing {

namespace {

// splitmix64's finaliser: a bijective 64-bit mixer.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The random value number `counter` of `seed`, independent of evaluation order.
uint64_t hash(uint64_t seed, uint64_t counter) { return mix64(mix64(seed) ^ (counter * 0x9e3779b97f4a7c15ull)); }

// A uniform double in [0, 1) from the top 53 bits.
double unit(uint64_t bits) { return double(bits >> 11) * 0x1.0p-53; }

VectorField3D empty_field(int64_t nx, int64_t ny, int64_t nz) {
  VectorField3D f;
  f.nx = nx;
  f.ny = ny;
  f.nz = nz;
  const size_t n = nx > 0 && ny > 0 && nz > 0 ? size_t(nx * ny * nz) : 0;
  f.u.assign(n, 0.0f);
  f.v.assign(n, 0.0f);
  f.w.assign(n, 0.0f);
  return f;
}

// Fills f by evaluating `at(x, y, z, out[3])` at every vertex (in parallel over z-planes:
// every vertex is computed alone, so the values do not depend on the thread count).
template <class At>
void fill(VectorField3D& f, At at) {
  if (f.u.empty()) return;
#pragma omp parallel for schedule(static)
  for (int64_t z = 0; z < f.nz; ++z)
    for (int64_t y = 0; y < f.ny; ++y)
      for (int64_t x = 0; x < f.nx; ++x) {
        double val[3];
        at(x, y, z, val);
        const size_t k = size_t((z * f.ny + y) * f.nx + x);
        f.u[k] = float(val[0]);
        f.v[k] = float(val[1]);
        f.w[k] = float(val[2]);
      }
}

Matrix3 multiply(const Matrix3& a, const Matrix3& b) {
  Matrix3 c{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) c[size_t(i)][size_t(j)] += a[size_t(i)][size_t(k)] * b[size_t(k)][size_t(j)];
  return c;
}

}  // namespace

VectorField3D abc_flow(int64_t nx, int64_t ny, int64_t nz, double a, double b, double c) {
  VectorField3D f = empty_field(nx, ny, nz);
  const double two_pi = 2.0 * std::numbers::pi;
  fill(f, [&](int64_t i, int64_t j, int64_t k, double out[3]) {
    const double x = two_pi * double(i) / double(nx), y = two_pi * double(j) / double(ny),
                 z = two_pi * double(k) / double(nz);
    out[0] = a * std::sin(z) + c * std::cos(y);
    out[1] = b * std::sin(x) + a * std::cos(z);
    out[2] = c * std::sin(y) + b * std::cos(x);
  });
  return f;
}

VectorField3D taylor_green(int64_t nx, int64_t ny, int64_t nz, double w_amplitude) {
  VectorField3D f = empty_field(nx, ny, nz);
  const double two_pi = 2.0 * std::numbers::pi;
  fill(f, [&](int64_t i, int64_t j, int64_t k, double out[3]) {
    const double x = two_pi * double(i) / double(nx), y = two_pi * double(j) / double(ny),
                 z = two_pi * double(k) / double(nz);
    out[0] = std::sin(x) * std::cos(y) * std::cos(z);
    out[1] = -std::cos(x) * std::sin(y) * std::cos(z);
    out[2] = w_amplitude != 0.0 ? w_amplitude * std::cos(x) * std::cos(y) * std::sin(z) : 0.0;
  });
  return f;
}

VectorField3D random_modes(int64_t nx, int64_t ny, int64_t nz, uint64_t seed, int modes, int max_wavenumber) {
  VectorField3D f = empty_field(nx, ny, nz);
  struct Mode {
    double k[3];    // cycles per vertex along x, y, z
    double amp[3];  // perpendicular to k
    double phase;
  };
  std::vector<Mode> list;
  const int span = 2 * std::max(max_wavenumber, 1) + 1;
  const double dims[3] = {double(std::max<int64_t>(nx, 1)), double(std::max<int64_t>(ny, 1)),
                          double(std::max<int64_t>(nz, 1))};
  uint64_t counter = 0;
  while (int(list.size()) < modes) {
    int wave[3];
    for (int& q : wave) q = int(hash(seed, counter++) % uint64_t(span)) - std::max(max_wavenumber, 1);
    if (wave[0] == 0 && wave[1] == 0 && wave[2] == 0) continue;
    Mode m;
    for (int d = 0; d < 3; ++d) m.k[d] = double(wave[d]) / dims[d];
    double r[3];  // a random direction; amp = r x k is perpendicular to k
    for (double& q : r) q = 2.0 * unit(hash(seed, counter++)) - 1.0;
    m.amp[0] = r[1] * m.k[2] - r[2] * m.k[1];
    m.amp[1] = r[2] * m.k[0] - r[0] * m.k[2];
    m.amp[2] = r[0] * m.k[1] - r[1] * m.k[0];
    const double norm = std::sqrt(m.amp[0] * m.amp[0] + m.amp[1] * m.amp[1] + m.amp[2] * m.amp[2]);
    if (norm == 0.0) continue;
    for (double& q : m.amp) q /= norm;
    m.phase = 2.0 * std::numbers::pi * unit(hash(seed, counter++));
    list.push_back(m);
  }
  const double two_pi = 2.0 * std::numbers::pi;
  fill(f, [&](int64_t x, int64_t y, int64_t z, double out[3]) {
    out[0] = out[1] = out[2] = 0.0;
    for (const Mode& m : list) {
      const double c = std::cos(two_pi * (m.k[0] * double(x) + m.k[1] * double(y) + m.k[2] * double(z)) + m.phase);
      for (int d = 0; d < 3; ++d) out[d] += m.amp[d] * c;
    }
  });
  return f;
}

VectorField3D tie_field(int64_t nx, int64_t ny, int64_t nz, uint64_t seed) {
  VectorField3D f = empty_field(nx, ny, nz);
  fill(f, [&](int64_t x, int64_t y, int64_t z, double out[3]) {
    const uint64_t k = uint64_t((z * ny + y) * nx + x);
    for (int d = 0; d < 3; ++d) out[d] = double(int(hash(seed, 3 * k + uint64_t(d)) % 3) - 1);
  });
  return f;
}

Matrix3 jacobian_of(CpType3 type) {
  // Real parts and, for spirals, the rotation of the complex pair (in the x-y block).
  auto block = [](double re, double im, double third) {
    return Matrix3{{{re, -im, 0.0}, {im, re, 0.0}, {0.0, 0.0, third}}};
  };
  auto diag = [](double a, double b, double c) { return Matrix3{{{a, 0.0, 0.0}, {0.0, b, 0.0}, {0.0, 0.0, c}}}; };
  Matrix3 d{};
  switch (type) {
    case CpType3::attracting_node: d = diag(-1, -2, -3); break;
    case CpType3::repelling_node: d = diag(1, 2, 3); break;
    case CpType3::saddle_2_stable: d = diag(-1, -2, 3); break;
    case CpType3::saddle_2_unstable: d = diag(1, 2, -3); break;
    case CpType3::attracting_spiral: d = block(-1, 2, -1); break;
    case CpType3::repelling_spiral: d = block(1, 2, 1); break;
    case CpType3::spiral_saddle_2_stable: d = block(-1, 2, 1); break;
    case CpType3::spiral_saddle_2_unstable: d = block(1, 2, -1); break;
    case CpType3::center: d = block(0, 1, -1); break;
    case CpType3::degenerate: d = diag(1, 2, 0); break;
  }
  // P d P^-1 with P unimodular (det 1): integer entries, the same eigenvalues.
  const Matrix3 p{{{1, 1, 0}, {0, 1, 1}, {0, 0, 1}}};
  const Matrix3 p_inv{{{1, -1, 1}, {0, 1, -1}, {0, 0, 1}}};
  return multiply(multiply(p, d), p_inv);
}

VectorField3D linear_field(int64_t nx, int64_t ny, int64_t nz, const Matrix3& j, const std::array<double, 3>& c) {
  VectorField3D f = empty_field(nx, ny, nz);
  fill(f, [&](int64_t x, int64_t y, int64_t z, double out[3]) {
    const double d[3] = {double(x) - c[0], double(y) - c[1], double(z) - c[2]};
    for (int r = 0; r < 3; ++r) out[r] = j[size_t(r)][0] * d[0] + j[size_t(r)][1] * d[1] + j[size_t(r)][2] * d[2];
  });
  return f;
}

std::array<double, 3> tet_centroid(int64_t x, int64_t y, int64_t z, int t) {
  // kTetAxes (kernels/tet.hpp) in lexicographic order: the permutations of (0, 1, 2).
  static constexpr int kAxes[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  std::array<double, 3> c{double(x), double(y), double(z)};
  c[size_t(kAxes[t][0])] += 0.75;
  c[size_t(kAxes[t][1])] += 0.5;
  c[size_t(kAxes[t][2])] += 0.25;
  return c;
}

}  // namespace factz::testing
