// float64 fields and streams on a real device (ctest label `cuda`, issue 18): the GPU's
// float64 streams are the CPU's, byte for byte, for every mode, coder and zstd setting,
// with masks and on the traps of tests/test_float64_codec.cpp; the device decodes CPU
// float64 streams to the CPU's doubles bit for bit (cuda::decompress64, decompress_into
// with double planes, Policy::cuda); damaged float64 streams are refused as on the CPU.
// Without a device every test skips with one line.
#include <gtest/gtest.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backend/cuda/cuda_internal.hpp"
#include "backend/cuda/gpu_model.hpp"
#include "cuda_test_support.hpp"
#include "factz/cuda.hpp"
#include "factz/factz.hpp"
#include "factz/topology.hpp"
#include "format/crc32.hpp"
#include "synth.hpp"

namespace {

using factz::BoundMode;
using factz::Coder;
using factz::Mode;
using factz::Options;
using factz::VectorField2D64;
using factz::test::describe;

#define REQUIRE_DEVICE()                                                        \
  do {                                                                          \
    const factz::Status st_ = factz::cuda::device_status();                     \
    if (!st_.ok()) {                                                            \
      GTEST_SKIP() << "no CUDA device: " << st_.message();                      \
    }                                                                           \
  } while (0)

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 8) == 0);
}

/// The GPU's stream of f is the CPU's, and the device decodes the CPU's stream to the CPU's
/// doubles and mask (cuda::decompress64 and Policy::cuda's decompress_into).
void expect_gpu_is_cpu(const VectorField2D64& f, const Options& o) {
  auto cpu = factz::compress(f, o);
  ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
  auto gpu = factz::cuda::compress(f, o);
  ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
  ASSERT_EQ(gpu->size(), cpu->size());
  ASSERT_TRUE(gpu.value() == cpu.value()) << "the GPU's float64 stream differs from the CPU's";
  auto dc = factz::decompress64(cpu.value());
  auto dg = factz::cuda::decompress64(cpu.value());
  ASSERT_TRUE(dc.ok() && dg.ok()) << dg.status().to_string();
  EXPECT_TRUE(same_bits(dc->u, dg->u));
  EXPECT_TRUE(same_bits(dc->v, dg->v));
  EXPECT_EQ(dc->mask, dg->mask);
  std::vector<double> u(dc->u.size()), v(dc->v.size());
  factz::DecompressOptions d;
  d.policy = factz::Policy::cuda;
  ASSERT_TRUE(factz::decompress_into(cpu.value(), u, v, d).ok());
  EXPECT_TRUE(same_bits(dc->u, u));
  EXPECT_TRUE(same_bits(dc->v, v));
}

TEST(CudaFloat64, StreamsAreByteIdenticalToTheCpuForEveryModeCoderAndZstd) {
  REQUIRE_DEVICE();
  const std::vector<std::pair<std::string, VectorField2D64>> fields = {
      {"turbulence64_1000x777", factz::synth::turbulence64(1000, 777, 1)},
      {"turbulence64_2049x67", factz::synth::turbulence64(2049, 67, 2, 8.0)},
      {"below_float_333x97", factz::test::below_float_field(333, 97, 4)},
      {"widened_noise_300x200", factz::test::widened(factz::synth::noise(300, 200, 5))},
      {"zeros_100x90", factz::test::filled64(100, 90, 0.0, 0.0)},
      {"row_1000x1", factz::synth::turbulence64(1000, 1, 7)},
      {"tiny_2x2", VectorField2D64{2, 2, {1.0, -1.0, -1.0, 1.0}, {1.0, 1.0, -1.0, -1.0}}},
  };
  for (const auto& [name, f] : fields)
    for (auto [bm, bound] : {std::pair{BoundMode::rel, 1e-2}, std::pair{BoundMode::rel, 1e-5},
                             std::pair{BoundMode::abs, 0.0}})
      for (const Options& o : factz::test::every_mode_coder_and_zstd(bm, bound, bound > 1e-3 ? 16 : 8)) {
        SCOPED_TRACE(name + " " + describe(o));
        expect_gpu_is_cpu(f, o);
      }
}

