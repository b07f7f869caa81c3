// Scalar streams coded by the context coder (coder 2, format versions 15 to 17): each layout
// (values, lattice, coded exact values; masked; float64) round trips with the tree and the
// bound kept; the golden streams decode to the same bits and are written again byte for
// byte; a header whose coder and version disagree, or a context-coded vector header, is
// refused; and the default coder keeps the smallest of the three streams.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "factz/contour_tree.hpp"
#include "factz/factz.hpp"
#include "factz/scalar.hpp"
#include "format/container.hpp"
#include "ct_test_support.hpp"
#include "support/compact_places.hpp"
#include "support/resealed.hpp"

namespace factz {
namespace {

using ct_test::smooth;

uint16_t version_of(const std::vector<uint8_t>& s) { return testing::layout_version(s); }

std::vector<uint8_t> slurp(const std::string& name) {
  std::ifstream in(std::string(FACTZ_SCALAR_GOLDEN_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(bool(in)) << name;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

template <class T>
void expect_kept(const ScalarFieldOf<T>& f, const std::vector<uint8_t>& stream, const ScalarOptions& o,
                 const ScalarCompressStats& st) {
  if constexpr (std::is_same_v<T, float>) {
    auto back = decompress_scalar(stream);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    auto c = compare_scalar(f, back.value(), BoundMode::rel, o.persistence);
    ASSERT_TRUE(c.ok());
    if (o.mode == ScalarMode::contour_tree) {
      EXPECT_TRUE(c->tree.same());
    }
    EXPECT_LE(c->max_abs_error, st.eb_abs);
    EXPECT_EQ(back->mask, f.mask);
  } else {
    auto back = decompress_scalar64(stream);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    for (size_t k = 0; k < f.values.size(); ++k)
      if (f.mask.empty() || !f.mask[k]) {
        ASSERT_LE(std::fabs(back->values[k] - f.values[k]), st.eb_abs) << k;
      }
  }
}

// Every layout with the context coder: the version names it, the stream round trips.
TEST(ScalarContext, EveryLayoutRoundTripsWithTheContextCoder) {
  int seen[24] = {};
  for (ScalarPredictor predictor : {ScalarPredictor::lorenzo, ScalarPredictor::interpolation})
  for (bool masked : {false, true})
    for (auto mode : {ScalarMode::none, ScalarMode::contour_tree})
      for (double p : {1e-2, 3e-2}) {
        SCOPED_TRACE(std::string(masked ? "masked " : "") + (mode == ScalarMode::none ? "none" : "contour tree") +
                     " p " + std::to_string(p));
        ScalarOptions o;
        o.mode = mode;
        o.persistence = mode == ScalarMode::none ? 0.0 : p;
        o.coder = Coder::context;
        o.predictor = predictor;
        ScalarField f = smooth<float>(37, 29, mode == ScalarMode::none ? 3 : 1, 4);
        if (masked) {
          f.mask.assign(f.values.size(), 0);
          for (size_t k = 0; k < f.mask.size(); k += 7) f.mask[k] = 1;
        }
        ScalarCompressStats st;
        auto s = compress_scalar(f, o, &st);
        ASSERT_TRUE(s.ok()) << s.status().to_string();
        EXPECT_EQ(st.coder, Coder::context);
        EXPECT_EQ(testing::header_of(s.value()).coder, detail::kCoderContext);
        const uint16_t v = version_of(s.value());
        EXPECT_TRUE(detail::is_context_version(v)) << v;
        EXPECT_EQ(v == 23, predictor == ScalarPredictor::interpolation) << v;
        ASSERT_LT(v, 24);
        ++seen[v];
        expect_kept(f, s.value(), o, st);
        ScalarField64 f64 = smooth<double>(21, 17, 2, 5);
        ScalarCompressStats st64;
        auto s64 = compress_scalar(f64, o, &st64);
        ASSERT_TRUE(s64.ok()) << s64.status().to_string();
        EXPECT_TRUE(detail::is_context_version(version_of(s64.value())));
        expect_kept(f64, s64.value(), o, st64);
      }
  EXPECT_GT(seen[15], 0);
  EXPECT_GT(seen[16] + seen[17], 0) << "no lattice stream";
  EXPECT_GT(seen[23], 0) << "no interpolation stream";
}

// Mode none: one quantization whatever the coder, so every coder decodes to the same bits.
TEST(ScalarContext, ModeNoneDecodesToTheSameBitsWithEveryCoder) {
  const ScalarField f = smooth<float>(64, 40, 1, 6);
  ScalarOptions o;
  o.mode = ScalarMode::none;
  std::vector<std::vector<float>> decoded;
  std::vector<size_t> sizes;
  for (Coder c : {Coder::ans, Coder::huffman, Coder::context, Coder::smallest}) {
    o.coder = c;
    auto s = compress_scalar(f, o);
    ASSERT_TRUE(s.ok());
    sizes.push_back(s->size());
    auto back = decompress_scalar(s.value());
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    decoded.push_back(back->values);
  }
  for (size_t k = 1; k < decoded.size(); ++k) EXPECT_EQ(decoded[k], decoded[0]) << k;
  EXPECT_EQ(sizes[3], std::min({sizes[0], sizes[1], sizes[2]}));
}

// Golden streams of versions 15 and 17, written by the build that added the context coder
// (tests/scalar/golden/README.md): the same bits, the same bytes again, every damage refused.
TEST(ScalarContext, GoldenStreamsDecodeToTheSameBitsAndAreWrittenAgain) {
  struct Golden {
    const char* name;
    const char* input;
    int64_t nx, ny, nz;
    ScalarMode mode;
    BoundMode bound_mode;
    double bound, persistence;
    bool zstd;
    uint16_t version;
    bool written_again;  // false: an encoder since then writes other bytes the decoder reads alike
  };
  const Golden goldens[] = {
      {"v15_none_abs0.05_context_6x5x4", "field_6x5x4.f32", 6, 5, 4, ScalarMode::none, BoundMode::abs, 0.05, 0.0, false,
       15, true},
      // written again until the extrema were coded outward (2026-12-06)
      {"v17_contour_tree_rel1e-2_p3e-2_context_12x9", "field_12x9.f32", 12, 9, 1, ScalarMode::contour_tree,
       BoundMode::rel, 1e-2, 3e-2, true, 17, false},
      {"v17_outward_contour_tree_rel1e-2_p3e-2_context_12x9", "field_12x9.f32", 12, 9, 1, ScalarMode::contour_tree,
       BoundMode::rel, 1e-2, 3e-2, true, 17, true}};
  for (const Golden& gd : goldens) {
    SCOPED_TRACE(gd.name);
    const auto stream = slurp(std::string(gd.name) + ".stream");
    ASSERT_EQ(version_of(stream), gd.version);
    auto back = decompress_scalar(stream);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    const auto want = slurp(std::string(gd.name) + ".out.f32");
    ASSERT_EQ(back->values.size() * 4, want.size());
    EXPECT_EQ(std::memcmp(back->values.data(), want.data(), want.size()), 0);
    const auto raw = slurp(gd.input);
    ScalarField f;
    f.nx = gd.nx;
    f.ny = gd.ny;
    f.nz = gd.nz;
    f.values.resize(raw.size() / 4);
    std::memcpy(f.values.data(), raw.data(), raw.size());
    ScalarOptions o;
    o.mode = gd.mode;
    o.bound_mode = gd.bound_mode;
    o.bound = gd.bound;
    o.persistence = gd.persistence;
    o.zstd = gd.zstd;
    o.coder = Coder::context;
    o.predictor = ScalarPredictor::lorenzo;  // the goldens' layouts (15, 17)
    auto again = compress_scalar(f, o);
    ASSERT_TRUE(again.ok());
    if (gd.written_again) {
      EXPECT_EQ(again.value(), testing::compact(stream));  // the golden file's sections, compact container
    }
    for (size_t cut = 0; cut < stream.size(); ++cut)
      EXPECT_FALSE(decompress_scalar(std::span<const uint8_t>(stream.data(), cut)).ok()) << cut;
    std::mt19937 rng(13);
    for (size_t i = 0; i < stream.size(); ++i) {
      std::vector<uint8_t> bad = stream;
      bad[i] ^= uint8_t(1 + rng() % 255);
      EXPECT_FALSE(decompress_scalar(bad).ok()) << "byte " << i;
    }
  }
}

// `stream` with header byte `at` set to `value` and the header checksum made right again (the
// container writer refuses to write the headers forged below).
// The offsets are those of the classic container (a compact stream is turned into one first).
std::vector<uint8_t> forged(std::vector<uint8_t> stream, size_t at, uint8_t value) {
  if (testing::is_compact(stream)) stream = testing::classic(stream);
  stream.at(at) = value;
  testing::reseal_header_crc(stream);
  return stream;
}

// The coder and the version must agree (coder 2 in versions 15 to 17 and only there), and
// versions 15 to 17 hold scalar fields: forged headers with right checksums are refused.
TEST(ScalarContext, CoderAndVersionMustAgree) {
  ScalarOptions o;
  o.mode = ScalarMode::none;
  o.predictor = ScalarPredictor::lorenzo;  // versions 15 and 2 (22 and 23: test_scalar_interp.cpp)
  const ScalarField f = smooth<float>(20, 16, 1, 7);
  o.coder = Coder::context;
  auto ctx = compress_scalar(f, o);
  o.coder = Coder::ans;
  auto ans = compress_scalar(f, o);
  ASSERT_TRUE(ctx.ok() && ans.ok());
  auto expect_refused = [](const std::vector<uint8_t>& bad, const char* what) {
    auto r = decompress_scalar(bad);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().code(), Code::corrupt_stream) << what;
    EXPECT_NE(r.status().message().find("coder"), std::string::npos) << what << ": " << r.status().message();
  };
  ASSERT_EQ(version_of(ctx.value()), 15);
  ASSERT_EQ(version_of(ans.value()), 2);
  expect_refused(forged(ctx.value(), 10, detail::kCoderAns), "version 15 with ANS");
  expect_refused(forged(ans.value(), 10, detail::kCoderContext), "version 2 with the context coder");
  // A lattice version in mode none, a context version holding a vector field.
  auto lattice_none = decompress_scalar(forged(ctx.value(), 4, uint8_t(detail::kFormatVersionScalarLatticeContext)));
  ASSERT_FALSE(lattice_none.ok());
  EXPECT_EQ(lattice_none.status().code(), Code::corrupt_stream);
  VectorField2D v;
  v.nx = 8;
  v.ny = 8;
  v.u.assign(64, 1.0f);
  v.v.assign(64, -1.0f);
  auto vec = compress(v, {});
  ASSERT_TRUE(vec.ok());
  auto as_vector = decompress(forged(forged(vec.value(), 4, uint8_t(detail::kFormatVersionScalarContext)), 10,
                                      detail::kCoderContext));
  ASSERT_FALSE(as_vector.ok());
  EXPECT_EQ(as_vector.status().code(), Code::corrupt_stream);
  EXPECT_NE(as_vector.status().message().find("scalar"), std::string::npos) << as_vector.status().message();
  // Codes that are not the grid's: a context blob cut short inside the stream is refused.
  auto cut = testing::resealed(ctx.value(), [](detail::Header&, std::vector<detail::Section>& sections) {
    for (auto& s : sections)
      if (s.id == detail::kSectionCodesU) s.raw.pop_back();
  });
  EXPECT_EQ(decompress_scalar(cut).status().code(), Code::corrupt_stream);
}

// The default keeps the smallest of the three coders' streams (ANS, then Huffman, then the
// context coder on ties), byte for byte the stream of the coder it names.
TEST(ScalarContext, TheDefaultKeepsTheSmallestOfTheThree) {
  int chose[3] = {};
  for (auto [nx, ny, nz] : {std::array<int64_t, 3>{3, 2, 1}, {6, 5, 1}, {40, 30, 1}, {24, 20, 6}})
    for (auto mode : {ScalarMode::none, ScalarMode::contour_tree}) {
      SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz));
      const ScalarField f = smooth<float>(nx, ny, nz, 8);
      ScalarOptions o;
      o.mode = mode;
      ScalarCompressStats st;
      auto s = compress_scalar(f, o, &st);
      ASSERT_TRUE(s.ok());
      EXPECT_EQ(testing::header_of(s.value()).coder, uint8_t(st.coder));
      ++chose[int(st.coder)];
      o.coder = Coder::ans;
      auto a = compress_scalar(f, o);
      ASSERT_TRUE(a.ok());
      EXPECT_LE(s->size(), a->size());
      if (mode == ScalarMode::none) {  // one quantization: each explicit coder's stream
        size_t smallest = a->size();
        for (Coder c : {Coder::huffman, Coder::context}) {
          o.coder = c;
          auto e = compress_scalar(f, o);
          ASSERT_TRUE(e.ok());
          smallest = std::min(smallest, e->size());
          if (c == st.coder) {
            EXPECT_EQ(e.value(), s.value());
          }
        }
        EXPECT_EQ(s->size(), smallest);
      }
    }
  EXPECT_GT(chose[int(Coder::ans)], 0) << "ANS never kept (tiny fields: its short blob)";
  EXPECT_GT(chose[int(Coder::context)], 0) << "the context coder never kept";
}

}  // namespace
}  // namespace factz
