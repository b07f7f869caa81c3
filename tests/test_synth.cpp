// Synthetic fields (bench/lib/synth) and the FFT behind them.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numbers>
#include <vector>

#include "fft.hpp"
#include "synth.hpp"

namespace factz::synth {
namespace {

using Generator = std::function<VectorField2D(int64_t, int64_t, uint64_t)>;

VectorField2D turbulence_default(int64_t nx, int64_t ny, uint64_t seed) {
  return turbulence(nx, ny, seed);
}
VectorField2D vortices32(int64_t nx, int64_t ny, uint64_t seed) {
  return vortices(nx, ny, seed, 32);
}
VectorField2D turbulence_land(int64_t nx, int64_t ny, uint64_t seed) {
  VectorField2D f = turbulence(nx, ny, seed);
  add_zero_region(f, seed, 0.3);
  return f;
}

const std::vector<std::pair<const char*, Generator>>& generators() {
  static const std::vector<std::pair<const char*, Generator>> list = {
      {"turbulence", turbulence_default},
      {"vortices", vortices32},
      {"noise", noise},
      {"turbulence_land", turbulence_land},
  };
  return list;
}

bool same_bytes(const VectorField2D& a, const VectorField2D& b) {
  return a.nx == b.nx && a.ny == b.ny && a.u.size() == b.u.size() && a.v.size() == b.v.size() &&
         std::memcmp(a.u.data(), b.u.data(), a.u.size() * sizeof(float)) == 0 &&
         std::memcmp(a.v.data(), b.v.data(), a.v.size() * sizeof(float)) == 0;
}

bool all_finite(const VectorField2D& f) {
  for (size_t i = 0; i < f.u.size(); ++i) {
    if (!std::isfinite(f.u[i]) || !std::isfinite(f.v[i])) return false;
  }
  return true;
}

// Triangles (each cell split along its x = y diagonal) whose piecewise-linear
// interpolant has a zero strictly inside. A plain test helper, not the library's
// Simulation-of-Simplicity predicate; degenerate cases are simply not counted.
int64_t count_critical_triangles(const VectorField2D& f) {
  auto cross = [&](int64_t a, int64_t b) {
    return static_cast<double>(f.u[a]) * f.v[b] - static_cast<double>(f.v[a]) * f.u[b];
  };
  int64_t count = 0;
  for (int64_t y = 0; y + 1 < f.ny; ++y) {
    for (int64_t x = 0; x + 1 < f.nx; ++x) {
      const int64_t i00 = y * f.nx + x;
      const int64_t i10 = i00 + 1;
      const int64_t i01 = i00 + f.nx;
      const int64_t i11 = i01 + 1;
      for (const auto& t :
           {std::array<int64_t, 3>{i00, i10, i11}, std::array<int64_t, 3>{i00, i11, i01}}) {
        const double c0 = cross(t[0], t[1]);
        const double c1 = cross(t[1], t[2]);
        const double c2 = cross(t[2], t[0]);
        if ((c0 > 0 && c1 > 0 && c2 > 0) || (c0 < 0 && c1 < 0 && c2 < 0)) ++count;
      }
    }
  }
  return count;
}

struct Moments {
  double mean_u = 0, mean_v = 0, var_u = 0, var_v = 0, mean_speed2 = 0;
};

Moments moments(const VectorField2D& f) {
  Moments m;
  const auto n = static_cast<double>(f.size());
  for (size_t i = 0; i < f.u.size(); ++i) {
    m.mean_u += f.u[i];
    m.mean_v += f.v[i];
    m.mean_speed2 += static_cast<double>(f.u[i]) * f.u[i] + static_cast<double>(f.v[i]) * f.v[i];
  }
  m.mean_u /= n;
  m.mean_v /= n;
  m.mean_speed2 /= n;
  for (size_t i = 0; i < f.u.size(); ++i) {
    m.var_u += (f.u[i] - m.mean_u) * (f.u[i] - m.mean_u);
    m.var_v += (f.v[i] - m.mean_v) * (f.v[i] - m.mean_v);
  }
  m.var_u /= n;
  m.var_v /= n;
  return m;
}

// ---- FFT ---------------------------------------------------------------------------------

std::vector<Complex> naive_dft(const std::vector<Complex>& x, double sign) {
  const size_t n = x.size();
  std::vector<Complex> out(n);
  for (size_t k = 0; k < n; ++k) {
    Complex acc = 0;
    for (size_t j = 0; j < n; ++j) {
      const double angle =
          sign * 2.0 * std::numbers::pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
      acc += x[j] * Complex(std::cos(angle), std::sin(angle));
    }
    out[k] = acc;
  }
  return out;
}

TEST(Fft, MatchesNaiveDftForEverySizeUpTo64AndSomeComposites) {
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= 64; ++n) sizes.push_back(n);
  for (int64_t n : {77, 96, 100, 121, 125, 128, 243, 250, 256, 360}) sizes.push_back(n);
  for (int64_t n : sizes) {
    std::vector<Complex> x(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j)
      x[static_cast<size_t>(j)] = {std::sin(0.7 * j + 0.1), std::cos(1.3 * j * j)};
    for (auto direction : {FftDirection::forward, FftDirection::inverse}) {
      const double sign = direction == FftDirection::forward ? -1.0 : 1.0;
      const std::vector<Complex> expected = naive_dft(x, sign);
      std::vector<Complex> got(static_cast<size_t>(n));
      FftPlan(n, direction).execute(x.data(), got.data());
      for (int64_t k = 0; k < n; ++k) {
        EXPECT_NEAR(std::abs(got[static_cast<size_t>(k)] - expected[static_cast<size_t>(k)]), 0.0,
                    1e-10 * n)
            << "n=" << n << " k=" << k;
      }
    }
  }
}

TEST(Fft, InverseOfForwardIsNTimesTheInput) {
  const int64_t n = 20000;  // 2^5 5^4, the size of the largest benchmark grid
  std::vector<Complex> x(static_cast<size_t>(n)), spectrum(x.size()), back(x.size());
  for (int64_t j = 0; j < n; ++j)
    x[static_cast<size_t>(j)] = {std::sin(0.01 * j), std::cos(3.7 * j)};
  FftPlan(n, FftDirection::forward).execute(x.data(), spectrum.data());
  FftPlan(n, FftDirection::inverse).execute(spectrum.data(), back.data());
  double worst = 0;
  for (size_t j = 0; j < x.size(); ++j)
    worst = std::max(worst, std::abs(back[j] / static_cast<double>(n) - x[j]));
  EXPECT_LT(worst, 1e-12);
}

TEST(Fft, GoodSizeIsTheNextNumberWithFactors235) {
  EXPECT_EQ(fft_good_size(-3), 1);
  EXPECT_EQ(fft_good_size(1), 1);
  EXPECT_EQ(fft_good_size(7), 8);
  EXPECT_EQ(fft_good_size(17), 18);
  EXPECT_EQ(fft_good_size(33), 36);
  EXPECT_EQ(fft_good_size(512), 512);
  EXPECT_EQ(fft_good_size(4097), 4320);
  EXPECT_EQ(fft_good_size(20000), 20000);
}

// ---- all generators ----------------------------------------------------------------------

TEST(Synth, SameSeedGivesIdenticalBytesAndOtherSeedsDiffer) {
  for (const auto& [name, make] : generators()) {
    const VectorField2D a = make(67, 45, 7);
    const VectorField2D b = make(67, 45, 7);
    const VectorField2D c = make(67, 45, 8);
    EXPECT_TRUE(same_bytes(a, b)) << name;
    EXPECT_FALSE(same_bytes(a, c)) << name;
  }
}

TEST(Synth, BytesDoNotDependOnTheThreadCount) {
  const int saved = omp_get_max_threads();
  for (const auto& [name, make] : generators()) {
    omp_set_num_threads(1);
    const VectorField2D serial = make(301, 203, 3);  // above the serial-size cutoff
    omp_set_num_threads(3);
    const VectorField2D parallel = make(301, 203, 3);
    EXPECT_TRUE(same_bytes(serial, parallel)) << name;
  }
  omp_set_num_threads(saved);
}

TEST(Synth, TinyAndOddSizesHaveTheRightShapeAndFiniteValues) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1}, {1, 9},   {9, 1},
                                                           {2, 2}, {33, 17}, {3, 250}};
  for (const auto& [name, make] : generators()) {
    for (const auto& [nx, ny] : shapes) {
      const VectorField2D f = make(nx, ny, 11);
      EXPECT_EQ(f.nx, nx) << name;
      EXPECT_EQ(f.ny, ny) << name;
      EXPECT_EQ(static_cast<int64_t>(f.u.size()), nx * ny) << name;
      EXPECT_EQ(static_cast<int64_t>(f.v.size()), nx * ny) << name;
      EXPECT_TRUE(all_finite(f)) << name << " " << nx << "x" << ny;
    }
  }
}

