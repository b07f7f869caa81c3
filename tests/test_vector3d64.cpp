// Float64 3D vector fields (VectorField3D64; issue 22 with issue 18's values): the extractor
// against the float32 one on doubles that are floats and against the independent reference,
// and compress / decompress in modes none, block and speculative keeping G0 (checked on the
// exact difference) and G1 on fields that need float64 (values around 1e12 with small
// variations, values spanning many decades, subnormals), plus zeros, constants, ties, tiny
// grids, masks, thread-count byte identity, the version 13 stream and its golden file.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/topology3d.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"
#include "kernels/exact64.hpp"
#include "kernels/tet.hpp"
#include "support/exact_reference3d.hpp"
#include "support/fields3d.hpp"
#include "support/resealed.hpp"

namespace factz {
namespace {

using testing::flows3d;

using testing::widen;

/// x -> a(x) for every value of every component.
template <class F>
VectorField3D64 mapped(const VectorField3D& f, F&& a) {
  VectorField3D64 g = widen(f);
  for (auto* p : {&g.u, &g.v, &g.w})
    for (double& x : *p) x = a(x);
  return g;
}

/// Fields that need float64: the flow shifted to 1e12 plus variations of order 1e-3 (one
/// component keeps its zero crossings so that critical points remain), the flow with each
/// value scaled by a power of ten from 1e-150 to 1e150 by its magnitude's digits (many
/// decades, signs kept), and the flow scaled into the subnormals.
std::vector<std::pair<std::string, VectorField3D64>> fields64(int64_t n) {
  std::vector<std::pair<std::string, VectorField3D64>> out;
  const VectorField3D base = testing::random_modes(n, n - 1, n - 2, 21);
  VectorField3D64 shifted = widen(base);
  for (double& x : shifted.u) x = 1e12 + x * 1e-3;  // u > 0 everywhere: no critical point in u
  for (double& x : shifted.w) x = x * 1e-9;
  out.emplace_back("shifted_1e12", shifted);
  VectorField3D64 offset = widen(base);  // each component near 1e12, with zeros around (1e12 + e) - 1e12
  for (auto* p : {&offset.u, &offset.v, &offset.w})
    for (double& x : *p) x = (1e12 + x * 1e-4) - 1e12 + x * 1e-20;
  out.emplace_back("cancelled_1e12", offset);
  out.emplace_back("decades", mapped(base, [](double x) {
                     const int k = int(std::floor(std::fabs(x) * 1000.0)) % 300 - 150;
                     return x * std::pow(10.0, k);
                   }));
  out.emplace_back("subnormal", mapped(base, [](double x) { return std::ldexp(x, -1062); }));
  out.emplace_back("huge", mapped(base, [](double x) { return std::ldexp(x, 1000); }));
  out.emplace_back("abc", widen(testing::abc_flow(n, n, n)));
  out.emplace_back("ties", widen(testing::tie_field(n - 2, n - 3, n - 1, 5)));
  return out;
}

/// Values of b beyond eb from a, decided on the exact difference.
int64_t beyond64(const VectorField3D64& a, const VectorField3D64& b, double eb) {
  int64_t over = 0;
  for (int c = 0; c < 3; ++c) {
    const auto& x = c == 0 ? a.u : c == 1 ? a.v : a.w;
    const auto& y = c == 0 ? b.u : c == 1 ? b.v : b.w;
    for (size_t k = 0; k < x.size(); ++k) {
      if (!a.mask.empty() && a.mask[k]) continue;
      if (std::isnan(x[k])) continue;
      over += !detail::within_bound64(y[k], x[k], eb);
    }
  }
  return over;
}

/// Compresses, decompresses and checks G0 (exactly) and, unless the mode is none (the bound
/// alone), G1.
std::vector<uint8_t> round_trip64(const VectorField3D64& f, const Options& o, const std::string& what,
                                  int64_t* cps = nullptr) {
  CompressStats st;
  auto s = compress(f, o, &st);
  EXPECT_TRUE(s.ok()) << what << ": " << s.status().to_string();
  if (!s.ok()) return {};
  auto d = decompress3d64(s.value());
  EXPECT_TRUE(d.ok()) << what << ": " << d.status().to_string();
  if (!d.ok()) return {};
  EXPECT_EQ(beyond64(f, d.value(), st.eb_abs), 0) << what << ": values beyond eb " << st.eb_abs;
  auto c = compare(f, d.value());
  EXPECT_TRUE(c.ok()) << what;
  if (c.ok()) {
    EXPECT_EQ(c->mask_mismatch, 0) << what;
  }
  if (c.ok() && o.mode != Mode::none) {
    EXPECT_EQ(c->violations(), 0) << what << ": lost " << c->lost << " spurious " << c->spurious << " changed "
                                  << c->type_changed << " mask " << c->mask_mismatch;
    EXPECT_EQ(c->cp_decompressed, c->cp_original) << what;
    if (cps) *cps = c->cp_original;
  }
  return s.value();
}

Options options(Mode mode, double rel, Coder coder = Coder::huffman, bool zstd = false) {
  Options o;
  o.mode = mode;
  o.bound_mode = BoundMode::rel;
  o.bound = rel;
  o.coder = coder;
  o.zstd = zstd;
  return o;
}

const char* mode_text(Mode m) { return m == Mode::none ? "none" : m == Mode::block ? "block" : "speculative"; }

TEST(Topology3D64, DoublesThatAreFloatsHaveTheFloatSignatures) {
  for (const auto& [name, f] : flows3d(12, true)) {
    auto a = signatures(f);
    auto b = signatures(widen(f));
    ASSERT_TRUE(a.ok() && b.ok()) << name;
    EXPECT_EQ(a.value(), b.value()) << name;
    auto ca = critical_points(f), cb = critical_points(widen(f));
    ASSERT_TRUE(ca.ok() && cb.ok());
    ASSERT_EQ(ca->size(), cb->size()) << name;
    for (size_t k = 0; k < ca->size(); ++k) {
      EXPECT_EQ((*ca)[k].tetrahedron, (*cb)[k].tetrahedron);
      EXPECT_EQ((*ca)[k].type, (*cb)[k].type);
    }
  }
}

TEST(Topology3D64, SignaturesMatchTheReferenceOnFieldsThatNeedFloat64) {
  for (const auto& [name, f0] : fields64(6)) {
    const VectorField3D64& f = f0;
    auto sig = signatures(f);
    ASSERT_TRUE(sig.ok()) << name;
    int64_t cps = 0;
    for (int64_t t = 0; t < int64_t(sig->size()); ++t) {
      int64_t idx[4];
      int axes[3];
      detail::tet_vertices(f.nx, f.ny, t, idx, axes);
      double u[4], v[4], w[4];
      for (int k = 0; k < 4; ++k) u[k] = f.u[size_t(idx[k])], v[k] = f.v[size_t(idx[k])], w[k] = f.w[size_t(idx[k])];
      ASSERT_EQ((*sig)[size_t(t)], testref::ref64_tet_signature(idx, axes, u, v, w)) << name << " tetrahedron " << t;
      cps += (*sig)[size_t(t)] != 0;
    }
    if (name == "abc" || name == "decades" || name == "huge") {
      EXPECT_GT(cps, 0) << name;
    }
  }
}

TEST(Vector3D64, EveryModeKeepsTheBoundAndTheCriticalPointsAtEveryRelativeBound) {
  for (const auto& [name, f] : fields64(11))
    for (Mode m : {Mode::none, Mode::block, Mode::speculative})
      for (double rel : {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6}) {
        const std::string what = name + " " + mode_text(m) + " rel " + std::to_string(rel);
        if (m == Mode::none) {  // the bound alone
          CompressStats st;
          auto s = compress(f, options(m, rel), &st);
          ASSERT_TRUE(s.ok()) << what;
          auto d = decompress3d64(s.value());
          ASSERT_TRUE(d.ok()) << what;
          EXPECT_EQ(beyond64(f, d.value(), st.eb_abs), 0) << what;
          continue;
        }
        round_trip64(f, options(m, rel), what);
      }
}

TEST(Vector3D64, ExtremeMagnitudesInOneField) {
  // DBL_MAX beside subnormals: the range overflows to inf (the bound is clamped), differences
  // overflow; G0 and G1 still hold.
  VectorField3D64 f = widen(testing::random_modes(7, 6, 5, 3));
  for (size_t k = 0; k < f.u.size(); k += 5) f.u[k] = (k % 2 ? DBL_MAX : -DBL_MAX);
  for (size_t k = 1; k < f.v.size(); k += 7) f.v[k] = std::ldexp(1.0, -1074) * double(int(k % 5) - 2);
  for (Mode m : {Mode::block, Mode::speculative})
    for (double rel : {1e-1, 1e-6}) round_trip64(f, options(m, rel), std::string("extreme ") + mode_text(m));
  Options abs_opt = options(Mode::speculative, 0);
  abs_opt.bound_mode = BoundMode::abs;
  abs_opt.bound = 1e-3;
  round_trip64(f, abs_opt, "extreme abs");
}

TEST(Vector3D64, ZerosConstantsTiesAndTinyGrids) {
  std::vector<std::pair<std::string, VectorField3D64>> cases;
  cases.emplace_back("zeros", widen(testing::filled3d(5, 4, 3, 0, 0, 0)));
  cases.emplace_back("constant", widen(testing::filled3d(5, 4, 3, 1.5f, -2, 0.25f)));
  cases.emplace_back("ties", widen(testing::tie_field(6, 5, 4, 9)));
  for (auto [nx, ny, nz] : {std::array<int64_t, 3>{1, 1, 1}, {2, 1, 3}, {2, 2, 2}, {3, 2, 2}, {1, 5, 4}}) {
    VectorField3D64 f = widen(testing::random_modes(std::max<int64_t>(nx, 2), std::max<int64_t>(ny, 2),
                                                    std::max<int64_t>(nz, 2), 4));
    VectorField3D64 g;
    g.nx = nx, g.ny = ny, g.nz = nz;
    for (int64_t z = 0; z < nz; ++z)
      for (int64_t y = 0; y < ny; ++y)
        for (int64_t x = 0; x < nx; ++x) {
          const size_t k = size_t((z * f.ny + y) * f.nx + x);
          g.u.push_back(f.u[k] + 1e12);
          g.v.push_back(f.v[k]);
          g.w.push_back(f.w[k]);
        }
    cases.emplace_back("tiny " + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz), g);
  }
  for (const auto& [name, f] : cases)
    for (Mode m : {Mode::none, Mode::block, Mode::speculative})
      for (double rel : {1e-2, 1e-5}) round_trip64(f, options(m, rel), name + " " + mode_text(m));
}

TEST(Vector3D64, MissingVerticesKeepTheirBitsAndTheRestKeepsTheGuarantees) {
  VectorField3D64 f = fields64(10)[1].second;  // cancelled_1e12
  const double payload_nan = std::bit_cast<double>(uint64_t(0x7ff8000000001234ull));
  for (size_t k = 0; k < f.u.size(); k += 13) f.v[k] = payload_nan;
  for (size_t k = 3; k < f.u.size(); k += 17) f.w[k] = -9999.0;  // a declared fill value
  FillValues3D64 fill;
  fill.w = -9999.0;
  const int64_t missing = mark_missing(f, fill);
  ASSERT_GT(missing, 0);
  for (Mode m : {Mode::none, Mode::block, Mode::speculative}) {
    const std::string what = std::string("masked ") + mode_text(m);
    const auto s = round_trip64(f, options(m, 1e-3, Coder::ans, true), what);
    ASSERT_FALSE(s.empty()) << what;
    auto d = decompress3d64(s);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->mask, f.mask) << what;
    for (size_t k = 0; k < f.u.size(); ++k) {
      if (!f.mask[k]) continue;
      EXPECT_EQ(std::bit_cast<uint64_t>(d->u[k]), std::bit_cast<uint64_t>(f.u[k])) << what << " " << k;
      EXPECT_EQ(std::bit_cast<uint64_t>(d->v[k]), std::bit_cast<uint64_t>(f.v[k])) << what << " " << k;
      EXPECT_EQ(std::bit_cast<uint64_t>(d->w[k]), std::bit_cast<uint64_t>(f.w[k])) << what << " " << k;
    }
    auto parsed = detail::parse_container(s);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->header.version, detail::kFormatVersionFloat64Vector3D);
  }
}

