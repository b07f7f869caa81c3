#include "backend/cuda/ans_host.hpp"

#include <algorithm>
#include <array>

#include "codec/ans.hpp"
#include "kernels/rans.hpp"
#include "util/byte_io.hpp"

namespace factz::cuda_detail {
namespace {

constexpr uint32_t kScale = detail::kRansScale;

Status read_frequencies(detail::ByteReader& cur, std::array<uint32_t, 256>& freqs) {
  freqs.fill(0);
  uint64_t runs = 0;
  if (!cur.varint_at_most(128, runs)) return corrupt_stream("ans: bad frequency run count");
  uint64_t next = 0;
  for (uint64_t r = 0; r < runs; ++r) {
    uint64_t skip = 0, run = 0;
    if (!cur.varint_at_most(256, skip) || !cur.varint_at_most(256, run) || (r > 0 && skip == 0) || run == 0 ||
        next + skip + run > 256)
      return corrupt_stream("ans: bad frequency run");
    next += skip;
    for (uint64_t k = 0; k < run; ++k) {
      uint64_t f = 0;
      if (!cur.varint_at_most(kScale - 1, f) || f == 0) return corrupt_stream("ans: bad frequency");
      freqs[next++] = uint32_t(f);
    }
  }
  return Status::Ok();
}

Status read_table(detail::ByteReader& cur, std::array<uint32_t, 256>& freqs) {
  uint64_t kind = 0;
  if (!cur.le(1, kind)) return corrupt_stream("ans: context table truncated");
  if (kind == 0) {
    uint64_t value = 0;
    if (!cur.le(1, value)) return corrupt_stream("ans: context table truncated");
    freqs.fill(0);
    freqs[value] = kScale;
    return Status::Ok();
  }
  if (kind != 1) return corrupt_stream("ans: bad context table kind");
  FACTZ_RETURN_IF_ERROR(read_frequencies(cur, freqs));
  uint32_t cum = 0;
  int present = 0;
  for (uint32_t f : freqs) {
    cum += f;
    present += f != 0;
  }
  if (cum != kScale || present < 2) return corrupt_stream("ans: frequencies do not sum to the scale");
  return Status::Ok();
}

Status read_plane(detail::ByteReader& cur, uint64_t n, uint64_t chunk, uint64_t blob_size, AnsPlane& pv) {
  uint64_t mode = 0, value = 0;
  if (!cur.le(1, mode)) return corrupt_stream("ans: plane truncated");
  if (mode == 0) {
    if (!cur.le(1, value)) return corrupt_stream("ans: plane truncated");
    pv.mode = 0;
    pv.value = uint8_t(value);
    return Status::Ok();
  }
  if (mode == 2 && n > 0) {
    uint64_t count = 0;
    if (!cur.le(1, value) || !cur.varint_at_most(std::min<uint64_t>(n, cur.remaining() / 2), count) || count == 0)
      return corrupt_stream("ans: bad sparse plane");
    pv.mode = 2;
    pv.value = uint8_t(value);
    pv.positions.resize(size_t(count));
    pv.bytes.resize(size_t(count));
    uint64_t next = 0;
    for (uint64_t e = 0; e < count; ++e) {
      uint64_t gap = 0, byte = 0;
      if (!cur.varint_at_most(n - next, gap) || next + gap >= n || !cur.le(1, byte) || byte == value)
        return corrupt_stream("ans: bad sparse plane exception");
      pv.positions[size_t(e)] = next + gap;
      pv.bytes[size_t(e)] = uint8_t(byte);
      next += gap + 1;
    }
    return Status::Ok();
  }
  if (mode != 1 || n == 0) return corrupt_stream("ans: bad plane mode");
  pv.mode = 1;
  uint64_t lanes = 0, contexts = 0;
  if (!cur.le(1, lanes) || !cur.le(1, contexts)) return corrupt_stream("ans: plane truncated");
  if (lanes < 1 || lanes > uint64_t(detail::kRansLanes)) return corrupt_stream("ans: bad lane count");
  if (contexts < 1 || contexts > uint64_t(detail::kAnsMaxContexts)) return corrupt_stream("ans: bad context count");
  pv.lanes = uint32_t(lanes);
  // The K - 1 map values get contexts 0 .. K - 2, every other value context K - 1.
  std::array<uint8_t, 256> context_of;
  context_of.fill(uint8_t(contexts - 1));
  std::array<bool, 256> mapped{};
  for (uint64_t c = 0; c + 1 < contexts; ++c) {
    uint64_t v = 0;
    if (!cur.le(1, v)) return corrupt_stream("ans: context map truncated");
    if (mapped[v]) return corrupt_stream("ans: context map repeats a value");
    mapped[v] = true;
    context_of[v] = uint8_t(c);
  }
  pv.first_context = context_of[0];
  std::vector<std::array<uint32_t, 256>> freqs(static_cast<size_t>(contexts));
  for (auto& f : freqs) FACTZ_RETURN_IF_ERROR(read_table(cur, f));
  const uint64_t n_chunks = n / chunk + (n % chunk != 0);
  if (cur.remaining() / 4 < n_chunks) return corrupt_stream("ans: chunk table truncated");
  pv.chunk_pos.assign(size_t(n_chunks) + 1, 0);
  uint64_t pos = cur.pos() + 4 * n_chunks;
  for (uint64_t k = 0; k < n_chunks; ++k) {
    uint64_t size = 0;
    (void)cur.le(4, size);
    const uint64_t m = std::min(n - k * chunk, chunk);
    const uint64_t states = 4 * std::min<uint64_t>(m, pv.lanes);
    if (size > blob_size - pos || size < states || (size - states) % 2 != 0 || (size - states) / 2 > m)
      return corrupt_stream("ans: bad chunk size");
    pv.chunk_pos[size_t(k)] = pos;
    pos += size;
  }
  pv.chunk_pos[size_t(n_chunks)] = pos;
  (void)cur.skip(pos - cur.pos());
  // Decoder tables: per context, each byte value's slots in value order.
  pv.entries.assign(freqs.size() * kScale, 0);
  pv.values.assign(freqs.size() * kScale, 0);
  for (size_t c = 0; c < freqs.size(); ++c) {
    uint32_t cum = uint32_t(c * kScale);
    for (uint32_t v = 0; v < 256; ++v) {
      const uint32_t f = freqs[c][v];
      for (uint32_t k = 0; k < f; ++k) {
        pv.entries[cum + k] = detail::rans_decode_entry(f, k, context_of[v]);
        pv.values[cum + k] = uint8_t(v);
      }
      cum += f;
    }
  }
  return Status::Ok();
}

}  // namespace

Status ans_parse(std::span<const uint8_t> blob, uint16_t center, uint64_t n, AnsParsed& out) {
  detail::ByteReader cur(blob);
  uint64_t version = 0, chunk_log2 = 0, stored_center = 0, count = 0;
  if (!cur.le(1, version) || !cur.le(1, chunk_log2) || !cur.le(2, stored_center) || !cur.le(8, count))
    return corrupt_stream("ans: header truncated");
  if (version != detail::kAnsVersion) return corrupt_stream("ans: unknown blob version");
  if (chunk_log2 < 8 || chunk_log2 > 24) return corrupt_stream("ans: bad chunk size");
  if (stored_center != center) return corrupt_stream("ans: center mismatch");
  if (count != n) return corrupt_stream("ans: symbol count mismatch");
  out.chunk_log2 = int(chunk_log2);
  for (auto& p : out.planes) FACTZ_RETURN_IF_ERROR(read_plane(cur, n, uint64_t{1} << chunk_log2, blob.size(), p));
  if (cur.remaining() != 0) return corrupt_stream("ans: trailing bytes");
  return Status::Ok();
}

}  // namespace factz::cuda_detail
