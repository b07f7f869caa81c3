// Missing vertices in 3D vector fields (issue 22; docs/architecture.md, "Masks"): a vertex
// is missing when the caller's mask says so, when a component is NaN or equals a declared
// fill value; every Freudenthal tetrahedron touching one is off the mesh. In every mode the
// valid tetrahedra keep their exact signatures (the extractor with the mask: the same
// tetrahedra, the same types), valid vertices keep the bound, missing ones come back bit for
// bit; masked streams are format version 12, unmasked ones keep their bytes; the bytes do not
// depend on the thread count; damaged masked streams fail cleanly; a golden file pins the
// format.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/topology3d.hpp"
#include "format/container.hpp"
#include "streams/stream_common.hpp"
#include "support/fields3d.hpp"
#include "support/polynomial3d.hpp"
#include "support/resealed.hpp"
#include "synth3d.hpp"

namespace factz {
namespace {

using Bytes = std::vector<uint8_t>;

Options opts(Mode mode, double rel, Coder coder = Coder::ans, bool zstd = true, int64_t s0 = 16) {
  Options o;
  o.mode = mode;
  o.bound_mode = BoundMode::rel;
  o.bound = rel;
  o.coder = coder;
  o.zstd = zstd;
  o.anchor_stride = s0;
  return o;
}

constexpr Mode kModes[3] = {Mode::none, Mode::block, Mode::speculative};

/// A mask with about `density` of the vertices set (a fixed xorshift sequence).
std::vector<uint8_t> random_mask(int64_t n, double density, uint64_t seed) {
  std::vector<uint8_t> m(size_t(n), 0);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& b : m) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    b = double(s >> 11) * 0x1p-53 < density;
  }
  return m;
}

uint32_t bits(float x) { return std::bit_cast<uint32_t>(x); }

uint16_t version_of(const Bytes& s) {
  auto p = detail::parse_container(s);
  return p.ok() ? p->header.version : 0;
}

/// Compresses f with o and checks the decoded field: the mask comes back (missing_mask of
/// f), every missing vertex holds f's bits, every valid one is within the bound, and (unless
/// mode none) every tetrahedron has f's signature on the mesh of the mask. Returns the stream.
Bytes check_round_trip(const VectorField3D& f, const Options& o, const std::string& what) {
  CompressStats st;
  auto s = compress(f, o, &st);
  EXPECT_TRUE(s.ok()) << what << ": " << s.status().to_string();
  if (!s.ok()) return {};
  const std::vector<uint8_t> missing = missing_mask(f);
  EXPECT_EQ(version_of(s.value()), missing.empty() ? (o.mode == Mode::speculative ? 10 : 8) : 12) << what;
  int64_t masked = 0;
  for (uint8_t m : missing) masked += m;
  EXPECT_EQ(st.masked_vertices, masked) << what;
  auto d = decompress3d(s.value());
  EXPECT_TRUE(d.ok()) << what << ": " << d.status().to_string();
  if (!d.ok()) return {};
  EXPECT_EQ(d->mask, missing) << what;
  const float eb = float(st.eb_abs);
  int64_t beyond = 0, changed = 0;
  for (size_t k = 0; k < f.u.size(); ++k) {
    const float a[3] = {f.u[k], f.v[k], f.w[k]}, b[3] = {d->u[k], d->v[k], d->w[k]};
    for (int c = 0; c < 3; ++c) {
      if (!missing.empty() && missing[k]) changed += bits(a[c]) != bits(b[c]);
      else beyond += !(std::fabs(double(a[c]) - double(b[c])) <= double(eb));
    }
  }
  EXPECT_EQ(beyond, 0) << what << ": valid values beyond eb " << eb;
  EXPECT_EQ(changed, 0) << what << ": missing vertices whose bits changed";
  if (o.mode != Mode::none) {
    auto so = signatures(f), sd = signatures(d.value());
    EXPECT_TRUE(so.ok() && sd.ok()) << what;
    if (so.ok() && sd.ok()) {
      EXPECT_EQ(so.value(), sd.value()) << what << ": a valid tetrahedron changed";
    }
    auto c = compare(f, d.value());
    EXPECT_TRUE(c.ok()) << what;
    if (c.ok()) {
      EXPECT_EQ(c->violations(), 0) << what;
    }
  }
  return s.value();
}

