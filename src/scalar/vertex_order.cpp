// The (value, index) order of vertices (contour_tree_core.hpp, docs/toposz.md "Algorithm"
// step 2): a least-significant-digit radix sort of the vertex keys (orderable value bits and
// index: one 64-bit word `bits << 32 | index` for a float field, VertexKey64 for a double
// field), one pass per byte of the value bits (4 for float, 8 for double). The keys start in
// index order and every pass is stable, so equal values stay in index order and the index
// bits never need a pass. A byte that is the same in every key (the sign and exponent
// of a field with a narrow range) costs no pass.
//
// Each pass splits the keys into chunks, counts per chunk, and scatters each chunk from
// its own offsets (all chunks' counts of the smaller digits, then the earlier chunks' of
// the same digit): the output is the unique sorted order for any chunk or thread count.
#include <algorithm>
#include <array>
#include <vector>

#include "scalar/contour_tree_core.hpp"

namespace factz::detail {
namespace {

constexpr int kBuckets = 256;
constexpr int64_t kChunkMin = 1 << 16;  // keys per chunk at least: below that one chunk

using Counts = std::array<int64_t, kBuckets>;

// The digits of a key type: how many bytes of value bits, the byte d (0: lowest), the index.
template <class Key>
struct KeyDigits;
template <>
struct KeyDigits<uint64_t> {
  static constexpr int kDigits = 4;  // bytes of the value bits (key bits 32..63)
  static int digit(uint64_t key, int d) { return int((key >> (32 + 8 * d)) & 0xFF); }
  static uint32_t index(uint64_t key) { return uint32_t(key); }
};
template <>
struct KeyDigits<VertexKey64> {
  static constexpr int kDigits = 8;
  static int digit(const VertexKey64& key, int d) { return int((key.bits >> (8 * d)) & 0xFF); }
  static uint32_t index(const VertexKey64& key) { return key.index; }
};

template <class Key>
void sort_keys_of(BigVector<Key>& keys, int threads, BigVector<uint32_t>& order) {
  using D = KeyDigits<Key>;
  constexpr int kDigits = D::kDigits;
  auto digit_of = [](const Key& key, int d) { return D::digit(key, d); };
  const int64_t m = int64_t(keys.size());
  const int parts = int(std::clamp<int64_t>(m / kChunkMin, 1, std::max(1, threads)));
  auto first = [&](int p) { return m * p / parts; };
  order.resize(size_t(m));
  std::vector<std::array<Counts, kDigits>> hist(static_cast<size_t>(parts));
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) {
    std::array<Counts, kDigits>& h = hist[size_t(p)];
    for (Counts& c : h) c.fill(0);
    for (int64_t k = first(p); k < first(p + 1); ++k)
      for (int d = 0; d < kDigits; ++d) ++h[size_t(d)][size_t(digit_of(keys[size_t(k)], d))];
  }
  std::vector<int> passes;
  for (int d = 0; d < kDigits; ++d) {
    int64_t top = 0;
    for (int b = 0; b < kBuckets; ++b) {
      int64_t total = 0;
      for (int p = 0; p < parts; ++p) total += hist[size_t(p)][size_t(d)][size_t(b)];
      top = std::max(top, total);
    }
    if (top < m) passes.push_back(d);
  }

  // One stable pass per digit that varies; the last one writes the indices only.
  BigVector<Key> scratch(passes.size() > 1 ? static_cast<size_t>(m) : 0);
  Key* src = keys.data();
  Key* dst = scratch.data();
  std::vector<Counts> at(static_cast<size_t>(parts));
  for (size_t i = 0; i < passes.size(); ++i) {
    const int d = passes[i];
    const bool last = i + 1 == passes.size();
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; ++p) {
      Counts& c = at[size_t(p)];
      c.fill(0);
      for (int64_t k = first(p); k < first(p + 1); ++k) ++c[size_t(digit_of(src[k], d))];
    }
    int64_t offset = 0;
    for (int b = 0; b < kBuckets; ++b)
      for (int p = 0; p < parts; ++p) {
        const int64_t count = at[size_t(p)][size_t(b)];
        at[size_t(p)][size_t(b)] = offset;
        offset += count;
      }
#pragma omp parallel for num_threads(parts) schedule(static, 1)
    for (int p = 0; p < parts; ++p) {
      Counts& next = at[size_t(p)];
      for (int64_t k = first(p); k < first(p + 1); ++k) {
        const Key key = src[k];
        const int64_t to = next[size_t(digit_of(key, d))]++;
        if (last) order[size_t(to)] = D::index(key);
        else dst[to] = key;
      }
    }
    std::swap(src, dst);
  }
  if (passes.empty()) {
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int64_t k = 0; k < m; ++k) order[size_t(k)] = D::index(src[k]);
  }
}

template <class T>
void sort_vertices_of(std::span<const T> f, std::span<const uint8_t> missing, int threads,
                      BigVector<uint32_t>& order) {
  const int64_t n = int64_t(f.size());
  const bool masked = !missing.empty();
  const int parts = int(std::clamp<int64_t>(n / kChunkMin, 1, std::max(1, threads)));
  auto first = [&](int p) { return n * p / parts; };
  std::vector<int64_t> valid_before(static_cast<size_t>(parts) + 1, 0);
  for (int p = 0; p < parts; ++p)
    valid_before[size_t(p) + 1] = masked ? std::count(missing.begin() + first(p), missing.begin() + first(p + 1), uint8_t(0))
                                         : first(p + 1) - first(p);
  for (int p = 0; p < parts; ++p) valid_before[size_t(p) + 1] += valid_before[size_t(p)];
  BigVector<VertexKeyOf<T>> keys(static_cast<size_t>(valid_before[size_t(parts)]));
#pragma omp parallel for num_threads(parts) schedule(static, 1)
  for (int p = 0; p < parts; ++p) {
    VertexKeyOf<T>* out = keys.data() + valid_before[size_t(p)];
    for (int64_t v = first(p); v < first(p + 1); ++v)
      if (!masked || !missing[size_t(v)]) *out++ = vertex_key(f[size_t(v)], v);
  }
  sort_keys(keys, threads, order);
}

}  // namespace

void sort_keys(BigVector<uint64_t>& keys, int threads, BigVector<uint32_t>& order) {
  sort_keys_of(keys, threads, order);
}
void sort_keys(BigVector<VertexKey64>& keys, int threads, BigVector<uint32_t>& order) {
  sort_keys_of(keys, threads, order);
}
void sort_vertices(std::span<const float> f, std::span<const uint8_t> missing, int threads,
                   BigVector<uint32_t>& order) {
  sort_vertices_of(f, missing, threads, order);
}
void sort_vertices(std::span<const double> f, std::span<const uint8_t> missing, int threads,
                   BigVector<uint32_t>& order) {
  sort_vertices_of(f, missing, threads, order);
}

}  // namespace factz::detail
