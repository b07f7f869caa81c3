// Little-endian byte writing and a bounds-checked reader, shared by the container
// sections and the entropy coders' blobs. The reader never reads past its span: every
// accessor reports failure instead.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "kernels/varint.hpp"

namespace factz::detail {

/// Appends the low `bytes` bytes of v, little-endian.
inline void put_le(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) out.push_back(uint8_t(v >> (8 * k)));
}

/// Writes the low `bytes` bytes of v, little-endian, at `at` (put_le's layout in place).
inline void store_le(uint8_t* at, uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) at[k] = uint8_t(v >> (8 * k));
}

/// The `bytes`-byte little-endian unsigned integer at `at` (what put_le and store_le write).
inline uint64_t load_le(const uint8_t* at, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; ++k) v |= uint64_t{at[k]} << (8 * k);
  return v;
}

/// Appends v as an unsigned LEB128 varint (kernels/varint.hpp).
inline void put_varint(std::vector<uint8_t>& out, uint64_t v) {
  uint8_t bytes[10];
  out.insert(out.end(), bytes, bytes + put_varint_at(bytes, v));
}

class ByteWriter {
 public:
  void u8(uint8_t x) { out_.push_back(x); }
  void u32(uint32_t x) { put_le(out_, x, 4); }
  void u64(uint64_t x) { put_le(out_, x, 8); }
  void f32(float x) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    u32(b);
  }
  void f64(double x) {
    uint64_t b;
    std::memcpy(&b, &x, 8);
    u64(b);
  }
  /// Bytes as they are.
  void append(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  /// LEB128 unsigned varint.
  void varint(uint64_t x) { put_varint(out_, x); }
  void zigzag(int64_t x) { varint(zigzag_encode(x)); }
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
  /// Little-endian unsigned integer of `bytes` (1..8) bytes.
  bool le(int bytes, uint64_t& x) {
    if (remaining() < size_t(bytes)) return false;
    x = 0;
    for (int k = 0; k < bytes; ++k) x |= uint64_t(in_[pos_ + size_t(k)]) << (8 * k);
    pos_ += size_t(bytes);
    return true;
  }
  bool u32(uint32_t& x) {
    uint64_t v;
    if (!le(4, v)) return false;
    x = uint32_t(v);
    return true;
  }
  bool u64(uint64_t& x) { return le(8, x); }
  bool f32(float& x) {
    uint32_t b;
    if (!u32(b)) return false;
    std::memcpy(&x, &b, 4);
    return true;
  }
  bool f64(double& x) {
    uint64_t b;
    if (!u64(b)) return false;
    std::memcpy(&x, &b, 8);
    return true;
  }
  /// The next n bytes as a view into the input.
  bool take(size_t n, std::span<const uint8_t>& out) {
    if (remaining() < n) return false;
    out = in_.subspan(pos_, n);
    pos_ += n;
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
  /// A varint whose value must not exceed `max` (checked as it is read, which also
  /// bounds the loop for hostile input).
  bool varint_at_most(uint64_t max, uint64_t& x) {
    x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!u8(b)) return false;
      x |= uint64_t(b & 0x7f) << shift;
      if (x > max) return false;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool skip(size_t n) {
    if (remaining() < n) return false;
    pos_ += n;
    return true;
  }
  bool zigzag(int64_t& x) {
    uint64_t z;
    if (!varint(z)) return false;
    x = zigzag_decode(z);
    return true;
  }
  size_t pos() const { return pos_; }
  size_t remaining() const { return in_.size() - pos_; }
  bool at_end() const { return pos_ == in_.size(); }

 private:
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
};

}  // namespace factz::detail
