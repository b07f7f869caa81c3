#include "backend/cuda/huffman_host.hpp"

#include <algorithm>
#include <array>

#include "backend/cuda/huffman_bodies.hpp"
#include "codec/huffman.hpp"
#include "util/byte_io.hpp"

namespace factz::cuda_detail {

static_assert(kHuffmanChunkShift == detail::kHuffmanChunkLog2, "device chunk size must be the blob's");

HuffmanHead huffman_head(std::span<const uint64_t> histogram, uint64_t n) {
  constexpr uint32_t kAlphabet = detail::kHuffmanAlphabet;
  constexpr int kMaxLen = detail::kHuffmanMaxCodeLength;
  std::vector<uint8_t> lengths(kAlphabet, 0);
  detail::huffman_code_lengths(histogram, lengths);
  HuffmanHead h;
  h.chunks = (n + (uint64_t{1} << kHuffmanChunkShift) - 1) >> kHuffmanChunkShift;
  h.bytes.push_back(detail::kHuffmanVersion);
  h.bytes.push_back(uint8_t(detail::kHuffmanChunkLog2));
  detail::put_le(h.bytes, n, 8);
  // Codebook: runs of used symbols (varint count; per run varint skip, varint length, the
  // code lengths).
  std::vector<std::array<uint32_t, 2>> runs;
  for (uint32_t s = 0; s < kAlphabet;) {
    if (lengths[s] == 0) {
      ++s;
      continue;
    }
    uint32_t e = s;
    while (e < kAlphabet && lengths[e] != 0) ++e;
    runs.push_back({s, e});
    s = e;
  }
  detail::put_varint(h.bytes, runs.size());
  uint32_t next = 0;
  for (const auto& [start, end] : runs) {
    detail::put_varint(h.bytes, start - next);
    detail::put_varint(h.bytes, end - start);
    h.bytes.insert(h.bytes.end(), lengths.begin() + start, lengths.begin() + end);
    next = end;
  }
  // Canonical codes in (length, symbol) order.
  std::array<uint32_t, kMaxLen + 2> count{}, code{};
  for (uint32_t s = 0; s < kAlphabet; ++s) ++count[lengths[s]];
  count[0] = 0;
  uint32_t c = 0;
  for (int len = 1; len <= kMaxLen; ++len) {
    code[len] = c;
    c = (c + count[len]) << 1;
  }
  h.table.assign(kAlphabet, 0);
  for (uint32_t s = 0; s < kAlphabet; ++s)
    if (lengths[s]) h.table[s] = (code[lengths[s]]++ << 5) | lengths[s];
  return h;
}

}  // namespace factz::cuda_detail

namespace factz::cuda_detail {

Status huffman_parse(std::span<const uint8_t> blob, uint64_t n, HuffmanParsed& out) {
  constexpr uint32_t kAlphabet = detail::kHuffmanAlphabet;
  detail::ByteReader cur(blob);
  uint8_t version = 0, chunk_log2 = 0;
  uint64_t count = 0;
  if (!cur.u8(version) || !cur.u8(chunk_log2) || !cur.u64(count)) return corrupt_stream("huffman: header truncated");
  if (version != detail::kHuffmanVersion) return corrupt_stream("huffman: unknown blob version");
  if (chunk_log2 < 8 || chunk_log2 > 24) return corrupt_stream("huffman: bad chunk size");
  if (count != n) return corrupt_stream("huffman: symbol count mismatch");
  std::vector<uint8_t> lengths(kAlphabet, 0);
  uint64_t runs = 0;
  if (!cur.varint_at_most(kAlphabet / 2, runs)) return corrupt_stream("huffman: bad codebook run count");
  uint64_t next = 0;
  for (uint64_t r = 0; r < runs; ++r) {
    uint64_t skip = 0, run = 0;
    if (!cur.varint_at_most(kAlphabet, skip) || !cur.varint_at_most(kAlphabet, run) || (r > 0 && skip == 0) ||
        run == 0 || next + skip + run > kAlphabet)
      return corrupt_stream("huffman: bad codebook run");
    if (cur.remaining() < run) return corrupt_stream("huffman: codebook truncated");
    next += skip;
    for (uint64_t k = 0; k < run; ++k) {
      uint8_t len = 0;
      (void)cur.u8(len);
      if (len == 0 || len > kHuffmanMaxLen) return corrupt_stream("huffman: bad code length");
      lengths[next++] = len;
    }
  }
  uint32_t cnt[kHuffmanMaxLen + 1] = {};
  uint32_t used = 0;
  out.book.max_len = 0;
  for (uint32_t s = 0; s < kAlphabet; ++s)
    if (lengths[s]) {
      ++cnt[lengths[s]];
      ++used;
      out.book.max_len = std::max<int>(out.book.max_len, lengths[s]);
    }
  if ((n == 0) != (used == 0)) return corrupt_stream("huffman: codebook does not fit count");
  uint64_t kraft = 0;
  for (int len = 1; len <= kHuffmanMaxLen; ++len) kraft += uint64_t(cnt[len]) << (kHuffmanMaxLen - len);
  if (n != 0 && kraft != (uint64_t{1} << kHuffmanMaxLen) && !(used == 1 && cnt[1] == 1))
    return corrupt_stream("huffman: codebook is not a complete code");
  uint32_t code = 0, index = 0;
  out.book.first[0] = out.book.offset[0] = out.book.limit[0] = 0;
  for (int len = 1; len <= kHuffmanMaxLen; ++len) {
    out.book.first[len] = code;
    out.book.offset[len] = index;
    out.book.limit[len] = (code + cnt[len]) << (kHuffmanMaxLen - len);
    code = (code + cnt[len]) << 1;
    index += cnt[len];
  }
  out.sorted.assign(used, 0);
  uint32_t fill[kHuffmanMaxLen + 1];
  for (int len = 0; len <= kHuffmanMaxLen; ++len) fill[len] = out.book.offset[len];
  for (uint32_t s = 0; s < kAlphabet; ++s)
    if (lengths[s]) out.sorted[fill[lengths[s]]++] = uint16_t(s);
  out.chunk_log2 = chunk_log2;
  const uint64_t chunk = uint64_t{1} << chunk_log2;
  const uint64_t n_chunks = n / chunk + (n % chunk != 0);
  if (cur.remaining() / 4 < n_chunks) return corrupt_stream("huffman: chunk table truncated");
  out.chunk_pos.assign(size_t(n_chunks) + 1, 0);
  uint64_t pos = (blob.size() - cur.remaining()) + 4 * n_chunks;
  for (uint64_t k = 0; k < n_chunks; ++k) {
    uint32_t size = 0;
    (void)cur.u32(size);
    if (size > blob.size() - pos) return corrupt_stream("huffman: chunk exceeds blob");
    out.chunk_pos[size_t(k)] = pos;
    pos += size;
  }
  out.chunk_pos[size_t(n_chunks)] = pos;
  if (pos != blob.size()) return corrupt_stream("huffman: payload size does not match chunk table");
  return Status::Ok();
}

}  // namespace factz::cuda_detail