TEST(Mask3D, RandomMasksKeepTheValidTetrahedraInEveryMode) {
  const VectorField3D base = testing::random_modes(15, 13, 11, 5, 12, 6);
  int64_t cps = 0;
  for (double density : {0.02, 0.15, 0.5}) {
    VectorField3D f = base;
    f.mask = random_mask(f.size(), density, uint64_t(density * 1000));
    auto sig = signatures(f);
    ASSERT_TRUE(sig.ok());
    for (uint8_t s : sig.value()) cps += s != 0;
    for (Mode m : kModes)
      for (double r : {1e-2, 1e-3})
        check_round_trip(f, opts(m, r, r < 5e-3 ? Coder::huffman : Coder::ans, r < 5e-3, 4),
                         std::string(mode_name(m)) + " density " + std::to_string(density) + " REL " +
                             std::to_string(r));
  }
  EXPECT_GT(cps, 20) << "the masked fields keep critical points to check";
}

TEST(Mask3D, SmoothFlowsWithMasksAtSeveralDensities) {
  for (const auto& [name, flow] : testing::flows3d(14, false)) {
    VectorField3D f = flow;
    f.mask = random_mask(f.size(), 0.05, 3);
    for (Mode m : kModes) check_round_trip(f, opts(m, 1e-2), name + " " + mode_name(m));
  }
}

TEST(Mask3D, EveryVertexMissing) {
  // The values under a mask are kept bit for bit, whatever they are: random values cost
  // their 12 bytes, a fill value one triple.
  VectorField3D f = testing::random_modes(7, 6, 5, 2);
  f.mask.assign(size_t(f.size()), 1);
  f.u[3] = std::nanf("");
  for (Mode m : kModes) check_round_trip(f, opts(m, 1e-2), std::string("all missing ") + mode_name(m));
  VectorField3D fill = testing::filled3d(7, 6, 5, -9999.0f, -9999.0f, -9999.0f);
  fill.mask.assign(size_t(fill.size()), 1);
  for (Mode m : kModes) {
    const Bytes s = check_round_trip(fill, opts(m, 1e-2), std::string("all fill ") + mode_name(m));
    EXPECT_LT(s.size(), 600u) << mode_name(m);  // mostly the header and the section table
  }
}

TEST(Mask3D, AnAllZeroMaskWritesTheUnmaskedStream) {
  const VectorField3D f = testing::random_modes(9, 8, 7, 4);
  VectorField3D zeros = f;
  zeros.mask.assign(size_t(f.size()), 0);
  for (Mode m : kModes) {
    auto a = compress(f, opts(m, 1e-2)), b = compress(zeros, opts(m, 1e-2));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a.value(), b.value()) << mode_name(m);
    EXPECT_EQ(version_of(a.value()), m == Mode::speculative ? 10 : 8);
    auto d = decompress3d(a.value());
    ASSERT_TRUE(d.ok());
    EXPECT_TRUE(d->mask.empty());
  }
}

TEST(Mask3D, MasksOnEveryBoundaryFace) {
  const VectorField3D base = testing::taylor_green(12, 11, 10, 0.3);
  const int64_t nx = base.nx, ny = base.ny, nz = base.nz;
  for (int face = 0; face < 7; ++face) {  // each face alone, then all six at once
    VectorField3D f = base;
    f.mask.assign(size_t(f.size()), 0);
    for (int64_t z = 0; z < nz; ++z)
      for (int64_t y = 0; y < ny; ++y)
        for (int64_t x = 0; x < nx; ++x) {
          const bool on[6] = {x == 0, x == nx - 1, y == 0, y == ny - 1, z == 0, z == nz - 1};
          const bool hit = face < 6 ? on[face] : (on[0] || on[1] || on[2] || on[3] || on[4] || on[5]);
          if (hit) f.mask[size_t((z * ny + y) * nx + x)] = 1;
        }
    for (Mode m : kModes) check_round_trip(f, opts(m, 1e-2, Coder::ans, true, 4), "face " + std::to_string(face));
  }
}

