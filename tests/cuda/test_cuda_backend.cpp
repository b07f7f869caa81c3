// The CUDA backend on a real device (ctest label `cuda`): its streams are the CPU's, byte
// for byte, for every mode and coder; it decodes CPU streams to the CPU's values; its
// output keeps every critical point (G0) within the bound (G1). Without a device every
// test skips with one line, except the check that the API says so clearly.
#include <gtest/gtest.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>

#include "cuda_test_support.hpp"
#include "synth.hpp"
#include "api/device_backend.hpp"
#include "backend/cuda/cuda_internal.hpp"
#include "backend/cuda/gpu_model.hpp"
#include "factz/cuda.hpp"
#include "factz/factz.hpp"
#include "factz/io.hpp"
#include "factz/topology.hpp"
#include "codec/ans.hpp"
#include "format/container.hpp"
#include "format/crc32.hpp"

namespace {

using factz::VectorField2D;

#define REQUIRE_DEVICE()                                                        \
  do {                                                                          \
    const factz::Status st_ = factz::cuda::device_status();                     \
    if (!st_.ok()) {                                                          \
      GTEST_SKIP() << "no CUDA device: " << st_.message();                    \
    }                                                                         \
  } while (0)

VectorField2D constant(int64_t nx, int64_t ny, float u, float v) {
  VectorField2D f;
  f.nx = nx;
  f.ny = ny;
  f.u.assign(size_t(nx * ny), u);
  f.v.assign(size_t(nx * ny), v);
  return f;
}

struct NamedField {
  std::string name;
  VectorField2D f;
};

const std::vector<NamedField>& fields() {
  static const std::vector<NamedField> out = [] {
    std::vector<NamedField> o;
    o.push_back({"turbulence_1000x777", factz::synth::turbulence(1000, 777, 1)});
    o.push_back({"turbulence_2049x67", factz::synth::turbulence(2049, 67, 2, 8.0)});
    o.push_back({"turbulence_31x1025", factz::synth::turbulence(31, 1025, 3, 8.0)});
    o.push_back({"noise_333x97", factz::synth::noise(333, 97, 4)});
    auto land = factz::synth::vortices(700, 500, 5, 40);
    factz::synth::add_zero_region(land, 6, 0.3);
    o.push_back({"vortices_land_700x500", std::move(land)});
    o.push_back({"zeros_100x90", constant(100, 90, 0.0f, 0.0f)});
    o.push_back({"constant_65x33", constant(65, 33, 1.5f, -0.25f)});
    o.push_back({"row_1x1000", factz::synth::noise(1000, 1, 7)});
    o.push_back({"column_1x999", factz::synth::noise(1, 999, 8)});
    o.push_back({"tiny_2x2", factz::synth::noise(2, 2, 9)});
    // The build's data folder, or FACTZ_SHARED_DATA_DIR (binaries carried to a GPU
    // machine with the fields: scripts/gpu-check.sh --pack).
    const char* env_dir = std::getenv("FACTZ_SHARED_DATA_DIR");
    const std::string dir = env_dir && *env_dir ? env_dir : FACTZ_SHARED_DATA_DIR;
    for (auto [name, nx, ny] : {std::tuple{"foam_shearlayer_t0.75", 512, 512}, std::tuple{"cmems_glob1deg_cur", 360, 171},
                                std::tuple{"eraint_uv200", 480, 241}}) {
      const std::string base = dir + "/" + name, dims = std::to_string(nx) + "x" + std::to_string(ny);
      auto f = factz::read_vector_field(base + "_u_" + dims + ".f32", base + "_v_" + dims + ".f32", nx, ny);
      if (f.ok()) o.push_back({name, std::move(f.value())});
    }
    return o;
  }();
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

std::vector<factz::Options> option_sets() {
  std::vector<factz::Options> out;
  for (auto mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative})
    for (auto coder : {factz::Coder::huffman, factz::Coder::ans})
      for (double bound : {1e-2, 1e-4}) {
        factz::Options o;
        o.mode = mode;
        o.coder = coder;
        o.bound = bound;
        o.anchor_stride = bound > 1e-3 ? 16 : 8;
        out.push_back(o);
      }
  factz::Options lossless;
  lossless.mode = factz::Mode::block;
  lossless.bound_mode = factz::BoundMode::abs;
  lossless.bound = 0;
  out.push_back(lossless);
  factz::Options escapes;
  escapes.mode = factz::Mode::none;
  escapes.bound_mode = factz::BoundMode::abs;
  escapes.bound = 1e-30;
  escapes.zstd = false;
  out.push_back(escapes);
  return out;
}

TEST(Cuda, WithoutADeviceTheApiSaysSoClearly) {
  if (factz::cuda::device_available()) GTEST_SKIP() << "a CUDA device is present";
  auto r = factz::cuda::compress(factz::synth::noise(8, 8, 1), factz::Options{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), factz::Code::backend_unavailable);
  EXPECT_NE(r.status().message().find("no CUDA device"), std::string::npos);
}

// First diagnostic when bytes differ: the device's payloads (symbols or device-coded
// blobs, outlier and exact lists, tile ids, speculative ids, codes and exact values)
// against the CPU model's, one by one, so a failure names the stage.
TEST(Cuda, PayloadsMatchTheModelStageByStage) {
  REQUIRE_DEVICE();
  const auto f = factz::synth::turbulence(333, 211, 21, 8.0);
  const size_t bytes = size_t(f.size()) * 4;
  float *u = nullptr, *v = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&u), bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&v), bytes), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(u, f.u.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(v, f.v.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  factz::cuda::Workspace ws;
  // 0.05: large enough for escape-free codes and exact vertices both
  for (const auto& o : factz::test::every_mode_and_coder(0.05)) {
    SCOPED_TRACE(std::string(factz::mode_name(o.mode)) + "/" + factz::coder_name(o.coder));
    const auto p = factz::cuda_detail::make_plan(f.nx, f.ny, o, 0.0);
    if (o.mode == factz::Mode::speculative) {
      factz::cuda_detail::SpeculativePayload dev, cpu;
      ASSERT_TRUE(factz::cuda_detail::device_compress_speculative(*ws.impl(), p, u, v, /*missing=*/nullptr, nullptr, dev).ok());
      factz::cuda_detail::model_payload(f, p, nullptr, &cpu);
      EXPECT_TRUE(dev.ids == cpu.ids) << "speculative ids";
      EXPECT_TRUE(dev.codes_u == cpu.codes_u) << "speculative codes u";
      EXPECT_TRUE(dev.codes_v == cpu.codes_v) << "speculative codes v";
      EXPECT_TRUE(dev.exact == cpu.exact) << "speculative exact values";
      EXPECT_TRUE(dev.coded_ids == cpu.coded_ids) << "device-coded blob of the ids";
      EXPECT_TRUE(dev.coded_u == cpu.coded_u) << "device-coded blob of codes u";
      EXPECT_TRUE(dev.coded_v == cpu.coded_v) << "device-coded blob of codes v";
      EXPECT_EQ(dev.coded_ids_crc, std::optional<uint32_t>(factz::detail::crc32c(dev.coded_ids)));
      EXPECT_EQ(dev.coded_u_crc, std::optional<uint32_t>(factz::detail::crc32c(dev.coded_u)));
      EXPECT_EQ(dev.coded_v_crc, std::optional<uint32_t>(factz::detail::crc32c(dev.coded_v)));
    } else {
      factz::cuda_detail::TiledPayload dev, cpu;
      ASSERT_TRUE(factz::cuda_detail::device_compress_tiled(*ws.impl(), p, u, v, /*missing=*/nullptr, nullptr, dev).ok());
      factz::cuda_detail::model_payload(f, p, &cpu, nullptr);
      EXPECT_TRUE(dev.tile_ids == cpu.tile_ids) << "tile ids";
      for (int c = 0; c < 2; ++c) {
        // Symbols never leave the device (both payloads are precoded): the blobs carry them.
        EXPECT_TRUE(dev.precoded && cpu.precoded);
        EXPECT_TRUE(dev.coded[c] == cpu.coded[c]) << "device-coded blob of plane " << c;
        EXPECT_EQ(dev.coded_crc[c], std::optional<uint32_t>(factz::detail::crc32c(dev.coded[c]))) << "blob CRC";
        EXPECT_TRUE(dev.outliers[c] == cpu.outliers[c]) << "outlier list of plane " << c;
        EXPECT_TRUE(dev.exact_index[c] == cpu.exact_index[c]) << "exact index list of plane " << c;
        EXPECT_TRUE(dev.exact_values[c] == cpu.exact_values[c]) << "exact values of plane " << c;
      }
    }
  }
  cudaFree(u);
  cudaFree(v);
}

/// A device copy of a host vector (freed by the caller).
template <class T>
T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), h.size() * sizeof(T) + 1), cudaSuccess);
  if (!h.empty()) {
    EXPECT_EQ(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  return d;
}

// The device ANS encoder writes ans_encode's bytes (ans_test_streams: sizes around chunk
// and lane boundaries, constant, sparse and rANS planes), both centers, 8 lanes.
TEST(Cuda, DeviceAnsBlobsAreTheCpuBlobs) {
  REQUIRE_DEVICE();
  auto streams = factz::test::ans_test_streams(2024);
  std::vector<uint16_t> large(3000000);  // many chunks in flight
  for (size_t i = 0; i < large.size(); ++i) large[i] = uint16_t(32768 + int(((i * 2654435761u) >> 29) % 9) - 4);
  streams.push_back(std::move(large));
  factz::cuda::Workspace ws;
  for (const auto& sy : streams)
    for (uint16_t center : {uint16_t(32768), uint16_t(0)}) {
      SCOPED_TRACE("n " + std::to_string(sy.size()) + " center " + std::to_string(center));
      std::vector<uint8_t> cpu, dev;
      ASSERT_TRUE(factz::detail::ans_encode(sy, center, cpu, 2).ok());
      uint16_t* d = to_device(sy);
      std::optional<uint32_t> crc;
      ASSERT_TRUE(factz::cuda_detail::device_ans_encode(*ws.impl(), d, sy.size(), center, nullptr, dev, crc).ok());
      cudaFree(d);
      ASSERT_EQ(dev.size(), cpu.size());
      EXPECT_TRUE(dev == cpu);
      EXPECT_EQ(crc, std::optional<uint32_t>(factz::detail::crc32c(cpu))) << "blob CRC from device payload checksums";
    }
}

// With escapes allowed (blob version 3), the device plan, escape list (flags, a
// compaction, a gather) and chunks still give ans_encode's bytes and CRC; both planes hold
// rare values here, in one chunk and in many.
TEST(Cuda, DeviceAnsEscapeBlobsAreTheCpuBlobs) {
  REQUIRE_DEVICE();
  factz::cuda::Workspace ws;
  for (size_t n : {size_t(70000), size_t(3000000)}) {
    std::vector<uint16_t> sy(n);
    uint64_t state = n;
    auto next = [&] {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      return uint32_t(state >> 33);
    };
    auto sym = [](uint32_t z) { return factz::detail::ans_unzigzag(uint16_t(z), 32768); };
    for (auto& x : sy) x = sym((next() % 10 == 0 ? 1 + next() % 5 : 0) + (next() % 3 == 0 ? 256 : 0));
    for (uint32_t k = 0; k < 40; ++k) {
      sy[next() % n] = sym(40 + k);
      sy[next() % n] = sym(256 * (2 + k) + k);
    }
    SCOPED_TRACE("n " + std::to_string(n));
    std::vector<uint8_t> cpu, dev;
    ASSERT_TRUE(factz::detail::ans_encode(sy, 32768, cpu, 2, factz::detail::kAnsEncoderMaxLanes, true).ok());
    ASSERT_EQ(cpu[0], factz::detail::kAnsVersionEscapes);
    uint16_t* d = to_device(sy);
    std::optional<uint32_t> crc;
    ASSERT_TRUE(factz::cuda_detail::device_ans_encode(*ws.impl(), d, sy.size(), 32768, nullptr, dev, crc, true).ok());
    cudaFree(d);
    EXPECT_TRUE(dev == cpu);
    EXPECT_EQ(crc, std::optional<uint32_t>(factz::detail::crc32c(cpu)));
  }
}

// The device CRC-32C (block CRCs and a combine tree) is format/crc32.cpp's value.
TEST(Cuda, DeviceCrcIsTheCpuCrc) {
  REQUIRE_DEVICE();
  std::vector<uint8_t> data((size_t(64) << 20) + 12345);
  uint64_t state = 5;
  for (auto& b : data) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    b = uint8_t(state >> 56);
  }
  uint8_t* d = to_device(data);
  factz::cuda::Workspace ws;
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{3}, uint64_t{4095}, uint64_t{4096}, uint64_t{4097},
                     uint64_t{1000001}, uint64_t(data.size())}) {
    uint32_t crc = 1;
    ASSERT_TRUE(factz::cuda_detail::device_crc32c(*ws.impl(), d, n, nullptr, crc).ok());
    EXPECT_EQ(crc, factz::detail::crc32c(std::span<const uint8_t>(data.data(), size_t(n)))) << "n " << n;
  }
  cudaFree(d);
}

