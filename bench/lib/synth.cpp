#include "synth.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <numbers>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "fft.hpp"

namespace factz::synth {
namespace {

// Salts keep the generators' random streams apart when they share a seed.
constexpr uint64_t kTurbulenceSalt = 0x7475726275ull;
constexpr uint64_t kVorticesSalt = 0x766f72746963ull;
constexpr uint64_t kNoiseSalt = 0x6e6f697365ull;
constexpr uint64_t kZeroRegionSalt = 0x6c616e64ull;

constexpr double kTwoPi = 2.0 * std::numbers::pi;

// splitmix64's finaliser: a bijective 64-bit mixer.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Counter-based hash of (seed, salt, a, b): the random value at one position or mode,
// independent of evaluation order.
uint64_t hash(uint64_t seed, uint64_t salt, uint64_t a, uint64_t b) {
  uint64_t h = mix64(seed ^ mix64(salt));
  h = mix64(h + 0x9e3779b97f4a7c15ull * (a + 1));
  return mix64(h ^ (0xd1b54a32d192ed03ull * (b + 1)));
}

// Uniform in the open interval (0, 1), 53 random bits.
double unit_open(uint64_t h) { return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53; }

// A sequential splitmix64 stream for the few parameters drawn in a fixed order.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t salt) : state_(mix64(seed ^ mix64(salt))) {}
  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    return mix64(state_);
  }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit_open(next()); }

 private:
  uint64_t state_;
};

// Small grids stay serial: a parallel region costs more than it saves there. The
// results do not depend on this choice.
bool parallel_worth(int64_t vertices) { return vertices >= (int64_t{1} << 15); }

