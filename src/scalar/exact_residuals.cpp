// Exact values coded against the decoder's prediction (exact_residuals.hpp).
#include "scalar/exact_residuals.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/varint.hpp"

namespace factz::detail {
namespace {

constexpr uint32_t kUnaryLimit = 24;  // q >= this: 24 ones, then z in W bits
constexpr uint32_t kHalveAt = 32;     // the running sum and count halve when the count gets here
constexpr size_t kTrialValues = 256;  // the writer picks k0 on this many first values

template <class T>
using Bits = std::conditional_t<std::is_same_v<T, double>, uint64_t, uint32_t>;

template <class T>
constexpr int kWidth = int(sizeof(T)) * 8;

// Unsigned image of a finite or infinite value that increases with the value (-0 just
// below +0); a bijection on the bit patterns, unlike grid.hpp's orderable_bits, which maps
// -0 and +0 alike so that they tie in the contour tree's order: every bit must come back here.
template <class T>
Bits<T> ord(T x) {
  using U = Bits<T>;
  const U b = std::bit_cast<U>(x);
  constexpr U kSign = U(1) << (kWidth<T> - 1);
  return (b & kSign) ? U(~b) : U(b | kSign);
}

template <class T>
T unord(Bits<T> o) {
  using U = Bits<T>;
  constexpr U kSign = U(1) << (kWidth<T> - 1);
  return std::bit_cast<T>((o & kSign) ? U(o & ~kSign) : U(~o));
}

// The Rice parameter for a running sum and count: the smallest k with count * 2^k >= sum
// (at most W - 1), written without shifting the count past 64 bits.
int rice_parameter(uint64_t sum, uint32_t count, int width) {
  int k = 0;
  while (k < width - 1 && ((sum - 1) >> k) >= count) ++k;
  return k;
}

void update(uint64_t& sum, uint32_t& count, uint64_t z) {
  sum = z > std::numeric_limits<uint64_t>::max() - sum ? std::numeric_limits<uint64_t>::max() : sum + z;
  if (++count == kHalveAt) {
    sum = std::max<uint64_t>(sum >> 1, 1);
    count >>= 1;
  }
}

// ord(value) - ord(ref) in W-bit wrap-around arithmetic.
template <class T>
Bits<T> difference(T value, T ref) {
  return Bits<T>(ord(value) - ord(ref));
}

// zigzag of d read as a signed W-bit integer (below 2^W), and back.
template <class T>
uint64_t zigzag(Bits<T> d) {
  return zigzag_encode(int64_t(std::make_signed_t<Bits<T>>(d)));
}

template <class T>
Bits<T> unzigzag(uint64_t z) {
  return Bits<T>(zigzag_decode(z));
}

// Bytes before the bit stream: k0, t, and k1 when t > 0.
uint64_t header_bytes(int t) { return t > 0 ? 3 : 2; }

// d / 2^t for a multiple d of 2^t, as a signed W-bit integer (arithmetic shift).
template <class T>
Bits<T> grid_quotient(Bits<T> d, int t) {
  using S = std::make_signed_t<Bits<T>>;
  return Bits<T>(S(d) >> t);
}

// Bits of one code.
uint64_t code_bits(uint64_t z, int k, int width) {
  const uint64_t q = z >> k;
  return q < kUnaryLimit ? q + 1 + uint64_t(k) : kUnaryLimit + uint64_t(width);
}

// Total bits of the first `count` values with first parameter k0.
template <class T>
uint64_t coded_bits(std::span<const uint64_t> z, int k0, size_t count) {
  uint64_t sum = uint64_t(1) << k0, bits = 0;
  uint32_t n = 1;
  for (size_t i = 0; i < count; ++i) {
    bits += code_bits(z[i], rice_parameter(sum, n, kWidth<T>), kWidth<T>);
    update(sum, n, z[i]);
  }
  return bits;
}

// The first parameter that codes the first values of `z` shortest.
template <class T>
int best_first_parameter(std::span<const uint64_t> z) {
  const size_t trial = std::min(z.size(), kTrialValues);
  int k0 = 0;
  uint64_t best = std::numeric_limits<uint64_t>::max();
  for (int k = 0; k < kWidth<T>; ++k) {
    const uint64_t b = coded_bits<T>(z, k, trial);
    if (b < best) best = b, k0 = k;
  }
  return k0;
}

// BitWriter::put takes at most 32 bits at a time.
void put_wide(BitWriter& w, uint64_t v, int len) {
  if (len > 32) {
    w.put(uint32_t(v >> 32) & (len == 64 ? 0xFFFFFFFFu : ((1u << (len - 32)) - 1)), len - 32);
    len = 32;
    v &= 0xFFFFFFFFull;
  }
  if (len > 0) w.put(uint32_t(v) & (len == 32 ? 0xFFFFFFFFu : ((1u << len) - 1)), len);
}

// Reads `len` (0..64) bits.
uint64_t get_wide(BitReader& r, int len) {
  uint64_t v = 0;
  while (len > 0) {
    const int take = std::min(len, 32);
    r.refill();
    v = (v << take) | r.peek(take);
    r.skip(take);
    len -= take;
  }
  return v;
}

// One adaptive Rice code of zi with the state (sum, n).
template <class T>
void put_rice(BitWriter& w, uint64_t zi, uint64_t& sum, uint32_t& n) {
  const int k = rice_parameter(sum, n, kWidth<T>);
  const uint64_t q = zi >> k;
  if (q < kUnaryLimit) {
    w.put(uint32_t(((uint64_t(1) << q) - 1) << 1), int(q) + 1);  // q ones and a zero
    put_wide(w, zi, k);
  } else {
    w.put((1u << kUnaryLimit) - 1, int(kUnaryLimit));
    put_wide(w, zi, kWidth<T>);
  }
  update(sum, n, zi);
}

}  // namespace

template <class T>
T exact_reference(T pred) {
  return std::isfinite(pred) ? pred : T(0);
}

template <class T>
bool on_exact_grid(T value, T ref, int t) {
  return t > 0 && (difference(value, exact_reference(ref)) & ((Bits<T>(1) << t) - 1)) == 0;
}

template <class T>
T grid_value(T f, T pred, int t, bool up) {
  __extension__ typedef __int128 Wide;  // holds every difference of two W-bit ords, W <= 64
  if (t <= 0 || t >= kWidth<T> || !std::isfinite(f)) return f;
  const Wide of = Wide(ord(f)), orf = Wide(ord(exact_reference(pred)));
  const Wide step = Wide(1) << t;
  const Wide diff = of - orf;
  Wide m = diff / step;  // truncates toward zero
  if (up && m * step < diff) ++m;
  if (!up && m * step > diff) --m;
  const Wide o = orf + m * step;
  if (o < 0 || o > Wide(std::numeric_limits<Bits<T>>::max())) return f;
  const T x = unord<T>(Bits<T>(o));
  return std::isfinite(x) ? x : f;
}

template <class T>
std::vector<uint8_t> encode_exact_residuals(std::span<const T> values, std::span<const T> refs, int t) {
  using U = Bits<T>;
  std::vector<uint8_t> grid(values.size(), 0);
  std::vector<uint64_t> z[2];
  for (size_t i = 0; i < values.size(); ++i) {
    const U d = difference(values[i], exact_reference(refs[i]));
    grid[i] = on_exact_grid(values[i], refs[i], t);
    z[grid[i]].push_back(zigzag<T>(grid[i] ? grid_quotient<T>(d, t) : d));
  }
  if (z[1].empty()) t = 0;  // no value on the grid: no tag bits
  const int k0 = best_first_parameter<T>(z[0]), k1 = best_first_parameter<T>(z[1]);
  uint64_t total = 0;
  {
    uint64_t sum[2] = {uint64_t(1) << k0, uint64_t(1) << k1};
    uint32_t n[2] = {1, 1};
    size_t next[2] = {0, 0};
    for (size_t i = 0; i < values.size(); ++i) {
      const int g = grid[i];
      const uint64_t zi = z[g][next[g]++];
      total += (t > 0 ? 1 : 0) + code_bits(zi, rice_parameter(sum[g], n[g], kWidth<T>), kWidth<T>);
      update(sum[g], n[g], zi);
    }
  }
  const size_t head = size_t(header_bytes(t));
  std::vector<uint8_t> out(head + size_t((total + 7) / 8));
  out[0] = uint8_t(k0);
  out[1] = uint8_t(t);
  if (t > 0) out[2] = uint8_t(k1);
  BitWriter w(out.data() + head);
  uint64_t sum[2] = {uint64_t(1) << k0, uint64_t(1) << k1};
  uint32_t n[2] = {1, 1};
  size_t next[2] = {0, 0};
  for (size_t i = 0; i < values.size(); ++i) {
    const int g = grid[i];
    if (t > 0) w.put(uint32_t(g), 1);
    put_rice<T>(w, z[g][next[g]++], sum[g], n[g]);
  }
  w.finish();
  return out;
}

template <class T>
ExactResidualReader<T>::ExactResidualReader(std::span<const uint8_t> section, int k0, int t, int k1)
    : section_(section),
      bits_(section.data(), section.size(), header_bytes(t)),
      t_(t),
      sum_{uint64_t(1) << k0, uint64_t(1) << k1} {}

template <class T>
Result<ExactResidualReader<T>> ExactResidualReader<T>::open(std::span<const uint8_t> section) {
  if (section.size() < 2)
    return corrupt_stream("exact_values: " + std::to_string(section.size()) +
                          " bytes (a version 14 stream codes at least one value after 2 bytes)");
  const int t = section[1];
  if (t >= kWidth<T>)
    return corrupt_stream("exact_values: grid shift " + std::to_string(t) + " (at most " +
                          std::to_string(kWidth<T> - 1) + ")");
  if (t > 0 && section.size() < 3) return corrupt_stream("exact_values truncated");
  const int k0 = section[0], k1 = t > 0 ? section[2] : 0;
  if (k0 >= kWidth<T> || k1 >= kWidth<T>)
    return corrupt_stream("exact_values: first Rice parameter " + std::to_string(std::max(k0, k1)) + " (at most " +
                          std::to_string(kWidth<T> - 1) + ")");
  return ExactResidualReader(section, k0, t, k1);
}

template <class T>
Result<T> ExactResidualReader<T>::next(T ref) {
  using U = Bits<T>;
  bits_.refill();
  int g = 0;
  if (t_ > 0) {
    g = int(bits_.peek(1));
    bits_.skip(1);
  }
  const int k = rice_parameter(sum_[g], count_[g], kWidth<T>);
  bits_.refill();
  const uint32_t head = uint32_t(bits_.peek(int(kUnaryLimit)));  // 24 bits
  const uint32_t q = uint32_t(std::countl_one(uint32_t(head << (32 - kUnaryLimit))));
  uint64_t z = 0;
  if (q < kUnaryLimit) {
    bits_.skip(int(q) + 1);
    if (k > 0 && uint64_t(q) > (uint64_t(std::numeric_limits<U>::max()) >> k))
      return corrupt_stream("exact_values: residual out of range");
    z = (uint64_t(q) << k) | get_wide(bits_, k);
  } else {
    bits_.skip(int(kUnaryLimit));
    z = get_wide(bits_, kWidth<T>);
  }
  if (bits_.consumed_bits() > 8 * (uint64_t(section_.size()) - header_bytes(t_)))
    return corrupt_stream("exact_values truncated");
  update(sum_[g], count_[g], z);
  U d = unzigzag<T>(z);
  if (g) d = U(d << t_);
  const T value = unord<T>(U(ord(exact_reference(ref)) + d));
  if (!std::isfinite(value)) return corrupt_stream("exact value is not finite");
  return value;
}

template <class T>
Status ExactResidualReader<T>::finish() {
  const uint64_t used = bits_.consumed_bits();
  const uint64_t head = header_bytes(t_);
  const uint64_t bytes = uint64_t(section_.size()) - head;
  if ((used + 7) / 8 != bytes)
    return corrupt_stream("exact_values holds " + std::to_string(bytes + head) + " bytes, its codes use " +
                          std::to_string(head + (used + 7) / 8));
  const int pad = int(8 * bytes - used);
  if (pad > 0) {
    bits_.refill();
    if (bits_.peek(pad) != 0) return corrupt_stream("exact_values: padding bits are not zero");
  }
  return Status::Ok();
}

template float exact_reference(float);
template double exact_reference(double);
template bool on_exact_grid(float, float, int);
template bool on_exact_grid(double, double, int);
template float grid_value(float, float, int, bool);
template double grid_value(double, double, int, bool);
template std::vector<uint8_t> encode_exact_residuals(std::span<const float>, std::span<const float>, int);
template std::vector<uint8_t> encode_exact_residuals(std::span<const double>, std::span<const double>, int);
template class ExactResidualReader<float>;
template class ExactResidualReader<double>;

}  // namespace factz::detail
