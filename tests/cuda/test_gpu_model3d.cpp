// The CUDA 3D kernels' bodies, driven on the host in launch order (gpu_model3d.cpp), make the
// CPU pipeline's decisions and write its bytes (issue 22). Runs on every machine (no GPU, no
// nvcc): every stream of the model is compared byte for byte with factz::compress of the
// same field on the CPU (whose bytes are also checked at a second thread count), and the
// model's decode of the CPU stream bit for bit with factz::decompress3d.
// GpuModel3D.TheComparisonSeesAChangedDecision shows the comparison can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "api/device_backend.hpp"
#include "backend/cpu/block3d_mode.hpp"
#include "backend/cpu/speculative3d_mode.hpp"
#include "backend/cuda/gpu_model3d.hpp"
#include "factz/compress3d.hpp"
#include "factz/topology3d.hpp"
#include "kernels/quantizer.hpp"
#include "kernels/tiles.hpp"
#include "streams/phase_choices3d.hpp"
#include "streams/stream_common.hpp"
#include "synth3d.hpp"

namespace {

using factz::Coder;
using factz::Mode;
using factz::VectorField3D;

struct Field3 {
  std::string name;
  VectorField3D f;
};

VectorField3D filled(int64_t nx, int64_t ny, int64_t nz, float u, float v, float w) {
  VectorField3D f;
  f.nx = nx, f.ny = ny, f.nz = nz;
  f.u.assign(size_t(f.size()), u);
  f.v.assign(size_t(f.size()), v);
  f.w.assign(size_t(f.size()), w);
  return f;
}

/// Uniform values in [-1, 1] (no structure: critical points everywhere).
VectorField3D noise(int64_t nx, int64_t ny, int64_t nz, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  VectorField3D f = filled(nx, ny, nz, 0, 0, 0);
  for (auto* p : {&f.u, &f.v, &f.w})
    for (float& x : *p) x = d(rng);
  return f;
}

/// The bundled crop of a lid-driven cavity flow (tests/data/cavity3d_crop_*_24x24x24.f32).
bool read_crop(VectorField3D& f) {
  constexpr int64_t kCrop = 24;
  f = filled(kCrop, kCrop, kCrop, 0, 0, 0);
  std::vector<float>* planes[3] = {&f.u, &f.v, &f.w};
  const char* names[3] = {"u", "v", "w"};
  for (int c = 0; c < 3; ++c) {
    std::ifstream in(std::string(FACTZ_TEST_DATA_DIR) + "/cavity3d_crop_" + names[c] + "_24x24x24.f32",
                     std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(planes[c]->data()), std::streamsize(planes[c]->size() * sizeof(float))))
      return false;
  }
  return true;
}

std::vector<Field3> fields() {
  using namespace factz::testing;
  std::vector<Field3> out;
  out.push_back({"zeros_9x8x7", filled(9, 8, 7, 0, 0, 0)});
  out.push_back({"constant_10x7x5", filled(10, 7, 5, 0.25f, -3.0f, 1.5f)});
  out.push_back({"ties_13x11x9", tie_field(13, 11, 9, 5)});
  out.push_back({"tiny_2x2x2", noise(2, 2, 2, 1)});
  out.push_back({"tiny_3x2x2", noise(3, 2, 2, 2)});
  out.push_back({"one_cell_thick_17x9x2", noise(17, 9, 2, 3)});
  out.push_back({"one_vertex_thick_6x5x1", noise(6, 5, 1, 4)});
  out.push_back({"single_vertex_1x1x1", noise(1, 1, 1, 5)});
  out.push_back({"noise_15x14x13", noise(15, 14, 13, 6)});
  out.push_back({"random_modes_21x19x20", random_modes(21, 19, 20, 7)});
  out.push_back({"abc_20x20x20", abc_flow(20, 20, 20)});
  out.push_back({"taylor_green_18x15x13", taylor_green(18, 15, 13)});  // w = 0: ties decided symbolically
  out.push_back({"tiles_straddled_34x17x9", random_modes(34, 17, 9, 8, 24, 6)});  // edge tiles in x and y
  VectorField3D crop;
  if (read_crop(crop)) out.push_back({"cavity3d_crop_24x24x24", std::move(crop)});
  return out;
}