TEST(Mask3D, ASingleValidTetrahedronKeepsItsCriticalPoint) {
  // A 3 x 3 x 3 grid whose only valid tetrahedron is tetrahedron 0 of the middle cube... of
  // the cube at (1, 1, 1): vertices a, a + e_x, a + e_x + e_y, a + (1, 1, 1), with the
  // vectors of a regular tetrahedron around the origin (a critical point).
  VectorField3D f = testing::filled3d(3, 3, 3, 5.0f, -2.0f, 1.0f);
  f.mask.assign(size_t(f.size()), 1);
  const int64_t at[4] = {(1 * 3 + 1) * 3 + 1, (1 * 3 + 1) * 3 + 2, (1 * 3 + 2) * 3 + 2, (2 * 3 + 2) * 3 + 2};
  const float p[4][3] = {{1.f, 1.f, 1.f}, {1.f, -1.f, -1.f}, {-1.f, 1.f, -1.f}, {-1.f, -1.f, 1.f}};
  for (int k = 0; k < 4; ++k) {
    f.mask[size_t(at[k])] = 0;
    f.u[size_t(at[k])] = p[k][0] * 0.75f;
    f.v[size_t(at[k])] = p[k][1] * 1.25f;
    f.w[size_t(at[k])] = p[k][2];
  }
  auto cps = critical_points(f);
  ASSERT_TRUE(cps.ok());
  ASSERT_EQ(cps->size(), 1u);
  EXPECT_EQ(cps->front().tetrahedron, 6 * ((1 * 2 + 1) * 2 + 1) + 0);
  for (Mode m : kModes)
    for (double r : {1e-1, 1e-3}) check_round_trip(f, opts(m, r, Coder::huffman, false, 2), mode_name(m));
}

TEST(Mask3D, NanComesBackBitForBit) {
  VectorField3D f = testing::random_modes(10, 9, 8, 6);
  const uint32_t payloads[] = {0x7fc00000u, 0xffc00001u, 0x7f800abcu, 0xffbfffffu};
  for (size_t k = 0; k < f.u.size(); k += 7) {
    const float nan = std::bit_cast<float>(payloads[(k / 7) % 4]);
    (k % 3 == 0 ? f.u : k % 3 == 1 ? f.v : f.w)[k] = nan;
  }
  for (Mode m : kModes) check_round_trip(f, opts(m, 1e-2), std::string("NaN ") + mode_name(m));
}

TEST(Mask3D, DeclaredFillValuesMarkMissingVerticesAndComeBack) {
  VectorField3D f = testing::abc_flow(11, 10, 9);
  for (size_t k = 5; k < f.u.size(); k += 11) f.w[k] = -9999.0f;
  auto suspect = suspected_fill_value(f);
  ASSERT_TRUE(suspect.has_value()) << "an undeclared fill value is suspected";
  EXPECT_EQ(suspect->value, -9999.0f);
  EXPECT_EQ(suspect->count, int64_t((f.u.size() - 5 + 10) / 11));
  FillValues3D fill;
  fill.u = fill.v = fill.w = -9999.0f;
  const int64_t marked = mark_missing(f, fill);
  EXPECT_EQ(marked, suspect->count);
  EXPECT_FALSE(suspected_fill_value(f).has_value()) << "declared: no longer suspected";
  for (Mode m : kModes) {
    const Bytes s = check_round_trip(f, opts(m, 1e-3), std::string("fill ") + mode_name(m));
    auto d = decompress3d(s);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->w[5], -9999.0f);
  }
  // A fill value given for one component only marks only the vertices holding it there.
  VectorField3D g = testing::filled3d(4, 4, 4, 1.0f, 2.0f, 3.0f);
  g.v[9] = 2.5f;
  FillValues3D only_v;
  only_v.v = 2.5f;
  EXPECT_EQ(mark_missing(g, only_v), 1);
  FillValues3D nan_fill;
  nan_fill.u = std::nanf("");
  VectorField3D h = testing::filled3d(4, 4, 4, 1.0f, 2.0f, 3.0f);
  EXPECT_EQ(mark_missing(h, nan_fill), 0);
  EXPECT_TRUE(h.mask.empty());
}

