// Canonical Huffman coder; the blob layout is specified in docs/codec.md.
#include "codec/huffman.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string>

#include "codec/bit_io.hpp"
#include "util/byte_io.hpp"

namespace factz::detail {
namespace {

constexpr int kMaxLen = kHuffmanMaxCodeLength;
// Width of the decoder's direct lookup table; longer codes take the slow path.
constexpr int kTableBits = 12;
// Accepted range of the chunk size field (the encoder writes kHuffmanChunkLog2). Bounded
// so that a chunk's byte size (at most 2^24 * 24 / 8) fits the u32 chunk table entries.
constexpr int kMinChunkLog2 = 8;
constexpr int kMaxChunkLog2 = 24;
// Below this many symbols the histogram is counted by one thread.
constexpr uint64_t kParallelHistogramMin = uint64_t{1} << 20;

static_assert(kMaxLen <= 32, "a refill must hold at least one code and the writer needs len <= 32");
static_assert(kMaxLen >= 16, "every symbol of the alphabet must fit under the limit");

// ---------------------------------------------------------------- byte helpers

void store_u32le(uint8_t* p, uint32_t v) {
  for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(v >> (8 * k));
}

// First symbol of part `p` when n items are cut into `parts` near-equal contiguous parts.
uint64_t part_begin(uint64_t n, uint64_t parts, uint64_t p) {
  return (n / parts) * p + std::min(p, n % parts);
}

// ---------------------------------------------------------------- histogram

void count_symbols(const uint16_t* s, uint64_t n, uint64_t* hist) {
  if (n < kHuffmanAlphabet) {
    for (uint64_t i = 0; i < n; ++i) ++hist[s[i]];
    return;
  }
  // Two interleaved tables halve the store-to-load dependency chains on skewed data,
  // where consecutive symbols hit the same counter.
  std::vector<uint64_t> second(kHuffmanAlphabet, 0);
  uint64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    ++hist[s[i]];
    ++second[s[i + 1]];
  }
  if (i < n) ++hist[s[i]];
  for (uint32_t k = 0; k < kHuffmanAlphabet; ++k) hist[k] += second[k];
}

// Exact counts; each part is counted by one thread and the sums are order-independent,
// so the result does not depend on the thread count.
std::vector<uint64_t> histogram(std::span<const uint16_t> symbols, int threads) {
  const uint64_t n = symbols.size();
  const int parts = n < kParallelHistogramMin ? 1 : threads;
  std::vector<uint64_t> partial(static_cast<uint64_t>(parts) * kHuffmanAlphabet, 0);
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int p = 0; p < parts; ++p) {
    const uint64_t lo = part_begin(n, parts, p);
    const uint64_t hi = part_begin(n, parts, p + 1);
    count_symbols(symbols.data() + lo, hi - lo, partial.data() + p * uint64_t{kHuffmanAlphabet});
  }
  for (int p = 1; p < parts; ++p) {
    const uint64_t* h = partial.data() + p * uint64_t{kHuffmanAlphabet};
    for (uint32_t k = 0; k < kHuffmanAlphabet; ++k) partial[k] += h[k];
  }
  partial.resize(kHuffmanAlphabet);
  return partial;
}

// ---------------------------------------------------------------- canonical code

// Canonical code of a set of lengths: codes are assigned in (length, symbol) order.
using Canonical = HuffmanCanonical;

// Requires every length in 0..kMaxLen and the Kraft sum at most 1.
void build_canonical(std::span<const uint8_t> lengths, Canonical& c) {
  uint32_t used = 0;
  for (uint32_t s = 0; s < lengths.size(); ++s) {
    if (lengths[s] == 0) continue;
    ++c.count[lengths[s]];
    c.max_len = std::max<int>(c.max_len, lengths[s]);
    ++used;
  }
  uint32_t code = 0;
  uint32_t index = 0;
  for (int len = 1; len <= kMaxLen; ++len) {
    c.first[len] = code;
    c.offset[len] = index;
    c.limit[len] = (code + c.count[len]) << (kMaxLen - len);
    code = (code + c.count[len]) << 1;
    index += c.count[len];
  }
  c.sorted.assign(used, 0);
  std::array<uint32_t, kMaxLen + 1> next = c.offset;
  for (uint32_t s = 0; s < lengths.size(); ++s) {
    if (lengths[s] != 0) c.sorted[next[lengths[s]]++] = static_cast<uint16_t>(s);
  }
}