TEST(Vector3D64, BytesDoNotDependOnTheThreadCount) {
  const VectorField3D64 f = fields64(14)[2].second;  // decades
  for (Mode m : {Mode::none, Mode::block, Mode::speculative}) {
    Options o = options(m, 1e-3, Coder::ans, true);
    o.policy = Policy::serial;
    auto a = compress(f, o);
    ASSERT_TRUE(a.ok());
    for (int t : {2, 3, 5}) {
      o.policy = Policy::omp;
      o.threads = t;
      auto b = compress(f, o);
      ASSERT_TRUE(b.ok());
      EXPECT_EQ(a.value(), b.value()) << mode_text(m) << " threads " << t;
      DecompressOptions d;
      d.policy = Policy::omp;
      d.threads = t;
      auto x = decompress3d64(a.value()), y = decompress3d64(a.value(), d);
      ASSERT_TRUE(x.ok() && y.ok());
      EXPECT_EQ(x->u, y->u);
      EXPECT_EQ(x->v, y->v);
      EXPECT_EQ(x->w, y->w);
    }
  }
}

TEST(Vector3D64, TheStreamIsVersion13AndEachDecoderTakesItsOwnType) {
  const VectorField3D f32 = testing::random_modes(9, 8, 7, 2);
  const VectorField3D64 f64 = widen(f32);
  for (Mode m : {Mode::none, Mode::block, Mode::speculative}) {
    auto s64 = compress(f64, options(m, 1e-2));
    auto s32 = compress(f32, options(m, 1e-2));
    ASSERT_TRUE(s64.ok() && s32.ok());
    auto p = detail::parse_container(s64.value());
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->header.version, 13);
    EXPECT_EQ(p->header.dtype, detail::kDtypeFloat64);
    EXPECT_EQ(p->header.components, 3);
    auto dt = stream_dtype3d(s64.value());
    ASSERT_TRUE(dt.ok());
    EXPECT_EQ(dt.value(), DType::float64);
    auto wrong = decompress3d(s64.value());
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.status().code(), Code::invalid_argument);
    EXPECT_NE(wrong.status().message().find("decompress3d64"), std::string::npos);
    auto wrong64 = decompress3d64(s32.value());
    ASSERT_FALSE(wrong64.ok());
    EXPECT_EQ(wrong64.status().code(), Code::invalid_argument);
    auto p32 = detail::parse_container(s32.value());
    ASSERT_TRUE(p32.ok());
    EXPECT_NE(p32->header.version, 13) << "float32 3D streams keep their versions";
    // A doubles-that-are-floats field decodes to values within the bound of the float one.
    auto d = decompress3d64(s64.value());
    ASSERT_TRUE(d.ok());
    auto dims = stream_dims3d(s64.value());
    ASSERT_TRUE(dims.ok());
    EXPECT_EQ((*dims)[0], 9);
  }
}