const std::vector<Field3>& all_fields() {
  static const std::vector<Field3> f = fields();
  return f;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

factz::Options options(Mode m, Coder c, bool zstd, double rel, int threads) {
  factz::Options o;
  o.mode = m;
  o.coder = c;
  o.zstd = zstd;
  o.bound_mode = factz::BoundMode::rel;
  o.bound = rel;
  o.policy = factz::Policy::omp;
  o.threads = threads;
  o.anchor_stride = 8;  // several levels even on small grids
  return o;
}

std::string describe(Mode m, Coder c, bool zstd, double rel) {
  return std::string(factz::mode_name(m)) + "/" + factz::coder_name(c) + " rel " + std::to_string(rel) +
         (zstd ? " zstd" : "");
}

/// The model's stream of f is the CPU's (threads 1; 3 as well at one bound), and the model
/// decodes the CPU's stream to the CPU's values, for every mode, coder, zstd setting and bound.
void expect_cpu_bytes_and_values(const Field3& nf) {
  int compared = 0;
  for (double rel : {1e-1, 1e-2, 1e-3, 1e-4})
    for (Mode m : {Mode::none, Mode::block, Mode::speculative})
      for (Coder c : {Coder::huffman, Coder::ans})
        for (bool zstd : {false, true}) {
          SCOPED_TRACE(nf.name + " " + describe(m, c, zstd, rel));
          auto cpu = factz::compress(nf.f, options(m, c, zstd, rel, 1));
          ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
          if (rel == 1e-3) {  // the CPU's bytes at another thread count (once per mode and coder)
            auto cpu3 = factz::compress(nf.f, options(m, c, zstd, rel, 3));
            ASSERT_TRUE(cpu3.ok()) << cpu3.status().to_string();
            ASSERT_EQ(cpu3.value(), cpu.value()) << "the CPU's bytes depend on the thread count";
          }
          auto model = factz::cuda_detail::model_compress3d(nf.f, options(m, c, zstd, rel, 0));
          ASSERT_TRUE(model.ok()) << model.status().to_string();
          ASSERT_FALSE(model->empty());
          ASSERT_EQ(model->size(), cpu->size());
          ASSERT_TRUE(model.value() == cpu.value()) << "the model's stream differs from the CPU's";
          auto want = factz::decompress3d(cpu.value());
          ASSERT_TRUE(want.ok()) << want.status().to_string();
          auto got = factz::cuda_detail::model_decompress3d(cpu.value());
          ASSERT_TRUE(got.ok()) << got.status().to_string();
          EXPECT_EQ(got->nx, want->nx);
          EXPECT_EQ(got->ny, want->ny);
          EXPECT_EQ(got->nz, want->nz);
          EXPECT_TRUE(same_bits(got->u, want->u) && same_bits(got->v, want->v) && same_bits(got->w, want->w))
              << "the model decodes to other values than the CPU";
          EXPECT_TRUE(got->mask.empty());
          ++compared;
        }
  EXPECT_EQ(compared, 4 * 3 * 2 * 2);
}

class GpuModel3DField : public ::testing::TestWithParam<size_t> {};

TEST_P(GpuModel3DField, WritesTheCpusBytesAndDecodesToTheCpusValues) {
  ASSERT_LT(GetParam(), all_fields().size());
  expect_cpu_bytes_and_values(all_fields()[GetParam()]);
}

INSTANTIATE_TEST_SUITE_P(Fields, GpuModel3DField, ::testing::Range(size_t(0), all_fields().size()),
                         [](const ::testing::TestParamInfo<size_t>& i) { return all_fields()[i.param].name; });

TEST(GpuModel3D, TheBundledCropIsAmongTheFields) {
  VectorField3D crop;
  ASSERT_TRUE(read_crop(crop)) << "tests/data/cavity3d_crop_{u,v,w}_24x24x24.f32";
  EXPECT_EQ(all_fields().back().name, "cavity3d_crop_24x24x24");
}

TEST(GpuModel3D, BlockDecisionsAreTheCpuBackendsDecisions) {
  // Stage by stage: the tile ids, the decoder's values, the exact flags, the symbols and
  // the escapes of the model's block frontend are run_block3d's.
  for (const Field3& nf : all_fields())
    for (double rel : {1e-1, 1e-3}) {
      SCOPED_TRACE(nf.name + " rel " + std::to_string(rel));
      factz::detail::Stream3DPlan p;
      p.nx = nf.f.nx, p.ny = nf.f.ny, p.nz = nf.f.nz;
      p.options = options(Mode::block, Coder::ans, true, rel, 1);
      float lo = nf.f.u[0], hi = nf.f.u[0];
      for (const auto* pl : {&nf.f.u, &nf.f.v, &nf.f.w})
        for (float x : *pl) lo = std::min(lo, x), hi = std::max(hi, x);
      p.eb = factz::detail::float_bound(rel * (double(hi) - double(lo)));
      factz::detail::Tiled3DResult cpu, model;
      factz::detail::run_block3d(nf.f, p.eb, 2, cpu);
      ASSERT_TRUE(factz::cuda_detail::model_tiled3d(nf.f, p, nullptr, model).ok());
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(model.tile_ids[c], cpu.tile_ids[c]);
        EXPECT_TRUE(std::equal(model.exact[c].begin(), model.exact[c].end(), cpu.exact[c].begin(), cpu.exact[c].end()));
        EXPECT_EQ(std::memcmp(model.recon[c].data(), cpu.recon[c].data(), cpu.recon[c].size() * sizeof(float)), 0);
        EXPECT_EQ(model.symbols[c], cpu.symbols[c]);
        EXPECT_EQ(model.escapes[c], cpu.escapes[c]);
      }
    }
}