// A codebook the encoder could have written: a complete code, or one symbol of length 1.
bool kraft_valid(const Canonical& c) {
  uint64_t sum = 0;
  for (int len = 1; len <= kMaxLen; ++len) sum += uint64_t{c.count[len]} << (kMaxLen - len);
  if (sum == uint64_t{1} << kMaxLen) return true;
  return c.sorted.size() == 1 && c.count[1] == 1;
}

// ---------------------------------------------------------------- codebook

// Runs of used symbols: varint run count, then per run varint skip (unused symbols
// since the previous run; >= 1 except before the first run), varint run length (>= 1)
// and one byte per symbol with its code length.
void write_codebook(std::span<const uint8_t> lengths, std::vector<uint8_t>& out) {
  std::vector<std::array<uint32_t, 2>> runs;  // [start, end)
  for (uint32_t s = 0; s < kHuffmanAlphabet;) {
    if (lengths[s] == 0) {
      ++s;
      continue;
    }
    uint32_t e = s;
    while (e < kHuffmanAlphabet && lengths[e] != 0) ++e;
    runs.push_back({s, e});
    s = e;
  }
  put_varint(out, runs.size());
  uint32_t next = 0;
  for (const auto& [start, end] : runs) {
    put_varint(out, start - next);
    put_varint(out, end - start);
    out.insert(out.end(), lengths.begin() + start, lengths.begin() + end);
    next = end;
  }
}