TEST(CudaFloat64, TheTrapsOfTheFloat64CodecGiveTheCpuBytes) {
  REQUIRE_DEVICE();
  VectorField2D64 near_one = factz::synth::turbulence64(500, 410, 13);
  for (double& x : near_one.u) x = 1.0 + 1e-12 * x;
  for (double& x : near_one.v) x = 1.0 - 1e-12 * x;
  const std::vector<std::pair<std::string, VectorField2D64>> fields = {
      {"below_float", factz::test::below_float_field(640, 480, 31)},
      {"near_one", near_one},
      {"scaled_up", factz::test::scaled(factz::synth::turbulence64(480, 400, 19), 664)},
      {"scaled_down", factz::test::scaled(factz::synth::turbulence64(480, 400, 19), -664)},
      {"extreme", factz::test::extreme_field(120, 100, 1)},
  };
  for (const auto& [name, f] : fields)
    for (double eb : {1e-3, 1e-13, DBL_MAX})
      for (Options o : factz::test::every_mode_coder_and_zstd(BoundMode::abs, eb)) {
        if (o.zstd != (o.coder == Coder::ans)) continue;
        SCOPED_TRACE(name + " " + describe(o));
        expect_gpu_is_cpu(f, o);
      }
  for (const auto& [name, f] : fields)
    for (Options o : factz::test::every_mode_coder_and_zstd(BoundMode::rel, 1e-3)) {
      if (!o.zstd) continue;
      SCOPED_TRACE(name + " rel " + describe(o));
      expect_gpu_is_cpu(f, o);
    }
}

TEST(CudaFloat64, MaskedStreamsAreByteIdenticalToTheCpu) {
  REQUIRE_DEVICE();
  const int64_t nx = 700, ny = 450;
  const VectorField2D64 base = factz::synth::turbulence64(nx, ny, 3, 30.0);
  for (const auto& [name, mask] : factz::test::mask_shapes(nx, ny))
    for (auto how : {factz::test::MissingAs::nan, factz::test::MissingAs::mask, factz::test::MissingAs::fill}) {
      if (how != factz::test::MissingAs::nan && name != "land" && name != "anchors") continue;
      const VectorField2D64 f = factz::test::with_missing(base, mask, how);
      for (const auto& o : factz::test::masked_option_sets()) {
        SCOPED_TRACE(name + " " + factz::test::missing_as_name(how) + " " + describe(o));
        expect_gpu_is_cpu(f, o);
      }
    }
}

