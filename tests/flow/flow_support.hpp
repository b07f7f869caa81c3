// Taylor-Green vortices on periodic grids for the flow tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace flowtest {

inline constexpr double kTwoPi = 6.283185307179586476925286766559;

/// Cell centres of an n^dim grid on [0, 2pi)^dim, x fastest (rows of dim coordinates).
inline std::vector<double> grid_nodes(int dim, int n) {
  std::vector<double> x;
  const double h = kTwoPi / n;
  const int nz = dim == 3 ? n : 1;
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        x.push_back((i + 0.5) * h);
        x.push_back((j + 0.5) * h);
        if (dim == 3) x.push_back((k + 0.5) * h);
      }
  return x;
}

/// Taylor-Green velocity at the nodes (divergence-free, 2pi-periodic).
inline std::vector<double> taylor_green(int dim, const std::vector<double>& x) {
  std::vector<double> u;
  for (size_t i = 0; i < x.size(); i += size_t(dim)) {
    const double a = x[i], b = x[i + 1], c = dim == 3 ? x[i + 2] : 0.0;
    const double cz = std::cos(c);
    u.push_back(std::sin(a) * std::cos(b) * cz);
    u.push_back(-std::cos(a) * std::sin(b) * cz);
    if (dim == 3) u.push_back(0.0);
  }
  return u;
}

}  // namespace flowtest
