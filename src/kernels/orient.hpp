// Orientation of three points of the vector plane with Simulation of Simplicity
// (ARCHITECTURE.md section 3). Points are float vectors (u, v) of mesh vertices; the
// origin takes part as a point with index -1.
#pragma once

#include <cstdint>

#include "kernels/exact.hpp"

namespace factz::detail {

/// A point of the vector plane tagged with its global vertex index (-1: the origin).
struct SosPoint {
  float x;
  float y;
  int64_t index;
};

/// Exact sign of det[[x0,y0,1],[x1,y1,1],[x2,y2,1]] (no perturbation; may be 0).
FACTZ_HD int orient_exact(float x0, float y0, float x1, float y1, float x2, float y2) {
  const double t[6] = {
      double(x0) * double(y1), -(double(x0) * double(y2)), -(double(x1) * double(y0)),
      double(x1) * double(y2), double(x2) * double(y0),    -(double(x2) * double(y1))};
  return exact_sign_of_sum(t, 6);
}

/// Exact sign of the 2x2 determinant x0*y1 - x1*y0 (orientation with the origin first).
FACTZ_HD int cross_exact(float x0, float y0, float x1, float y1) {
  const double a = double(x0) * double(y1);
  const double b = double(x1) * double(y0);
  return int(a > b) - int(a < b);  // branch-free: signs are unpredictable in noisy data
}

FACTZ_HD int compare_floats(float a, float b) { return int(a > b) - int(a < b); }

/// Orientation sign (+1 or -1, never 0) with symbolic perturbation ordered by index.
/// Indices must be pairwise distinct.
FACTZ_HD int orient_sos(SosPoint a, SosPoint b, SosPoint c) {
  // Sort by index with a three-element network, tracking the permutation parity.
  int parity = 0;
  SosPoint p[3] = {a, b, c};
  if (p[0].index > p[1].index) { SosPoint t = p[0]; p[0] = p[1]; p[1] = t; parity ^= 1; }
  if (p[1].index > p[2].index) { SosPoint t = p[1]; p[1] = p[2]; p[2] = t; parity ^= 1; }
  if (p[0].index > p[1].index) { SosPoint t = p[0]; p[0] = p[1]; p[1] = t; parity ^= 1; }
  int s;
  if (p[0].index < 0) {
    // The origin sorts first (x0 = y0 = 0): D reduces to a 2x2 determinant.
    s = cross_exact(p[1].x, p[1].y, p[2].x, p[2].y);
  } else {
    s = orient_exact(p[0].x, p[0].y, p[1].x, p[1].y, p[2].x, p[2].y);
  }
  if (s == 0) s = compare_floats(p[2].x, p[1].x);
  if (s == 0) s = compare_floats(p[1].y, p[2].y);
  if (s == 0) s = compare_floats(p[0].x, p[2].x);
  if (s == 0) s = 1;
  return parity ? -s : s;
}

}  // namespace factz::detail