// The first touch of fresh memory costs a page fault per 4 KiB page, which dominated
// generation time on the virtual machines we measured (about 6 s per GB); transparent
// huge pages cut the faults 512-fold. A hint only: no result depends on it.
void advise_huge_pages(const void* data, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHugePage = uintptr_t{1} << 21;
  const auto address = reinterpret_cast<uintptr_t>(data);
  const uintptr_t begin = (address + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (address + bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

template <class T>
void zeroed_plane(std::vector<T>& plane, size_t n) {
  plane.reserve(n);
  advise_huge_pages(plane.data(), n * sizeof(T));
  plane.resize(n);
}

VectorField2D make_field(int64_t nx, int64_t ny) {
  VectorField2D f;
  f.nx = std::max<int64_t>(nx, 0);
  f.ny = std::max<int64_t>(ny, 0);
  zeroed_plane(f.u, static_cast<size_t>(f.size()));
  zeroed_plane(f.v, static_cast<size_t>(f.size()));
  return f;
}

// A large uninitialised complex buffer (std::complex is an implicit-lifetime type, so
// raw storage from operator new holds its objects); callers write before they read.
struct ComplexBuffer {
  explicit ComplexBuffer(size_t n)
      : data(static_cast<Complex*>(::operator new(n * sizeof(Complex)))) {
    advise_huge_pages(data, n * sizeof(Complex));
  }
  ~ComplexBuffer() { ::operator delete(data); }
  ComplexBuffer(const ComplexBuffer&) = delete;
  ComplexBuffer& operator=(const ComplexBuffer&) = delete;
  Complex& operator[](size_t i) { return data[i]; }
  Complex* data;
};

// DFT index -> signed frequency in (-n/2, n/2].
int64_t signed_frequency(int64_t index, int64_t n) { return 2 * index <= n ? index : index - n; }

// ---- turbulence --------------------------------------------------------------------------

// A complex Gaussian (independent N(0, 1) parts) from a hash, by Marsaglia's polar
// method; the rejection loop runs 1.27 times on average.
Complex gaussian_pair(uint64_t h) {
  for (uint64_t attempt = 0;; ++attempt) {
    const uint64_t r = mix64(h + 0x9e3779b97f4a7c15ull * attempt);
    const double x = (static_cast<double>(r >> 32) + 0.5) * 0x1.0p-31 - 1.0;
    const double y = (static_cast<double>(r & 0xffffffffull) + 0.5) * 0x1.0p-31 - 1.0;
    const double s = x * x + y * y;  // > 0: x, y are never 0
    if (s < 1.0) {
      const double factor = std::sqrt(-2.0 * std::log(s) / s);
      return {x * factor, y * factor};
    }
  }
}

struct TurbulenceSpectrum {
  int64_t gx, gy;  // periodic synthesis grid
  double k0;       // spectral peak, cycles per cell
  uint64_t seed;

  // Stream-function coefficient psi_hat at signed frequency (kx, ky) != 0.
  Complex psi(int64_t kx, int64_t ky) const {
    const double fx = static_cast<double>(kx) / static_cast<double>(gx);
    const double fy = static_cast<double>(ky) / static_cast<double>(gy);
    const double k = std::sqrt(fx * fx + fy * fy);
    const double q = k / k0;
    const double q2 = q * q;
    const double q4 = q2 * q2;
    const double energy = q4 / (1.0 + q4 * q2 * q);
    // Modes in a shell of radius k number ~k, and each carries energy k^2 |psi|^2.
    const double amplitude = std::sqrt(energy / (k * k * k));
    const uint64_t h =
        hash(seed, kTurbulenceSalt, static_cast<uint64_t>(kx), static_cast<uint64_t>(ky));
    return amplitude * gaussian_pair(h);
  }
};

// The spectrum of w = u + i v on rows ky = j >= 0 and -ky (gx values each; the same
// row when ky == -ky). With u = dpsi/dy and v = -dpsi/dx, w_hat(k) = 2 pi (fx + i fy)
// psi_hat(k) (2 pi dropped: the field is normalised). psi_hat(-k) = conj(psi_hat(k))
// keeps psi, u and v real, so each canonical mode (ky > 0, or ky == 0 and kx > 0) sets
// k and -k. The mean and the Nyquist lines (whose derivative is ambiguous) stay zero.
void fill_row_pair(const TurbulenceSpectrum& spectrum, int64_t j, Complex* row,
                   Complex* partner_row) {
  const int64_t gx = spectrum.gx;
  const int64_t gy = spectrum.gy;
  std::fill(row, row + gx, Complex());
  std::fill(partner_row, partner_row + gx, Complex());
  const int64_t ky = j;
  if (2 * ky == gy) return;
  const double fy = static_cast<double>(ky) / static_cast<double>(gy);
  for (int64_t i = 0; i < gx; ++i) {
    const int64_t kx = signed_frequency(i, gx);
    if (2 * std::abs(kx) == gx || (ky == 0 && kx <= 0)) continue;
    const double fx = static_cast<double>(kx) / static_cast<double>(gx);
    const Complex psi = spectrum.psi(kx, ky);
    row[i] = Complex(fx * psi.real() - fy * psi.imag(), fx * psi.imag() + fy * psi.real());
    // (-fx - i fy) conj(psi), written out.
    partner_row[(gx - i) % gx] =
        Complex(-fx * psi.real() - fy * psi.imag(), fx * psi.imag() - fy * psi.real());
  }
}

}  // namespace

namespace {

/// turbulence into a field of value type T: the spectrum and transforms are double; the
/// last step rounds to float for VectorField2D and keeps the doubles for VectorField2D64.
template <class Field>
Field turbulence_any(int64_t nx, int64_t ny, uint64_t seed, double peak_cycles) {
  using T = typename decltype(Field::u)::value_type;
  Field f;  // as make_field, for either value type
  f.nx = std::max<int64_t>(nx, 0);
  f.ny = std::max<int64_t>(ny, 0);
  zeroed_plane(f.u, static_cast<size_t>(f.size()));
  zeroed_plane(f.v, static_cast<size_t>(f.size()));
  if (f.size() == 0) return f;
  nx = f.nx;
  ny = f.ny;
  const int64_t gx = fft_good_size(nx);
  const int64_t gy = fft_good_size(ny);
  if (!(peak_cycles > 0.0)) peak_cycles = kTurbulencePeakCycles;
  const TurbulenceSpectrum spectrum{gx, gy, peak_cycles / static_cast<double>(std::max(nx, ny)),
                                    seed};
  // w[j * gx + i]: after the row pass the x-transformed spectrum, after the column pass
  // u + i v. Every row, then every column, is computed independently, so any thread
  // schedule gives the same bytes.
  ComplexBuffer w(static_cast<size_t>(gx * gy));

  // Rows: ky = j >= 0 together with its partner row -ky, built in scratch and
  // transformed straight into w (which is how w is first written).
  const FftPlan plan_x(gx, FftDirection::inverse);
#pragma omp parallel if (parallel_worth(gx * gy))
  {
    std::vector<Complex> row(static_cast<size_t>(gx));
    std::vector<Complex> partner_row(static_cast<size_t>(gx));
#pragma omp for schedule(static)
    for (int64_t j = 0; j <= gy / 2; ++j) {
      const int64_t partner_j = (gy - j) % gy;
      Complex* partner = partner_j == j ? row.data() : partner_row.data();
      fill_row_pair(spectrum, j, row.data(), partner);
      plan_x.execute(row.data(), w.data + j * gx);
      if (partner_j != j) plan_x.execute(partner, w.data + partner_j * gx);
    }
  }

  // Columns: only the nx kept ones, gathered kBlock at a time for cache locality; only
  // the ny kept rows are written back.
  constexpr int64_t kBlock = 8;
  const FftPlan plan_y(gy, FftDirection::inverse);
#pragma omp parallel if (parallel_worth(gx * gy))
  {
    std::vector<Complex> in(static_cast<size_t>(kBlock * gy));
    std::vector<Complex> out(static_cast<size_t>(kBlock * gy));
#pragma omp for schedule(dynamic)
    for (int64_t x0 = 0; x0 < nx; x0 += kBlock) {
      const int64_t width = std::min(kBlock, nx - x0);
      for (int64_t j = 0; j < gy; ++j) {
        const Complex* source = w.data + j * gx + x0;
        for (int64_t b = 0; b < width; ++b) in[static_cast<size_t>(b * gy + j)] = source[b];
      }
      for (int64_t b = 0; b < width; ++b) plan_y.execute(in.data() + b * gy, out.data() + b * gy);
      for (int64_t j = 0; j < ny; ++j) {
        Complex* target = w.data + j * gx + x0;
        for (int64_t b = 0; b < width; ++b) target[b] = out[static_cast<size_t>(b * gy + j)];
      }
    }
  }

  // Unit RMS speed over the kept vertices; row sums are added in row order.
  std::vector<double> row_energy(static_cast<size_t>(ny));
#pragma omp parallel for schedule(static) if (parallel_worth(f.size()))
  for (int64_t j = 0; j < ny; ++j) {
    double sum = 0.0;
    for (int64_t i = 0; i < nx; ++i) sum += std::norm(w[static_cast<size_t>(j * gx + i)]);
    row_energy[static_cast<size_t>(j)] = sum;
  }
  double energy = 0.0;
  for (double e : row_energy) energy += e;
  const double rms = std::sqrt(energy / static_cast<double>(f.size()));
  const double scale = rms > 0.0 ? 1.0 / rms : 0.0;
#pragma omp parallel for schedule(static) if (parallel_worth(f.size()))
  for (int64_t j = 0; j < ny; ++j) {
    for (int64_t i = 0; i < nx; ++i) {
      const Complex value = w[static_cast<size_t>(j * gx + i)];
      f.u[static_cast<size_t>(j * nx + i)] = static_cast<T>(value.real() * scale);
      f.v[static_cast<size_t>(j * nx + i)] = static_cast<T>(value.imag() * scale);
    }
  }
  return f;
}

}  // namespace

VectorField2D turbulence(int64_t nx, int64_t ny, uint64_t seed, double peak_cycles) {
  return turbulence_any<VectorField2D>(nx, ny, seed, peak_cycles);
}

VectorField2D64 turbulence64(int64_t nx, int64_t ny, uint64_t seed, double peak_cycles) {
  return turbulence_any<VectorField2D64>(nx, ny, seed, peak_cycles);
}

// ---- vortices ----------------------------------------------------------------------------

namespace {

struct Vortex {
  double cx, cy;           // centre
  double s;                // core radius
  double a;                // stream-function amplitude (sign = rotation sense)
  int64_t x_begin, x_end;  // columns within the cutoff radius
  size_t table;            // offset of exp(-(x - cx)^2 / (2 s^2)), x in [x_begin, x_end)
};

constexpr double kVortexCutoff = 7.0;  // in core radii

}  // namespace

VectorField2D vortices(int64_t nx, int64_t ny, uint64_t seed, int count) {
  VectorField2D f = make_field(nx, ny);
  if (f.size() == 0) return f;
  nx = f.nx;
  ny = f.ny;
  count = std::max(count, 0);
  Rng rng(seed, kVorticesSalt);
  const double flow_speed = rng.uniform(0.0, 0.5);
  const double flow_angle = rng.uniform(0.0, kTwoPi);
  const double flow_u = flow_speed * std::cos(flow_angle);
  const double flow_v = flow_speed * std::sin(flow_angle);

  // exp(-r^2 / (2 s^2)) = exp(-dx^2 / (2 s^2)) exp(-dy^2 / (2 s^2)): the x factor is
  // tabulated once per vortex, so a vertex costs a few multiplications per vortex.
  std::vector<Vortex> list(static_cast<size_t>(count));
  std::vector<double> x_factor;
  const double spacing =
      count > 0 ? std::sqrt(static_cast<double>(f.size()) / static_cast<double>(count)) : 0.0;
  for (Vortex& vortex : list) {
    vortex.cx = rng.uniform(0.0, static_cast<double>(nx - 1));
    vortex.cy = rng.uniform(0.0, static_cast<double>(ny - 1));
    vortex.s = std::max(1.0, spacing * rng.uniform(0.15, 0.4));
    const double peak_speed = rng.uniform(0.5, 1.5);
    const double sign = (rng.next() >> 63) != 0 ? 1.0 : -1.0;
    vortex.a = sign * peak_speed * vortex.s * std::exp(0.5);
    const double radius = kVortexCutoff * vortex.s;
    vortex.x_begin = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(vortex.cx - radius)));
    vortex.x_end = std::min<int64_t>(nx, static_cast<int64_t>(std::floor(vortex.cx + radius)) + 1);
    vortex.table = x_factor.size();
    const double inv_2s2 = 0.5 / (vortex.s * vortex.s);
    for (int64_t x = vortex.x_begin; x < vortex.x_end; ++x) {
      const double dx = static_cast<double>(x) - vortex.cx;
      x_factor.push_back(std::exp(-dx * dx * inv_2s2));
    }
  }

#pragma omp parallel if (parallel_worth(f.size()))
  {
    std::vector<double> row_u(static_cast<size_t>(nx));
    std::vector<double> row_v(static_cast<size_t>(nx));
#pragma omp for schedule(dynamic)
    for (int64_t y = 0; y < ny; ++y) {
      std::fill(row_u.begin(), row_u.end(), flow_u);
      std::fill(row_v.begin(), row_v.end(), flow_v);
      const double yd = static_cast<double>(y);
      for (const Vortex& vortex : list) {
        const double radius = kVortexCutoff * vortex.s;
        const double dy = yd - vortex.cy;
        if (std::abs(dy) >= radius) continue;
        const double half_width = std::sqrt(radius * radius - dy * dy);
        const int64_t x_begin =
            std::max(vortex.x_begin, static_cast<int64_t>(std::ceil(vortex.cx - half_width)));
        const int64_t x_end =
            std::min(vortex.x_end, static_cast<int64_t>(std::floor(vortex.cx + half_width)) + 1);
        const double inv_s2 = 1.0 / (vortex.s * vortex.s);
        // psi = a exp(-r^2 / (2 s^2)): u = dpsi/dy = -g dy, v = -dpsi/dx = g dx with
        // g = a / s^2 exp(-r^2 / (2 s^2)).
        const double row_factor = vortex.a * inv_s2 * std::exp(-0.5 * dy * dy * inv_s2);
        const double* table = x_factor.data() + vortex.table - vortex.x_begin;
        for (int64_t x = x_begin; x < x_end; ++x) {
          const double g = row_factor * table[x];
          row_u[static_cast<size_t>(x)] -= g * dy;
          row_v[static_cast<size_t>(x)] += g * (static_cast<double>(x) - vortex.cx);
        }
      }
      for (int64_t x = 0; x < nx; ++x) {
        f.u[static_cast<size_t>(y * nx + x)] = static_cast<float>(row_u[static_cast<size_t>(x)]);
        f.v[static_cast<size_t>(y * nx + x)] = static_cast<float>(row_v[static_cast<size_t>(x)]);
      }
    }
  }
  return f;
}

