#include "turbulence.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <numbers>
#include <vector>

namespace factz::eval {
namespace {

using Cx = std::complex<float>;

// fftwf_malloc'd buffer (aligned, so one plan serves every buffer of its shape).
template <class T>
struct FftwBuffer {
  explicit FftwBuffer(size_t n) : n_(n), p_(static_cast<T*>(fftwf_malloc(sizeof(T) * std::max<size_t>(n, 1)))) {}
  ~FftwBuffer() { fftwf_free(p_); }
  FftwBuffer(const FftwBuffer&) = delete;
  FftwBuffer& operator=(const FftwBuffer&) = delete;
  T* data() { return p_; }
  fftwf_complex* fc() { return reinterpret_cast<fftwf_complex*>(p_); }
  T& operator[](size_t k) { return p_[k]; }
  size_t size() const { return n_; }
  bool ok() const { return p_ != nullptr; }
  size_t n_;
  T* p_;
};

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Integer wavenumber of row r of an n-point transform (0 for the Nyquist row).
int64_t wavenumber(int64_t r, int64_t n) {
  if (2 * r == n) return 0;
  return 2 * r < n ? r : r - n;
}

// The simulation on the M x M grid: half-spectra of M rows by H = M/2 + 1 columns,
// holding true Fourier coefficients (the forward sums divided by M^2).
class Simulation {
 public:
  explicit Simulation(int64_t m)
      : m_(m), h_(m / 2 + 1), cn_(size_t(m * h_)), rn_(size_t(m * m)),
        spec_(cn_), real_(rn_), u_(rn_), v_(rn_), wx_(rn_), wy_(rn_) {
    forward_ = fftwf_plan_dft_r2c_2d(int(m), int(m), real_.data(), spec_.fc(), FFTW_ESTIMATE);
    inverse_ = fftwf_plan_dft_c2r_2d(int(m), int(m), spec_.fc(), real_.data(), FFTW_ESTIMATE);
  }
  ~Simulation() {
    if (forward_) fftwf_destroy_plan(forward_);
    if (inverse_) fftwf_destroy_plan(inverse_);
  }
  bool ok() const { return forward_ && inverse_; }
  int64_t m() const { return m_; }
  int64_t h() const { return h_; }
  size_t cn() const { return cn_; }

  // real field -> true coefficients in `out`.
  void to_spectrum(float* real, Cx* out) {
    fftwf_execute_dft_r2c(forward_, real, reinterpret_cast<fftwf_complex*>(out));
    const float scale = 1.0f / float(m_ * m_);
    for (size_t k = 0; k < cn_; ++k) out[k] *= scale;
    zero_nyquist(out);
  }
  // coefficients (copied: c2r destroys its input) -> real field.
  void to_real(const Cx* coeff, float* out) {
    std::copy(coeff, coeff + cn_, reinterpret_cast<Cx*>(spec_.data()));
    fftwf_execute_dft_c2r(inverse_, spec_.fc(), out);
  }
  void zero_nyquist(Cx* c) const {
    for (int64_t r = 0; r < m_; ++r) c[size_t(r * h_ + h_ - 1)] = 0;
    for (int64_t q = 0; q < h_; ++q) c[size_t((m_ / 2) * h_ + q)] = 0;
  }
  template <class F>
  void each_mode(F&& f) const {  // f(index, kx, ky)
    for (int64_t r = 0; r < m_; ++r)
      for (int64_t q = 0; q < h_; ++q) f(size_t(r * h_ + q), double(q == h_ - 1 ? 0 : q), double(wavenumber(r, m_)));
  }

  // Velocity (u = dpsi/dy, v = -dpsi/dx) of vorticity w into u_, v_; returns max |u|, |v|.
  double velocity(const std::vector<Cx>& w) {
    std::vector<Cx> a(cn_), b(cn_);
    each_mode([&](size_t i, double kx, double ky) {
      const double k2 = kx * kx + ky * ky;
      const Cx psi = k2 > 0 ? w[i] / float(k2) : Cx(0);
      a[i] = Cx(0, float(ky)) * psi;
      b[i] = Cx(0, float(-kx)) * psi;
    });
    to_real(a.data(), u_.data());
    to_real(b.data(), v_.data());
    double top = 0;
    for (size_t k = 0; k < rn_; ++k) top = std::max({top, double(std::fabs(u_[k])), double(std::fabs(v_[k]))});
    return top;
  }

