// The exact values of a version 14 stream, coded against the decoder's predictions
// (scalar/exact_residuals.hpp): every bit comes back for every finite value and any
// reference (signed zeros, subnormals, the largest values, references that are not finite,
// residuals that need the escape), for float and double; the code is shorter than the raw
// values when the values lie near their references; damaged sections are refused.
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
  EXPECT_LE(same.size(), 1 + refs.size() / 8 + 1);
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

TEST(ExactResiduals, AnEmptySectionIsRefused) {
  Status st;
  decode_all<float>({}, {1.0f}, &st);
  EXPECT_FALSE(st.ok());
}

}  // namespace
}  // namespace factz