TEST(Synth, EmptyAndNegativeSizesGiveEmptyFields) {
  for (const auto& [name, make] : generators()) {
    const VectorField2D f = make(0, 5, 1);
    EXPECT_EQ(f.size(), 0) << name;
    EXPECT_TRUE(f.u.empty() && f.v.empty()) << name;
    EXPECT_EQ(make(-4, 5, 1).size(), 0) << name;
  }
  EXPECT_EQ(linear(5, -1, 1, 0, 0, 1, 0, 0).size(), 0);
}

// ---- turbulence --------------------------------------------------------------------------

TEST(Turbulence, HasUnitRmsSpeedZeroMeanAndIsotropicComponents) {
  const VectorField2D f = turbulence(509, 301, 5);  // neither size is 5-smooth: a cropped grid
  ASSERT_TRUE(all_finite(f));
  const Moments m = moments(f);
  EXPECT_NEAR(m.mean_speed2, 1.0, 1e-5);
  EXPECT_LT(std::abs(m.mean_u), 0.1);
  EXPECT_LT(std::abs(m.mean_v), 0.1);
  EXPECT_GT(m.var_u, 0.3);
  EXPECT_GT(m.var_v, 0.3);
}

TEST(Turbulence, HasThousandsOfCriticalPointsOn512Squared) {
  const VectorField2D f = turbulence(512, 512, 1);
  const int64_t count = count_critical_triangles(f);
  EXPECT_GT(count, 2000);
  EXPECT_LT(count, 50000);  // smooth, not noise (noise has ~ a third of all triangles)
}

