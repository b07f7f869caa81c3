// Synthetic 2D vector fields for tests and benchmarks (bench support, not the library).
//
// Every generator is a pure function of its arguments: the same arguments give the same
// bytes on a given platform, whatever the OpenMP thread count. Randomness comes from a
// counter-based splitmix64 hash of (seed, position or mode), never from std::
// distributions, whose output differs between standard libraries. Results may differ in
// the last bit between platforms whose libm cos/sin/exp/log differ.
//
// Sizes: nx, ny < 0 are treated as 0; a field with no vertices is returned empty (with
// its nx, ny set). Grid coordinates are x in [0, nx), y in [0, ny), one unit per cell.
#pragma once

#include <cstdint>

#include "factz/field.hpp"

namespace factz::synth {

/// Default peak of the turbulence energy spectrum, in cycles across max(nx, ny). With it
/// a 512 x 512 field has about 4000 critical points, 4096 x 4096 about 7000 (the count
/// grows only like peak_cycles^2 log(size / peak_cycles)).
inline constexpr double kTurbulencePeakCycles = 16.0;

/// Band-limited random 2D turbulence: a Gaussian random stream function psi (complex
/// Gaussian Fourier coefficients: random phases, Rayleigh amplitudes) with energy
/// spectrum E(k) ~ (k/k0)^4 / (1 + (k/k0)^7), i.e. k^4 below and k^-3 (enstrophy
/// cascade) above the peak k0 = peak_cycles cycles across max(nx, ny), cut at the grid
/// Nyquist frequency. Raise peak_cycles for more, smaller eddies; <= 0 or NaN means the
/// default. u = dpsi/dy and v = -dpsi/dx are taken spectrally, so the field is
/// divergence-free and multiscale with many critical points. Normalised so that
/// sqrt(mean(u^2 + v^2)) == 1 over the returned vertices (up to float rounding).
///
/// Synthesised on a periodic grid of fft_good_size(nx) x fft_good_size(ny) (the next
/// sizes with prime factors 2, 3, 5; the field is periodic when nx, ny are such sizes)
/// and cropped. Memory: 16 bytes per vertex of that grid (double complex) plus the
/// 8 bytes per vertex of the result: about 9.6 GB at 20000 x 20000. Cost: about
/// 1.5 CPU-seconds at 4096 x 4096 and 40 at 20000 x 20000, split over OpenMP threads.
VectorField2D turbulence(int64_t nx, int64_t ny, uint64_t seed,
                         double peak_cycles = kTurbulencePeakCycles);
/// turbulence without the final rounding to float: the same field in double (a genuinely
/// float64 field; rounding it to float gives turbulence's values).
VectorField2D64 turbulence64(int64_t nx, int64_t ny, uint64_t seed,
                             double peak_cycles = kTurbulencePeakCycles);

/// A uniform flow plus `count` (< 0 treated as 0) Gaussian vortices. Vortex i has a
/// stream function A_i exp(-r^2 / (2 s_i^2)): solid-body rotation in its core, peak
/// speed |A_i| / s_i * exp(-1/2) in [0.5, 1.5] at r = s_i, random sign, decaying to zero
/// (not like 1/r) outside, so the field is smooth with critical points at the vortex
/// centres and where vortices cancel the uniform flow (speed in [0, 0.5]). Centres are
/// uniform over the grid; s_i is 0.15-0.4 times the mean vortex spacing
/// sqrt(nx * ny / count), at least one cell. Each vortex is evaluated within 7 s_i,
/// beyond which its speed is below 1e-9 of its peak. Not normalised.
VectorField2D vortices(int64_t nx, int64_t ny, uint64_t seed, int count);

/// i.i.d. uniform noise: u and v independent, each value an odd multiple of 2^-24 in
/// (-1, 1) (so exactly representable and never 0).
VectorField2D noise(int64_t nx, int64_t ny, uint64_t seed);

/// The linear field u = a (x - x0) + b (y - y0), v = c (x - x0) + d (y - y0), evaluated
/// in double at the grid points and rounded to float. Its only critical point is
/// (x0, y0) when a d - b c != 0.
VectorField2D linear(int64_t nx, int64_t ny, double a, double b, double c, double d, double x0,
                     double y0);

/// Sets u = v = +0 on a blobby region ("land") of about `fraction` of the vertices: a
/// sublevel set of a smooth random scalar field made of 16 plane waves of 1-4 cycles
/// across max(nx, ny), thresholded at its `fraction` quantile (to within 1/65536 of
/// the field's range). fraction <= 0 changes nothing; fraction >= 1 zeroes everything.
/// The region depends only on (nx, ny, seed, fraction), not on the field's values.
void add_zero_region(VectorField2D& f, uint64_t seed, double fraction);

}  // namespace factz::synth
