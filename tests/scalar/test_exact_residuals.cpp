// The exact values of a version 14 stream, coded against the decoder's predictions
// (scalar/exact_residuals.hpp): every bit comes back for every finite value and any
// reference (signed zeros, subnormals, the largest values, references that are not finite,
// residuals that need the escape), for float and double, with and without grid values; the
// code is shorter than the raw values when the values lie near their references, and
// shorter still for values on the grid; grid_value gives the next grid point outward;
// damaged sections are refused.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "scalar/exact_residuals.hpp"

namespace factz {
namespace {

template <class T>
using Bits = std::conditional_t<std::is_same_v<T, double>, uint64_t, uint32_t>;

template <class T>
std::vector<T> decode_all(const std::vector<uint8_t>& section, const std::vector<T>& refs, Status* st) {
  std::vector<T> out;
  auto r = detail::ExactResidualReader<T>::open(section);
  if (!r.ok()) {
    *st = r.status();
    return out;
  }
  for (T ref : refs) {
    auto v = r->next(ref);
    if (!v.ok()) {
      *st = v.status();
      return out;
    }
    out.push_back(v.value());
  }
  *st = r->finish();
  return out;
}

template <class T>
void expect_round_trip(const std::vector<T>& values, const std::vector<T>& refs) {
  const auto section = detail::encode_exact_residuals<T>(values, refs);
  Status st;
  const std::vector<T> back = decode_all(section, refs, &st);
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(back.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(std::bit_cast<Bits<T>>(back[i]), std::bit_cast<Bits<T>>(values[i]))
        << i << ": " << values[i] << " against reference " << refs[i];
}

template <class T>
void every_bit_comes_back() {
  using L = std::numeric_limits<T>;
  const std::vector<T> special = {T(0),          -T(0),         L::denorm_min(), -L::denorm_min(), L::min(),
                                  -L::min(),     L::max(),      -L::max(),       T(1),             T(-1),
                                  L::epsilon(),  T(1e-30),      T(3.25),         T(-1e6),          T(123456.789)};
  // Every special value against every special reference and against references that are
  // not finite (taken as 0).
  std::vector<T> values, refs;
  std::vector<T> all_refs = special;
  all_refs.push_back(L::infinity());
  all_refs.push_back(-L::infinity());
  all_refs.push_back(L::quiet_NaN());
  for (T v : special)
    for (T r : all_refs) {
      values.push_back(v);
      refs.push_back(r);
    }
  expect_round_trip(values, refs);
  // Values near their references at scales from a few units in the last place to far
  // beyond the escape, with the scale changing along the way (the parameter adapts).
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  values.clear();
  refs.clear();
  for (double scale : {1e-6, 1e-3, 1.0, 1e3, 1e-3, 1e12})
    for (int i = 0; i < 300; ++i) {
      const T ref = T(1000.0 * normal(rng));
      values.push_back(T(double(ref) + scale * normal(rng)));
      refs.push_back(ref);
    }
  expect_round_trip(values, refs);
  // One value, equal to its reference.
  expect_round_trip(std::vector<T>{T(2.5)}, std::vector<T>{T(2.5)});
}

TEST(ExactResiduals, EveryBitComesBackFloat) { every_bit_comes_back<float>(); }
TEST(ExactResiduals, EveryBitComesBackDouble) { every_bit_comes_back<double>(); }

TEST(ExactResiduals, ValuesNearTheirReferencesTakeFewBits) {
  // Values within about 1e-3 relative of their references: about 14 bits of residual
  // instead of 32 raw bits.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> values, refs;
  for (int i = 0; i < 2000; ++i) {
    const float ref = 100.0f + 10.0f * u(rng);
    refs.push_back(ref);
    values.push_back(ref + 0.1f * u(rng));
  }
  const auto section = detail::encode_exact_residuals<float>(values, refs);
  EXPECT_LT(section.size(), values.size() * 4 * 6 / 10) << "coded " << section.size() << " bytes";
  // Values equal to their references: about one bit each.
  const auto same = detail::encode_exact_residuals<float>(refs, refs);
  EXPECT_LE(same.size(), 2 + refs.size() / 8 + 1);
}

TEST(ExactResiduals, DamagedSectionsAreRefused) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> values, refs;
  for (int i = 0; i < 200; ++i) {
    refs.push_back(50.0f * u(rng));
    values.push_back(refs.back() + u(rng));
  }
  const auto section = detail::encode_exact_residuals<float>(values, refs);
  Status st;
  // Every truncation.
  for (size_t cut = 0; cut < section.size(); ++cut) {
    std::vector<uint8_t> part(section.begin(), section.begin() + std::ptrdiff_t(cut));
    decode_all(part, refs, &st);
    EXPECT_FALSE(st.ok()) << "cut at " << cut;
  }
  // A trailing byte, nonzero padding bits, a first parameter out of range.
  std::vector<uint8_t> longer = section;
  longer.push_back(0);
  decode_all(longer, refs, &st);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("bytes"), std::string::npos) << st.message();
  std::vector<uint8_t> bad_k = section;
  bad_k[0] = 32;
  decode_all(bad_k, refs, &st);
  EXPECT_FALSE(st.ok());
  // Fewer values read than written leaves bytes over.
  std::vector<float> fewer(refs.begin(), refs.end() - 20);
  decode_all(section, fewer, &st);
  EXPECT_FALSE(st.ok());
  // A residual that lands on infinity or NaN is refused (0 + the largest residual).
  const auto to_inf = detail::encode_exact_residuals<float>(std::vector<float>{std::numeric_limits<float>::max()},
                                                            std::vector<float>{0.0f});
  std::vector<float> back = decode_all(to_inf, std::vector<float>{0.0f}, &st);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(back[0], std::numeric_limits<float>::max());
  // The same code read against a reference one step further up gives the next value up,
  // infinity: refused.
  back = decode_all(to_inf, std::vector<float>{std::nextafter(0.0f, 1.0f)}, &st);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not finite"), std::string::npos) << st.message();
}

// grid_value: the next point of the grid outward (up: the smallest at or above f, down:
// the largest at or below), on the grid, less than one grid step from f; f itself when
// that point does not exist.
template <class T>
void grid_values() {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal(0.0, 1.0);
  constexpr int kW = int(sizeof(T)) * 8;
  for (int t : {1, 3, 10, 20}) {
    std::vector<T> values, refs;
    std::vector<T> own_values, own_refs;
    for (int i = 0; i < 400; ++i) {
      const T ref = T(1000.0 * normal(rng));
      const T f = T(double(ref) + 10.0 * normal(rng));
      for (bool up : {true, false}) {
        const T x = detail::grid_value(f, ref, t, up);
        ASSERT_TRUE(detail::on_exact_grid(x, ref, t)) << f << " " << ref << " t " << t;
        if (up) ASSERT_GE(x, f);
        else ASSERT_LE(x, f);
        // Less than one grid step away: the ords differ by less than 2^t.
        const double gap = std::fabs(double(x) - double(f));
        const T next = up ? std::nextafter(f, std::numeric_limits<T>::infinity())
                          : std::nextafter(f, -std::numeric_limits<T>::infinity());
        ASSERT_LE(gap, std::fabs(double(next) - double(f)) * std::ldexp(1.0, t) * 2) << f << " t " << t;
        values.push_back(x);
        refs.push_back(ref);
      }
      own_values.push_back(f);  // mostly off the grid
      own_refs.push_back(ref);
    }
    // Grid values and own values interleaved come back bit for bit.
    std::vector<T> mixed = values, mixed_refs = refs;
    mixed.insert(mixed.end(), own_values.begin(), own_values.end());
    mixed_refs.insert(mixed_refs.end(), own_refs.begin(), own_refs.end());
    const auto section = detail::encode_exact_residuals<T>(mixed, mixed_refs, t);
    Status st;
    const std::vector<T> back = decode_all(section, mixed_refs, &st);
    ASSERT_TRUE(st.ok()) << st.to_string();
    for (size_t i = 0; i < mixed.size(); ++i)
      ASSERT_EQ(std::bit_cast<Bits<T>>(back[i]), std::bit_cast<Bits<T>>(mixed[i])) << i << " t " << t;
    // On the grid they cost fewer bits than coded without it (about t - 1 fewer each).
    if (t >= 10) {
      const auto plain = detail::encode_exact_residuals<T>(values, refs, 0);
      const auto gridded = detail::encode_exact_residuals<T>(values, refs, t);
      EXPECT_LT(gridded.size() * 8 + values.size() * size_t(t - 3), plain.size() * 8)
          << gridded.size() << " against " << plain.size() << " bytes, t " << t;
    }
  }
  // Where the next grid point would not be finite, or past the ends of the ords, f itself.
  const T big = std::numeric_limits<T>::max();
  EXPECT_EQ(detail::grid_value(big, T(0), kW - 2, true), big);
  EXPECT_EQ(detail::grid_value(-big, T(0), kW - 2, false), -big);
  EXPECT_EQ(detail::grid_value(T(1.5), T(0), 0, true), T(1.5));  // no grid
}

TEST(ExactResiduals, GridValuesFloat) { grid_values<float>(); }
TEST(ExactResiduals, GridValuesDouble) { grid_values<double>(); }

TEST(ExactResiduals, AGridShiftOutOfRangeIsRefused) {
  const auto section = detail::encode_exact_residuals<float>(std::vector<float>{1.0f}, std::vector<float>{0.5f}, 0);
  std::vector<uint8_t> bad = section;
  bad[1] = 32;
  Status st;
  decode_all<float>(bad, {0.5f}, &st);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("grid shift"), std::string::npos) << st.message();
}

TEST(ExactResiduals, AnEmptySectionIsRefused) {
  Status st;
  decode_all<float>({}, {1.0f}, &st);
  EXPECT_FALSE(st.ok());
}

}  // namespace
}  // namespace factz
