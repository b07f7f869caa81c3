// Orientation with Simulation of Simplicity for float64 vectors (ARCHITECTURE.md section 3,
// issue 18). The same decisions as orient.hpp, made exactly on double inputs: for any
// float-valued points both give the same sign (tests/test_exact64_reference.cpp checks it),
// and for all others the contract's exact sign, whatever the magnitudes (subnormals,
// values near DBL_MAX, both in one triangle). No value ever passes through float.
#pragma once

#include <cstdint>

#include "kernels/exact64.hpp"

namespace factz::detail {

/// A point of the vector plane tagged with its global vertex index (-1: the origin).
struct SosPoint64 {
  double x;
  double y;
  int64_t index;
};

/// Sign of x0*y1 - x1*y0 when both rounded products are equal (the rare case). With
/// 2^-968 <= |a| <= DBL_MAX, x0*y1 = a + lo exactly with lo = fma(x0, y1, -a) (its
/// significands' product has 106 bits at most and the smallest bit of lo is at least 2^-1074),
/// so comparing the two low parts decides. Anything else (an overflow, products at or below
/// the subnormals) takes the general exact evaluation.
FACTZ_HD_COLD int cross_tie64(double x0, double y0, double x1, double y1, double a) {
  const double mag = a < 0.0 ? -a : a;
  if (mag >= 0x1p-968 && mag <= 1.7976931348623157e308) {
    const double la = fma(x0, y1, -a), lb = fma(x1, y0, -a);
    return int(la > lb) - int(la < lb);
  }
  const ProductTerm t[2] = {{x0, y1, 0}, {-x1, y0, 0}};
  return exact_sign_of_products(t, 2);
}

/// Exact sign of the 2x2 determinant x0*y1 - x1*y0 (orientation with the origin first).
/// Rounding is monotone (also into the subnormals and to infinity), so rounded products
/// that differ order the exact ones the same way; only equal ones need more.
FACTZ_HD int cross_exact64(double x0, double y0, double x1, double y1) {
  const double a = x0 * y1, b = x1 * y0;
  if (a == b) return cross_tie64(x0, y0, x1, y1, a);
  return int(a > b) - int(a < b);
}

/// Exact sign of det[[x0,y0,1],[x1,y1,1],[x2,y2,1]] (no perturbation; may be 0).
FACTZ_HD int orient_exact64(double x0, double y0, double x1, double y1, double x2, double y2) {
  const ProductTerm t[6] = {{x0, y1, 0},  {-x0, y2, 0}, {-x1, y0, 0},
                            {x1, y2, 0},  {x2, y0, 0},  {-x2, y1, 0}};
  return exact_sign_of_products(t, 6);
}

FACTZ_HD int compare_doubles(double a, double b) { return int(a > b) - int(a < b); }

/// Orientation sign (+1 or -1, never 0) with symbolic perturbation ordered by index, as
/// orient_sos. Indices must be pairwise distinct.
FACTZ_HD int orient_sos64(SosPoint64 a, SosPoint64 b, SosPoint64 c) {
  int parity = 0;
  SosPoint64 p[3] = {a, b, c};
  if (p[0].index > p[1].index) { SosPoint64 t = p[0]; p[0] = p[1]; p[1] = t; parity ^= 1; }
  if (p[1].index > p[2].index) { SosPoint64 t = p[1]; p[1] = p[2]; p[2] = t; parity ^= 1; }
  if (p[0].index > p[1].index) { SosPoint64 t = p[0]; p[0] = p[1]; p[1] = t; parity ^= 1; }
  int s;
  if (p[0].index < 0) {
    // The origin sorts first (x0 = y0 = 0): D reduces to a 2x2 determinant.
    s = cross_exact64(p[1].x, p[1].y, p[2].x, p[2].y);
  } else {
    s = orient_exact64(p[0].x, p[0].y, p[1].x, p[1].y, p[2].x, p[2].y);
  }
  if (s == 0) s = compare_doubles(p[2].x, p[1].x);
  if (s == 0) s = compare_doubles(p[1].y, p[2].y);
  if (s == 0) s = compare_doubles(p[0].x, p[2].x);
  if (s == 0) s = 1;
  return parity ? -s : s;
}

}  // namespace factz::detail