// ---- noise and linear --------------------------------------------------------------------

VectorField2D noise(int64_t nx, int64_t ny, uint64_t seed) {
  VectorField2D f = make_field(nx, ny);
  const int64_t n = f.size();
#pragma omp parallel for schedule(static) if (parallel_worth(n))
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t h = hash(seed, kNoiseSalt, static_cast<uint64_t>(i), 0);
    // Two 24-bit integers k -> (2k + 1 - 2^24) / 2^24: odd numerators below 2^24 are exact
    // in float.
    const auto ku = static_cast<int64_t>(h >> 40);
    const auto kv = static_cast<int64_t>((h >> 16) & 0xffffffull);
    f.u[static_cast<size_t>(i)] = static_cast<float>(2 * ku + 1 - (int64_t{1} << 24)) * 0x1.0p-24f;
    f.v[static_cast<size_t>(i)] = static_cast<float>(2 * kv + 1 - (int64_t{1} << 24)) * 0x1.0p-24f;
  }
  return f;
}

VectorField2D linear(int64_t nx, int64_t ny, double a, double b, double c, double d, double x0,
                     double y0) {
  VectorField2D f = make_field(nx, ny);
  nx = f.nx;
  ny = f.ny;
#pragma omp parallel for schedule(static) if (parallel_worth(f.size()))
  for (int64_t y = 0; y < ny; ++y) {
    const double dy = static_cast<double>(y) - y0;
    for (int64_t x = 0; x < nx; ++x) {
      const double dx = static_cast<double>(x) - x0;
      f.u[static_cast<size_t>(y * nx + x)] = static_cast<float>(a * dx + b * dy);
      f.v[static_cast<size_t>(y * nx + x)] = static_cast<float>(c * dx + d * dy);
    }
  }
  return f;
}

