// Synthetic 3D vector fields for the 3D tests and benchmarks (issue 22; bench/cp3d_bench):
// classic flows, a random band-limited flow, tie-heavy fields, and linear fields with one
// critical point of a chosen type in a chosen tetrahedron.
//
// Every generator is a pure function of its arguments. Randomness comes from a
// counter-based splitmix64 hash of (seed, counter), never from std:: distributions (their
// output differs between standard libraries). Values are computed in double and rounded
// to float once; the flows may differ in the last bit between platforms whose libm
// sin/cos differ, the linear and tie fields never do.
#pragma once

#include <array>
#include <cstdint>

#include "factz/cp_type.hpp"
#include "factz/field3d.hpp"

namespace factz::testing {

/// The Arnold-Beltrami-Childress flow on [0, 2 pi)^3 sampled at x = 2 pi i / nx (and so
/// on): u = A sin z + C cos y, v = B sin x + A cos z, w = C sin y + B cos x. Periodic,
/// divergence-free, steady solution of Euler's equations; the defaults are the classic
/// chaotic A = sqrt 3, B = sqrt 2, C = 1 (critical points appear in pairs of saddles).
VectorField3D abc_flow(int64_t nx, int64_t ny, int64_t nz, double a = 1.7320508075688772,
                       double b = 1.4142135623730951, double c = 1.0);

/// The initial field of the 3D Taylor-Green vortex on [0, 2 pi)^3: u = sin x cos y cos z,
/// v = -cos x sin y cos z, w = 0 (w identically zero: every orientation of four vectors
/// is degenerate and decided by the symbolic perturbation, a tie-heavy case by design).
/// With `w_amplitude` != 0, w = w_amplitude * cos x cos y sin z is added: a generic field
/// (no longer divergence-free) with the same layout of cells.
VectorField3D taylor_green(int64_t nx, int64_t ny, int64_t nz, double w_amplitude = 0.0);

/// A random band-limited flow: `modes` Fourier modes a_m cos(2 pi (k . (x/nx, y/ny, z/nz))
/// + phi_m), integer wavenumbers in [-max_wavenumber, max_wavenumber] (not all zero),
/// amplitudes a_m perpendicular to the scaled wave vector (each mode divergence-free in
/// the continuum), random phases. No FFT: cost modes * 3 per vertex.
VectorField3D random_modes(int64_t nx, int64_t ny, int64_t nz, uint64_t seed, int modes = 12,
                           int max_wavenumber = 3);

/// Every component of every vertex drawn from {-1, 0, 1}: ties everywhere (zero
/// orientations, zero Jacobians), the symbolic perturbation decides most signs.
VectorField3D tie_field(int64_t nx, int64_t ny, int64_t nz, uint64_t seed);

/// A 3 x 3 matrix, row-major: J[component][axis].
using Matrix3 = std::array<std::array<double, 3>, 3>;

/// An integer matrix whose linear field x -> J x has a critical point of `type`
/// (eigenvalues such as -1, -2, -3 or -1 +- 2i, +1 ...), conjugated by a unimodular integer
/// matrix so that no entry pattern is axis-aligned. center: eigenvalues +-i and -1.
/// degenerate: eigenvalues 1, 2, 0 (det J = 0; the contract never reports it).
Matrix3 jacobian_of(CpType3 type);

/// The field f(p) = J (p - c) on an nx x ny x nz grid (p the vertex coordinates), in
/// double, rounded to float: exact when J's entries are small integers and c's
/// coordinates multiples of 1/4 (the values are then multiples of 1/4 below 2^20).
VectorField3D linear_field(int64_t nx, int64_t ny, int64_t nz, const Matrix3& jacobian,
                           const std::array<double, 3>& center);

/// The centroid of tetrahedron t (0..5) of the cube at corner (x, y, z): the corner plus
/// 3/4 along its first axis, 1/2 along the second and 1/4 along the third.
std::array<double, 3> tet_centroid(int64_t x, int64_t y, int64_t z, int t);

}  // namespace factz::testing
