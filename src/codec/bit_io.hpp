// MSB-first bit packing for the entropy coders (docs/codec.md).
//
// Bits are packed most significant bit first: the first bit written is bit 7 of byte 0.
// This makes canonical prefix codes compare as plain integers when left-justified.
// The writer emits exactly the bytes it is sized for (no speculative over-write), so
// chunks encoded concurrently into one buffer never touch each other. The reader never
// reads outside [base, base + size): past the end it supplies zero bits and keeps count,
// so a decoder can tell afterwards whether it consumed more bits than exist.
#pragma once

#include <cstddef>
#include <cstdint>

namespace factz::detail {

/// Big-endian 64-bit load from an unaligned address (compilers fold this into one
/// load and a byte swap).
inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v = 0;
  for (int k = 0; k < 8; ++k) v = (v << 8) | p[k];
  return v;
}

/// Big-endian 32-bit store to an unaligned address.
inline void store_be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

/// Appends codes of 1..32 bits to a caller-sized buffer. The caller computes the exact
/// number of bits beforehand; finish() pads the last byte with zero bits.
class BitWriter {
 public:
  explicit BitWriter(uint8_t* out) : out_(out), begin_(out) {}

  /// Appends the low `len` bits of `code` (1 <= len <= 32; higher bits of code are zero).
  void put(uint32_t code, int len) {
    // Invariant: pending_ < 32 before the call, so pending_ + len <= 63 fits the
    // accumulator; bits above pending_ in acc_ are stale and never emitted.
    acc_ = (acc_ << len) | code;
    pending_ += len;
    if (pending_ >= 32) {
      pending_ -= 32;
      store_be32(out_, static_cast<uint32_t>(acc_ >> pending_));
      out_ += 4;
    }
  }

  /// Flushes the pending bits, zero-padded to a whole byte; returns the bytes written.
  uint64_t finish() {
    if (pending_ > 0) {
      const uint32_t v = static_cast<uint32_t>(acc_ << (32 - pending_));
      const int bytes = (pending_ + 7) / 8;
      for (int k = 0; k < bytes; ++k) *out_++ = static_cast<uint8_t>(v >> (24 - 8 * k));
      pending_ = 0;
    }
    return static_cast<uint64_t>(out_ - begin_);
  }

 private:
  uint8_t* out_;
  uint8_t* begin_;
  uint64_t acc_ = 0;
  int pending_ = 0;  // bits in acc_ not yet stored, always < 32 between calls
};

/// Reads MSB-first bits from [base, base + size). After refill() at least 56 bits are
/// available to peek(); positions past `size` read as zero bits ("virtual" bytes).
class BitReader {
 public:
  BitReader(const uint8_t* base, uint64_t size, uint64_t start)
      : base_(base), size_(size), pos_(start), start_(start) {}

  /// True when the branch-free refill may load 8 bytes at the current position.
  bool can_refill_fast() const { return pos_ <= size_ && size_ - pos_ >= 8; }

  /// Tops the buffer up to 56..63 bits; requires can_refill_fast().
  void refill_fast() {
    // Bits of the loaded word beyond the whole bytes counted in pos_ are ORed into
    // positions that hold either zeros or the very same stream bits, so this is exact.
    buf_ |= load_be64(base_ + pos_) >> count_;
    pos_ += static_cast<uint64_t>((63 - count_) >> 3);
    count_ |= 56;
  }

  /// Tops the buffer up to 56..63 bits, byte by byte, zero-filling past the end.
  void refill() {
    if (can_refill_fast()) {
      refill_fast();
      return;
    }
    while (count_ < 56) {
      const uint64_t byte = pos_ < size_ ? base_[pos_] : 0;
      buf_ |= byte << (56 - count_);
      ++pos_;
      count_ += 8;
    }
  }

  /// The next n bits (1 <= n <= count) as an integer, without consuming them.
  uint64_t peek(int n) const { return buf_ >> (64 - n); }

  /// Bits available to peek() without a refill.
  int count() const { return count_; }

  /// Consumes n bits (0 <= n <= count).
  void skip(int n) {
    buf_ <<= n;
    count_ -= n;
  }

  /// Bits consumed since `start`, virtual zero bits included.
  uint64_t consumed_bits() const {
    return (pos_ - start_) * 8 - static_cast<uint64_t>(count_);
  }

 private:
  const uint8_t* base_;
  uint64_t size_;
  uint64_t pos_;    // next byte to load (may exceed size_: virtual zero bytes)
  uint64_t start_;  // byte where this reader began
  uint64_t buf_ = 0;
  int count_ = 0;   // valid bits at the top of buf_, at most 63
};

}  // namespace factz::detail
