// The independent exact reference of the topology contract (ARCHITECTURE.md section 3) for
// float64 values. Like exact_reference.hpp it is written from the contract alone and shares
// no code with src/kernels/: every double becomes an exact integer in units of 2^-1074 (the
// smallest subnormal), held in the reference's checked big integer, and every sign is read
// off an exact integer, with the formulas in their textbook (difference) form. Slow on
// purpose; tests use it as the oracle for kernels/exact64.hpp, orient64.hpp, signature64.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "factz/cp_type.hpp"
#include "support/exact_reference.hpp"

namespace factz::testref {

/// Exact value of a double in units of 2^-1074: below 2^2098; a product of two below 2^4196,
/// and the contract's sums of a few such products below 2^4202, inside 140 * 32 bits.
using WideInt = BigInt<140>;

/// Throws std::invalid_argument for NaN and Inf.
WideInt wide_of(double d);

/// A point of the vector plane with its global vertex index (the origin has index -1).
struct RefPoint64 {
  double x = 0;
  double y = 0;
  int64_t index = 0;
};

/// Exact sign of x0*y1 - x1*y0.
int ref64_cross(double x0, double y0, double x1, double y1);

/// Exact sign of D = det[[x0,y0,1],[x1,y1,1],[x2,y2,1]] without perturbation (may be 0).
int ref64_orient_plain(RefPoint64 a, RefPoint64 b, RefPoint64 c);

/// Orientation with Simulation of Simplicity as the contract words it; +1 or -1. Indices
/// must be pairwise distinct (throws std::invalid_argument otherwise).
int ref64_orient_sos(RefPoint64 a, RefPoint64 b, RefPoint64 c);

/// Inside test: s = orient(p0,p1,p2), s_k with point k replaced by the origin; all equal.
bool ref64_contains_origin(RefPoint64 p0, RefPoint64 p1, RefPoint64 p2);

/// Exact signs of det J, tr J and disc = tr^2 - 4 det J for triangle kind t (0: T0, 1: T1).
RefJacobianSigns ref64_jacobian_signs(int t, const double u[3], const double v[3]);

/// Type of the linear interpolant's Jacobian (whether or not the triangle holds a zero).
CpType ref64_type(int t, const double u[3], const double v[3]);

/// Signature byte: 0 = no critical point, 1 + CpType otherwise.
uint8_t ref64_signature(int t, const int64_t idx[3], const double u[3], const double v[3]);

/// Signature of every triangle of an nx * ny float64 field (planes x fastest); `missing`
/// (empty, or nx * ny bytes, nonzero = missing) removes every triangle touching a missing
/// vertex from the mesh (signature 0).
std::vector<uint8_t> ref64_signatures(int64_t nx, int64_t ny, const double* u, const double* v,
                                      const std::vector<uint8_t>& missing = {});

/// Exact sign of sum_i a_i * b_i * 2^scale_i (n <= 64).
int ref64_sign_of_products(const double* a, const double* b, const int* scale, int n);

}  // namespace factz::testref
