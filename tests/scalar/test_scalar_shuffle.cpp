// Scalar streams with byte-shuffled exact values (format version 23, docs/format.md
// "Byte-shuffled sections"): the zstd stage changes no decoded value, in either mode, float32
// and float64, and the contour-tree streams dense in exact values keep the shuffle. The
// encoder weighs stream sizes after the zstd stage (the race's steps, the moves after it), so
// with and without the stage it may keep different quantizations: each stream is compared
// with itself written again without the stage.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ct_test_support.hpp"
#include "factz/scalar.hpp"
#include "format/container.hpp"
#include "streams/stream_common.hpp"
#include "support/compact_places.hpp"

namespace factz {
namespace {

using ct_test::smooth;

// `s` written again with every section raw (no zstd stage, no shuffle).
std::vector<uint8_t> without_zstd(const std::vector<uint8_t>& s) {
  auto parsed = detail::parse_container(s);
  EXPECT_TRUE(parsed.ok());
  if (!parsed.ok()) return {};
  std::vector<detail::Section> sections;
  for (const auto& e : parsed->entries) {
    auto raw = detail::read_section(s, parsed.value(), e.id, &detail::zstd_stage_decompressor());
    EXPECT_TRUE(raw.ok());
    if (!raw.ok()) return {};
    detail::Section sec;
    sec.id = e.id;
    sec.raw = std::move(raw.value());
    sections.push_back(std::move(sec));
  }
  auto out = detail::write_container(parsed->header, std::move(sections), nullptr);
  EXPECT_TRUE(out.ok());
  return out.ok() ? std::move(out.value()) : std::vector<uint8_t>{};
}

template <class T>
int round_trips(const ScalarFieldOf<T>& f, ScalarMode mode, double rel, const std::string& what) {
  SCOPED_TRACE(what);
  ScalarOptions o;
  o.mode = mode;
  o.bound_mode = BoundMode::rel;
  o.bound = rel;
  o.persistence = 1e-2;
  o.zstd = true;
  ScalarOptions off = o;
  off.zstd = false;
  auto on = compress_scalar(f, o), no = compress_scalar(f, off);
  EXPECT_TRUE(on.ok() && no.ok()) << on.status().to_string();
  if (!on.ok() || !no.ok()) return 0;
  const bool shuffled = testing::has_shuffled_section(on.value());
  EXPECT_EQ(on.value()[4] == 23, shuffled);  // version 23 exactly with a shuffled section
  EXPECT_FALSE(testing::has_shuffled_section(no.value()));  // never without the zstd stage
  const std::vector<uint8_t> raw = without_zstd(on.value());
  EXPECT_FALSE(testing::has_shuffled_section(raw));
  if constexpr (std::is_same_v<T, float>) {
    auto a = decompress_scalar(on.value()), b = decompress_scalar(raw);
    EXPECT_TRUE(decompress_scalar(no.value()).ok());
    EXPECT_TRUE(a.ok() && b.ok()) << a.status().to_string();
    if (a.ok() && b.ok()) {
      EXPECT_EQ(a->values, b->values);
    }
  } else {
    auto a = decompress_scalar64(on.value()), b = decompress_scalar64(raw);
    EXPECT_TRUE(decompress_scalar64(no.value()).ok());
    EXPECT_TRUE(a.ok() && b.ok()) << a.status().to_string();
    if (a.ok() && b.ok()) {
      EXPECT_EQ(a->values, b->values);
    }
  }
  return shuffled ? 1 : 0;
}

TEST(ScalarShuffle, TheZstdStageChangesNoDecodedValue) {
  int shuffled = 0;
  for (ScalarMode mode : {ScalarMode::none, ScalarMode::contour_tree})
    for (double rel : {1e-2, 1e-4}) {
      const std::string what = std::string(mode == ScalarMode::none ? "none" : "contour-tree") + " REL " +
                               std::to_string(rel);
      shuffled += round_trips(smooth<float>(64, 48, 1, 11), mode, rel, what + " 2D float32");
      shuffled += round_trips(smooth<double>(30, 24, 6, 12), mode, rel, what + " 3D float64");
    }
  // At REL 0 every value is exact: the shuffle is what the stage keeps.
  shuffled += round_trips(smooth<float>(40, 30, 1, 13), ScalarMode::contour_tree, 0.0, "lossless float32");
  EXPECT_GE(shuffled, 1) << "no stream kept the shuffle: the test no longer sees version 23";
}

}  // namespace
}  // namespace factz