Status read_codebook(ByteReader& cur, std::span<uint8_t> lengths) {
  uint64_t runs = 0;
  if (!cur.varint_at_most(kHuffmanAlphabet / 2, runs)) return corrupt_stream("huffman: bad codebook run count");
  uint64_t next = 0;
  for (uint64_t r = 0; r < runs; ++r) {
    uint64_t skip = 0, run = 0;
    if (!cur.varint_at_most(kHuffmanAlphabet, skip) || !cur.varint_at_most(kHuffmanAlphabet, run) ||
        (r > 0 && skip == 0) || run == 0 || next + skip + run > kHuffmanAlphabet) {
      return corrupt_stream("huffman: bad codebook run");
    }
    if (cur.remaining() < run) return corrupt_stream("huffman: codebook truncated");
    next += skip;
    for (uint64_t k = 0; k < run; ++k) {
      uint8_t len = 0;
      (void)cur.u8(len);
      if (len == 0 || len > kMaxLen) return corrupt_stream("huffman: bad code length");
      lengths[next++] = len;
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- decoding

struct DecodeTable {
  // (symbol << 8) | length for every kTableBits-bit prefix that starts a code of at most
  // kTableBits bits; 0 sends the decoder to the slow path (code.limit).
  std::array<uint32_t, 1u << kTableBits> fast{};
  const Canonical* code = nullptr;
};

void build_decode_table(const Canonical& c, DecodeTable& t) {
  t.code = &c;
  for (int len = 1; len <= kTableBits; ++len) {
    for (uint32_t r = 0; r < c.count[len]; ++r) {
      const uint32_t sym = c.sorted[c.offset[len] + r];
      const uint32_t lo = (c.first[len] + r) << (kTableBits - len);
      const uint32_t hi = lo + (1u << (kTableBits - len));
      std::fill(t.fast.begin() + lo, t.fast.begin() + hi, (sym << 8) | static_cast<uint32_t>(len));
    }
  }
}

// Decodes one symbol; requires at least kMaxLen buffered bits. False on an invalid code.
inline bool decode_symbol(const DecodeTable& t, BitReader& r, uint16_t& out) {
  const uint32_t e = t.fast[r.peek(kTableBits)];
  if (e != 0) [[likely]] {
    out = static_cast<uint16_t>(e >> 8);
    r.skip(static_cast<int>(e & 0xFF));
    return true;
  }
  // The window is at or above limit[kTableBits] (the table covers everything below).
  const uint32_t v = static_cast<uint32_t>(r.peek(kMaxLen));
  const Canonical& c = *t.code;
  for (int len = kTableBits + 1; len <= c.max_len; ++len) {
    if (v < c.limit[len]) {
      const uint32_t code = v >> (kMaxLen - len);
      out = c.sorted[c.offset[len] + (code - c.first[len])];
      r.skip(len);
      return true;
    }
  }
  return false;  // only possible for the incomplete single-symbol code
}

// Decodes m symbols of the chunk occupying blob[begin, begin + size). The reader may load
// bytes of later chunks (never past the blob); consuming any of them is an error.
bool decode_chunk(const DecodeTable& t, std::span<const uint8_t> blob, uint64_t begin,
                  uint64_t size, uint16_t* out, uint64_t m) {
  BitReader r(blob.data(), blob.size(), begin);
  uint64_t i = 0;
  // One refill serves every code that surely fits: at most 56 - kMaxLen + 1 symbols, so
  // the margin keeps the loop inside the chunk.
  constexpr uint64_t kMargin = 64 - kMaxLen;
  while (m - i >= kMargin && r.can_refill_fast()) {
    r.refill_fast();
    do {
      if (!decode_symbol(t, r, out[i++])) return false;
    } while (r.count() >= kMaxLen);
  }
  for (; i < m; ++i) {
    r.refill();
    if (!decode_symbol(t, r, out[i])) return false;
  }
  const uint64_t bits = r.consumed_bits();
  return bits <= size * 8 && (bits + 7) / 8 == size;
}

}  // namespace

// ---------------------------------------------------------------- code lengths

namespace {

// Number of leaves per depth (depths clamped to kMaxLen) of the Huffman tree over the
// weights histogram[order[0]] <= histogram[order[1]] <= ...; requires order.size() >= 2.
// Two-queue method: leaves in `order`, internal nodes in creation order (their weights
// never decrease). On equal weights the leaf is taken first, which fixes the tree.
std::array<uint64_t, kMaxLen + 1> huffman_depth_counts(std::span<const uint64_t> histogram,
                                                       const std::vector<uint32_t>& order) {
  const uint64_t m = order.size();
  std::vector<uint64_t> weight(m - 1);
  std::vector<uint32_t> parent(2 * m - 1);  // internal k at [k], leaf i at [m - 1 + i]
  uint64_t leaf = 0, node = 0;
  for (uint64_t k = 0; k + 1 < m; ++k) {
    uint64_t w[2];
    for (uint64_t& wj : w) {
      if (leaf < m && (node == k || histogram[order[leaf]] <= weight[node])) {
        wj = histogram[order[leaf]];
        parent[m - 1 + leaf++] = static_cast<uint32_t>(k);
      } else {
        wj = weight[node];
        parent[node++] = static_cast<uint32_t>(k);
      }
    }
    weight[k] = w[0] + w[1];
  }
  // The root is the last internal node and every parent comes after its children.
  std::vector<uint32_t> depth(m - 1, 0);
  for (uint64_t j = m - 2; j-- > 0;) depth[j] = depth[parent[j]] + 1;
  std::array<uint64_t, kMaxLen + 1> per_len{};
  for (uint64_t i = 0; i < m; ++i) {
    ++per_len[std::min<uint32_t>(depth[parent[m - 1 + i]] + 1, kMaxLen)];
  }
  return per_len;
}

// Restores the Kraft sum of clamped length counts to exactly 1. Each step turns a leaf at
// depth i < kMaxLen into an internal node whose children are that leaf and a leaf taken
// from depth kMaxLen, lowering the sum by exactly 2^-kMaxLen. Requires at most
// 2^kMaxLen leaves and a sum of at least 1 (true for a clamped complete tree).
void limit_lengths(std::array<uint64_t, kMaxLen + 1>& per_len) {
  uint64_t kraft = 0;
  for (int len = 1; len <= kMaxLen; ++len) kraft += per_len[len] << (kMaxLen - len);
  for (; kraft > (uint64_t{1} << kMaxLen); --kraft) {
    --per_len[kMaxLen];
    int i = kMaxLen - 1;
    while (per_len[i] == 0) --i;
    --per_len[i];
    per_len[i + 1] += 2;
  }
}

}  // namespace

void huffman_code_lengths(std::span<const uint64_t> histogram, std::span<uint8_t> lengths) {
  std::fill(lengths.begin(), lengths.end(), uint8_t{0});
  std::vector<uint32_t> order;  // used symbols by (count, symbol)
  for (uint32_t s = 0; s < histogram.size(); ++s) {
    if (histogram[s] != 0) order.push_back(s);
  }
  if (order.empty()) return;
  if (order.size() == 1) {
    lengths[order[0]] = 1;
    return;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return histogram[a] < histogram[b]; });
  std::array<uint64_t, kMaxLen + 1> per_len = huffman_depth_counts(histogram, order);
  limit_lengths(per_len);
  // Longest codes to the rarest symbols, in (count, symbol) order.
  int len = kMaxLen;
  for (const uint32_t s : order) {
    while (per_len[len] == 0) --len;
    lengths[s] = static_cast<uint8_t>(len);
    --per_len[len];
  }
}

// ---------------------------------------------------------------- encode

std::vector<uint32_t> huffman_encode_table(std::span<const uint8_t> lengths) {
  Canonical c;
  build_canonical(lengths, c);
  std::vector<uint32_t> table(kHuffmanAlphabet, 0);
  for (int len = 1; len <= kMaxLen; ++len) {
    for (uint32_t r = 0; r < c.count[len]; ++r) {
      table[c.sorted[c.offset[len] + r]] = ((c.first[len] + r) << 5) | static_cast<uint32_t>(len);
    }
  }
  return table;
}

void huffman_write_head(uint64_t n, std::span<const uint8_t> lengths, std::vector<uint8_t>& out) {
  out.push_back(kHuffmanVersion);
  out.push_back(static_cast<uint8_t>(kHuffmanChunkLog2));
  put_le(out, n, 8);
  write_codebook(lengths, out);
}

namespace {

// Writes the codes of one chunk at `out`; returns the bytes written.
uint64_t encode_chunk(const std::vector<uint32_t>& table, std::span<const uint16_t> symbols, uint8_t* out) {
  BitWriter w(out);
  for (const uint16_t s : symbols) {
    const uint32_t e = table[s];
    w.put(e >> 5, static_cast<int>(e & 31));
  }
  return w.finish();
}

}  // namespace

Status huffman_encode(std::span<const uint16_t> symbols, std::vector<uint8_t>& out, int threads) {
  threads = std::max(threads, 1);
  const uint64_t n = symbols.size();
  std::vector<uint8_t> lengths(kHuffmanAlphabet);
  huffman_code_lengths(histogram(symbols, threads), lengths);
  const std::vector<uint32_t> table = huffman_encode_table(lengths);

  out.clear();
  huffman_write_head(n, lengths, out);

  const uint64_t chunk = uint64_t{1} << kHuffmanChunkLog2;
  const int64_t n_chunks = static_cast<int64_t>((n + chunk - 1) / chunk);
  std::vector<uint64_t> chunk_bytes(n_chunks);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t k = 0; k < n_chunks; ++k) {
    const uint64_t lo = k * chunk, hi = std::min(n, lo + chunk);
    uint64_t bits = 0;
    for (uint64_t i = lo; i < hi; ++i) bits += table[symbols[i]] & 31;
    chunk_bytes[k] = (bits + 7) / 8;
  }
  const uint64_t table_pos = out.size();
  std::vector<uint64_t> chunk_pos(n_chunks);
  uint64_t pos = table_pos + 4 * static_cast<uint64_t>(n_chunks);
  for (int64_t k = 0; k < n_chunks; ++k) {
    chunk_pos[k] = pos;
    pos += chunk_bytes[k];
  }
  out.resize(pos);
  for (int64_t k = 0; k < n_chunks; ++k) {
    store_u32le(out.data() + table_pos + 4 * k, static_cast<uint32_t>(chunk_bytes[k]));
  }

  int mismatches = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : mismatches)
  for (int64_t k = 0; k < n_chunks; ++k) {
    const uint64_t lo = k * chunk, hi = std::min(n, lo + chunk);
    if (encode_chunk(table, symbols.subspan(lo, hi - lo), out.data() + chunk_pos[k]) != chunk_bytes[k]) {
      ++mismatches;
    }
  }
  if (mismatches != 0) return Status(Code::internal, "huffman: chunk size mismatch");
  return Status::Ok();
}