TEST(GpuModel3D, SpeculativeDecisionsAreTheCpuBackendsDecisions) {
  // Per vertex: the model's ids and symbols are run_speculative3d's, with the plan's chosen
  // axes (the ABC flow and the Taylor-Green vortex have some) and without.
  int with_choices = 0;
  for (const Field3& nf : all_fields())
    for (bool choose : {false, true}) {
    SCOPED_TRACE(nf.name + (choose ? " chosen axes" : ""));
    factz::detail::Stream3DPlan p;
    p.nx = nf.f.nx, p.ny = nf.f.ny, p.nz = nf.f.nz;
    p.options = options(Mode::speculative, Coder::ans, true, 1e-3, 1);
    p.eb = 1e-3f;
    if (choose) p.along = factz::detail::choose_axes3d(nf.f, p.options.anchor_stride, double(p.eb), nullptr);
    with_choices += std::any_of(p.along.begin(), p.along.end(), [](uint8_t a) { return a != 0; });
    factz::detail::Speculative3DResult cpu, model;
    factz::detail::run_speculative3d(nf.f, p.eb, p.options.anchor_stride, 2, true, cpu, nullptr, 0,
                                     p.along.empty() ? nullptr : p.along.data());
    ASSERT_TRUE(factz::cuda_detail::model_speculative3d(nf.f, p, nullptr, model).ok());
    EXPECT_TRUE(std::equal(model.id.begin(), model.id.end(), cpu.id.begin(), cpu.id.end()));
    for (int c = 0; c < 3; ++c) {
      EXPECT_TRUE(std::equal(model.sym[c].begin(), model.sym[c].end(), cpu.sym[c].begin(), cpu.sym[c].end()));
      EXPECT_EQ(std::memcmp(model.recon[c].data(), cpu.recon[c].data(), cpu.recon[c].size() * sizeof(float)), 0);
    }
  }
  EXPECT_GE(with_choices, 2) << "fields with chosen axes were compared";
}

TEST(GpuModel3D, TheComparisonSeesAChangedDecision) {
  // A model test that cannot fail would show nothing: one changed decision of either
  // frontend changes the stream.
  const VectorField3D f = factz::testing::random_modes(12, 11, 10, 9);
  for (Mode m : {Mode::block, Mode::speculative}) {
    SCOPED_TRACE(factz::mode_name(m));
    const factz::Options o = options(m, Coder::ans, true, 1e-2, 1);
    auto cpu = factz::compress(f, o);
    ASSERT_TRUE(cpu.ok());
    factz::cuda_detail::Frontends3D fe{factz::cuda_detail::model_tiled3d, factz::cuda_detail::model_speculative3d};
    auto same = factz::cuda_detail::compress3d_with(f, o, fe);
    ASSERT_TRUE(same.ok());
    EXPECT_TRUE(same.value() == cpu.value());
    fe.tiled = [](const VectorField3D& w, const factz::detail::Stream3DPlan& p, const uint8_t* missing,
                  factz::detail::Tiled3DResult& r) {
      FACTZ_RETURN_IF_ERROR(factz::cuda_detail::model_tiled3d(w, p, missing, r));
      r.symbols[1][37] = r.symbols[1][37] == factz::detail::kRadius ? uint16_t(factz::detail::kRadius + 1)
                                                                      : uint16_t(factz::detail::kRadius);
      return factz::Status::Ok();
    };
    fe.speculative = [](const VectorField3D& w, const factz::detail::Stream3DPlan& p, const uint8_t* missing,
                        factz::detail::Speculative3DResult& r) {
      FACTZ_RETURN_IF_ERROR(factz::cuda_detail::model_speculative3d(w, p, missing, r));
      const int64_t k = (5 * w.ny + 3) * w.nx + 1;  // a target of the finest level
      r.sym[2][size_t(k)] = uint16_t(r.sym[2][size_t(k)] + 1);
      if (r.id[size_t(k)] == 0 || r.id[size_t(k)] > factz::detail::kMaxBoundId) r.id[size_t(k)] = 3;
      return factz::Status::Ok();
    };
    auto changed = factz::cuda_detail::compress3d_with(f, o, fe);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(changed.value() == cpu.value());
  }
}

