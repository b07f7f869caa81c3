// The scans that find missing vertices (missing_mask, mark_missing, validate_field) against a
// per-vertex reference written from their documented rules, on fields whose NaN, infinities,
// fill values and given masks fall inside chunks, across chunk boundaries (the scans skip
// quiet chunks of 4096 vertices) and everywhere, in 2D and 3D, float32 and float64.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "factz/topology.hpp"
#include "factz/topology3d.hpp"

namespace factz {
namespace {

template <class Field>
auto planes(Field& f) {
  if constexpr (requires { f.w; }) return std::vector{&f.u, &f.v, &f.w};
  else return std::vector{&f.u, &f.v};
}

/// Fields of a few layouts: nothing special, a few NaN / infinities / fill values near chunk
/// boundaries, a region of them, dense noise; with or without a given mask.
template <class Field>
std::vector<Field> sample_fields(int64_t nx, int64_t ny, int64_t nz, double fill) {
  using T = typename decltype(Field{}.u)::value_type;
  std::vector<Field> out;
  std::mt19937_64 rng(uint64_t(nx * 31 + ny * 7 + nz));
  for (int layout = 0; layout < 5; ++layout)
    for (bool given_mask : {false, true}) {
      Field f;
      f.nx = nx;
      f.ny = ny;
      if constexpr (requires { f.nz; }) f.nz = nz;
      const size_t n = size_t(f.size());
      for (auto* p : planes(f)) {
        p->resize(n);
        for (auto& x : *p) x = T(std::uniform_real_distribution<double>(-5, 5)(rng));
      }
      if (given_mask) {
        f.mask.assign(n, 0);
        for (size_t k = 0; k < n; ++k) f.mask[k] = rng() % 50 == 0 ? uint8_t(1 + rng() % 3) : 0;
      }
      auto special = [&](size_t k) {
        auto ps = planes(f);
        T& x = (*ps[rng() % ps.size()])[k];
        switch (rng() % 4) {
          case 0: x = std::numeric_limits<T>::quiet_NaN(); break;
          case 1: x = std::numeric_limits<T>::infinity(); break;
          case 2: x = -std::numeric_limits<T>::infinity(); break;
          default: x = T(fill); break;
        }
      };
      if (layout == 1)
        for (size_t k : {size_t{0}, size_t{4095}, size_t{4096}, size_t{8191}, n - 1})
          if (k < n) special(k);
      if (layout == 2)
        for (size_t k = n / 3; k < n / 3 + n / 4; ++k) special(k);
      if (layout == 3)
        for (size_t k = 0; k < n; ++k)
          if (rng() % 3 == 0) special(k);
      if (layout == 4)  // only NaN and fills: the masks that the codecs see
        for (size_t k = 0; k < n; ++k)
          if (rng() % 5 == 0) (*planes(f)[rng() % planes(f).size()])[k] = rng() % 2 ? T(fill) : std::nan("");
      out.push_back(std::move(f));
    }
  return out;
}

/// The documented rules, one vertex at a time: missing = mask byte nonzero or a NaN component
/// (or, for mark_missing, a component equal to its declared fill); a valid vertex with an
/// infinite component makes validate_field fail, naming the first one.
template <class Field, class Fill>
void check_against_reference(Field f, const Fill& fill, const std::string& what) {
  auto ps = planes(f);
  const size_t n = size_t(f.size());
  std::vector<uint8_t> ref_missing(n, 0), ref_marked(n, 0);
  int64_t ref_count = 0, ref_bad = 0, ref_first = -1;
  std::vector<std::optional<double>> fills;
  if constexpr (requires { fill.w; }) fills = {fill.u, fill.v, fill.w};
  else fills = {fill.u, fill.v};
  for (size_t k = 0; k < n; ++k) {
    bool nan = false, inf = false, filled = false;
    for (size_t c = 0; c < ps.size(); ++c) {
      const double x = double((*ps[c])[k]);
      nan = nan || std::isnan(x);
      inf = inf || std::isinf(x);
      filled = filled || (fills[c] && !std::isnan(*fills[c]) && x == *fills[c]);
    }
    const bool masked = !f.mask.empty() && f.mask[k];
    ref_missing[k] = masked || nan;
    ref_marked[k] = masked || nan || filled;
    ref_count += ref_marked[k];
    if (!(masked || nan) && inf) {
      if (ref_first < 0) ref_first = int64_t(k);
      ++ref_bad;
    }
  }
  const std::vector<uint8_t> m = missing_mask(f);
  if (std::count(ref_missing.begin(), ref_missing.end(), uint8_t(1)) == 0) {
    EXPECT_TRUE(m.empty()) << what;
  } else {
    EXPECT_EQ(m, ref_missing) << what;
  }
  const Status s = validate_field(f);
  EXPECT_EQ(s.ok(), ref_bad == 0) << what << " " << s.to_string();
  if (ref_bad > 0) {
    EXPECT_NE(s.message().find(std::to_string(ref_bad) + " infinite value(s)"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("x=" + std::to_string(ref_first % f.nx) + " "), std::string::npos) << s.message();
  }
  Field g = f;
  EXPECT_EQ(mark_missing(g, fill), ref_count) << what;
  if (ref_count == 0) {
    EXPECT_TRUE(g.mask.empty()) << what;
  } else {
    EXPECT_EQ(g.mask, ref_marked) << what;
  }
}

TEST(MissingScan, AgreesWithThePerVertexRulesIn2D) {
  for (auto [nx, ny] : {std::pair<int64_t, int64_t>{1, 1}, {7, 5}, {4096, 3}, {333, 61}}) {
    for (const VectorField2D& f : sample_fields<VectorField2D>(nx, ny, 1, -9999.0))
      check_against_reference(f, FillValues{-9999.0f, std::nullopt}, "2D f32 " + std::to_string(nx));
    for (const VectorField2D64& f : sample_fields<VectorField2D64>(nx, ny, 1, 1e20))
      check_against_reference(f, FillValues64{1e20, 1e20}, "2D f64 " + std::to_string(nx));
    for (const VectorField2D& f : sample_fields<VectorField2D>(nx, ny, 1, 2.5))
      check_against_reference(f, FillValues{std::nanf(""), 2.5f}, "2D nan fill " + std::to_string(nx));
  }
}

TEST(MissingScan, AgreesWithThePerVertexRulesIn3D) {
  for (auto [nx, nz] : {std::pair<int64_t, int64_t>{1, 1}, {9, 4}, {64, 3}}) {
    for (const VectorField3D& f : sample_fields<VectorField3D>(nx, 17, nz, -1e30))
      check_against_reference(f, FillValues3D{std::nullopt, -1e30f, -1e30f}, "3D f32 " + std::to_string(nx));
    for (const VectorField3D64& f : sample_fields<VectorField3D64>(nx, 17, nz, 7.0))
      check_against_reference(f, FillValues3D64{7.0, 7.0, 7.0}, "3D f64 " + std::to_string(nx));
  }
}

}  // namespace
}  // namespace factz