TEST(Turbulence, AHigherPeakWavenumberGivesMoreCriticalPoints) {
  const int64_t default_count = count_critical_triangles(turbulence(256, 256, 1));
  const int64_t finer_count =
      count_critical_triangles(turbulence(256, 256, 1, 2 * kTurbulencePeakCycles));
  EXPECT_GT(finer_count, 2 * default_count);
  EXPECT_TRUE(same_bytes(turbulence(64, 64, 1, -1.0), turbulence(64, 64, 1)));
}

TEST(Turbulence, IsNearlyDivergenceFree) {
  // Spectrally exact; central differences leave a small residual at high wavenumbers.
  const VectorField2D f = turbulence(256, 256, 2);
  double divergence2 = 0, vorticity2 = 0;
  for (int64_t y = 1; y + 1 < f.ny; ++y) {
    for (int64_t x = 1; x + 1 < f.nx; ++x) {
      const int64_t i = y * f.nx + x;
      const double dudx = 0.5 * (f.u[i + 1] - f.u[i - 1]);
      const double dudy = 0.5 * (f.u[i + f.nx] - f.u[i - f.nx]);
      const double dvdx = 0.5 * (f.v[i + 1] - f.v[i - 1]);
      const double dvdy = 0.5 * (f.v[i + f.nx] - f.v[i - f.nx]);
      divergence2 += (dudx + dvdy) * (dudx + dvdy);
      vorticity2 += (dvdx - dudy) * (dvdx - dudy);
    }
  }
  EXPECT_LT(divergence2, 0.05 * vorticity2);
}

// ---- vortices ----------------------------------------------------------------------------

TEST(Vortices, WithoutVorticesAreAUniformFlow) {
  const VectorField2D f = vortices(20, 10, 9, 0);
  for (size_t i = 0; i < f.u.size(); ++i) {
    EXPECT_EQ(f.u[i], f.u[0]);
    EXPECT_EQ(f.v[i], f.v[0]);
  }
  EXPECT_TRUE(same_bytes(f, vortices(20, 10, 9, -5)));
}

TEST(Vortices, AreSmoothWithCriticalPointsNearTheVortices) {
  const VectorField2D f = vortices(256, 256, 4, 16);
  ASSERT_TRUE(all_finite(f));
  const int64_t count = count_critical_triangles(f);
  EXPECT_GE(count, 8) << count;  // at least about one centre per vortex
  EXPECT_LE(count, 200);         // and not noise
  float largest = 0;
  for (size_t i = 0; i < f.u.size(); ++i) largest = std::max(largest, std::hypot(f.u[i], f.v[i]));
  EXPECT_GT(largest, 0.5f);
  EXPECT_LT(largest, 5.0f);  // peak vortex speed 1.5 plus uniform flow 0.5; cores may overlap
}

// ---- noise -------------------------------------------------------------------------------

TEST(Noise, IsUniformInOpenMinusOneOneWithIndependentComponents) {
  const VectorField2D f = noise(300, 200, 12);
  for (size_t i = 0; i < f.u.size(); ++i) {
    ASSERT_GT(f.u[i], -1.0f);
    ASSERT_LT(f.u[i], 1.0f);
    ASSERT_NE(f.u[i], 0.0f);
    ASSERT_GT(f.v[i], -1.0f);
    ASSERT_LT(f.v[i], 1.0f);
    ASSERT_NE(f.v[i], 0.0f);
  }
  const Moments m = moments(f);
  EXPECT_NEAR(m.mean_u, 0.0, 0.01);
  EXPECT_NEAR(m.mean_v, 0.0, 0.01);
  EXPECT_NEAR(m.var_u, 1.0 / 3.0, 0.01);
  EXPECT_NEAR(m.var_v, 1.0 / 3.0, 0.01);
  double covariance = 0;
  for (size_t i = 0; i < f.u.size(); ++i) covariance += static_cast<double>(f.u[i]) * f.v[i];
  EXPECT_NEAR(covariance / static_cast<double>(f.size()), 0.0, 0.01);
}

