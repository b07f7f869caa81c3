// The adaptive binary range coder of the mask coder and the context coder: each decision is
// coded with a probability (of a 0) of kProbBits bits that moves 1/2^kMoveBits of the way to
// the outcome after each use; one-half bits pass without a probability. The encoder keeps a
// 64-bit low and a 32-bit range, renormalizes below 2^24 and holds one byte back (its cache,
// with a count of pending 0xFF bytes) until a carry out of bit 32 is known, so its first
// byte is always 0; five final shifts flush it. The decoder reads exactly the bytes the
// encoder wrote (docs/codec.md, "Context-coded blob", "Range coder").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace factz::detail {

template <int kProbBits, int kMoveBits = 5>
class BinaryRangeEncoder {
 public:
  static constexpr uint16_t kHalf = uint16_t(1u << (kProbBits - 1));
  explicit BinaryRangeEncoder(std::vector<uint8_t>& out) : out_(out) {}
  /// Codes decision `b` (0 or 1) with probability `p`, which it then adapts; returns b.
  int bit(uint16_t& p, int b) {
    const uint32_t bound = (range_ >> kProbBits) * p;
    if (b == 0) {
      range_ = bound;
      p = uint16_t(p + (((1u << kProbBits) - p) >> kMoveBits));
    } else {
      low_ += bound;
      range_ -= bound;
      p = uint16_t(p - (p >> kMoveBits));
    }
    normalize();
    return b;
  }
  /// Codes `b` with probability one half; returns b.
  int bypass(int b) {
    range_ >>= 1;
    if (b) low_ += range_;
    normalize();
    return b;
  }
  void finish() {
    for (int i = 0; i < 5; ++i) shift_low();
  }

 private:
  void normalize() {
    while (range_ < kTop) {
      range_ <<= 8;
      shift_low();
    }
  }
  void shift_low() {
    if (uint32_t(low_) < 0xFF000000u || (low_ >> 32) != 0) {
      const uint8_t carry = uint8_t(low_ >> 32);
      uint8_t byte = cache_;
      do {
        out_.push_back(uint8_t(byte + carry));
        byte = 0xFF;
      } while (--pending_ != 0);
      cache_ = uint8_t(low_ >> 24);
    }
    ++pending_;
    low_ = (low_ & 0x00FFFFFFu) << 8;
  }
  static constexpr uint32_t kTop = uint32_t(1) << 24;
  std::vector<uint8_t>& out_;
  uint64_t low_ = 0;
  uint32_t range_ = 0xFFFFFFFFu;
  uint8_t cache_ = 0;
  uint64_t pending_ = 1;
};

template <int kProbBits, int kMoveBits = 5>
class BinaryRangeDecoder {
 public:
  explicit BinaryRangeDecoder(std::span<const uint8_t> in) : in_(in) {
    first_zero_ = next() == 0;  // the encoder's first byte: its initial cache
    for (int i = 0; i < 4; ++i) code_ = (code_ << 8) | next();
  }
  /// The next decision, adapting `p` as the encoder did (the second argument is the
  /// encoder's, ignored, so that one routine can drive either side).
  int bit(uint16_t& p, int = 0) {
    const uint32_t bound = (range_ >> kProbBits) * p;
    int b;
    if (code_ < bound) {
      range_ = bound;
      p = uint16_t(p + (((1u << kProbBits) - p) >> kMoveBits));
      b = 0;
    } else {
      code_ -= bound;
      range_ -= bound;
      p = uint16_t(p - (p >> kMoveBits));
      b = 1;
    }
    normalize();
    return b;
  }
  int bypass(int = 0) {
    range_ >>= 1;
    const int b = code_ >= range_;
    if (b) code_ -= range_;
    normalize();
    return b;
  }
  /// A read past the end (the encoder's flush covers every byte the decoder reads).
  bool overrun() const { return overrun_; }
  /// Every byte read, none past the end, the first one 0: what the encoder wrote, exactly.
  bool clean() const { return first_zero_ && !overrun_ && pos_ == in_.size(); }

 private:
  void normalize() {
    while (range_ < kTop) {
      range_ <<= 8;
      code_ = (code_ << 8) | next();
    }
  }
  uint32_t next() {
    if (pos_ < in_.size()) return in_[pos_++];
    overrun_ = true;
    return 0;
  }
  static constexpr uint32_t kTop = uint32_t(1) << 24;
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  uint32_t code_ = 0;
  uint32_t range_ = 0xFFFFFFFFu;
  bool overrun_ = false;
  bool first_zero_ = false;
};

}  // namespace factz::detail