// A failed runtime call before ours (here an allocation far beyond the device's memory,
// a non-sticky error left as the thread's last error) is not taken for a failure of the
// next compress/decompress: their launch checks read cudaGetLastError.
TEST(Cuda, AnEarlierFailedAllocationDoesNotFailTheNextCall) {
  REQUIRE_DEVICE();
  const auto f = factz::synth::turbulence(200, 150, 13, 8.0);
  float* u = to_device(f.u);
  float* v = to_device(f.v);
  float* ou = to_device(f.u);
  float* ov = to_device(f.v);
  factz::cuda::Workspace ws;
  for (auto mode : {factz::Mode::block, factz::Mode::speculative}) {
    SCOPED_TRACE(factz::mode_name(mode));
    factz::Options o;
    o.mode = mode;
    void* huge = nullptr;
    ASSERT_NE(cudaMalloc(&huge, size_t(1) << 52), cudaSuccess);  // 4 PiB
    auto gpu = factz::cuda::compress(u, v, f.nx, f.ny, o, nullptr, &ws);
    ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
    auto cpu = factz::compress(f, o);
    ASSERT_TRUE(cpu.ok());
    EXPECT_TRUE(gpu.value() == cpu.value());
    ASSERT_NE(cudaMalloc(&huge, size_t(1) << 52), cudaSuccess);
    const factz::Status back = factz::cuda::decompress(cpu.value(), ou, ov, f.nx, f.ny, nullptr, &ws);
    EXPECT_TRUE(back.ok()) << back.to_string();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  for (float* p : {u, v, ou, ov}) cudaFree(p);
}

TEST(Cuda, StreamsAreByteIdenticalToTheCpuForEveryModeAndCoder) {
  REQUIRE_DEVICE();
  for (const auto& nf : fields())
    for (const auto& o : option_sets()) {
      SCOPED_TRACE(nf.name + " " + factz::mode_name(o.mode) + "/" + factz::coder_name(o.coder) + " bound " +
                   std::to_string(o.bound));
      auto cpu = factz::compress(nf.f, o);
      ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
      auto gpu = factz::cuda::compress(nf.f, o);
      ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
      ASSERT_EQ(gpu->size(), cpu->size());
      ASSERT_TRUE(gpu.value() == cpu.value());
      // GPU decode of the (identical) stream equals the CPU's decode, bit for bit.
      auto dc = factz::decompress(cpu.value());
      auto dg = factz::cuda::decompress(cpu.value());
      ASSERT_TRUE(dc.ok() && dg.ok()) << dg.status().to_string();
      EXPECT_TRUE(same_bits(dc->u, dg->u));
      EXPECT_TRUE(same_bits(dc->v, dg->v));
      // G0 and G1 on the GPU's output.
      auto cmp = factz::compare(nf.f, dg.value());
      ASSERT_TRUE(cmp.ok());
      EXPECT_EQ(cmp->violations(), 0);
      if (o.bound_mode == factz::BoundMode::abs) {
        EXPECT_LE(cmp->max_abs_error[0], o.bound);
        EXPECT_LE(cmp->max_abs_error[1], o.bound);
      } else {
        EXPECT_LE(cmp->max_abs_error[0], o.bound * cmp->value_range);
        EXPECT_LE(cmp->max_abs_error[1], o.bound * cmp->value_range);
      }
    }
}

TEST(Cuda, DevicePointerApiOnAStreamReusesItsWorkspace) {
  REQUIRE_DEVICE();
  const auto f = factz::synth::turbulence(1500, 1100, 11);
  const size_t bytes = size_t(f.size()) * 4;
  float *u = nullptr, *v = nullptr, *ou = nullptr, *ov = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&u), bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&v), bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&ou), bytes), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&ov), bytes), cudaSuccess);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(u, f.u.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(v, f.v.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  for (auto mode : {factz::Mode::block, factz::Mode::speculative}) {
    factz::Options o;
    o.mode = mode;
    factz::cuda::Workspace ws;
    auto first = factz::cuda::compress(u, v, f.nx, f.ny, o, s, &ws);
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    const size_t held = ws.bytes();
    EXPECT_GT(held, 0u);
    auto second = factz::cuda::compress(u, v, f.nx, f.ny, o, s, &ws);
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(ws.bytes(), held) << "a second call of the same size allocated device memory";
    EXPECT_TRUE(first.value() == second.value());
    auto cpu = factz::compress(f, o);
    ASSERT_TRUE(cpu.ok());
    EXPECT_TRUE(first.value() == cpu.value());
    ASSERT_TRUE(factz::cuda::decompress(cpu.value(), ou, ov, f.nx, f.ny, s, &ws).ok());
    std::vector<float> hu(size_t(f.size())), hv(size_t(f.size()));
    ASSERT_EQ(cudaMemcpy(hu.data(), ou, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(hv.data(), ov, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    auto dc = factz::decompress(cpu.value());
    ASSERT_TRUE(dc.ok());
    EXPECT_TRUE(same_bits(dc->u, hu));
    EXPECT_TRUE(same_bits(dc->v, hv));
    // Wrong output size, bad options and corrupt bytes are errors, not crashes.
    EXPECT_EQ(factz::cuda::decompress(cpu.value(), ou, ov, f.nx + 1, f.ny, s, &ws).code(),
              factz::Code::invalid_argument);
    std::vector<uint8_t> bad = cpu.value();
    bad[bad.size() / 2] ^= 0x5a;
    EXPECT_FALSE(factz::cuda::decompress(bad, ou, ov, f.nx, f.ny, s, &ws).ok());
    factz::Options wrong = o;
    wrong.anchor_stride = 12;
    if (mode == factz::Mode::speculative) {
      EXPECT_EQ(factz::cuda::compress(u, v, f.nx, f.ny, wrong, s, &ws).status().code(), factz::Code::invalid_argument);
    }
  }
  // NaN marks a vertex missing, as on the CPU (the device-pointer call finds the mask on
  // the host); infinity is invalid_argument, as on the CPU.
  const float nan = std::nanf(""), inf = INFINITY;
  ASSERT_EQ(cudaMemcpy(u + 17, &nan, 4, cudaMemcpyHostToDevice), cudaSuccess);
  auto with_nan = factz::cuda::compress(u, v, f.nx, f.ny, factz::Options{}, s);
  ASSERT_TRUE(with_nan.ok()) << with_nan.status().to_string();
  factz::VectorField2D g = f;
  g.u[17] = nan;
  auto cpu_nan = factz::compress(g, factz::Options{});
  ASSERT_TRUE(cpu_nan.ok());
  EXPECT_TRUE(with_nan.value() == cpu_nan.value());
  ASSERT_EQ(cudaMemcpy(v + 18, &inf, 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(factz::cuda::compress(u, v, f.nx, f.ny, factz::Options{}, s).status().code(), factz::Code::invalid_argument);
  cudaStreamDestroy(s);
  cudaFree(u);
  cudaFree(v);
  cudaFree(ou);
  cudaFree(ov);
}

// Damaged sections behind valid CRCs: the GPU decoder rejects what the CPU decoder
// rejects and otherwise reconstructs the CPU's values (never a crash or a hang).
TEST(Cuda, DamagedSectionsAreRejectedLikeTheCpuDoes) {
  REQUIRE_DEVICE();
  const auto f = factz::synth::turbulence(300, 200, 9, 8.0);
  for (auto mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative})
    for (auto coder : {factz::Coder::ans, factz::Coder::huffman}) {
      SCOPED_TRACE(std::string(factz::mode_name(mode)) + "/" + factz::coder_name(coder));
      factz::Options o;
      o.mode = mode;
      o.coder = coder;
      o.zstd = false;
      o.bound = 1e-3;
      auto s = factz::compress(f, o);
      ASSERT_TRUE(s.ok());
      const auto damaged = factz::test::damaged_sections(s.value(), 777, 40, false);
      ASSERT_FALSE(damaged.empty());
      for (const auto& [trial, stream] : damaged) {
        auto cpu = factz::decompress(stream);
        auto gpu = factz::cuda::decompress(stream);
        EXPECT_EQ(cpu.ok(), gpu.ok()) << "trial " << trial << ": " << gpu.status().to_string();
        if (cpu.ok() && gpu.ok()) {
          EXPECT_TRUE(same_bits(cpu->u, gpu->u));
          EXPECT_TRUE(same_bits(cpu->v, gpu->v));
        }
      }
    }
}

// ---- Missing vertices (issue 17) -------------------------------------------------------

using factz::test::masked_option_sets;
using factz::test::describe;

/// Policy::cuda on f gives the CPU's stream; the GPU decodes it (Policy::cuda and the
/// device-pointer call) to the CPU decoder's bits and mask. Returns the missing vertices the
/// GPU decoder reported (-1 on a failure).
int64_t expect_gpu_is_cpu(const VectorField2D& f, const factz::Options& o) {
  auto cpu = factz::compress(f, o);
  EXPECT_TRUE(cpu.ok()) << cpu.status().to_string();
  if (!cpu.ok()) return -1;
  factz::Options g = o;
  g.policy = factz::Policy::cuda;
  auto gpu = factz::compress(f, g);
  EXPECT_TRUE(gpu.ok()) << gpu.status().to_string();
  if (!gpu.ok()) return -1;
  EXPECT_EQ(gpu->size(), cpu->size());
  EXPECT_TRUE(gpu.value() == cpu.value()) << "GPU stream differs from the CPU's";
  auto dc = factz::decompress(cpu.value());
  factz::DecompressOptions d;
  d.policy = factz::Policy::cuda;
  auto dg = factz::decompress(cpu.value(), d);
  EXPECT_TRUE(dc.ok()) << dc.status().to_string();
  EXPECT_TRUE(dg.ok()) << dg.status().to_string();
  if (!dc.ok() || !dg.ok()) return -1;
  EXPECT_TRUE(same_bits(dc->u, dg->u));
  EXPECT_TRUE(same_bits(dc->v, dg->v));
  EXPECT_EQ(dc->mask, dg->mask);
  // decompress_into's path, with the mask the device decoder read handed over.
  std::vector<float> iu(size_t(f.size())), iv(size_t(f.size()));
  std::vector<uint8_t> im;
  const factz::Status into = factz::detail::decompress_into_on_device(cpu.value(), iu, iv, d, &im);
  EXPECT_TRUE(into.ok()) << into.to_string();
  EXPECT_TRUE(same_bits(dc->u, iu) && same_bits(dc->v, iv));
  EXPECT_EQ(im, dc->mask);
  // The device-pointer decoder (the stored bits scattered on the device).
  float* du = to_device(std::vector<float>(size_t(f.size()), 1.0f));
  float* dv = to_device(std::vector<float>(size_t(f.size()), 1.0f));
  const factz::Status st = factz::cuda::decompress(cpu.value(), du, dv, f.nx, f.ny);
  EXPECT_TRUE(st.ok()) << st.to_string();
  std::vector<float> hu(size_t(f.size())), hv(size_t(f.size()));
  EXPECT_EQ(cudaMemcpy(hu.data(), du, hu.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(hv.data(), dv, hv.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(du);
  cudaFree(dv);
  EXPECT_TRUE(same_bits(dc->u, hu));
  EXPECT_TRUE(same_bits(dc->v, hv));
  return std::count(dg->mask.begin(), dg->mask.end(), uint8_t(1));
}

/// The real field with land: cmems_glob1deg_cur (its land zero in the file) with the land
/// marked missing; an empty field when the data is not there.
VectorField2D ocean_with_land() {
  for (const auto& nf : fields()) {
    if (nf.name != "cmems_glob1deg_cur") continue;
    VectorField2D f = nf.f;
    f.mask.assign(size_t(f.size()), 0);
    for (size_t k = 0; k < f.mask.size(); ++k) f.mask[k] = f.u[k] == 0.0f && f.v[k] == 0.0f;
    return f;
  }
  return {};
}

TEST(Cuda, MaskedStreamsAreByteIdenticalToTheCpuForEveryShapeMarkingModeCoderAndZstd) {
  REQUIRE_DEVICE();
  const int64_t nx = 301, ny = 203;  // tiles and anchor lattices with partial edges
  const VectorField2D base = factz::synth::turbulence(nx, ny, 31, 8.0);
  int streams = 0;
  for (const auto& [name, mask] : factz::test::mask_shapes(nx, ny)) {
    const int64_t expected = std::count(mask.begin(), mask.end(), uint8_t(1));
    for (auto how : {factz::test::MissingAs::mask, factz::test::MissingAs::nan, factz::test::MissingAs::fill}) {
      const VectorField2D f = factz::test::with_missing(base, mask, how);
      for (const auto& o : masked_option_sets()) {
        SCOPED_TRACE(name + " " + factz::test::missing_as_name(how) + " " + describe(o));
        EXPECT_EQ(expect_gpu_is_cpu(f, o), expected);
        ++streams;
      }
    }
  }
  EXPECT_EQ(streams, 11 * 3 * 12);
}

// Edge bounds and strides (repairs, lossless, escapes, strides 2 and 4096), degenerate grids
// and a single valid vertex, the real coastlines at REL 1e-1 to 1e-4.
TEST(Cuda, MaskedStreamsAreByteIdenticalToTheCpuAtEdgeCases) {
  REQUIRE_DEVICE();
  const VectorField2D base = factz::synth::vortices(167, 130, 4, 20);
  for (const auto& [name, mask] : factz::test::mask_shapes(167, 130)) {
    if (name == "none" || name == "all") continue;
    const VectorField2D f = factz::test::with_missing(base, mask, factz::test::MissingAs::nan);
    for (auto mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative})
      for (auto [bm, bound, s0] : {std::tuple{factz::BoundMode::rel, 0.3, int64_t{2}},
                                   std::tuple{factz::BoundMode::abs, 0.0, int64_t{4}},
                                   std::tuple{factz::BoundMode::abs, 1e-30, int64_t{4096}}}) {
        factz::Options o;
        o.mode = mode;
        o.coder = s0 == 4 ? factz::Coder::huffman : factz::Coder::ans;
        o.bound_mode = bm;
        o.bound = bound;
        o.anchor_stride = s0;
        SCOPED_TRACE(name + " " + describe(o) + " s0 " + std::to_string(s0));
        EXPECT_GT(expect_gpu_is_cpu(f, o), 0);
      }
  }
  for (auto [nx, ny] : {std::pair<int64_t, int64_t>{40, 1}, {1, 29}, {1, 1}, {2, 2}}) {
    VectorField2D f = factz::synth::noise(nx, ny, 5);
    f.mask.assign(size_t(f.size()), 1);
    f.mask.back() = 0;  // one valid vertex (none for 1 x 1)
    for (const auto& o : masked_option_sets()) {
      SCOPED_TRACE(std::to_string(nx) + "x" + std::to_string(ny) + " " + describe(o));
      EXPECT_EQ(expect_gpu_is_cpu(f, o), f.size() - 1);
    }
  }
  const VectorField2D ocean = ocean_with_land();
  if (ocean.size() == 0) GTEST_SKIP() << "cmems_glob1deg_cur is not available (FACTZ_SHARED_DATA_DIR)";
  const int64_t land = std::count(ocean.mask.begin(), ocean.mask.end(), uint8_t(1));
  for (auto o : masked_option_sets())
    for (double rel : {1e-1, 1e-2, 1e-3, 1e-4}) {
      o.bound = rel;
      SCOPED_TRACE("cmems_glob1deg_cur land " + describe(o));
      EXPECT_EQ(expect_gpu_is_cpu(ocean, o), land);
    }
}

// First diagnostic when masked bytes differ: the device's payloads on the working copy with
// the device mask against the CPU model's, stage by stage.
TEST(Cuda, MaskedPayloadsMatchTheModelStageByStage) {
  REQUIRE_DEVICE();
  const int64_t nx = 333, ny = 211;
  for (const char* shape : {"land", "tile_corners", "checkerboard", "anchors"}) {
    const std::vector<uint8_t> mask = factz::test::mask_shape(nx, ny, shape);
    const VectorField2D f =
        factz::test::with_missing(factz::synth::turbulence(nx, ny, 21, 8.0), mask, factz::test::MissingAs::nan);
    const auto m = factz::cuda_detail::find_missing(f);
    ASSERT_TRUE(m.any());
    float* u = to_device(m.work.u);
    float* v = to_device(m.work.v);
    uint8_t* missing = to_device(m.mask);
    factz::cuda::Workspace ws;
    for (const auto& o : factz::test::every_mode_and_coder(0.05)) {
      SCOPED_TRACE(std::string(shape) + " " + factz::mode_name(o.mode) + "/" + factz::coder_name(o.coder));
      const auto p = factz::cuda_detail::make_plan(f.nx, f.ny, o, 0.0);
      if (o.mode == factz::Mode::speculative) {
        factz::cuda_detail::SpeculativePayload dev, cpu;
        ASSERT_TRUE(factz::cuda_detail::device_compress_speculative(*ws.impl(), p, u, v, missing, nullptr, dev).ok());
        factz::cuda_detail::model_payload(m.work, p, nullptr, &cpu, m.mask.data());
        EXPECT_TRUE(dev.exact == cpu.exact) << "speculative exact values (stored anchors, exact targets)";
        EXPECT_TRUE(dev.coded_ids == cpu.coded_ids) << "device-coded blob of the stored ids";
        EXPECT_TRUE(dev.coded_u == cpu.coded_u) << "device-coded blob of codes u";
        EXPECT_TRUE(dev.coded_v == cpu.coded_v) << "device-coded blob of codes v";
      } else {
        factz::cuda_detail::TiledPayload dev, cpu;
        ASSERT_TRUE(factz::cuda_detail::device_compress_tiled(*ws.impl(), p, u, v, missing, nullptr, dev).ok());
        factz::cuda_detail::model_payload(m.work, p, &cpu, nullptr, m.mask.data());
        EXPECT_TRUE(dev.tile_ids == cpu.tile_ids) << "tile ids";
        for (int c = 0; c < 2; ++c) {
          EXPECT_TRUE(dev.coded[c] == cpu.coded[c]) << "device-coded blob of plane " << c << " (missing vertices' codes)";
          EXPECT_TRUE(dev.outliers[c] == cpu.outliers[c]) << "outlier list of plane " << c;
          EXPECT_TRUE(dev.exact_index[c] == cpu.exact_index[c]) << "exact index list of plane " << c;
          EXPECT_TRUE(dev.exact_values[c] == cpu.exact_values[c]) << "exact values of plane " << c;
        }
      }
    }
    for (void* p : {static_cast<void*>(u), static_cast<void*>(v), static_cast<void*>(missing)}) cudaFree(p);
  }
}

// A large masked field (many tiles, anchor rows and missing runs across them): the CPU's
// bytes, and the GPU decoder's values, in modes block and speculative.
TEST(Cuda, LargeMaskedFieldMatchesTheCpu) {
  REQUIRE_DEVICE();
  const int64_t nx = 3001, ny = 2003;
  const VectorField2D f = factz::test::with_missing(factz::synth::turbulence(nx, ny, 41),
                                                    factz::test::mask_shape(nx, ny, "land"), factz::test::MissingAs::nan);
  for (auto mode : {factz::Mode::block, factz::Mode::speculative}) {
    factz::Options o;
    o.mode = mode;
    SCOPED_TRACE(factz::mode_name(mode));
    EXPECT_GT(expect_gpu_is_cpu(f, o), f.size() / 10);
  }
}

// Damaged masked streams behind valid CRCs: the GPU decoder rejects what the CPU decoder
// rejects, otherwise gives the CPU's values and mask.
TEST(Cuda, DamagedMaskedStreamsAreRejectedLikeTheCpuDoes) {
  REQUIRE_DEVICE();
  const VectorField2D f = factz::test::with_missing(factz::synth::turbulence(300, 200, 9, 8.0),
                                                    factz::test::mask_shape(300, 200, "land"), factz::test::MissingAs::nan);
  for (auto mode : {factz::Mode::none, factz::Mode::block, factz::Mode::speculative})
    for (auto coder : {factz::Coder::ans, factz::Coder::huffman}) {
      SCOPED_TRACE(std::string(factz::mode_name(mode)) + "/" + factz::coder_name(coder));
      factz::Options o;
      o.mode = mode;
      o.coder = coder;
      o.zstd = false;
      o.bound = 1e-3;
      auto s = factz::compress(f, o);
      ASSERT_TRUE(s.ok());
      const auto damaged = factz::test::damaged_sections(s.value(), 778, 40, true);
      ASSERT_FALSE(damaged.empty());
      factz::DecompressOptions d;
      d.policy = factz::Policy::cuda;
      for (const auto& [trial, stream] : damaged) {
        auto cpu = factz::decompress(stream);
        auto gpu = factz::decompress(stream, d);
        EXPECT_EQ(cpu.ok(), gpu.ok()) << "trial " << trial << ": " << gpu.status().to_string();
        if (cpu.ok() && gpu.ok()) {
          EXPECT_TRUE(same_bits(cpu->u, gpu->u));
          EXPECT_TRUE(same_bits(cpu->v, gpu->v));
          EXPECT_EQ(cpu->mask, gpu->mask);
        }
      }
    }
}

// A stream beyond 2^31 bytes (64-bit sizes end to end): lossless noise, ~10 bytes per
// vertex. Needs ~40 GB of device memory and ~30 GB of host memory; skipped otherwise.
TEST(Cuda, OutputBeyondTwoGigabytesMatchesTheCpu) {
  REQUIRE_DEVICE();
  size_t free_bytes = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  if (free_bytes < (size_t(40) << 30)) GTEST_SKIP() << "needs 40 GiB of free device memory";
  const int64_t nx = 15000, ny = 15000;
  auto f = factz::synth::noise(nx, ny, 12);
  factz::Options o;
  o.mode = factz::Mode::none;
  o.bound_mode = factz::BoundMode::abs;
  o.bound = 0;
  o.zstd = false;
  auto gpu = factz::cuda::compress(f, o);
  ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
  EXPECT_GT(gpu->size(), size_t(1) << 31);
  auto cpu = factz::compress(f, o);
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(gpu.value() == cpu.value());
  auto back = factz::cuda::decompress(gpu.value());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_TRUE(same_bits(back->u, f.u));
  EXPECT_TRUE(same_bits(back->v, f.v));
}

}  // namespace
