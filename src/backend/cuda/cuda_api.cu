// Public entry points of the CUDA backend (include/factz/cuda.hpp): device checks, the
// workspace, the device-pointer compress/decompress, the host-memory wrappers on a chosen
// device, and the table through which Policy::cuda reaches them (api/device_backend.hpp).
#include <memory>

#include "api/device_backend.hpp"
#include "backend/cuda/cuda_internal.hpp"
#include "backend/cuda/device_util.cuh"

namespace factz::cuda {

Workspace::Workspace() : impl_(new Impl) {}

Workspace::~Workspace() {
  release();
  delete impl_;
}

size_t Workspace::bytes() const {
  size_t total = 0;
  for (size_t b : impl_->size) total += b;
  return total;
}

void Workspace::release() {
  for (int s = 0; s < cuda_detail::kSlotCount; ++s) {
    if (impl_->ptr[s]) cudaFree(impl_->ptr[s]);  // an error here (e.g. at exit) frees nothing more
    impl_->ptr[s] = nullptr;
    impl_->size[s] = 0;
  }
}

Status device_status() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return Status(Code::backend_unavailable,
                  std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")");
  }
  if (count == 0) return Status(Code::backend_unavailable, "no CUDA device");
  // Every entry point starts here: a non-sticky error that an earlier runtime call left
  // as the thread's last error (the caller's failed cudaMalloc, say, already returned to
  // it) must not be taken for a failure of this call's first launch check.
  (void)cudaGetLastError();
  return Status::Ok();
}

bool device_available() { return device_status().ok(); }

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

namespace {

/// The calls without a workspace share one per host thread and device (a workspace's
/// buffers belong to one device).
Workspace& default_workspace() {
  thread_local std::vector<std::unique_ptr<Workspace>> per_device;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = 0;
  }
  if (per_device.size() <= size_t(device)) per_device.resize(size_t(device) + 1);
  if (!per_device[size_t(device)]) per_device[size_t(device)] = std::make_unique<Workspace>();
  return *per_device[size_t(device)];
}

/// Makes `device` current for the calling thread for the guard's lifetime, then restores
/// the device that was current before (a library call leaves the caller's choice alone).
class DeviceScope {
 public:
  DeviceScope() = default;
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  ~DeviceScope() {
    if (switched_) (void)cuda_detail::cuda_status(cudaSetDevice(previous_), "cudaSetDevice");
  }
  Status enter(int device) {
    FACTZ_CUDA_TRY(cudaGetDevice(&previous_));
    if (previous_ == device) return Status::Ok();
    FACTZ_CUDA_TRY(cudaSetDevice(device));
    switched_ = true;
    return Status::Ok();
  }

 private:
  int previous_ = 0;
  bool switched_ = false;
};

/// The device a host wrapper runs on: `requested` (or kDeviceAuto) checked against the count.
Result<int> host_device(int requested) {
  FACTZ_RETURN_IF_ERROR(device_status());
  return detail::resolve_device(requested, device_count());
}

}  // namespace

Result<std::vector<uint8_t>> compress(const float* d_u, const float* d_v, int64_t nx, int64_t ny, const Options& o,
                                      cudaStream_t stream, Workspace* workspace) try {
  FACTZ_RETURN_IF_ERROR(device_status());
  FACTZ_RETURN_IF_ERROR(cuda_detail::check_options(nx, ny, o));
  if (!d_u || !d_v) return invalid_argument("device planes must not be null");
  Workspace::Impl& ws = *(workspace ? workspace : &default_workspace())->impl();
  const int64_t n = nx * ny;
  int64_t nonfinite = 0;
  FACTZ_RETURN_IF_ERROR(cuda_detail::device_count_nonfinite(ws, d_u, d_v, n, stream, nonfinite));
  if (nonfinite > 0)
    return invalid_argument("field has " + std::to_string(nonfinite) + " vertices with NaN or infinite values");
  double range = 0.0;
  if (o.bound_mode == BoundMode::rel)
    FACTZ_RETURN_IF_ERROR(cuda_detail::device_value_range(ws, d_u, d_v, n, stream, range));
  const cuda_detail::Plan p = cuda_detail::make_plan(nx, ny, o, range);
  if (o.mode == Mode::speculative) {
    cuda_detail::SpeculativePayload pl;
    FACTZ_RETURN_IF_ERROR(cuda_detail::device_compress_speculative(ws, p, d_u, d_v, stream, pl));
    return cuda_detail::assemble_speculative(p, pl);
  }
  cuda_detail::TiledPayload pl;
  FACTZ_RETURN_IF_ERROR(cuda_detail::device_compress_tiled(ws, p, d_u, d_v, stream, pl));
  return cuda_detail::assemble_tiled(p, pl);
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of host memory compressing on the GPU");
}