// ---- zero region -------------------------------------------------------------------------

namespace {

constexpr int kLandWaves = 16;
constexpr int64_t kLandBins = 65536;

// A smooth random scalar field, sum of plane waves a_m cos(2 pi k_m . p / L + phi_m),
// evaluated separably: cos(X + Y) = cos X cos Y - sin X sin Y with per-column tables.
class LandField {
 public:
  LandField(int64_t nx, int64_t ny, uint64_t seed) : nx_(nx) {
    Rng rng(seed, kZeroRegionSalt);
    bound_ = 0.0;
    for (Wave& wave : waves_) {
      const double k = rng.uniform(1.0, 4.0);  // cycles across max(nx, ny)
      const double angle = rng.uniform(0.0, kTwoPi);
      wave.kx = k * std::cos(angle);
      wave.ky = k * std::sin(angle);
      wave.phase = rng.uniform(0.0, kTwoPi);
      wave.amplitude = 1.0 / k;
      bound_ += wave.amplitude;
    }
    // Angles are 2 pi k . p / L with the domain scale L = max(nx, ny).
    scale_ = kTwoPi / static_cast<double>(std::max(nx, ny));
    cos_x_.resize(static_cast<size_t>(kLandWaves * nx));
    sin_x_.resize(static_cast<size_t>(kLandWaves * nx));
    for (int m = 0; m < kLandWaves; ++m) {
      for (int64_t x = 0; x < nx_; ++x) {
        const double angle = scale_ * waves_[static_cast<size_t>(m)].kx * static_cast<double>(x);
        cos_x_[static_cast<size_t>(m * nx_ + x)] = std::cos(angle);
        sin_x_[static_cast<size_t>(m * nx_ + x)] = std::sin(angle);
      }
    }
  }

