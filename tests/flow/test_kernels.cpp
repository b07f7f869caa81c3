// Closed-form divergence-free kernels against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "flow/kernel.hpp"

using namespace factz::flow;
using namespace factz::flow::detail;

namespace {

double psi(const std::vector<KernelTerm>& k, int dim, const double* x, const double* y, const double* periods) {
  const double r = std::sqrt(kernel_rho(dim, x, y, periods));
  double v = 0;
  for (const auto& t : k) v += t.weight * radial_value(t.radial, r / t.length);
  return v;
}

struct Case {
  int dim;
  std::vector<KernelTerm> kernel;
  bool periodic;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  for (int dim : {2, 3})
    for (bool periodic : {false, true}) {
      c.push_back({dim, {{Radial::matern, 0.9, 1.0}}, periodic});
      c.push_back({dim, {{Radial::wendland, 2.5, 1.0}}, periodic});
      c.push_back({dim, {{Radial::matern, 0.4, 0.3}, {Radial::matern, 1.5, 1.0}}, periodic});
    }
  return c;
}

}  // namespace

TEST(FlowKernels, PhiIsMinusLaplacianPlusHessianOfPsi) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (const Case& c : cases()) {
    const double periods[3] = {c.periodic ? 4.0 : 0.0, c.periodic ? 5.0 : 0.0, c.periodic ? 3.0 : 0.0};
    for (int trial = 0; trial < 20; ++trial) {
      double x[3], y[3];
      for (int k = 0; k < 3; ++k) x[k] = U(rng), y[k] = U(rng);
      double phi[9];
      ASSERT_TRUE(kernel_block(c.dim, c.kernel, periods, INFINITY, x, y, phi) || true);
      if (!kernel_block(c.dim, c.kernel, periods, support_rho(c.kernel), x, y, phi)) continue;
      const double h = 1e-4;
      double hess[3][3], lap = 0, scale = 0;
      for (int i = 0; i < c.dim; ++i)
        for (int j = 0; j < c.dim; ++j) {
          double xs[4][3];
          const int si[4] = {1, 1, -1, -1}, sj[4] = {1, -1, 1, -1};
          double acc = 0;
          for (int q = 0; q < 4; ++q) {
            for (int k = 0; k < 3; ++k) xs[q][k] = x[k];
            xs[q][i] += si[q] * h;
            xs[q][j] += sj[q] * h;
            acc += si[q] * sj[q] * psi(c.kernel, c.dim, xs[q], y, periods);
          }
          hess[i][j] = acc / (4 * h * h);
        }
      for (int i = 0; i < c.dim; ++i) lap += hess[i][i];
      for (int i = 0; i < c.dim; ++i)
        for (int j = 0; j < c.dim; ++j) scale = std::max(scale, std::fabs(phi[i * 3 + j]));
      for (int i = 0; i < c.dim; ++i)
        for (int j = 0; j < c.dim; ++j) {
          const double fd = hess[i][j] - (i == j ? lap : 0.0);
          EXPECT_NEAR(phi[i * 3 + j], fd, 2e-5 * std::max(scale, 1e-3)) << "dim " << c.dim << " periodic " << c.periodic;
        }
    }
  }
}

TEST(FlowKernels, GradientMatchesFiniteDifferencesAndDivergenceVanishes) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  for (const Case& c : cases()) {
    const double periods[3] = {c.periodic ? 4.0 : 0.0, c.periodic ? 5.0 : 0.0, c.periodic ? 3.0 : 0.0};
    const double sup = support_rho(c.kernel);
    for (int trial = 0; trial < 20; ++trial) {
      double x[3], y[3];
      for (int k = 0; k < 3; ++k) x[k] = U(rng), y[k] = U(rng);
      double phi[9], dphi[27];
      if (!kernel_block_grad(c.dim, c.kernel, periods, sup, x, y, phi, dphi)) continue;
      double scale = 0;
      for (double v : dphi) scale = std::max(scale, std::fabs(v));
      const double h = 1e-6;
      for (int k = 0; k < c.dim; ++k) {
        double xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]};
        xp[k] += h;
        xm[k] -= h;
        double pp[9] = {}, pm[9] = {};
        kernel_block(c.dim, c.kernel, periods, INFINITY, xp, y, pp);
        kernel_block(c.dim, c.kernel, periods, INFINITY, xm, y, pm);
        for (int i = 0; i < c.dim; ++i)
          for (int j = 0; j < c.dim; ++j)
            EXPECT_NEAR(dphi[(i * 3 + j) * 3 + k], (pp[i * 3 + j] - pm[i * 3 + j]) / (2 * h), 1e-6 * std::max(scale, 1e-3));
      }
      // Column j of Phi is divergence-free: sum_i d_i Phi_ij = 0 to roundoff.
      for (int j = 0; j < c.dim; ++j) {
        double div = 0;
        for (int i = 0; i < c.dim; ++i) div += dphi[(i * 3 + j) * 3 + i];
        EXPECT_LE(std::fabs(div), 1e-13 * std::max(scale, 1e-300));
      }
    }
  }
}

TEST(FlowKernels, PeriodicKernelRepeatsAfterOnePeriod) {
  const std::vector<KernelTerm> k = {{Radial::matern, 0.7, 1.0}};
  const double periods[2] = {2.0, 3.0};
  const double y[2] = {0.3, -0.2};
  for (double x0 : {0.0, 0.45, 1.9}) {
    const double x[2] = {x0, 0.8}, xs[2] = {x0 + 2.0, 0.8 - 3.0};
    double a[9], b[9];
    kernel_block(2, k, periods, INFINITY, x, y, a);
    kernel_block(2, k, periods, INFINITY, xs, y, b);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(a[i / 2 * 3 + i % 2], b[i / 2 * 3 + i % 2], 1e-14);
  }
}

TEST(FlowKernels, WendlandVanishesOutsideItsSupportAndAtCoincidentPointsIsFinite) {
  const std::vector<KernelTerm> k = {{Radial::wendland, 1.0, 1.0}};
  const double periods[3] = {0, 0, 0};
  const double x[3] = {0, 0, 0}, far[3] = {0.8, 0.7, 0}, same[3] = {0, 0, 0};
  double phi[9], dphi[27];
  EXPECT_FALSE(kernel_block(3, k, periods, support_rho(k), x, far, phi));
  ASSERT_TRUE(kernel_block_grad(3, k, periods, support_rho(k), x, same, phi, dphi));
  for (double v : phi) EXPECT_TRUE(std::isfinite(v));
  for (double v : dphi) EXPECT_EQ(v, 0.0);  // an even kernel has zero gradient at its centre
  EXPECT_GT(phi[0], 0.0);                   // positive definite: positive diagonal
}
