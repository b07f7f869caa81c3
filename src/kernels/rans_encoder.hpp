// One rANS chunk's encoding as per-lane steps (docs/codec.md, "ANS byte-plane coder"):
// the CPU encoder (codec/ans_encode.cpp) runs the steps of a chunk serially in the decoder's
// order reversed; the CUDA encoder runs the lanes of a chunk side by side, one thread per
// lane, and places each emitted word with a population count over the lanes of the same
// step (rans_word_rank). Both use the functions here, so they write the same bytes.
//
// Word order: the encoder visits steps t = last .. 0 and, within a step, lanes l = last
// .. 0, pushing emitted words downwards from the chunk's end; the decoder reads them
// upwards in the opposite order. The k-th emitted word (k = 0, 1, ...) ends 2k bytes
// before the end, and the lane states (u32 LE, lane 0 first) precede the lowest word.
#pragma once

#include <cstdint>

#include "kernels/rans.hpp"

namespace factz::detail {

/// A plane's encoder tables, flat so a kernel can take them by pointer: context_of[prev]
/// (256 entries), single[c] (1 when context c holds one value: no bits, no state change)
/// and symbols[c * 256 + byte].
struct RansEncodeTables {
  const uint8_t* context_of;
  const uint8_t* single;
  const RansEncodeSymbol* symbols;
};

/// Steps of a lane: ceil(m / lanes) for lanes l < m mod lanes, floor(m / lanes) otherwise.
FACTZ_HD uint64_t rans_lane_steps(uint64_t m, uint32_t lanes, uint32_t l) {
  return m / lanes + (l < m % lanes ? 1 : 0);
}

/// Step t of a lane whose segment starts at b + begin: codes byte b[begin + t] with the
/// context of the byte before it in the segment (0 at t = 0). Returns whether a word went
/// out (then in `word`); x is the lane's state, kRansLow before the lane's last step.
FACTZ_HD bool rans_encode_lane_step(const RansEncodeTables& tables, const uint8_t* b, uint64_t begin, uint64_t t,
                                    uint32_t& x, uint16_t& word) {
  const uint8_t prev = t == 0 ? uint8_t{0} : b[begin + t - 1];
  const uint32_t context = tables.context_of[prev];
  if (tables.single[context]) return false;
  const RansEncodeSymbol& sym = tables.symbols[context * 256u + b[begin + t]];
  const bool emitted = rans_encode_renorm(x, sym, word);
  x = rans_encode_put(x, sym);
  return emitted;
}

/// Number of set bits (std::popcount, usable in device code).
FACTZ_HD int rans_popcount(uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __popc(v);
#else
  int n = 0;
  for (; v != 0; v &= v - 1) ++n;
  return n;
#endif
}

/// Rank of lane l's word among the words of one step, given the step's emitted mask (bit
/// l: lane l emitted): the lanes above l go out first.
FACTZ_HD uint32_t rans_word_rank(uint32_t emitted_mask, uint32_t l) {
  return uint32_t(rans_popcount(l >= 31 ? 0u : emitted_mask >> (l + 1)));
}

/// Stores the k-th emitted word of a chunk whose bytes end at `end`.
FACTZ_HD void rans_store_word(uint8_t* end, uint64_t k, uint16_t word) {
  end[-2 - int64_t(2 * k)] = uint8_t(word);
  end[-1 - int64_t(2 * k)] = uint8_t(word >> 8);
}

/// Bytes of a chunk of `lanes` lanes that emitted `words` words: the states, then the words.
FACTZ_HD uint64_t rans_chunk_bytes(uint32_t lanes, uint64_t words) { return 4 * uint64_t(lanes) + 2 * words; }

/// Stores lane l's final state in a chunk of `lanes` lanes that emitted `words` words and
/// ends at `end`.
FACTZ_HD void rans_store_state(uint8_t* end, uint32_t lanes, uint64_t words, uint32_t l, uint32_t x) {
  uint8_t* p = end - rans_chunk_bytes(lanes, words) + 4 * uint64_t(l);
  for (int k = 0; k < 4; ++k) p[k] = uint8_t(x >> (8 * k));
}

}  // namespace factz::detail
