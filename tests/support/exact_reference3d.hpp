// An independent exact reference of the 3D vector-field contract (docs/architecture.md,
// "3D vector fields"), written from the contract text alone and sharing no code with
// src/kernels/ (tet.hpp, wide_int.hpp). It decides on exact integers (testref::BigInt) in
// other ways than the kernels do:
// - Simulation of Simplicity by brute force: the determinant of the perturbed matrix is
//   expanded as a polynomial in eps (every entry x_rj + eps^(2^(4 rank + 2 - j))) and the
//   sign is that of its lowest nonzero coefficient; no sorting, no minor enumeration. The
//   same expansion in the plane reproduces the 2D contract (checked by the tests).
// - The type from the roots' positions: Descartes' rule of signs when every root is real
//   (discriminant >= 0), and for a complex pair the signs of p(0) and p(tr J), where p is
//   the characteristic polynomial (its one real root r lies where p changes sign).
// Slow on purpose: the tests' oracle.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "factz/cp_type.hpp"

namespace factz::testref {

/// A point with d coordinates (d = 2 or 3) and its global vertex index (-1: the origin); C is
/// float, or double for the float64 reference (every double in units of 2^-1074).
template <class C>
struct RefPointOf {
  std::vector<C> x;
  int64_t index = 0;
};
using RefPointN = RefPointOf<float>;
using RefPointN64 = RefPointOf<double>;

/// Orientation with Simulation of Simplicity of d + 1 points in d dimensions (d = 2, 3):
/// the sign of det[[x_i, 1]] under the perturbation, +1 or -1. Indices must be distinct.
int ref_orient_sos_nd(const std::vector<RefPointN>& points);

/// The sign of the unperturbed determinant (may be 0).
int ref_orient_plain_nd(const std::vector<RefPointN>& points);

/// The inside test of the origin for a tetrahedron of four (u, v, w) vectors.
bool ref_tet_contains_origin(const std::array<RefPointN, 4>& p);

/// Type of a tetrahedron: values in path order, axes of its path (docs/architecture.md).
CpType3 ref_tet_type(const float u[4], const float v[4], const float w[4], const int axes[3]);

/// The mesh restated: vertex indices of tetrahedron `tet` in path order and its axes.
void ref_tet_vertices(int64_t nx, int64_t ny, int64_t nz, int64_t tet, int64_t idx[4], int axes[3]);

/// Signature byte: 0 = none, 1 + CpType3.
uint8_t ref_tet_signature(const int64_t idx[4], const int axes[3], const float u[4], const float v[4],
                          const float w[4]);

// ---- float64 (the same brute force on exact integers in units of 2^-1074) ----------------

int ref64_orient_sos_nd(const std::vector<RefPointN64>& points);
int ref64_orient_plain_nd(const std::vector<RefPointN64>& points);
bool ref64_tet_contains_origin(const std::array<RefPointN64, 4>& p);
CpType3 ref64_tet_type(const double u[4], const double v[4], const double w[4], const int axes[3]);
uint8_t ref64_tet_signature(const int64_t idx[4], const int axes[3], const double u[4], const double v[4],
                            const double w[4]);

}  // namespace factz::testref