/// A field with missing vertices: a scattered mask, a NaN, and a masked block of vertices
/// (whole tiles' corners and edges, runs of missing neighbours inside a tile).
VectorField3D masked(VectorField3D f, uint32_t seed) {
  std::mt19937 rng(seed);
  f.mask.assign(size_t(f.size()), 0);
  for (auto& m : f.mask) m = rng() % 11 == 0;
  for (int64_t z = 0; z < std::min<int64_t>(f.nz, 4); ++z)
    for (int64_t y = 0; y < std::min<int64_t>(f.ny, 5); ++y)
      for (int64_t x = 0; x < std::min<int64_t>(f.nx, 3); ++x) f.mask[size_t((z * f.ny + y) * f.nx + x)] = 1;
  f.u[size_t(f.size() / 2)] = NAN;
  f.w[size_t(f.size() - 1)] = -9999.0f;  // a fill value's bits come back too
  f.mask[size_t(f.size() - 1)] = 1;
  return f;
}

TEST(GpuModel3D, MaskedFieldsGiveTheCpusBytesAndValues) {
  using namespace factz::testing;
  const Field3 fields[] = {{"masked_random_modes_21x19x20", masked(random_modes(21, 19, 20, 10), 1)},
                           {"masked_ties_13x11x9", masked(tie_field(13, 11, 9, 3), 2)},
                           {"masked_straddled_34x17x9", masked(random_modes(34, 17, 9, 8, 24, 6), 3)},
                           {"masked_tiny_3x2x2", masked(noise(3, 2, 2, 4), 4)}};
  for (const Field3& nf : fields)
    for (double rel : {1e-1, 1e-3})
      for (Mode m : {Mode::none, Mode::block, Mode::speculative})
        for (Coder c : {Coder::huffman, Coder::ans})
          for (bool zstd : {false, true}) {
            SCOPED_TRACE(nf.name + " " + describe(m, c, zstd, rel));
            auto cpu = factz::compress(nf.f, options(m, c, zstd, rel, 2));
            ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
            auto model = factz::cuda_detail::model_compress3d(nf.f, options(m, c, zstd, rel, 0));
            ASSERT_TRUE(model.ok()) << model.status().to_string();
            ASSERT_TRUE(model.value() == cpu.value()) << "the model's stream differs from the CPU's";
            auto want = factz::decompress3d(cpu.value());
            ASSERT_TRUE(want.ok());
            auto got = factz::cuda_detail::model_decompress3d(cpu.value());
            ASSERT_TRUE(got.ok()) << got.status().to_string();
            EXPECT_TRUE(same_bits(got->u, want->u) && same_bits(got->v, want->v) && same_bits(got->w, want->w));
            EXPECT_EQ(got->mask, want->mask);
            EXPECT_FALSE(got->mask.empty());
          }
}

TEST(GpuModel3D, DamagedStreamsAreRefusedAsOnTheCpu) {
  const VectorField3D f = factz::testing::random_modes(11, 10, 9, 11);
  for (Mode m : {Mode::block, Mode::speculative}) {
    auto s = factz::compress(f, options(m, Coder::ans, false, 1e-2, 1));
    ASSERT_TRUE(s.ok());
    for (size_t at : {size_t(3), s->size() / 2, s->size() - 5}) {
      std::vector<uint8_t> bad = s.value();
      bad[at] ^= 0x5a;
      auto cpu = factz::decompress3d(bad);
      auto model = factz::cuda_detail::model_decompress3d(bad);
      EXPECT_EQ(model.ok(), cpu.ok());
      if (!cpu.ok() && !model.ok()) {
        EXPECT_EQ(model.status().code(), cpu.status().code());
      }
    }
  }
}

// ---- Policy::cuda with 3D fields, the model behind the dispatch --------------------------

factz::Result<int> model_device_count() { return 1; }

factz::Result<std::vector<uint8_t>> model_compress3d_on(const VectorField3D& f, const factz::Options& o, int device) {
  if (device != 0) return factz::invalid_argument("the model has device 0 only");
  return factz::cuda_detail::model_compress3d(f, o);
}

