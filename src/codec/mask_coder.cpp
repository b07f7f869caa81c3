#include "codec/mask_coder.hpp"

#include <array>

namespace factz::detail {
namespace {

// Probabilities of a 0 bit in 1/2048 units, moved by 1/32 of the distance per bit.
constexpr int kProbBits = 11;
constexpr uint32_t kProbOne = 1u << kProbBits;
constexpr int kMoveBits = 5;
constexpr uint32_t kTop = 1u << 24;
constexpr int kContextBits = 10;

using Probs = std::array<uint16_t, 1u << kContextBits>;

Probs initial_probs() {
  Probs p;
  p.fill(uint16_t(kProbOne / 2));
  return p;
}

/// The context of bit (x, y): the ten causal neighbours (outside the grid: 0).
///   row y-2:       x-1 x x+1
///   row y-1: x-2 x-1 x x+1 x+2
///   row y:   x-2 x-1
inline uint32_t context(const uint8_t* m, int64_t nx, int64_t x, int64_t y) {
  auto at = [&](int64_t xx, int64_t yy) -> uint32_t {
    return (xx >= 0 && xx < nx && yy >= 0) ? uint32_t(m[yy * nx + xx] != 0) : 0u;
  };
  return at(x - 1, y - 2) | at(x, y - 2) << 1 | at(x + 1, y - 2) << 2 | at(x - 2, y - 1) << 3 |
         at(x - 1, y - 1) << 4 | at(x, y - 1) << 5 | at(x + 1, y - 1) << 6 | at(x + 2, y - 1) << 7 |
         at(x - 2, y) << 8 | at(x - 1, y) << 9;
}

class RangeEncoder {
 public:
  explicit RangeEncoder(std::vector<uint8_t>& out) : out_(out) {}
  void bit(uint16_t& prob, bool b) {
    const uint32_t bound = (range_ >> kProbBits) * prob;
    if (!b) {
      range_ = bound;
      prob = uint16_t(prob + ((kProbOne - prob) >> kMoveBits));
    } else {
      low_ += bound;
      range_ -= bound;
      prob = uint16_t(prob - (prob >> kMoveBits));
    }
    while (range_ < kTop) {
      range_ <<= 8;
      shift_low();
    }
  }
  void flush() {
    for (int i = 0; i < 5; ++i) shift_low();
  }

 private:
  void shift_low() {
    if (uint32_t(low_) < 0xFF000000u || (low_ >> 32) != 0) {
      uint8_t carry = uint8_t(low_ >> 32);
      uint8_t temp = cache_;
      do {
        out_.push_back(uint8_t(temp + carry));
        temp = 0xFF;
      } while (--pending_ != 0);
      cache_ = uint8_t(low_ >> 24);
    }
    ++pending_;
    low_ = (low_ & 0x00FFFFFFu) << 8;
  }
  std::vector<uint8_t>& out_;
  uint64_t low_ = 0;
  uint32_t range_ = 0xFFFFFFFFu;
  uint8_t cache_ = 0;
  uint64_t pending_ = 1;
};

class RangeDecoder {
 public:
  explicit RangeDecoder(std::span<const uint8_t> in) : in_(in) {
    for (int i = 0; i < 5; ++i) code_ = (code_ << 8) | next();
  }
  bool bit(uint16_t& prob) {
    const uint32_t bound = (range_ >> kProbBits) * prob;
    bool b;
    if (code_ < bound) {
      range_ = bound;
      prob = uint16_t(prob + ((kProbOne - prob) >> kMoveBits));
      b = false;
    } else {
      code_ -= bound;
      range_ -= bound;
      prob = uint16_t(prob - (prob >> kMoveBits));
      b = true;
    }
    while (range_ < kTop) {
      range_ <<= 8;
      code_ = (code_ << 8) | next();
    }
    return b;
  }
  bool overrun() const { return overrun_; }

 private:
  uint32_t next() {
    if (pos_ < in_.size()) return in_[pos_++];
    overrun_ = true;  // the encoder's flush covers every byte the decoder reads
    return 0;
  }
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  uint32_t code_ = 0;
  uint32_t range_ = 0xFFFFFFFFu;
  bool overrun_ = false;
};

}  // namespace

void encode_mask(std::span<const uint8_t> mask, int64_t nx, int64_t ny, std::vector<uint8_t>& out) {
  out.clear();
  RangeEncoder rc(out);
  Probs probs = initial_probs();
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) rc.bit(probs[context(mask.data(), nx, x, y)], mask[size_t(y * nx + x)] != 0);
  rc.flush();
}

Status decode_mask(std::span<const uint8_t> in, int64_t nx, int64_t ny, std::vector<uint8_t>& mask) {
  if (in.size() < 5) return corrupt_stream("mask: coded bitmap truncated");
  mask.assign(size_t(nx * ny), 0);
  RangeDecoder rc(in);
  Probs probs = initial_probs();
  for (int64_t y = 0; y < ny; ++y)
    for (int64_t x = 0; x < nx; ++x) mask[size_t(y * nx + x)] = rc.bit(probs[context(mask.data(), nx, x, y)]) ? 1 : 0;
  if (rc.overrun()) return corrupt_stream("mask: coded bitmap truncated");
  return Status::Ok();
}

}  // namespace factz::detail