TEST(Mask3D, MissingVerticesCostLittle) {
  // Half of the grid missing (a slab holding a fill value, as land does) costs far less than
  // the same field without the slab: the missing vertices have no codes, ids or exact values,
  // and their fill value is stored once.
  const VectorField3D f = testing::random_modes(24, 20, 16, 8);
  VectorField3D half = f;
  half.mask.assign(size_t(f.size()), 0);
  for (int64_t k = 0; k < f.size() / 2; ++k) {
    half.mask[size_t(k)] = 1;
    half.u[size_t(k)] = half.v[size_t(k)] = half.w[size_t(k)] = 1e20f;
  }
  for (Mode m : kModes) {
    auto whole = compress(f, opts(m, 1e-3));
    ASSERT_TRUE(whole.ok());
    const Bytes masked = check_round_trip(half, opts(m, 1e-3), std::string("slab ") + mode_name(m));
    EXPECT_LT(double(masked.size()), 0.65 * double(whole->size())) << mode_name(m);
  }
}

TEST(Mask3D, BytesAndValuesDoNotDependOnTheThreadCount) {
  VectorField3D f = testing::random_modes(21, 19, 18, 9);
  f.mask = random_mask(f.size(), 0.1, 11);
  f.v[17] = std::nanf("");
  for (Mode m : kModes) {
    Options one = opts(m, 1e-3, Coder::ans, true, 4), two = one;
    one.policy = two.policy = Policy::omp;
    one.threads = 1;
    two.threads = 2;
    auto a = compress(f, one), b = compress(f, two);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a.value(), b.value()) << mode_name(m);
    DecompressOptions d1, d2;
    d1.policy = d2.policy = Policy::omp;
    d1.threads = 1;
    d2.threads = 2;
    auto x = decompress3d(a.value(), d1), y = decompress3d(a.value(), d2);
    ASSERT_TRUE(x.ok() && y.ok());
    EXPECT_EQ(testing::planes_crc(x.value()), testing::planes_crc(y.value())) << mode_name(m);
    EXPECT_EQ(x->mask, y->mask);
  }
}

TEST(Mask3D, EveryTruncationAndFlippedByteOfAMaskedStreamIsRejected) {
  VectorField3D f = testing::random_modes(6, 5, 4, 3);
  f.mask = random_mask(f.size(), 0.2, 5);
  f.w[2] = std::nanf("");
  for (Mode m : kModes) {
    auto s = compress(f, opts(m, 1e-2, Coder::huffman, false, 2));
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(version_of(s.value()), 12);
    for (size_t len = 0; len < s->size(); ++len) {
      const Bytes cut(s->begin(), s->begin() + std::ptrdiff_t(len));
      auto d = decompress3d(cut);
      ASSERT_FALSE(d.ok()) << mode_name(m) << ": a truncation to " << len << " bytes decoded";
      EXPECT_TRUE(d.status().code() == Code::corrupt_stream) << d.status().to_string();
    }
    for (size_t at = 0; at < s->size(); ++at) {
      Bytes bad = s.value();
      bad[at] ^= 0x10;
      auto d = decompress3d(bad);
      ASSERT_FALSE(d.ok()) << mode_name(m) << ": a flipped byte at " << at << " decoded";
    }
  }
}

// A header forged to declare a larger grid (re-sealed) is refused from the mask's recorded
// count and the codes' symbol count, before planes or a bitmap are allocated for it.
TEST(Mask3D, AForgedGridIsRefusedFromTheMasksCountBeforeAnythingIsAllocated) {
  VectorField3D f = testing::random_modes(9, 8, 7, 3);
  f.mask = random_mask(f.size(), 0.2, 5);
  for (Mode m : kModes) {
    auto s = compress(f, opts(m, 1e-2, Coder::ans, true, 2));
    ASSERT_TRUE(s.ok());
    for (uint64_t scale : {uint64_t(2), uint64_t(1000)}) {
      const auto forged = testing::resealed(s.value(), [&](detail::Header& h, auto&) { h.nz *= scale; });
      auto d = decompress3d(forged);
      ASSERT_FALSE(d.ok()) << mode_name(m) << " x" << scale;
      EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
      EXPECT_NE(d.status().message().find("with its mask's missing vertices needs"), std::string::npos)
          << mode_name(m) << " x" << scale << ": " << d.status().to_string();
    }
  }
}

