// Divergence-free matrix-valued kernels Phi = (-Laplacian I + grad grad^T) psi in closed
// form, with their first derivatives (for the analytic velocity gradient and divergence).
//
// psi(x, y) = sum_s w_s phi_s(sqrt(rho) / length_s), rho = sum_k rho_k(x_k - y_k), where
// rho_k(delta) = delta^2 on an open axis and 4 R^2 sin^2(delta / 2R), R = L / 2pi, on an
// axis of period L (the squared chord between the two points mapped to a circle of radius
// R: periodic, and equal to delta^2 to second order). Writing p1, p2, p3 for the first
// three derivatives of rho_k and psi', psi'', psi''' for derivatives in rho,
//   H_ij = psi'' p1_i p1_j + delta_ij psi' p2_i          (the Hessian of psi in x)
//   Phi  = -trace(H) I + H
//   d_k H_ij = psi''' p1_i p1_j p1_k + psi'' (delta_ik p2_i p1_j + delta_jk p1_i p2_j
//              + delta_ij p2_i p1_k) + delta_ij delta_ik psi' p3_i.
// Any smooth psi makes every column of Phi divergence-free: sum_i d_i Phi_ij =
// -d_j trace(H) + sum_i d_i H_ij = 0 identically (third derivatives commute).
//
// With t = sqrt(rho) / length and a = 1 / (2 length^2): psi' = a g0(t), psi'' = a^2 g1(t),
// psi''' = a^3 g2(t), where g0 = phi'(t) / t, g1 = g0'(t) / t, g2 = g1'(t) / t.
// g2 is singular like 1/t at t = 0 but only multiplies p1^3 = O(t^3); it is taken as 0 at
// t = 0 exactly.
#pragma once

#include <cmath>
#include <span>

#include "factz/flow.hpp"