// ---------------------------------------------------------------- decode

Status huffman_parse(std::span<const uint8_t> in, uint64_t n, HuffmanBlob& out) {
  ByteReader cur(in);
  uint8_t version = 0, chunk_log2 = 0;
  uint64_t count = 0;
  if (!cur.u8(version) || !cur.u8(chunk_log2) || !cur.u64(count)) {
    return corrupt_stream("huffman: header truncated");
  }
  if (version != kHuffmanVersion) return corrupt_stream("huffman: unknown blob version");
  if (chunk_log2 < kMinChunkLog2 || chunk_log2 > kMaxChunkLog2) {
    return corrupt_stream("huffman: bad chunk size");
  }
  if (count != n) return corrupt_stream("huffman: symbol count mismatch");

  std::vector<uint8_t> lengths(kHuffmanAlphabet, 0);
  FACTZ_RETURN_IF_ERROR(read_codebook(cur, lengths));
  out.code = Canonical{};
  build_canonical(lengths, out.code);
  if ((n == 0) != out.code.sorted.empty()) return corrupt_stream("huffman: codebook does not fit count");
  if (n != 0 && !kraft_valid(out.code)) return corrupt_stream("huffman: codebook is not a complete code");

  out.chunk_log2 = chunk_log2;
  const uint64_t chunk = uint64_t{1} << chunk_log2;
  const uint64_t n_chunks = n / chunk + (n % chunk != 0);
  if (cur.remaining() / 4 < n_chunks) return corrupt_stream("huffman: chunk table truncated");
  out.chunk_pos.assign(n_chunks + 1, 0);
  uint64_t pos = cur.pos() + 4 * n_chunks;
  for (uint64_t k = 0; k < n_chunks; ++k) {
    uint32_t size = 0;
    (void)cur.u32(size);
    if (size > in.size() - pos) return corrupt_stream("huffman: chunk exceeds blob");
    out.chunk_pos[k] = pos;
    pos += size;
  }
  out.chunk_pos[n_chunks] = pos;
  if (pos != in.size()) return corrupt_stream("huffman: payload size does not match chunk table");
  return Status::Ok();
}

