// Synthetic 2D decaying turbulence at any size (issue 7), like the paper's DT-10K/DT-20K.
//
// The model: incompressible 2D Navier-Stokes in vorticity form on the periodic box
// [0, 2 pi)^2,  w_t + u . grad w = nu lap w,  u = d psi/dy, v = -d psi/dx, lap psi = -w.
//  1. Initial vorticity: white noise from a counter-based hash of (seed, vertex) on an
//     M x M grid, filtered in Fourier space to the energy spectrum
//     E(k) ~ k^4 exp(-2 (k / k0)^2) (peak at k0), normalised to rms speed 1.
//  2. Evolution: pseudo-spectral, 2/3-rule dealiasing, viscosity by an integrating factor,
//     Heun (RK2) steps with dt = 0.4 dx / max|u| (CFL), for `turnovers` eddy turnover
//     times 2 pi / (k0 urms) (urms = 1 at the start). The vortices merge and the
//     enstrophy cascade fills the spectrum: coherent vortices, filaments, many critical
//     points at many scales.
//  3. Output: the velocity's Fourier coefficients, zero-padded (or truncated) to the
//     requested nx x ny grid and inverse-transformed: the exact band-limited interpolant of
//     the simulated flow on the output grid (same periodic box).
// The simulation grid M is what costs; the output size costs only two FFTs at nx x ny.
// FFTW single precision (real-to-complex), single-threaded plans with FFTW_ESTIMATE, so a
// given machine and library give the same bytes for the same arguments.
// Memory at the output size: 8 bytes per vertex per complex half-spectrum plus the two
// float planes: about 1.2 GB at 10000 x 10000 and 4.8 GB at 20000 x 20000.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "factz/field.hpp"
#include "factz/status.hpp"

namespace factz::eval {

struct TurbulenceSpec {
  int64_t nx = 512, ny = 512;  ///< output grid (x fastest)
  uint64_t seed = 1;
  /// Simulation grid (even, >= 16); 0: min(1024, max(nx, ny) rounded up to even).
  int64_t grid = 0;
  /// Peak wavenumber of the initial spectrum; 0: grid / 16.
  double peak = 0;
  double turnovers = 1.0;  ///< simulated time in eddy turnover times (0: the initial field)
  /// Kinematic viscosity; 0: grid Reynolds number urms dx / nu = 4.
  double nu = 0;
};

struct TurbulenceInfo {
  int64_t grid = 0, steps = 0;
  double peak = 0, nu = 0, time = 0;
};

/// Progress callback (step counts); may be empty.
using TurbulenceProgress = std::function<void(const std::string&)>;

/// The velocity field of `spec`. invalid_argument for sizes below 2 x 2 or bad settings;
/// internal when FFTW fails or the run blows up (non-finite values).
Result<VectorField2D> decaying_turbulence(const TurbulenceSpec& spec, TurbulenceInfo* info = nullptr,
                                          const TurbulenceProgress& progress = {});

}  // namespace factz::eval