TEST(Mask3D, OlderVersionsAndOtherDecodersRefuseMaskedStreams) {
  VectorField3D f = testing::random_modes(8, 7, 6, 2);
  f.mask = random_mask(f.size(), 0.1, 2);
  auto s = compress(f, opts(Mode::block, 1e-2));
  ASSERT_TRUE(s.ok());
  auto two_d = decompress(s.value());
  ASSERT_FALSE(two_d.ok());
  EXPECT_NE(two_d.status().message().find("decompress3d"), std::string::npos) << two_d.status().to_string();
  // The mask section outside version 12 is not part of a 3D stream: the same sections
  // relabelled as version 8 (or 10), the header re-checksummed, are refused by name.
  // (In the classic container, whose version field is the sections' version.)
  for (uint8_t version : {uint8_t(8), uint8_t(10)}) {
    Bytes relabelled = testing::classic(s.value());
    relabelled[4] = version;
    relabelled[5] = 0;
    testing::reseal_header_crc(relabelled);
    auto d = decompress3d(relabelled);
    ASSERT_FALSE(d.ok()) << int(version);
    EXPECT_EQ(d.status().code(), Code::corrupt_stream) << d.status().to_string();
    if (version == 8) {
      EXPECT_NE(d.status().message().find("mask_and_values"), std::string::npos) << d.status().to_string();
    }
  }
}

// The speculative case written with predictor 1 (before the writer chose axes and code
// transforms): it still decodes to its values, the missing vertices' bits included.
TEST(Mask3D, GoldenPredictor1StreamStillDecodesToItsValues) {
  testing::expect_golden3d_decodes("v12_speculative3d_rel1e-2_ans_zstd_s4_12x10x9_masked.fz", 0x3c6e36d2u,
                                   [](const VectorField3D& d) {
                                     EXPECT_EQ(bits(d.u[5]), 0x7fc00123u);
                                     EXPECT_EQ(d.v[7], -9999.0f);
                                   });
}

// FACTZ_REGENERATE_GOLDEN=1 rewrites the files (only when the format version is bumped or a
// case is added) and prints the CRCs to paste below.
TEST(Mask3D, GoldenVersion12StreamsDecodeToThePinnedValuesAndAreReproduced) {
  VectorField3D f = testing::polynomial3d(12, 10, 9);
  f.mask.assign(size_t(f.size()), 0);
  for (int64_t k = 0; k < f.size(); ++k) {
    const int64_t x = k % f.nx, y = (k / f.nx) % f.ny, z = k / (f.nx * f.ny);
    if ((x - 3) * (x - 3) + (y - 4) * (y - 4) + (z - 2) * (z - 2) < 10) f.mask[size_t(k)] = 1;  // a ball
    if (x == f.nx - 1 && y > 5) f.mask[size_t(k)] = 1;                                       // part of a face
  }
  f.u[5] = std::bit_cast<float>(0x7fc00123u);  // a NaN payload
  f.mask[7] = 1;
  f.v[7] = -9999.0f;
  const std::vector<testing::Golden3DCase> cases = {
      {"v12_block3d_rel1e-2_huffman_nozstd_12x10x9_masked.fz", opts(Mode::block, 1e-2, Coder::huffman, false),
       0x479bfee0u},
      {"v12_none3d_rel1e-3_ans_zstd_12x10x9_masked.fz", opts(Mode::none, 1e-3), 0x9fbfeb39u},
      {"v12p2_speculative3d_rel1e-2_ans_zstd_s4_12x10x9_masked.fz", opts(Mode::speculative, 1e-2, Coder::ans, true, 4),
       0x4267ded0u}};
  testing::check_golden3d(f, cases, [&](const testing::Golden3DCase& g, const Bytes& file, const VectorField3D& d) {
    EXPECT_EQ(version_of(file), 12) << g.file;
    if (g.options.mode == Mode::speculative) {
      EXPECT_EQ(testing::predictor3d_of(file), 2) << g.file;
    }
    EXPECT_EQ(d.mask, missing_mask(f)) << g.file;
    EXPECT_EQ(bits(d.u[5]), 0x7fc00123u) << g.file;
    EXPECT_EQ(d.v[7], -9999.0f) << g.file;
    if (g.options.mode != Mode::none) {
      auto c = compare(f, d);
      ASSERT_TRUE(c.ok());
      EXPECT_EQ(c->violations(), 0) << g.file;
      EXPECT_GT(c->cp_original, 0) << g.file;
    }
  });
}

}  // namespace
}  // namespace factz