factz::Status model_decompress3d_into_on(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                                         std::span<float> w, int device, std::vector<uint8_t>* mask) {
  if (device != 0) return factz::invalid_argument("the model has device 0 only");
  return factz::cuda_detail::decompress3d_with(
      stream, u, v, w, mask,
      factz::cuda_detail::Decoders3D{factz::cuda_detail::model_decode_tiled3d,
                                     factz::cuda_detail::model_decode_speculative3d});
}

const factz::detail::DeviceBackend kModel3DBackend{.device_count = &model_device_count,
                                                   .compress = nullptr,
                                                   .decompress_into = nullptr,
                                                   .compress3d = &model_compress3d_on,
                                                   .decompress3d_into = &model_decompress3d_into_on};
const factz::detail::DeviceBackend kModel2DOnlyBackend{.device_count = &model_device_count,
                                                       .compress = nullptr,
                                                       .decompress_into = nullptr};

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

TEST(GpuModel3DDispatch, PolicyCudaReachesTheBackendAndGivesTheCpuBytesAndValues) {
  DeviceBackendScope model(&kModel3DBackend);
  const VectorField3D f = factz::testing::abc_flow(17, 16, 15);
  for (Mode m : {Mode::none, Mode::block, Mode::speculative}) {
    SCOPED_TRACE(factz::mode_name(m));
    const factz::Options o = options(m, Coder::ans, true, 1e-3, 2);
    auto cpu = factz::compress(f, o);
    ASSERT_TRUE(cpu.ok());
    factz::Options g = o;
    g.policy = factz::Policy::cuda;
    g.device = factz::kDeviceAuto;
    factz::CompressStats stats;
    auto gpu = factz::compress(f, g, &stats);
    ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
    EXPECT_TRUE(gpu.value() == cpu.value());
    EXPECT_GT(stats.eb_abs, 0.0);
    factz::DecompressOptions d;
    d.policy = factz::Policy::cuda;
    auto got = factz::decompress3d(cpu.value(), d);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    auto want = factz::decompress3d(cpu.value());
    ASSERT_TRUE(want.ok());
    EXPECT_TRUE(same_bits(got->u, want->u) && same_bits(got->v, want->v) && same_bits(got->w, want->w));
    g.device = 1;  // the model has one device
    EXPECT_EQ(factz::compress(f, g).status().code(), factz::Code::invalid_argument);
  }
  // A masked field: the CPU's bytes, its count of missing vertices, and the mask back.
  const VectorField3D m = masked(f, 6);
  factz::Options o = options(Mode::speculative, Coder::huffman, true, 1e-2, 1);
  factz::CompressStats cpu_stats, gpu_stats;
  auto cpu = factz::compress(m, o, &cpu_stats);
  ASSERT_TRUE(cpu.ok());
  o.policy = factz::Policy::cuda;
  auto gpu = factz::compress(m, o, &gpu_stats);
  ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
  EXPECT_TRUE(gpu.value() == cpu.value());
  EXPECT_EQ(gpu_stats.masked_vertices, cpu_stats.masked_vertices);
  EXPECT_GT(gpu_stats.masked_vertices, 0);
  EXPECT_EQ(gpu_stats.eb_abs, cpu_stats.eb_abs);
  factz::DecompressOptions d;
  d.policy = factz::Policy::cuda;
  auto got = factz::decompress3d(cpu.value(), d);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(got->mask, factz::decompress3d(cpu.value())->mask);
}

TEST(GpuModel3DDispatch, WithoutA3DBackendPolicyCudaSaysTheCpuOnly) {
  const VectorField3D f = factz::testing::abc_flow(8, 8, 8);
  factz::Options g = options(Mode::speculative, Coder::ans, true, 1e-2, 1);
  g.policy = factz::Policy::cuda;
  for (const factz::detail::DeviceBackend* b : {static_cast<const factz::detail::DeviceBackend*>(nullptr),
                                                &kModel2DOnlyBackend}) {
    DeviceBackendScope scope(b);
    auto r = factz::compress(f, g);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), factz::Code::backend_unavailable);
    EXPECT_NE(r.status().message().find("CPU only"), std::string::npos) << r.status().to_string();
    auto s = factz::compress(f, options(Mode::speculative, Coder::ans, true, 1e-2, 1));
    ASSERT_TRUE(s.ok());
    factz::DecompressOptions d;
    d.policy = factz::Policy::cuda;
    EXPECT_EQ(factz::decompress3d(s.value(), d).status().code(), factz::Code::backend_unavailable);
  }
}

}  // namespace