namespace factz::flow::detail {

inline constexpr double kTwoPi = 6.283185307179586476925286766559;

struct RadialDerivs {
  double g0 = 0, g1 = 0, g2 = 0;
};

inline RadialDerivs radial_derivs(Radial r, double t) {
  RadialDerivs g;
  if (r == Radial::matern) {
    const double e = std::exp(-t);
    g.g0 = -(t + 1.0) * e;
    g.g1 = e;
    g.g2 = t > 0 ? -e / t : 0.0;
  } else {
    if (t >= 1.0) return g;
    const double s = 1.0 - t, s3 = s * s * s, s4 = s3 * s;
    g.g0 = -56.0 * s4 * s * (5.0 * t + 1.0);
    g.g1 = 1680.0 * s4;
    g.g2 = t > 0 ? -6720.0 * s3 / t : 0.0;
  }
  return g;
}

/// phi(t) itself (tests and documentation; the kernels need only its derivatives).
inline double radial_value(Radial r, double t) {
  if (r == Radial::matern) return std::exp(-t) * (t * t + 3.0 * t + 3.0);
  if (t >= 1.0) return 0.0;
  const double s = 1.0 - t, s2 = s * s, s6 = s2 * s2 * s2;
  return s6 * (35.0 * t * t + 18.0 * t + 3.0);
}

/// psi', psi'', psi''' (derivatives in rho) of a kernel mixture.
inline void psi_derivs(std::span<const KernelTerm> kernel, double rho, double& d1, double& d2,
                       double& d3) {
  d1 = d2 = d3 = 0;
  const double r = std::sqrt(rho);
  for (const KernelTerm& k : kernel) {
    const double a = 0.5 / (k.length * k.length);
    const RadialDerivs g = radial_derivs(k.radial, r / k.length);
    d1 += k.weight * a * g.g0;
    d2 += k.weight * a * a * g.g1;
    d3 += k.weight * a * a * a * g.g2;
  }
}

/// Largest rho with a nonzero kernel (infinity with any Matern term).
inline double support_rho(std::span<const KernelTerm> kernel) {
  double s = 0;
  for (const KernelTerm& k : kernel) {
    if (k.radial == Radial::matern) return INFINITY;
    s = std::fmax(s, k.length * k.length);
  }
  return s;
}

/// Per-axis pieces of rho for the pair (x, y).
struct AxisTerms {
  double rho = 0;
  double p1[3] = {0, 0, 0}, p2[3] = {0, 0, 0}, p3[3] = {0, 0, 0};
};

inline AxisTerms axis_terms(int dim, const double* x, const double* y, const double* periods) {
  AxisTerms a;
  for (int k = 0; k < dim; ++k) {
    const double d = x[k] - y[k];
    if (periods[k] > 0) {
      const double R = periods[k] / kTwoPi;
      const double h = std::sin(d / (2.0 * R));
      const double s = std::sin(d / R), c = std::cos(d / R);
      a.rho += 4.0 * R * R * h * h;
      a.p1[k] = 2.0 * R * s;
      a.p2[k] = 2.0 * c;
      a.p3[k] = -2.0 * s / R;
    } else {
      a.rho += d * d;
      a.p1[k] = 2.0 * d;
      a.p2[k] = 2.0;
      a.p3[k] = 0.0;
    }
  }
  return a;
}

/// Squared kernel distance rho(x, y) only (neighbor searches, landmark selection).
inline double kernel_rho(int dim, const double* x, const double* y, const double* periods) {
  double rho = 0;
  for (int k = 0; k < dim; ++k) {
    const double d = x[k] - y[k];
    if (periods[k] > 0) {
      const double R = periods[k] / kTwoPi;
      const double h = std::sin(d / (2.0 * R));
      rho += 4.0 * R * R * h * h;
    } else {
      rho += d * d;
    }
  }
  return rho;
}

/// Phi from the axis terms and the radial derivatives: the Hessian of psi minus its trace on
/// the diagonal, phi[i * 3 + j].
inline void fill_phi(int dim, const AxisTerms& a, double d1, double d2, double* phi) {
  double h[3][3];
  double tr = 0;
  for (int i = 0; i < dim; ++i) {
    for (int j = 0; j < dim; ++j) h[i][j] = d2 * a.p1[i] * a.p1[j];
    h[i][i] += d1 * a.p2[i];
    tr += h[i][i];
  }
  for (int i = 0; i < dim; ++i)
    for (int j = 0; j < dim; ++j) phi[i * 3 + j] = h[i][j] - (i == j ? tr : 0.0);
}

/// phi[i * 3 + j] = Phi_ij(x, y). Returns false (phi untouched) when outside the support.
inline bool kernel_block(int dim, std::span<const KernelTerm> kernel, const double* periods,
                         double support, const double* x, const double* y, double* phi) {
  const AxisTerms a = axis_terms(dim, x, y, periods);
  if (!(a.rho < support)) return false;
  double d1, d2, d3;
  psi_derivs(kernel, a.rho, d1, d2, d3);
  fill_phi(dim, a, d1, d2, phi);
  return true;
}

/// kernel_block plus dphi[(i * 3 + j) * 3 + k] = d Phi_ij / d x_k.
inline bool kernel_block_grad(int dim, std::span<const KernelTerm> kernel, const double* periods,
                              double support, const double* x, const double* y, double* phi,
                              double* dphi) {
  const AxisTerms a = axis_terms(dim, x, y, periods);
  if (!(a.rho < support)) return false;
  double d1, d2, d3;
  psi_derivs(kernel, a.rho, d1, d2, d3);
  fill_phi(dim, a, d1, d2, phi);
  double dh[3][3][3];
  for (int i = 0; i < dim; ++i)
    for (int j = 0; j < dim; ++j)
      for (int k = 0; k < dim; ++k) {
        double v = d3 * a.p1[i] * a.p1[j] * a.p1[k];
        if (i == k) v += d2 * a.p2[i] * a.p1[j];
        if (j == k) v += d2 * a.p1[i] * a.p2[j];
        if (i == j) v += d2 * a.p2[i] * a.p1[k];
        if (i == j && i == k) v += d1 * a.p3[i];
        dh[i][j][k] = v;
      }
  for (int k = 0; k < dim; ++k) {
    double dtr = 0;
    for (int l = 0; l < dim; ++l) dtr += dh[l][l][k];
    for (int i = 0; i < dim; ++i)
      for (int j = 0; j < dim; ++j) dphi[(i * 3 + j) * 3 + k] = dh[i][j][k] - (i == j ? dtr : 0.0);
  }
  return true;
}

}  // namespace factz::flow::detail