Status decompress(std::span<const uint8_t> bytes, float* d_u, float* d_v, int64_t nx, int64_t ny,
                  cudaStream_t stream, Workspace* workspace) try {
  FACTZ_RETURN_IF_ERROR(device_status());
  auto pc = cuda_detail::parse_checked(bytes);
  if (!pc.ok()) return pc.status();
  if (int64_t(pc->header.nx) != nx || int64_t(pc->header.ny) != ny)
    return invalid_argument("output planes are " + std::to_string(nx) + "x" + std::to_string(ny) + ", the stream holds " +
                            std::to_string(pc->header.nx) + "x" + std::to_string(pc->header.ny));
  if (!d_u || !d_v) return invalid_argument("device planes must not be null");
  Workspace::Impl& ws = *(workspace ? workspace : &default_workspace())->impl();
  const int threads = cuda_detail::host_threads();
  if (pc->header.mode == uint8_t(Mode::speculative)) {
    cuda_detail::SpeculativeDecodeInput in;
    FACTZ_RETURN_IF_ERROR(cuda_detail::parse_speculative(bytes, pc.value(), threads, in, /*leave_coded=*/true));
    return cuda_detail::device_decode_speculative(ws, pc.value(), in, d_u, d_v, stream);
  }
  cuda_detail::TiledDecodeInput in;
  FACTZ_RETURN_IF_ERROR(cuda_detail::parse_tiled(bytes, pc.value(), threads, in, /*leave_coded=*/true));
  return cuda_detail::device_decode_tiled(ws, pc.value(), in, d_u, d_v, stream);
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of host memory decompressing on the GPU");
}

namespace {

Result<std::vector<uint8_t>> compress_on(const VectorField2D& f, const Options& o, int device) try {
  DeviceScope scope;
  FACTZ_RETURN_IF_ERROR(device_status());
  FACTZ_RETURN_IF_ERROR(scope.enter(device));
  FACTZ_RETURN_IF_ERROR(validate_field(f));
  FACTZ_RETURN_IF_ERROR(cuda_detail::check_options(f.nx, f.ny, o));
  Workspace& workspace = default_workspace();
  Workspace::Impl& ws = *workspace.impl();
  const size_t bytes = size_t(f.size()) * sizeof(float);
  float *u = nullptr, *v = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn0, bytes, u));
  FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn1, bytes, v));
  FACTZ_CUDA_TRY(cudaMemcpy(u, f.u.data(), bytes, cudaMemcpyHostToDevice));
  FACTZ_CUDA_TRY(cudaMemcpy(v, f.v.data(), bytes, cudaMemcpyHostToDevice));
  return compress(u, v, f.nx, f.ny, o, nullptr, &workspace);
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of host memory compressing on the GPU");
}

Status decompress_into_on(std::span<const uint8_t> stream, std::span<float> out_u, std::span<float> out_v,
                          int device) try {
  DeviceScope scope;
  FACTZ_RETURN_IF_ERROR(device_status());
  FACTZ_RETURN_IF_ERROR(scope.enter(device));
  auto dims = stream_dims(stream);
  if (!dims.ok()) return dims.status();
  const int64_t n = dims->first * dims->second;
  if (int64_t(out_u.size()) != n || int64_t(out_v.size()) != n)
    return invalid_argument("output planes must hold nx*ny = " + std::to_string(n) + " values");
  const size_t bytes = size_t(n) * sizeof(float);
  Workspace& workspace = default_workspace();
  Workspace::Impl& ws = *workspace.impl();
  float *u = nullptr, *v = nullptr;
  FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn0, bytes, u));
  FACTZ_RETURN_IF_ERROR(ws.get(cuda_detail::kIn1, bytes, v));
  FACTZ_RETURN_IF_ERROR(decompress(stream, u, v, dims->first, dims->second, nullptr, &workspace));
  FACTZ_CUDA_TRY(cudaMemcpy(out_u.data(), u, bytes, cudaMemcpyDeviceToHost));
  FACTZ_CUDA_TRY(cudaMemcpy(out_v.data(), v, bytes, cudaMemcpyDeviceToHost));
  return Status::Ok();
} catch (const std::bad_alloc&) {
  return Status(Code::internal, "out of host memory decompressing on the GPU");
}

Result<int> table_device_count() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return Status(Code::backend_unavailable,
                  std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")");
  }
  return count;
}

}  // namespace

Result<std::vector<uint8_t>> compress(const VectorField2D& f, const Options& o) {
  auto device = host_device(o.device);
  if (!device.ok()) return device.status();
  return compress_on(f, o, device.value());
}

Result<VectorField2D> decompress(std::span<const uint8_t> stream, int device) {
  // The same path as factz::decompress with Policy::cuda (api/device_dispatch.cpp).
  return factz::decompress(stream, DecompressOptions{Policy::cuda, 0, device});
}

Status decompress_into(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v, int device) {
  auto d = host_device(device);
  if (!d.ok()) return d.status();
  return decompress_into_on(stream, u, v, d.value());
}

}  // namespace factz::cuda

namespace factz::cuda_detail {

const detail::DeviceBackend& cuda_backend() {
  static const detail::DeviceBackend table{&cuda::table_device_count, &cuda::compress_on, &cuda::decompress_into_on};
  return table;
}

}  // namespace factz::cuda_detail