Status huffman_decode(std::span<const uint8_t> in, std::span<uint16_t> symbols, int threads) {
  threads = std::max(threads, 1);
  const uint64_t n = symbols.size();
  auto blob = std::make_unique<HuffmanBlob>();
  FACTZ_RETURN_IF_ERROR(huffman_parse(in, n, *blob));
  auto t = std::make_unique<DecodeTable>();
  build_decode_table(blob->code, *t);
  const uint64_t chunk = uint64_t{1} << blob->chunk_log2;
  const uint64_t n_chunks = blob->chunk_pos.size() - 1;
  const std::vector<uint64_t>& chunk_pos = blob->chunk_pos;

  std::vector<uint8_t> failed(n_chunks, 0);
  const DecodeTable& table = *t;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t k = 0; k < static_cast<int64_t>(n_chunks); ++k) {
    const uint64_t lo = k * chunk, m = std::min(n - lo, chunk);
    failed[k] = !decode_chunk(table, in, chunk_pos[k], chunk_pos[k + 1] - chunk_pos[k],
                              symbols.data() + lo, m);
  }
  for (uint64_t k = 0; k < n_chunks; ++k) {
    if (failed[k]) return corrupt_stream("huffman: invalid payload in chunk " + std::to_string(k));
  }
  return Status::Ok();
}

}  // namespace factz::detail