TEST(Vector3D64, DamagedStreamsAreRejectedCleanly) {
  const VectorField3D64 f = fields64(8)[0].second;
  for (Mode m : {Mode::block, Mode::speculative}) {
    auto s = compress(f, options(m, 1e-3));
    ASSERT_TRUE(s.ok());
    for (size_t cut : {size_t(0), size_t(10), size_t(64), s->size() / 2, s->size() - 1}) {
      std::vector<uint8_t> t(s->begin(), s->begin() + std::ptrdiff_t(cut));
      EXPECT_FALSE(decompress3d64(t).ok()) << cut;
    }
    for (size_t at = 0; at < s->size(); at += 7) {
      std::vector<uint8_t> t = s.value();
      t[at] ^= 0x40;
      EXPECT_FALSE(decompress3d64(t).ok()) << at;  // every byte is checksummed
    }
  }
}

TEST(Vector3D64, TheFloat64StreamIsSmallerThanStoringDoubles) {
  const VectorField3D64 f = widen(testing::abc_flow(24, 24, 24));
  for (Mode m : {Mode::block, Mode::speculative}) {
    auto s = compress(f, options(m, 1e-3, Coder::ans, true));
    ASSERT_TRUE(s.ok());
    EXPECT_LT(s->size() * 4, size_t(f.size()) * 24) << mode_text(m);
  }
}