// First diagnostic when bytes differ: the device's float64 payloads against the model's.
TEST(CudaFloat64, PayloadsMatchTheModelStageByStage) {
  REQUIRE_DEVICE();
  const VectorField2D64 f = factz::test::below_float_field(333, 211, 21);
  const size_t bytes = size_t(f.size()) * 8;
  double *u = nullptr, *v = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&u), bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&v), bytes), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(u, f.u.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(v, f.v.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  factz::cuda::Workspace ws;
  for (const auto& o : factz::test::every_mode_and_coder(1e-3)) {
    SCOPED_TRACE(describe(o));
    const auto p = factz::cuda_detail::make_plan<double>(f.nx, f.ny, o, 0.0);
    if (o.mode == Mode::speculative) {
      factz::cuda_detail::SpeculativePayload dev, cpu;
      ASSERT_TRUE(factz::cuda_detail::device_compress_speculative(*ws.impl(), p, u, v, nullptr, nullptr, dev).ok());
      factz::cuda_detail::model_payload(f, p, nullptr, &cpu);
      EXPECT_TRUE(dev.exact == cpu.exact) << "speculative exact values (16 bytes each)";
      EXPECT_TRUE(dev.coded_ids == cpu.coded_ids) << "device-coded blob of the ids";
      EXPECT_TRUE(dev.coded_u == cpu.coded_u) << "device-coded blob of codes u";
      EXPECT_TRUE(dev.coded_v == cpu.coded_v) << "device-coded blob of codes v";
    } else {
      factz::cuda_detail::TiledPayload dev, cpu;
      ASSERT_TRUE(factz::cuda_detail::device_compress_tiled(*ws.impl(), p, u, v, nullptr, nullptr, dev).ok());
      factz::cuda_detail::model_payload(f, p, &cpu, nullptr);
      EXPECT_TRUE(dev.tile_ids == cpu.tile_ids) << "tile ids";
      for (int c = 0; c < 2; ++c) {
        EXPECT_TRUE(dev.coded[c] == cpu.coded[c]) << "device-coded blob of plane " << c;
        EXPECT_EQ(dev.coded_crc[c], std::optional<uint32_t>(factz::detail::crc32c(dev.coded[c]))) << "blob CRC";
        EXPECT_TRUE(dev.outliers[c] == cpu.outliers[c]) << "outlier list of plane " << c;
        EXPECT_TRUE(dev.exact_index[c] == cpu.exact_index[c]) << "exact index list of plane " << c;
        EXPECT_TRUE(dev.exact_values[c] == cpu.exact_values[c]) << "exact values (8 bytes each) of plane " << c;
      }
    }
  }
  cudaFree(u);
  cudaFree(v);
}

// The device-pointer API with double planes (NaN marks missing vertices), and the
// decoder's refusal of the other data type.
TEST(CudaFloat64, DevicePointerApiTakesDoublePlanesAndRefusesTheOtherDataType) {
  REQUIRE_DEVICE();
  VectorField2D64 f = factz::synth::turbulence64(400, 300, 11);
  f.u[1234] = std::nan("");
  const size_t bytes = size_t(f.size()) * 8;
  double *u = nullptr, *v = nullptr, *ou = nullptr, *ov = nullptr;
  for (double** p : {&u, &v, &ou, &ov}) ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(p), bytes), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(u, f.u.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(v, f.v.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  factz::cuda::Workspace ws;
  for (const auto& o : factz::test::every_mode_and_coder(1e-4)) {
    SCOPED_TRACE(describe(o));
    auto cpu = factz::compress(f, o);
    auto gpu = factz::cuda::compress(u, v, f.nx, f.ny, o, nullptr, &ws);
    ASSERT_TRUE(cpu.ok() && gpu.ok()) << gpu.status().to_string();
    EXPECT_TRUE(gpu.value() == cpu.value());
    ASSERT_TRUE(factz::cuda::decompress(cpu.value(), ou, ov, f.nx, f.ny, nullptr, &ws).ok());
    auto ref = factz::decompress64(cpu.value());
    ASSERT_TRUE(ref.ok());
    std::vector<double> hu(f.u.size()), hv(f.v.size());
    ASSERT_EQ(cudaMemcpy(hu.data(), ou, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(hv.data(), ov, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_TRUE(same_bits(ref->u, hu) && same_bits(ref->v, hv));
    // A float64 stream into float planes, and a float32 stream into double planes.
    EXPECT_EQ(factz::cuda::decompress(cpu.value(), reinterpret_cast<float*>(ou), reinterpret_cast<float*>(ov), f.nx,
                                      f.ny, nullptr, &ws)
                  .code(),
              factz::Code::invalid_argument);
    auto s32 = factz::compress(factz::synth::turbulence(400, 300, 11), o);
    ASSERT_TRUE(s32.ok());
    EXPECT_EQ(factz::cuda::decompress(s32.value(), ou, ov, f.nx, f.ny, nullptr, &ws).code(),
              factz::Code::invalid_argument);
  }
  for (double* p : {u, v, ou, ov}) cudaFree(p);
}

// Damaged float64 sections behind valid CRCs: the device accepts what the CPU accepts,
// then gives the CPU's doubles.
TEST(CudaFloat64, DamagedStreamsAreRejectedLikeTheCpuDoes) {
  REQUIRE_DEVICE();
  VectorField2D64 f = factz::synth::turbulence64(120, 90, 9, 4.0);
  f.u[50] = std::nan("");
  for (auto mode : {Mode::none, Mode::block, Mode::speculative})
    for (auto coder : {Coder::ans, Coder::huffman}) {
      Options o;
      o.mode = mode;
      o.coder = coder;
      o.zstd = false;
      o.bound = 1e-3;
      SCOPED_TRACE(describe(o));
      auto s = factz::compress(f, o);
      ASSERT_TRUE(s.ok());
      const auto damaged = factz::test::damaged_sections(s.value(), 6464, 150, true);
      ASSERT_FALSE(damaged.empty());
      int rejected = 0;
      for (const auto& [trial, stream] : damaged) {
        auto cpu = factz::decompress64(stream);
        auto dev = factz::cuda::decompress64(stream);
        EXPECT_EQ(cpu.ok(), dev.ok()) << "trial " << trial << ": cpu " << cpu.status().to_string() << ", device "
                                      << dev.status().to_string();
        if (cpu.ok() && dev.ok()) {
          EXPECT_TRUE(same_bits(cpu->u, dev->u));
          EXPECT_TRUE(same_bits(cpu->v, dev->v));
        }
        rejected += !dev.ok();
      }
      EXPECT_GT(rejected, 0);
    }
}

}  // namespace