  // Values of row y into out[0, nx).
  void row(int64_t y, double* out) const {
    std::fill(out, out + nx_, 0.0);
    for (int m = 0; m < kLandWaves; ++m) {
      const Wave& wave = waves_[static_cast<size_t>(m)];
      const double angle = scale_ * wave.ky * static_cast<double>(y) + wave.phase;
      const double cy = wave.amplitude * std::cos(angle);
      const double sy = wave.amplitude * std::sin(angle);
      const double* cx = cos_x_.data() + m * nx_;
      const double* sx = sin_x_.data() + m * nx_;
      for (int64_t x = 0; x < nx_; ++x) out[x] += cx[x] * cy - sx[x] * sy;
    }
  }

  // Histogram bin of a value, in [0, kLandBins).
  int64_t bin(double value) const {
    const auto b =
        static_cast<int64_t>((value + bound_) / (2.0 * bound_) * static_cast<double>(kLandBins));
    return std::clamp<int64_t>(b, 0, kLandBins - 1);
  }

 private:
  struct Wave {
    double kx, ky, phase, amplitude;
  };
  std::array<Wave, kLandWaves> waves_{};
  double bound_ = 0.0;  // >= max |value|
  double scale_ = 0.0;
  int64_t nx_ = 0;
  std::vector<double> cos_x_, sin_x_;
};

}  // namespace