  // Dealiased advection term -(u . grad w) of w into `out`; returns max speed.
  double advection(const std::vector<Cx>& w, std::vector<Cx>& out) {
    const double top = velocity(w);
    std::vector<Cx> a(cn_), b(cn_);
    each_mode([&](size_t i, double kx, double ky) {
      a[i] = Cx(0, float(kx)) * w[i];
      b[i] = Cx(0, float(ky)) * w[i];
    });
    to_real(a.data(), wx_.data());
    to_real(b.data(), wy_.data());
    for (size_t k = 0; k < rn_; ++k) real_[k] = u_[k] * wx_[k] + v_[k] * wy_[k];
    out.assign(cn_, Cx(0));
    to_spectrum(real_.data(), out.data());
    const double cut = double(m_) / 3.0;  // 2/3 rule
    each_mode([&](size_t i, double kx, double ky) {
      out[i] = (std::fabs(kx) < cut && std::fabs(ky) < cut) ? -out[i] : Cx(0);
    });
    return top;
  }

  float* real() { return real_.data(); }
  float* u() { return u_.data(); }
  float* v() { return v_.data(); }

 private:
  int64_t m_, h_;
  size_t cn_, rn_;
  FftwBuffer<Cx> spec_;
  FftwBuffer<float> real_, u_, v_, wx_, wy_;
  fftwf_plan forward_ = nullptr, inverse_ = nullptr;
};

Status check_spec(const TurbulenceSpec& s) {
  if (s.nx < 2 || s.ny < 2) return invalid_argument("turbulence needs at least 2 x 2 vertices");
  if (s.nx > 200000 || s.ny > 200000) return invalid_argument("turbulence grid too large");
  if (s.grid != 0 && (s.grid < 16 || s.grid % 2 || s.grid > 16384))
    return invalid_argument("simulation grid must be even and in [16, 16384]");
  if (!(std::isfinite(s.peak) && s.peak >= 0)) return invalid_argument("peak must be >= 0");
  if (!(std::isfinite(s.turnovers) && s.turnovers >= 0 && s.turnovers <= 1000))
    return invalid_argument("turnovers must be in [0, 1000]");
  if (!(std::isfinite(s.nu) && s.nu >= 0)) return invalid_argument("viscosity must be >= 0");
  return Status::Ok();
}

}  // namespace

Result<VectorField2D> decaying_turbulence(const TurbulenceSpec& spec, TurbulenceInfo* info,
                                          const TurbulenceProgress& progress) {
  FACTZ_RETURN_IF_ERROR(check_spec(spec));
  const double two_pi = 2.0 * std::numbers::pi;
  int64_t m = spec.grid;
  if (m == 0) m = std::max<int64_t>(16, std::min<int64_t>(1024, (std::max(spec.nx, spec.ny) + 1) / 2 * 2));
  const double k0 = spec.peak > 0 ? spec.peak : double(m) / 16.0;
  const double dx = two_pi / double(m);
  const double nu = spec.nu > 0 ? spec.nu : dx / 4.0;
  Simulation sim(m);
  if (!sim.ok()) return Status(Code::internal, "FFTW could not plan a " + std::to_string(m) + "^2 transform");

  // 1. Initial vorticity: hashed white noise shaped to sqrt(k E(k)), E ~ k^4 exp(-2 (k/k0)^2).
  std::vector<Cx> w(sim.cn());
  float* noise = sim.real();
  for (int64_t k = 0; k < m * m; ++k)
    noise[k] = float(double(splitmix64(spec.seed * 0xD1B54A32D192ED03ull + uint64_t(k)) >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  sim.to_spectrum(noise, w.data());
  sim.each_mode([&](size_t i, double kx, double ky) {
    const double k = std::sqrt(kx * kx + ky * ky);
    const double e = std::pow(k, 4) * std::exp(-2.0 * (k / k0) * (k / k0));
    w[i] *= float(std::sqrt(k * e));
  });
  {  // rms speed 1
    sim.velocity(w);
    double sq = 0;
    for (int64_t k = 0; k < m * m; ++k) sq += double(sim.u()[k]) * sim.u()[k] + double(sim.v()[k]) * sim.v()[k];
    const double urms = std::sqrt(sq / double(m * m));
    if (!(urms > 0)) return Status(Code::internal, "turbulence: zero initial field");
    for (auto& c : w) c /= float(urms);
  }

  // 2. Evolution: integrating-factor Heun steps.
  const double t_end = spec.turnovers * two_pi / k0;
  double t = 0;
  int64_t steps = 0;
  std::vector<Cx> n0, n1, w1(sim.cn());
  std::vector<double> k2(sim.cn());
  sim.each_mode([&](size_t i, double kx, double ky) { k2[i] = kx * kx + ky * ky; });
  while (t < t_end) {
    const double top = sim.advection(w, n0);
    if (!std::isfinite(top) || top > 1e6) return Status(Code::internal, "turbulence: the simulation blew up");
    double dt = 0.4 * dx / std::max(top, 1e-12);
    if (t + dt > t_end) dt = t_end - t;
    for (size_t i = 0; i < w.size(); ++i) w1[i] = float(std::exp(-nu * k2[i] * dt)) * (w[i] + float(dt) * n0[i]);
    sim.advection(w1, n1);
    for (size_t i = 0; i < w.size(); ++i) {
      const float e = float(std::exp(-nu * k2[i] * dt));
      w[i] = e * (w[i] + float(0.5 * dt) * n0[i]) + float(0.5 * dt) * n1[i];
    }
    t += dt;
    ++steps;
    if (progress && steps % 100 == 0)
      progress("turbulence: step " + std::to_string(steps) + ", t = " + std::to_string(t) + " of " + std::to_string(t_end));
  }
  if (info) *info = TurbulenceInfo{m, steps, k0, nu, t};

  // 3. Band-limited interpolation of u and v onto the output grid.
  const int64_t nx = spec.nx, ny = spec.ny, oh = nx / 2 + 1;
  VectorField2D f{nx, ny, std::vector<float>(size_t(nx * ny)), std::vector<float>(size_t(nx * ny))};
  FftwBuffer<Cx> big(size_t(ny * oh));
  FftwBuffer<float> plane(size_t(nx * ny));
  if (!big.ok() || !plane.ok()) return Status(Code::internal, "turbulence: out of memory for the output grid");
  fftwf_plan out_plan = fftwf_plan_dft_c2r_2d(int(ny), int(nx), big.fc(), plane.data(), FFTW_ESTIMATE);
  if (out_plan == nullptr) return Status(Code::internal, "FFTW could not plan the output transform");
  for (int c = 0; c < 2; ++c) {
    std::fill(big.data(), big.data() + big.size(), Cx(0));
    for (int64_t r = 0; r < ny; ++r) {
      if (2 * r == ny) continue;
      const int64_t ky = wavenumber(r, ny);
      if (2 * std::abs(ky) >= m) continue;
      const int64_t sr = ky >= 0 ? ky : ky + m;
      for (int64_t kx = 0; kx < oh && 2 * kx < m; ++kx) {
        if (2 * kx == nx) continue;
        const Cx wc = w[size_t(sr * sim.h() + kx)];
        const double kk = double(kx * kx + ky * ky);
        const Cx psi = kk > 0 ? wc / float(kk) : Cx(0);
        big[size_t(r * oh + kx)] = c == 0 ? Cx(0, float(ky)) * psi : Cx(0, float(-kx)) * psi;
      }
    }
    fftwf_execute_dft_c2r(out_plan, big.fc(), plane.data());
    std::vector<float>& dst = c == 0 ? f.u : f.v;
    std::copy(plane.data(), plane.data() + plane.size(), dst.begin());
  }
  fftwf_destroy_plan(out_plan);
  for (size_t k = 0; k < f.u.size(); ++k)
    if (!std::isfinite(f.u[k]) || !std::isfinite(f.v[k])) return Status(Code::internal, "turbulence: non-finite output");
  return f;
}

}  // namespace factz::eval
