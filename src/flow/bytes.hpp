// Little-endian byte writing/reading for the flow basis and field streams, bounds-checked,
// and the FNV-1a hash that seals them.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace factz::flow::detail {

inline uint64_t fnv1a(std::span<const uint8_t> bytes) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes) h = (h ^ b) * 1099511628211ull;
  return h;
}

struct Writer {
  std::vector<uint8_t> out;
  void le(uint64_t v, int n) {
    for (int k = 0; k < n; ++k) out.push_back(uint8_t(v >> (8 * k)));
  }
  void u8(uint8_t v) { out.push_back(v); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void f64(double v) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    le(b, 8);
  }
  void tag(const char* t) {
    for (int k = 0; k < 4; ++k) out.push_back(uint8_t(t[k]));
  }
  void bytes(std::span<const uint8_t> b) { out.insert(out.end(), b.begin(), b.end()); }
};

struct Reader {
  std::span<const uint8_t> in;
  size_t pos = 0;
  size_t remaining() const { return in.size() - pos; }
  bool le(int n, uint64_t& v) {
    if (remaining() < size_t(n)) return false;
    v = 0;
    for (int k = 0; k < n; ++k) v |= uint64_t(in[pos + size_t(k)]) << (8 * k);
    pos += size_t(n);
    return true;
  }
  bool u8(uint8_t& v) {
    uint64_t x;
    if (!le(1, x)) return false;
    v = uint8_t(x);
    return true;
  }
  bool u32(uint32_t& v) {
    uint64_t x;
    if (!le(4, x)) return false;
    v = uint32_t(x);
    return true;
  }
  bool u64(uint64_t& v) { return le(8, v); }
  bool f64(double& v) {
    uint64_t b;
    if (!le(8, b)) return false;
    std::memcpy(&v, &b, 8);
    return true;
  }
  bool bytes(size_t n, std::span<const uint8_t>& out) {
    if (remaining() < n) return false;
    out = in.subspan(pos, n);
    pos += n;
    return true;
  }
};

}  // namespace factz::flow::detail
