// Host halves of the device Huffman coder: thin adapters over codec/huffman.hpp (the
// code lengths, head and code table the CPU encoder writes; the CPU decoder's blob parser).
#include "backend/cuda/huffman_host.hpp"

#include <utility>

#include "backend/cuda/huffman_bodies.hpp"
#include "codec/huffman.hpp"

namespace factz::cuda_detail {

HuffmanHead huffman_head(std::span<const uint64_t> histogram, uint64_t n) {
  std::vector<uint8_t> lengths(detail::kHuffmanAlphabet, 0);
  detail::huffman_code_lengths(histogram, lengths);
  HuffmanHead h;
  h.chunks = (n + (uint64_t{1} << kHuffmanChunkShift) - 1) >> kHuffmanChunkShift;
  detail::huffman_write_head(n, lengths, h.bytes);
  h.table = detail::huffman_encode_table(lengths);
  return h;
}

Status huffman_parse(std::span<const uint8_t> blob, uint64_t n, HuffmanParsed& out) {
  detail::HuffmanBlob parsed;
  FACTZ_RETURN_IF_ERROR(detail::huffman_parse(blob, n, parsed));
  const detail::HuffmanCanonical& c = parsed.code;
  for (int len = 0; len <= kHuffmanMaxLen; ++len) {
    out.book.first[len] = c.first[size_t(len)];
    out.book.offset[len] = c.offset[size_t(len)];
    out.book.limit[len] = c.limit[size_t(len)];
  }
  out.book.max_len = c.max_len;
  out.sorted = std::move(parsed.code.sorted);
  out.chunk_log2 = parsed.chunk_log2;
  out.chunk_pos = std::move(parsed.chunk_pos);
  return Status::Ok();
}

}  // namespace factz::cuda_detail