void add_zero_region(VectorField2D& f, uint64_t seed, double fraction) {
  const int64_t nx = f.nx;
  const int64_t ny = f.ny;
  if (f.size() <= 0 || !(fraction > 0.0)) return;
  if (fraction >= 1.0) {
    std::fill(f.u.begin(), f.u.end(), 0.0f);
    std::fill(f.v.begin(), f.v.end(), 0.0f);
    return;
  }
  const LandField land(nx, ny, seed);

  // Pass 1: histogram of bins (integer counts, so the merge order does not matter).
  std::vector<int64_t> histogram(static_cast<size_t>(kLandBins), 0);
#pragma omp parallel if (parallel_worth(f.size()))
  {
    std::vector<int64_t> local(static_cast<size_t>(kLandBins), 0);
    std::vector<double> values(static_cast<size_t>(nx));
#pragma omp for schedule(static)
    for (int64_t y = 0; y < ny; ++y) {
      land.row(y, values.data());
      for (double value : values) ++local[static_cast<size_t>(land.bin(value))];
    }
#pragma omp critical
    for (int64_t b = 0; b < kLandBins; ++b)
      histogram[static_cast<size_t>(b)] += local[static_cast<size_t>(b)];
  }

  // The cut bin: vertices in bins below it become land. Pick the bin boundary whose
  // cumulative count is closest to the target.
  const double target = fraction * static_cast<double>(f.size());
  int64_t cut = 0;
  int64_t below = 0;
  while (cut < kLandBins) {
    const int64_t next = below + histogram[static_cast<size_t>(cut)];
    if (static_cast<double>(next) > target) {
      if (static_cast<double>(next) - target < target - static_cast<double>(below)) ++cut;
      break;
    }
    below = next;
    ++cut;
  }

  // Pass 2: the same values (same code, same rounding) decide land by the same bins.
#pragma omp parallel if (parallel_worth(f.size()))
  {
    std::vector<double> values(static_cast<size_t>(nx));
#pragma omp for schedule(static)
    for (int64_t y = 0; y < ny; ++y) {
      land.row(y, values.data());
      for (int64_t x = 0; x < nx; ++x) {
        if (land.bin(values[static_cast<size_t>(x)]) < cut) {
          f.u[static_cast<size_t>(y * nx + x)] = 0.0f;
          f.v[static_cast<size_t>(y * nx + x)] = 0.0f;
        }
      }
    }
  }
}

}  // namespace factz::synth
