// Little-endian byte writer and a bounds-checked reader for section payloads.
// The reader never reads past its span: every accessor reports failure instead.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace factz::detail {

class ByteWriter {
 public:
  void u8(uint8_t x) { out_.push_back(x); }
  void u32(uint32_t x) {
    for (int k = 0; k < 4; ++k) out_.push_back(uint8_t(x >> (8 * k)));
  }
  void f32(float x) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    u32(b);
  }
  /// LEB128 unsigned varint.
  void varint(uint64_t x) {
    while (x >= 0x80) {
      out_.push_back(uint8_t(x | 0x80));
      x >>= 7;
    }
    out_.push_back(uint8_t(x));
  }
  void zigzag(int64_t x) { varint((uint64_t(x) << 1) ^ uint64_t(x >> 63)); }
  std::vector<uint8_t>& bytes() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}
  bool u8(uint8_t& x) {
    if (pos_ >= in_.size()) return false;
    x = in_[pos_++];
    return true;
  }
  bool u32(uint32_t& x) {
    if (in_.size() - pos_ < 4) return false;
    x = 0;
    for (int k = 0; k < 4; ++k) x |= uint32_t(in_[pos_ + k]) << (8 * k);
    pos_ += 4;
    return true;
  }
  bool f32(float& x) {
    uint32_t b;
    if (!u32(b)) return false;
    std::memcpy(&x, &b, 4);
    return true;
  }
  bool varint(uint64_t& x) {
    x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!u8(b)) return false;
      x |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;  // over-long encoding
  }
  bool zigzag(int64_t& x) {
    uint64_t z;
    if (!varint(z)) return false;
    x = int64_t(z >> 1) ^ -int64_t(z & 1);
    return true;
  }
  size_t remaining() const { return in_.size() - pos_; }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
};

}  // namespace factz::detail
