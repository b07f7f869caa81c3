// float64 fields and streams through the CPU model of the CUDA pipeline (issue 18): the
// kernels' bodies, instantiated for double and driven on the host in launch order
// (gpu_model.cpp), write the CPU's float64 streams byte for byte (every mode, coder and
// zstd setting, masks, the traps of tests/test_float64_codec.cpp: critical points that
// exist only in double, bounds far below float's resolution, magnitudes 2^+-664, the
// edges of double) and decode every CPU float64 stream to the CPU's doubles, bit for bit.
// Runs on every machine (no GPU, no nvcc).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "api/device_backend.hpp"
#include "backend/cpu/frontend.hpp"
#include "backend/cuda/gpu_model.hpp"
#include "cuda_test_support.hpp"
#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "factz/topology.hpp"
#include "kernels/exact_rounding.hpp"
#include "synth.hpp"

namespace {

using factz::BoundMode;
using factz::Coder;
using factz::Mode;
using factz::Options;
using factz::VectorField2D64;
using factz::test::describe;

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

template <class V>
std::vector<double> as_vector(const V& x) {
  return std::vector<double>(x.begin(), x.end());
}

/// The CPU's float64 stream of f and the model's: equal bytes; the CPU's decoder and the
/// model's give the same doubles and mask. Returns the number of missing vertices the CPU
/// decoder reported (-1 on a failure, which is reported too).
int64_t expect_model_is_cpu(const VectorField2D64& f, const Options& o) {
  auto cpu = factz::compress(f, o);
  EXPECT_TRUE(cpu.ok()) << cpu.status().to_string();
  if (!cpu.ok()) return -1;
  auto model = factz::cuda_detail::model_compress(f, o);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (!model.ok()) return -1;
  EXPECT_EQ(model->size(), cpu->size());
  EXPECT_TRUE(model.value() == cpu.value()) << "the model's float64 stream differs from the CPU's";
  auto a = factz::decompress64(cpu.value());
  auto b = factz::cuda_detail::model_decompress64(cpu.value());
  EXPECT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_TRUE(b.ok()) << b.status().to_string();
  if (!a.ok() || !b.ok()) return -1;
  EXPECT_TRUE(same_bits(a->u, b->u));
  EXPECT_TRUE(same_bits(a->v, b->v));
  EXPECT_EQ(a->mask, b->mask);
  return std::count(a->mask.begin(), a->mask.end(), uint8_t(1));
}

struct NamedField64 {
  std::string name;
  VectorField2D64 f;
};

/// Genuinely double fields, float-valued ones, a real field made double, degenerate grids.
std::vector<NamedField64> fields64() {
  std::vector<NamedField64> out;
  out.push_back({"turbulence64_67x45", factz::synth::turbulence64(67, 45, 1, 4.0)});
  out.push_back({"turbulence64_100x33", factz::synth::turbulence64(100, 33, 2)});
  out.push_back({"below_float_41x37", factz::test::below_float_field(41, 37, 3)});
  out.push_back({"widened_noise_33x29", factz::test::widened(factz::synth::noise(33, 29, 4))});
  const std::string base = std::string(FACTZ_TEST_DATA_DIR) + "/ncl_storm_t0";
  auto storm = factz::read_vector_field(base + "_u_36x33.f32", base + "_v_36x33.f32", 36, 33);
  if (storm.ok()) {
    VectorField2D64 g = factz::test::widened(storm.value());
    const VectorField2D64 detail = factz::synth::turbulence64(36, 33, 5);
    for (size_t k = 0; k < g.u.size(); ++k) {  // below float's resolution of the values
      g.u[k] += 1e-9 * detail.u[k];
      g.v[k] -= 1e-9 * detail.v[k];
    }
    out.push_back({"ncl_storm_t0_double", std::move(g)});
  }
  out.push_back({"zeros_33x31", factz::test::filled64(33, 31, 0.0, 0.0)});
  out.push_back({"constant_35x17", factz::test::filled64(35, 17, 1.0 + 0x1p-45, -3.25)});
  out.push_back({"row_40x1", factz::synth::turbulence64(40, 1, 6)});
  out.push_back({"column_1x29", factz::synth::turbulence64(1, 29, 7)});
  out.push_back({"tiny_2x2", VectorField2D64{2, 2, {1.0, -1.0, -1.0, 1.0}, {1.0, 1.0, -1.0, -1.0}}});
  out.push_back({"below_float_33x2", factz::test::below_float_field(33, 2, 9)});
  return out;
}

TEST(GpuModel64, StreamsAreTheCpusForEveryModeCoderAndZstd) {
  int streams = 0;
  for (const auto& nf : fields64())
    for (auto [bm, bound, s0] : {std::tuple{BoundMode::rel, 1e-2, int64_t{16}}, std::tuple{BoundMode::rel, 1e-4, int64_t{4}},
                                 std::tuple{BoundMode::abs, 0.0, int64_t{16}}, std::tuple{BoundMode::rel, 0.5, int64_t{8}}})
      for (Options o : factz::test::every_mode_coder_and_zstd(bm, bound, s0)) {
        o.threads = 2;
        SCOPED_TRACE(nf.name + " " + describe(o) + (bm == BoundMode::rel ? " rel" : " abs"));
        EXPECT_EQ(expect_model_is_cpu(nf.f, o), 0);
        ++streams;
      }
  EXPECT_GE(streams, 11 * 4 * 12);
}

// The block frontend's decisions on doubles: per-vertex bound ids, tile ids,
// reconstructions, how each vertex is stored (coded, all 64 bits, or rounded to 24 bits:
// kernels/exact_rounding.hpp) and the repair statistics, against the CPU's run_block.
TEST(GpuModel64, BlockFrontendMakesTheCpuDecisions) {
  int64_t rounded = 0, repaired = 0;
  const std::vector<NamedField64> fields = {{"turbulence64", factz::synth::turbulence64(70, 45, 3)},
                                            {"below_float", factz::test::below_float_field(64, 48, 31)},
                                            {"extreme", factz::test::extreme_field(37, 35, 1)}};
  for (const auto& nf : fields)
    for (double eb : {1e-3, 1e-9, 0.2, 5.0}) {
      SCOPED_TRACE(nf.name + " eb " + std::to_string(eb));
      factz::detail::FrontendResult64 cpu;
      factz::detail::run_block(nf.f, eb, 2, cpu);
      Options o;
      o.mode = Mode::block;
      o.bound_mode = BoundMode::abs;
      o.bound = eb;
      factz::cuda_detail::TiledIntermediates64 mid;
      auto s = factz::cuda_detail::model_compress(nf.f, o, &mid);
      ASSERT_TRUE(s.ok()) << s.status().to_string();
      EXPECT_EQ(mid.tile_ids[0], cpu.u.tile_ids);
      EXPECT_EQ(mid.tile_ids[1], cpu.v.tile_ids);
      EXPECT_TRUE(same_bits(mid.recon[0], as_vector(cpu.u.recon)));
      EXPECT_TRUE(same_bits(mid.recon[1], as_vector(cpu.v.recon)));
      EXPECT_TRUE(std::equal(mid.exact[0].begin(), mid.exact[0].end(), cpu.u.exact.begin(), cpu.u.exact.end()));
      EXPECT_TRUE(std::equal(mid.exact[1].begin(), mid.exact[1].end(), cpu.v.exact.begin(), cpu.v.exact.end()));
      EXPECT_EQ(mid.repair_rounds, cpu.repair_rounds);
      EXPECT_EQ(mid.repaired_vertices, cpu.repaired_vertices);
      for (int c = 0; c < 2; ++c)
        rounded += std::count(mid.exact[c].begin(), mid.exact[c].end(), factz::detail::kExactListRounded);
      repaired += mid.repaired_vertices;
    }
  EXPECT_GT(rounded, 100) << "the fields no longer list exact vertices rounded to 24 bits";
  EXPECT_GT(repaired, 0) << "the fields no longer make the exact check replace a rounding";
}

// The repair rounds on doubles, from mode none's quantization at large bounds (many
// changed signatures), every original signature derived (no cp_free).
TEST(GpuModel64, RepairRoundsMatchTheCpu) {
  int64_t total = 0;
  for (const auto& f : {factz::synth::turbulence64(67, 45, 1, 4.0), factz::test::below_float_field(41, 37, 3)})
    for (double eb : {0.05, 0.5}) {
      SCOPED_TRACE("eb " + std::to_string(eb));
      factz::detail::FrontendResult64 cpu;
      factz::detail::run_none(f, eb, 2, cpu);
      std::vector<double> recon[2] = {as_vector(cpu.u.recon), as_vector(cpu.v.recon)};
      std::vector<uint8_t> exact[2] = {{cpu.u.exact.begin(), cpu.u.exact.end()}, {cpu.v.exact.begin(), cpu.v.exact.end()}};
      factz::detail::repair_signatures(f, nullptr, 2, cpu);
      int64_t rounds = 0, repaired = 0;
      factz::cuda_detail::model_repair(f, nullptr, recon, exact, rounds, repaired);
      EXPECT_TRUE(same_bits(recon[0], as_vector(cpu.u.recon)));
      EXPECT_TRUE(same_bits(recon[1], as_vector(cpu.v.recon)));
      EXPECT_TRUE(std::equal(exact[0].begin(), exact[0].end(), cpu.u.exact.begin(), cpu.u.exact.end()));
      EXPECT_TRUE(std::equal(exact[1].begin(), exact[1].end(), cpu.v.exact.begin(), cpu.v.exact.end()));
      EXPECT_EQ(rounds, cpu.repair_rounds);
      EXPECT_EQ(repaired, cpu.repaired_vertices);
      total += repaired;
    }
  EXPECT_GT(total, 100) << "the fields no longer exercise the repair rounds";
}

// Missing vertices of every shape marked with NaN (64-bit payloads), and of some shapes by
// the caller's mask and by a declared fill value: the CPU's bytes, the missing vertices'
// 64 bits back, the mask back.
TEST(GpuModel64, MaskedStreamsAreTheCpusForEveryShapeModeCoderAndZstd) {
  const int64_t nx = 70, ny = 45;  // 3 x 2 tiles, 5 x 3 anchors of stride 16
  const VectorField2D64 base = factz::synth::turbulence64(nx, ny, 3, 6.0);
  int masked = 0;
  for (const auto& [name, mask] : factz::test::mask_shapes(nx, ny))
    for (auto how : {factz::test::MissingAs::nan, factz::test::MissingAs::mask, factz::test::MissingAs::fill}) {
      if (how != factz::test::MissingAs::nan && name != "land" && name != "anchors" && name != "all_but_one")
        continue;
      const int64_t expected = std::count(mask.begin(), mask.end(), uint8_t(1));
      const VectorField2D64 f = factz::test::with_missing(base, mask, how);
      for (const auto& o : factz::test::masked_option_sets(2)) {
        SCOPED_TRACE(name + " " + factz::test::missing_as_name(how) + " " + describe(o));
        EXPECT_EQ(expect_model_is_cpu(f, o), expected);
        masked += expected > 0;
      }
    }
  EXPECT_EQ(masked, (10 + 2 * 3) * 12);
}

TEST(GpuModel64, CriticalPointsThatExistOnlyInDoubleGiveTheCpuBytesAndAreKept) {
  const VectorField2D64 f = factz::test::below_float_field(64, 48, 31);
  const auto cps = factz::critical_points(f);
  ASSERT_TRUE(cps.ok());
  ASSERT_GT(cps->size(), 300u);
  for (Mode m : {Mode::block, Mode::speculative})
    for (Coder c : {Coder::huffman, Coder::ans})
      for (double eb : {1e-3, 1e-9, 1e-13}) {
        Options o;
        o.mode = m;
        o.coder = c;
        o.bound_mode = BoundMode::abs;
        o.bound = eb;
        SCOPED_TRACE(describe(o));
        EXPECT_EQ(expect_model_is_cpu(f, o), 0);
        auto model = factz::cuda_detail::model_compress(f, o);
        ASSERT_TRUE(model.ok());
        auto back = factz::cuda_detail::model_decompress64(model.value());
        ASSERT_TRUE(back.ok());
        const auto cmp = factz::compare(f, back.value());
        ASSERT_TRUE(cmp.ok());
        EXPECT_EQ(cmp->cp_decompressed, int64_t(cps->size()));
        EXPECT_EQ(cmp->violations(), 0);
      }
}

TEST(GpuModel64, BoundsFarBelowFloatResolutionGiveTheCpuBytes) {
  VectorField2D64 near_one = factz::synth::turbulence64(50, 41, 13);  // 1 +- 1e-12 x: floats are 1
  for (double& x : near_one.u) x = 1.0 + 1e-12 * x;
  for (double& x : near_one.v) x = 1.0 - 1e-12 * x;
  VectorField2D64 near_half = factz::synth::turbulence64(64, 64, 17);  // float's spacing is 6e-8 there
  for (double& x : near_half.u) x = 0.5 + 1e-5 * x;
  for (double& x : near_half.v) x = 0.5 - 1e-5 * x;
  for (const auto& [f, eb] : {std::pair{near_one, 1e-10}, std::pair{near_one, 1e-13}, std::pair{near_half, 1e-9}})
    for (Options o : factz::test::every_mode_coder_and_zstd(BoundMode::abs, eb)) {
      if (o.zstd == (o.coder == Coder::huffman)) continue;  // one zstd setting per coder
      SCOPED_TRACE(describe(o));
      EXPECT_EQ(expect_model_is_cpu(f, o), 0);
    }
}

TEST(GpuModel64, MagnitudesOutsideFloatRangeGiveTheCpuBytes) {
  const VectorField2D64 base = factz::synth::turbulence64(48, 40, 19);
  for (int e : {-664, 664}) {
    const VectorField2D64 f = factz::test::scaled(base, e);
    for (Options o : factz::test::every_mode_coder_and_zstd(BoundMode::rel, 1e-3)) {
      if (!o.zstd) continue;
      SCOPED_TRACE(describe(o) + " scale 2^" + std::to_string(e));
      EXPECT_EQ(expect_model_is_cpu(f, o), 0);
    }
  }
}

TEST(GpuModel64, EdgesOfDoubleGiveTheCpuBytesAndValues) {
  const std::vector<NamedField64> fields = {
      {"+-DBL_MAX", VectorField2D64{3, 2, {DBL_MAX, -DBL_MAX, DBL_MAX, -DBL_MAX, DBL_MAX, 0.0},
                                    {-DBL_MAX, DBL_MAX, DBL_MAX, -DBL_MAX, -0.0, DBL_MAX}}},
      {"subnormals", VectorField2D64{2, 2, {4.9e-324, -4.9e-324, 1e-310, -0.0}, {-1e-315, 2e-320, 0.0, 1e-308}}},
      {"random 1", factz::test::extreme_field(37, 35, 1)},
      {"random 2", factz::test::extreme_field(70, 3, 2)},
      {"random 3", factz::test::extreme_field(5, 41, 3)},
  };
  for (const auto& nf : fields)
    for (double eb : {0.0, 4.9e-324, 1e-300, 1.0, 1e300, DBL_MAX})
      for (Options o : factz::test::every_mode_coder_and_zstd(BoundMode::abs, eb)) {
        if (o.zstd != (o.coder == Coder::ans)) continue;  // one zstd setting per coder
        SCOPED_TRACE(nf.name + " " + describe(o));
        EXPECT_EQ(expect_model_is_cpu(nf.f, o), 0);
      }
  // REL over a range that overflows double: the bound clamps.
  for (Options o : factz::test::every_mode_coder_and_zstd(BoundMode::rel, 0.5)) {
    SCOPED_TRACE("rel 0.5 " + describe(o));
    EXPECT_EQ(expect_model_is_cpu(fields[0].f, o), 0);
  }
}

// Damaged float64 sections behind valid CRCs: the model of the device decoder accepts
// exactly what the CPU decoder accepts, and then gives the same doubles.
TEST(GpuModel64, DamagedStreamsAreRejectedLikeTheCpuDoes) {
  VectorField2D64 f = factz::synth::turbulence64(40, 30, 9, 4.0);
  f.u[50] = std::nan("");  // the mask sections too
  for (Mode mode : {Mode::none, Mode::block, Mode::speculative})
    for (Coder coder : {Coder::ans, Coder::huffman}) {
      Options o;
      o.mode = mode;
      o.coder = coder;
      o.zstd = false;
      o.bound = 1e-3;
      SCOPED_TRACE(describe(o));
      auto s = factz::compress(f, o);
      ASSERT_TRUE(s.ok());
      const std::vector<uint8_t>& bytes = s.value();
      EXPECT_FALSE(factz::cuda_detail::model_decompress64(std::span(bytes).first(bytes.size() / 2)).ok());
      const auto damaged = factz::test::damaged_sections(bytes, 6464, 150, true);
      ASSERT_FALSE(damaged.empty());
      int rejected = 0;
      for (const auto& [trial, stream] : damaged) {
        auto cpu = factz::decompress64(stream);
        auto dev = factz::cuda_detail::model_decompress64(stream);
        EXPECT_EQ(cpu.ok(), dev.ok()) << "trial " << trial << ": cpu " << cpu.status().to_string() << ", model "
                                      << dev.status().to_string();
        if (cpu.ok() && dev.ok()) {
          EXPECT_TRUE(same_bits(cpu->u, dev->u));
          EXPECT_TRUE(same_bits(cpu->v, dev->v));
          EXPECT_EQ(cpu->mask, dev->mask);
        }
        rejected += !dev.ok();
      }
      EXPECT_GT(rejected, 0);
    }
}

TEST(GpuModel64, EachDecoderRefusesTheOtherDataType) {
  const VectorField2D64 f = factz::synth::turbulence64(20, 20, 31);
  const auto s64 = factz::compress(f, Options{});
  const auto s32 = factz::compress(factz::synth::turbulence(20, 20, 31), Options{});
  ASSERT_TRUE(s64.ok() && s32.ok());
  const auto a = factz::cuda_detail::model_decompress(s64.value());
  EXPECT_EQ(a.status().code(), factz::Code::invalid_argument);
  EXPECT_NE(a.status().message().find("float64"), std::string::npos) << a.status().to_string();
  const auto b = factz::cuda_detail::model_decompress64(s32.value());
  EXPECT_EQ(b.status().code(), factz::Code::invalid_argument);
  EXPECT_NE(b.status().message().find("float32"), std::string::npos) << b.status().to_string();
  Options edges;
  edges.exact_edges = 1;  // not on the device yet, whatever the data type
  EXPECT_EQ(factz::cuda_detail::model_compress(f, edges).status().code(), factz::Code::backend_unavailable);
}

// The kernel's 24-bit rounding is float's round-to-nearest-even inside float's normal range,
// and scale-free outside it (an independent reference: the float conversion).
TEST(ExactRounding, IsTheFloatRoundingInFloatRangeAndScaleFree) {
  factz::test::Splitmix rng{2424};
  for (int i = 0; i < 200000; ++i) {
    const double x = std::ldexp(rng.unit(), int(rng() % 200) - 100);
    if (x == 0.0) continue;
    const double r = factz::detail::round_to_24_bits(x);
    ASSERT_EQ(std::bit_cast<uint64_t>(r), std::bit_cast<uint64_t>(double(float(x)))) << x;
    ASSERT_EQ(std::bit_cast<uint64_t>(factz::detail::round_to_24_bits(r)), std::bit_cast<uint64_t>(r));
    const double big = std::ldexp(x, 700);  // beyond float's range: the same digits
    ASSERT_EQ(std::bit_cast<uint64_t>(factz::detail::round_to_24_bits(big)),
              std::bit_cast<uint64_t>(std::ldexp(r, 700)));
  }
  // Ties go to even; a carry into the exponent; the largest double rounds to infinity.
  EXPECT_EQ(factz::detail::round_to_24_bits(1.0 + 0x1p-24), 1.0);
  EXPECT_EQ(factz::detail::round_to_24_bits(1.0 + 0x1p-23 + 0x1p-24), 1.0 + 0x1p-22);
  EXPECT_EQ(factz::detail::round_to_24_bits(2.0 - 0x1p-30), 2.0);
  EXPECT_TRUE(std::isinf(factz::detail::round_to_24_bits(DBL_MAX)));
  double r = 0;
  EXPECT_FALSE(factz::detail::rounded_exact_value(0.5, 1.0, r)) << "a 24-bit value keeps its bits";
  EXPECT_FALSE(factz::detail::rounded_exact_value(1.0 + 0x1p-40, 0x1p-41, r)) << "a rounding beyond eb";
  EXPECT_TRUE(factz::detail::rounded_exact_value(1.0 + 0x1p-40, 0x1p-40, r));
  EXPECT_EQ(r, 1.0);
  EXPECT_FALSE(factz::detail::rounded_exact_value(DBL_MAX, DBL_MAX, r)) << "infinity is never within";
}

// ---- Policy::cuda with float64 fields and streams, the model behind the dispatch ----------

factz::Result<int> model_device_count() { return 1; }

factz::Result<std::vector<uint8_t>> model_compress_on(const factz::VectorField2D& f, const Options& o, int device) {
  if (device != 0) return factz::invalid_argument("the model has device 0 only");
  return factz::cuda_detail::model_compress(f, o);
}

factz::Status model_decompress_into_on(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                                       int device) {
  if (device != 0) return factz::invalid_argument("the model has device 0 only");
  auto f = factz::cuda_detail::model_decompress(stream);
  if (!f.ok()) return f.status();
  std::copy(f->u.begin(), f->u.end(), u.begin());
  std::copy(f->v.begin(), f->v.end(), v.begin());
  return factz::Status::Ok();
}

factz::Result<std::vector<uint8_t>> model_compress64_on(const VectorField2D64& f, const Options& o, int device) {
  if (device != 0) return factz::invalid_argument("the model has device 0 only");
  return factz::cuda_detail::model_compress(f, o);
}

factz::Status model_decompress_into64_on(std::span<const uint8_t> stream, std::span<double> u, std::span<double> v,
                                         int device, std::vector<uint8_t>* mask) {
  if (device != 0) return factz::invalid_argument("the model has device 0 only");
  auto f = factz::cuda_detail::model_decompress64(stream);
  if (!f.ok()) return f.status();
  if (f->u.size() != u.size() || f->v.size() != v.size()) return factz::invalid_argument("plane sizes");
  std::copy(f->u.begin(), f->u.end(), u.begin());
  std::copy(f->v.begin(), f->v.end(), v.begin());
  if (mask) *mask = std::move(f->mask);
  return factz::Status::Ok();
}

/// The model as the CUDA backend's table fills it, float64 entries included.
const factz::detail::DeviceBackend kModelBackend64{&model_device_count,         &model_compress_on,
                                                   &model_decompress_into_on,   nullptr,
                                                   &model_compress64_on,        &model_decompress_into64_on};
/// A float32-only backend table (as before issue 18).
const factz::detail::DeviceBackend kFloat32Backend{&model_device_count, &model_compress_on, &model_decompress_into_on};

class DeviceBackendScope {
 public:
  explicit DeviceBackendScope(const factz::detail::DeviceBackend* b)
      : previous_(factz::detail::set_device_backend_for_testing(b)) {}
  ~DeviceBackendScope() { factz::detail::set_device_backend_for_testing(previous_); }
  DeviceBackendScope(const DeviceBackendScope&) = delete;
  DeviceBackendScope& operator=(const DeviceBackendScope&) = delete;