/// CRC-32C of a float64 field's planes.
uint32_t planes_crc64(const VectorField3D64& f) {
  std::vector<uint8_t> all;
  for (const auto* p : {&f.u, &f.v, &f.w}) {
    const auto* b = reinterpret_cast<const uint8_t*>(p->data());
    all.insert(all.end(), b, b + p->size() * 8);
  }
  return detail::crc32c(all);
}

// The version 13 golden stream: rewritten by today's encoder byte for byte, and decoded to
// pinned values. FACTZ_REGENERATE_GOLDEN_V13 writes it (only when it is added: existing
// golden files are never regenerated).
TEST(Vector3D64, GoldenVersion13StreamDecodesToThePinnedValuesAndIsReproduced) {
  // polynomial3d's formula in double arithmetic without libm (the same doubles on every IEEE
  // machine), with v scaled to 1e-200 and w carried through 1e12 (values that are not floats).
  VectorField3D64 f;
  f.nx = 9, f.ny = 8, f.nz = 7;
  for (int64_t z = 0; z < f.nz; ++z)
    for (int64_t y = 0; y < f.ny; ++y)
      for (int64_t x = 0; x < f.nx; ++x) {
        const double X = double(x), Y = double(y), Z = double(z);
        const double W = (Z - 4.2) * (X - 5.9) / 8.0 + (Y - 4.8) / 16.0;
        f.u.push_back((X - 6.3) * (Y - 4.6) / 8.0 + Z / 16.0 - 0.2);
        f.v.push_back(((Y - 5.1) * (Z - 3.7) / 8.0 - X / 32.0) * 1e-200);
        f.w.push_back(((1e12 + W) - 1e12) + W * 1e-9);
      }
  f.u[5] = std::numeric_limits<double>::quiet_NaN();  // one missing vertex
  struct Case {
    const char* file;
    Options options;
    uint32_t crc;
  };
  Options spec = options(Mode::speculative, 1e-3, Coder::ans, true);
  spec.anchor_stride = 4;
  Options block = options(Mode::block, 1e-2, Coder::huffman, false);
  const Case cases[] = {{"v13p2_speculative3d_rel1e-3_ans_zstd_s4_9x8x7_masked.fz", spec, 0x0da70563u},
                        {"v13_block3d_rel1e-2_huffman_nozstd_9x8x7_masked.fz", block, 0x1c2ecf17u}};
  const std::string dir = std::string(FACTZ_TEST_DATA_DIR) + "/golden/";
  {  // the speculative case written with predictor 1, before the writer chose axes: still decodes
    std::ifstream in(dir + "v13_speculative3d_rel1e-3_ans_zstd_s4_9x8x7_masked.fz", std::ios::binary);
    ASSERT_TRUE(in.good());
    const std::vector<uint8_t> old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto d = decompress3d64(old);
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    EXPECT_EQ(planes_crc64(d.value()), 0x730b5966u);
  }
  for (const Case& g : cases) {
    auto fresh = compress(f, g.options);
    ASSERT_TRUE(fresh.ok()) << g.file;
    if (std::getenv("FACTZ_REGENERATE_GOLDEN_V13")) {
      const std::vector<uint8_t> file = testing::classic(fresh.value());  // the golden files are classic streams
      std::ofstream(dir + g.file, std::ios::binary)
          .write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
      auto d = decompress3d64(fresh.value());
      ASSERT_TRUE(d.ok());
      std::printf("%s 0x%08xu\n", g.file, planes_crc64(d.value()));
      continue;
    }
    std::ifstream in(dir + g.file, std::ios::binary);
    ASSERT_TRUE(in.good()) << g.file;
    const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // compress writes the compact container (version 18) around the same sections.
    EXPECT_EQ(testing::compact(file), fresh.value()) << g.file << ": the encoder's bytes changed (a new format version?)";
    auto d = decompress3d64(file);
    ASSERT_TRUE(d.ok()) << g.file << ": " << d.status().to_string();
    EXPECT_EQ(planes_crc64(d.value()), g.crc) << g.file;
    if (g.options.mode == Mode::speculative) {
      EXPECT_EQ(testing::predictor3d_of(file), 2) << g.file;
    }
    auto c = compare(f, d.value());
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->violations(), 0);
  }
}

}  // namespace
}  // namespace factz
