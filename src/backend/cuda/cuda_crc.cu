// The device CRC-32C (crc_bodies.hpp): per-block CRCs, then a reduction tree of combines.
#include "backend/cuda/crc_bodies.hpp"
#include "backend/cuda/cuda_internal.hpp"
#include "backend/cuda/device_util.cuh"

namespace factz::cuda_detail {
namespace {

/// One thread per block; the byte table is built in shared memory by each thread block.
__global__ void crc_block_kernel(const uint8_t* data, uint64_t n, uint64_t blocks, uint32_t* crc, uint64_t* len) {
  __shared__ uint32_t table[256];
  for (uint32_t b = threadIdx.x; b < 256; b += blockDim.x) table[b] = detail::crc32c_byte_entry(b);
  __syncthreads();
  const uint64_t j = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < blocks) crc_block(data, n, j, table, crc, len);
}

}  // namespace

Status device_crc32c(cuda::Workspace::Impl& ws, const uint8_t* data, uint64_t n, cudaStream_t s, uint32_t& out) {
  out = 0;
  if (n == 0) return Status::Ok();
  uint64_t blocks = (n + kCrcBlockBytes - 1) / kCrcBlockBytes;
  uint32_t* crc[2] = {};
  uint64_t* len[2] = {};
  FACTZ_RETURN_IF_ERROR(ws.get(kCrc0, size_t(blocks) * 4, crc[0]));
  FACTZ_RETURN_IF_ERROR(ws.get(kCrc1, size_t(blocks) * 4, crc[1]));
  FACTZ_RETURN_IF_ERROR(ws.get(kCrcLen0, size_t(blocks) * 8, len[0]));
  FACTZ_RETURN_IF_ERROR(ws.get(kCrcLen1, size_t(blocks) * 8, len[1]));
  crc_block_kernel<<<unsigned((blocks + 255) / 256), 256, 0, s>>>(data, n, blocks, crc[0], len[0]);
  FACTZ_CUDA_TRY(cudaGetLastError());
  int cur = 0;
  while (blocks > 1) {
    const uint64_t next = (blocks + 1) / 2, count = blocks;
    const uint32_t* ic = crc[cur];
    const uint64_t* il = len[cur];
    uint32_t* oc = crc[1 - cur];
    uint64_t* ol = len[1 - cur];
    FACTZ_RETURN_IF_ERROR(
        for_each(int64_t(next), s, [=] __device__(int64_t i) { crc_tree_step(ic, il, count, uint64_t(i), oc, ol); }));
    cur = 1 - cur;
    blocks = next;
  }
  FACTZ_CUDA_TRY(cudaMemcpyAsync(&out, crc[cur], 4, cudaMemcpyDeviceToHost, s));
  FACTZ_CUDA_TRY(cudaStreamSynchronize(s));
  return Status::Ok();
}

}  // namespace factz::cuda_detail
