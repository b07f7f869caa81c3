// The entropy coder a stream uses (header field `coder`), behind one call: Huffman
// (coder 0) or byte-plane ANS (coder 1). `center` is the symbol around which values
// cluster: kAnsCodeCenter for quantization codes, 0 for id streams (Huffman ignores it).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "codec/ans.hpp"
#include "codec/huffman.hpp"
#include "factz/status.hpp"

namespace factz::detail {

/// context (coder 2) codes scalar codes on their grid (context_coder.hpp): its blob's count
/// is read here like the others', its coding goes through context_encode / context_decode.
enum class EntropyCoder : uint8_t { huffman = 0, ans = 1, context = 2 };

/// Bytes at the start of a coded blob that hold its symbol count.
inline constexpr size_t kCoderHeaderBytes = 12;

/// The symbol count recorded in the first kCoderHeaderBytes of a blob (Huffman and context:
/// u64 at byte 2; ANS: u64 at byte 4; see docs/codec.md), or corrupt_stream.
inline Result<uint64_t> coded_symbol_count(EntropyCoder c, std::span<const uint8_t> head) {
  const size_t at = c == EntropyCoder::ans ? 4 : 2;
  if (head.size() < at + 8) return corrupt_stream("coded symbol stream is truncated");
  uint64_t n = 0;
  for (int b = 7; b >= 0; --b) n = (n << 8) | head[at + size_t(b)];
  return n;
}

/// allow_escapes: ANS only, whether the blob may be version 3 (rANS planes with escapes,
///   docs/codec.md); only the sections whose stream format allows it pass true.
inline Status entropy_encode(EntropyCoder c, std::span<const uint16_t> symbols, uint16_t center,
                             std::vector<uint8_t>& out, int threads, bool allow_escapes = false) {
  if (c == EntropyCoder::context) return invalid_argument("the context coder codes on a grid: context_encode");
  if (c == EntropyCoder::ans) return ans_encode(symbols, center, out, threads, kAnsEncoderMaxLanes, allow_escapes);
  return huffman_encode(symbols, out, threads);
}

inline Status entropy_decode(EntropyCoder c, std::span<const uint8_t> in, uint16_t center,
                             std::span<uint16_t> symbols, int threads) {
  if (c == EntropyCoder::context) return invalid_argument("the context coder decodes on a grid: context_decode");
  if (c == EntropyCoder::ans) return ans_decode(in, center, symbols, threads);
  return huffman_decode(in, symbols, threads);
}

}  // namespace factz::detail
