// Per-lane steps of the interleaved rANS byte-plane coder (docs/codec.md, "ANS byte-plane
// coder"). The host coder (src/codec/ans_encode.cpp, ans_decode.cpp) and the CUDA backend's
// lane groups (backend/cuda/ans_*bodies.hpp) call exactly these functions, so both produce
// the same bytes.
//
// Parameters (fixed by blob version 2):
// - probability scale M = 2^kRansScaleBits = 4096: the frequencies of a plane sum to M;
// - 32-bit states kept in [kRansLow, 2^32) = [2^16, 2^32) between symbols;
// - 16-bit renormalization: the encoder emits at most one 16-bit word per symbol and the
//   decoder reads at most one (a state never needs two, see rans_decode_advance).
//
// Each lane codes a contiguous segment of its chunk, and the frequencies of a symbol depend
// on the previous symbol of the same lane (its context), so a lane needs nothing from
// another. Decoding steps all lanes in lockstep (step t decodes symbol t of every segment)
// and the lanes share one word stream, read in step-major, lane-minor order; encoding runs
// the same schedule backwards and pushes the words onto a stack that grows downwards.
#pragma once

#include <cstdint>

#include "kernels/hd.hpp"

namespace factz::detail {

/// log2 of the probability scale M.
inline constexpr int kRansScaleBits = 12;
inline constexpr uint32_t kRansScale = uint32_t{1} << kRansScaleBits;
/// Lower end L of the state interval [L, 2^32); also every lane's state before the first
/// encoded symbol and after the last decoded one.
inline constexpr uint32_t kRansLow = uint32_t{1} << 16;
/// Most interleaved states per chunk (one per lane of a GPU warp); a plane may use fewer.
inline constexpr int kRansLanes = 32;

static_assert(kRansScaleBits <= 16 && (kRansLow >> kRansScaleBits) >= 1,
              "one 16-bit word must bring any decoded state back to [L, 2^32)");

// ---------------------------------------------------------------- symbol mapping

/// z = zigzag((s - center) as int16): 0, -1, +1, -2, +2, ... map to 0, 1, 2, 3, 4, ...
/// The difference wraps modulo 2^16, so the map is a bijection of uint16 for any center;
/// for center = 32768 it is exactly zigzag(int32(s) - 32768).
FACTZ_HD uint16_t ans_zigzag(uint16_t s, uint16_t center) {
  const uint32_t d = static_cast<uint16_t>(s - center);  // two's complement int16 bits
  const uint32_t sign = d >> 15;                          // 1 for negative differences
  return static_cast<uint16_t>((d << 1) ^ (0u - sign));
}

/// Inverse of ans_zigzag.
FACTZ_HD uint16_t ans_unzigzag(uint16_t z, uint16_t center) {
  const uint32_t d = (uint32_t{z} >> 1) ^ (0u - (uint32_t{z} & 1u));
  return static_cast<uint16_t>(d + center);
}

// ---------------------------------------------------------------- lanes

/// First symbol of lane `l`'s segment when a chunk of m symbols is cut among `lanes` lanes
/// (1 <= lanes <= m): the first m mod lanes segments hold one symbol more than the others.
FACTZ_HD uint64_t rans_lane_begin(uint64_t m, uint32_t lanes, uint32_t l) {
  return (m / lanes) * l + (l < m % lanes ? l : m % lanes);
}

// ---------------------------------------------------------------- encoding

/// What the encoder needs to know about one byte value of a plane.
struct RansEncodeSymbol {
  uint32_t x_max;  // states >= x_max must emit a word before this symbol is pushed
  uint32_t rcp;    // m - 2^32 with m = ceil(2^(32 + shift) / freq): exact division by freq
  uint32_t shift;  // ceil(log2(freq))
  uint16_t freq;   // 1..M-1
  uint16_t cum;    // sum of the frequencies of smaller byte values
};

/// Precomputes the encoder's view of a symbol with frequency `freq` (1..M-1) starting at
/// `cum` (cum + freq <= M). A single-value context (freq = M) is skipped by the encoder: it
/// costs no bits and leaves the state as it is.
FACTZ_HD RansEncodeSymbol rans_encode_symbol(uint32_t cum, uint32_t freq) {
  RansEncodeSymbol s{};
  uint32_t shift = 0;
  while ((uint32_t{1} << shift) < freq) ++shift;
  // x < x_max keeps (x / freq) << scale_bits below 2^32 after pushing.
  s.x_max = ((kRansLow >> kRansScaleBits) << 16) * freq;
  s.rcp = static_cast<uint32_t>((((uint64_t{1} << (32 + shift)) + freq - 1) / freq) - (uint64_t{1} << 32));
  s.shift = shift;
  s.freq = static_cast<uint16_t>(freq);
  s.cum = static_cast<uint16_t>(cum);
  return s;
}

/// First half of an encoding step: if the state is too large for `sym`, its low 16 bits go
/// out as `word` (returns true) and the state shrinks; afterwards x < sym.x_max. Branch-free:
/// `word` is set either way, so a caller may store it unconditionally and advance its
/// output only when this returns true.
FACTZ_HD bool rans_encode_renorm(uint32_t& x, const RansEncodeSymbol& sym, uint16_t& word) {
  const uint32_t mask = 0u - static_cast<uint32_t>(x >= sym.x_max);
  word = static_cast<uint16_t>(x);
  x >>= mask & 16u;  // x < 2^16 <= x_max after a shift: one word always suffices
  return mask != 0;
}

/// Second half: pushes `sym` onto a renormalized state,
/// x' = floor(x / f) * M + (x mod f) + cum. The quotient uses the precomputed reciprocal:
/// floor(x * m / 2^(32 + shift)) equals floor(x / f) for every x < 2^32 (Granlund and
/// Montgomery's round-up method), and x * m is formed as x * 2^32 + x * rcp without
/// overflowing 64 bits.
FACTZ_HD uint32_t rans_encode_put(uint32_t x, const RansEncodeSymbol& sym) {
  const uint64_t wide = uint64_t{x} + ((uint64_t{x} * sym.rcp) >> 32);
  const uint32_t q = static_cast<uint32_t>(wide >> sym.shift);
  const uint32_t r = x - q * sym.freq;
  return (q << kRansScaleBits) + r + sym.cum;
}

// ---------------------------------------------------------------- decoding

/// A decoder table entry, one per slot 0..M-1 of a context: the frequency f (1..M) of the
/// byte value whose interval holds the slot, the slot's offset in that interval and the
/// context that value selects for the lane's next symbol (0..15), packed as
/// (f - 1) | offset << 12 | next_context << 24. The value itself lives in a parallel table:
/// the state's dependency chain needs only this entry. f = M is a context with a single
/// value: decoding it leaves the state unchanged and costs no bits.
FACTZ_HD uint32_t rans_decode_entry(uint32_t freq, uint32_t offset, uint32_t next_context) {
  return (freq - 1) | (offset << 12) | (next_context << 24);
}

/// Slot of the state: which table entry decodes the next symbol.
FACTZ_HD uint32_t rans_decode_slot(uint32_t x) { return x & (kRansScale - 1); }

/// Index of the entry for state x in context `context` (tables of M entries back to back).
FACTZ_HD uint32_t rans_decode_index(uint32_t context, uint32_t x) {
  return (context << kRansScaleBits) | rans_decode_slot(x);
}

/// The context an entry selects for the next symbol of its lane.
FACTZ_HD uint32_t rans_entry_next_context(uint32_t entry) { return entry >> 24; }

/// Pops the entry's symbol: x' = f * floor(x / M) + (slot - cum). For x in [L, 2^32) the
/// result lies in [L / M, 2^32): at least 16, so one word brings it back above L. With
/// f = M (a single-value context) x' = x.
FACTZ_HD uint32_t rans_decode_advance(uint32_t x, uint32_t entry) {
  const uint32_t freq = (entry & 0xFFFu) + 1;
  const uint32_t offset = (entry >> 12) & 0xFFFu;
  return freq * (x >> kRansScaleBits) + offset;
}

/// True when the state fell below L and must take the next word of the stream.
FACTZ_HD bool rans_decode_needs_word(uint32_t x) { return x < kRansLow; }

/// Shifts the next 16-bit word in; requires rans_decode_needs_word(x).
FACTZ_HD uint32_t rans_decode_take_word(uint32_t x, uint16_t word) { return (x << 16) | word; }

/// Branch-free renormalization for a decoder that has the next word at hand: returns the
/// state after taking `word` if it needs one, else x unchanged, and adds to `consumed` the
/// number of bytes taken (0 or 2). Whether a word is needed depends on the data, so a
/// branch would be mispredicted about as often as words are read.
FACTZ_HD uint32_t rans_decode_refill(uint32_t x, uint16_t word, uint32_t& consumed) {
  const uint32_t mask = 0u - static_cast<uint32_t>(rans_decode_needs_word(x));
  consumed += mask & 2u;
  return (x << (mask & 16u)) | (word & mask);
}

// ---------------------------------------------------------------- escapes (blob version 3)
//
// A mode 3 plane decodes like a rANS plane into remapped bytes, where the escape value e
// stands for every rare value; its list holds the original bytes of the decoded e in
// position order. Chunks are patched in parallel: count the e per chunk, take the exclusive
// prefix sum of the counts (which must total the list's length), replace per chunk.

/// Number of bytes equal to e in b[0..m).
FACTZ_HD uint64_t rans_count_escapes(const uint8_t* b, uint64_t m, uint8_t e) {
  uint64_t count = 0;
  for (uint64_t i = 0; i < m; ++i) count += b[i] == e;
  return count;
}

/// Replaces the bytes equal to e in b[0..m), in order, by list[0], list[1], ...: the list
/// entries from the chunk's prefix count on (the caller checked that they exist).
FACTZ_HD void rans_replace_escapes(uint8_t* b, uint64_t m, uint8_t e, const uint8_t* list) {
  for (uint64_t i = 0; i < m; ++i)
    if (b[i] == e) b[i] = *list++;
}

}  // namespace factz::detail