 private:
  const factz::detail::DeviceBackend* previous_;
};

TEST(GpuModel64Dispatch, PolicyCudaGivesTheCpusFloat64BytesAndDoubles) {
  DeviceBackendScope model(&kModelBackend64);
  const VectorField2D64 plain = factz::synth::turbulence64(67, 45, 1, 4.0);
  const auto land = factz::test::mask_shape(67, 45, "land");
  const VectorField2D64 masked = factz::test::with_missing(plain, land, factz::test::MissingAs::nan);
  for (const auto* f : {&plain, &masked})
    for (const Options& o : factz::test::every_mode_coder_and_zstd(BoundMode::rel, 1e-3)) {
      SCOPED_TRACE(describe(o) + (f == &masked ? " masked" : ""));
      factz::CompressStats cpu_stats, gpu_stats;
      auto cpu = factz::compress(*f, o, &cpu_stats);
      ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
      Options g = o;
      g.policy = factz::Policy::cuda;
      g.device = factz::kDeviceAuto;
      auto gpu = factz::compress(*f, g, &gpu_stats);
      ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
      ASSERT_TRUE(gpu.value() == cpu.value());
      EXPECT_EQ(gpu_stats.eb_abs, cpu_stats.eb_abs) << "the meta section's double bound";
      EXPECT_EQ(gpu_stats.masked_vertices, cpu_stats.masked_vertices);

      factz::DecompressOptions d;
      d.policy = factz::Policy::cuda;
      auto a = factz::decompress64(cpu.value());
      auto b = factz::decompress64(cpu.value(), d);
      ASSERT_TRUE(a.ok() && b.ok()) << b.status().to_string();
      EXPECT_TRUE(same_bits(a->u, b->u));
      EXPECT_TRUE(same_bits(a->v, b->v));
      EXPECT_EQ(a->mask, b->mask);
      std::vector<double> u(a->u.size()), v(a->v.size());
      std::vector<uint8_t> m(a->u.size(), 7);
      ASSERT_TRUE(factz::decompress_into(cpu.value(), u, v, m, d).ok());
      EXPECT_TRUE(same_bits(a->u, u));
      EXPECT_TRUE(same_bits(a->v, v));
      EXPECT_EQ(m, a->mask.empty() ? std::vector<uint8_t>(u.size(), 0) : a->mask);
    }
}

TEST(GpuModel64Dispatch, PolicyCudaRefusesTheOtherDataTypeAndTablesWithoutFloat64) {
  const VectorField2D64 f = factz::synth::turbulence64(20, 20, 31);
  const auto s64 = factz::compress(f, Options{});
  const auto s32 = factz::compress(factz::synth::turbulence(20, 20, 31), Options{});
  ASSERT_TRUE(s64.ok() && s32.ok());
  factz::DecompressOptions d;
  d.policy = factz::Policy::cuda;
  Options o;
  o.policy = factz::Policy::cuda;
  {
    DeviceBackendScope model(&kModelBackend64);
    EXPECT_EQ(factz::decompress(s64.value(), d).status().code(), factz::Code::invalid_argument);
    EXPECT_EQ(factz::decompress64(s32.value(), d).status().code(), factz::Code::invalid_argument);
    std::vector<double> u(400), v(400);
    EXPECT_EQ(factz::decompress_into(s32.value(), u, v, d).code(), factz::Code::invalid_argument);
    EXPECT_EQ(factz::decompress_into(s64.value(), std::span<double>(u).first(399), v, d).code(),
              factz::Code::invalid_argument);
    auto half = std::span<const uint8_t>(s64.value()).first(s64->size() / 2);
    EXPECT_FALSE(factz::decompress64(half, d).ok());
    o.device = 1;
    EXPECT_EQ(factz::compress(f, o).status().message(), "policy cuda: device 1 does not exist: 1 CUDA device (0)");
    o.device = 0;
  }
  DeviceBackendScope float32_only(&kFloat32Backend);
  const auto c = factz::compress(f, o);
  EXPECT_EQ(c.status().code(), factz::Code::backend_unavailable);
  EXPECT_NE(c.status().message().find("float64"), std::string::npos) << c.status().to_string();
  EXPECT_EQ(factz::decompress64(s64.value(), d).status().code(), factz::Code::backend_unavailable);
  EXPECT_TRUE(factz::decompress(s32.value(), d).ok()) << "float32 still runs on such a table";
}

// The build's own backend on this machine: on a GPU the CPU's float64 bytes and doubles,
// else backend_unavailable from every float64 entry point.
TEST(GpuModel64Dispatch, TheRealBackendTakesFloat64OnAGpuOrEveryEntryPointIsBackendUnavailable) {
  const VectorField2D64 f = factz::synth::turbulence64(67, 45, 1, 4.0);
  for (const Options& base : factz::test::every_mode_and_coder(1e-3)) {
    SCOPED_TRACE(describe(base));
    auto cpu = factz::compress(f, base);
    ASSERT_TRUE(cpu.ok());
    Options o = base;
    o.policy = factz::Policy::cuda;
    factz::DecompressOptions d;
    d.policy = factz::Policy::cuda;
    auto gpu = factz::compress(f, o);
    auto dec = factz::decompress64(cpu.value(), d);
    std::vector<double> u(f.u.size()), v(f.v.size());
    const factz::Status into = factz::decompress_into(cpu.value(), u, v, d);
    if (gpu.ok()) {
      EXPECT_TRUE(gpu.value() == cpu.value());
      auto ref = factz::decompress64(cpu.value());
      ASSERT_TRUE(dec.ok() && into.ok() && ref.ok());
      EXPECT_TRUE(same_bits(ref->u, dec->u) && same_bits(ref->v, dec->v));
      EXPECT_TRUE(same_bits(ref->u, u) && same_bits(ref->v, v));
      continue;
    }
    for (const factz::Status& s : {gpu.status(), dec.status(), into}) {
      EXPECT_EQ(s.code(), factz::Code::backend_unavailable) << s.to_string();
      EXPECT_EQ(s.message().rfind("policy cuda: ", 0), 0u) << s.to_string();
    }
  }
}

}  // namespace