// ---- linear ------------------------------------------------------------------------------

TEST(Linear, IsEvaluatedInDoubleThenRounded) {
  const double a = 0.3, b = -1.1, c = 2.5, d = 0.7, x0 = 3.25, y0 = 1.5;
  const VectorField2D f = linear(7, 5, a, b, c, d, x0, y0);
  ASSERT_EQ(f.size(), 35);
  for (int64_t y = 0; y < 5; ++y) {
    for (int64_t x = 0; x < 7; ++x) {
      const double dx = static_cast<double>(x) - x0;
      const double dy = static_cast<double>(y) - y0;
      EXPECT_EQ(f.u[static_cast<size_t>(y * 7 + x)], static_cast<float>(a * dx + b * dy));
      EXPECT_EQ(f.v[static_cast<size_t>(y * 7 + x)], static_cast<float>(c * dx + d * dy));
    }
  }
}

TEST(Linear, HasOneCriticalPointAtItsCentre) {
  const VectorField2D f = linear(40, 30, 1.0, 0.5, -0.25, -1.0, 17.3, 11.6);
  EXPECT_EQ(count_critical_triangles(f), 1);
}

// ---- zero region -------------------------------------------------------------------------

int64_t count_zero_vertices(const VectorField2D& f) {
  int64_t zeros = 0;
  for (size_t i = 0; i < f.u.size(); ++i) zeros += (f.u[i] == 0.0f && f.v[i] == 0.0f) ? 1 : 0;
  return zeros;
}

TEST(ZeroRegion, CoversAboutTheRequestedFraction) {
  for (double fraction : {0.05, 0.3, 0.7}) {
    VectorField2D f = noise(320, 240, 1);  // noise is never 0, so every zero is land
    add_zero_region(f, 6, fraction);
    EXPECT_NEAR(static_cast<double>(count_zero_vertices(f)) / static_cast<double>(f.size()),
                fraction, 0.01);
  }
}

TEST(ZeroRegion, ZeroAndOneAreNothingAndEverything) {
  VectorField2D f = noise(50, 40, 2);
  const VectorField2D original = f;
  add_zero_region(f, 3, 0.0);
  EXPECT_TRUE(same_bytes(f, original));
  add_zero_region(f, 3, -1.0);
  EXPECT_TRUE(same_bytes(f, original));
  add_zero_region(f, 3, 1.0);
  EXPECT_EQ(count_zero_vertices(f), f.size());
}

TEST(ZeroRegion, DependsOnlyOnShapeSeedAndFraction) {
  VectorField2D a = noise(90, 70, 1);
  VectorField2D b = turbulence(90, 70, 2);
  add_zero_region(a, 5, 0.4);
  add_zero_region(b, 5, 0.4);
  for (size_t i = 0; i < a.u.size(); ++i) {
    EXPECT_EQ(a.u[i] == 0.0f, b.u[i] == 0.0f && b.v[i] == 0.0f) << i;
  }
}

TEST(ZeroRegion, IsBlobbyMostLandInFewLargeComponents) {
  VectorField2D f = noise(256, 256, 1);
  add_zero_region(f, 8, 0.3);
  // Flood fill 4-connected land components; the three largest hold most of the land.
  std::vector<int> label(f.u.size(), -1);
  std::vector<int64_t> sizes;
  std::vector<int64_t> stack;
  for (int64_t start = 0; start < f.size(); ++start) {
    if (f.u[start] != 0.0f || label[start] >= 0) continue;
    const int id = static_cast<int>(sizes.size());
    int64_t size = 0;
    stack.push_back(start);
    label[start] = id;
    while (!stack.empty()) {
      const int64_t i = stack.back();
      stack.pop_back();
      ++size;
      const int64_t x = i % f.nx, y = i / f.nx;
      const int64_t neighbours[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
      for (const auto& n : neighbours) {
        if (n[0] < 0 || n[0] >= f.nx || n[1] < 0 || n[1] >= f.ny) continue;
        const int64_t j = n[1] * f.nx + n[0];
        if (f.u[j] == 0.0f && label[j] < 0) {
          label[j] = id;
          stack.push_back(j);
        }
      }
    }
    sizes.push_back(size);
  }
  std::sort(sizes.rbegin(), sizes.rend());
  int64_t land = 0, top = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    land += sizes[i];
    if (i < 3) top += sizes[i];
  }
  ASSERT_GT(land, 0);
  EXPECT_GT(static_cast<double>(top) / static_cast<double>(land), 0.8);
}

}  // namespace
}  // namespace factz::synth
