// Byte-plane interleaved rANS coder; the blob layout is specified in docs/codec.md,
// the per-lane coding steps live in src/kernels/rans.hpp.
#include "codec/ans.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "kernels/rans.hpp"
#include "util/byte_io.hpp"

namespace factz::detail {
namespace {

constexpr int kLanes = kRansLanes;
constexpr uint32_t kScale = kRansScale;
// Accepted range of the chunk size field (the encoder writes kAnsChunkLog2). Bounded so
// that a chunk's byte size (at most 4 * 32 + 2 * 2^24) fits the u32 chunk table entries.
constexpr int kMinChunkLog2 = 8;
constexpr int kMaxChunkLog2 = 24;
// Plane modes (the first byte of a plane).
constexpr uint8_t kPlaneConstant = 0;
constexpr uint8_t kPlaneRans = 1;
// Normalization compares count * (2 * freq + 1) in 64 bits: counts stay below 2^48.
constexpr uint64_t kMaxSymbols = uint64_t{1} << 48;
// Below this many symbols the histogram is counted by one thread.
constexpr uint64_t kParallelHistogramMin = uint64_t{1} << 20;

// ---------------------------------------------------------------- byte helpers

uint32_t load_u32le(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

uint16_t load_u16le(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// First item of part `p` when n items are cut into `parts` near-equal contiguous parts.
uint64_t part_begin(uint64_t n, uint64_t parts, uint64_t p) {
  return (n / parts) * p + std::min(p, n % parts);
}

// Lanes (and stored states) of a chunk of m symbols.
int chunk_lanes(uint64_t m) { return static_cast<int>(std::min<uint64_t>(m, kLanes)); }

// ---------------------------------------------------------------- histograms

using Histogram = std::array<uint64_t, 256>;

// Adds the low- and high-byte counts of the zig-zag codes of s[0..m) to lo and hi.
void count_planes(const uint16_t* s, uint64_t m, uint16_t center, Histogram& lo, Histogram& hi) {
  // Blocks of at most 2^16 symbols keep the counts in u32; two tables per plane halve the
  // store-to-load dependency chains on skewed data, where neighbours hit the same counter.
  constexpr uint64_t kBlock = uint64_t{1} << 16;
  for (uint64_t b = 0; b < m; b += kBlock) {
    const uint64_t e = std::min(m, b + kBlock);
    uint32_t t[4][256] = {};
    uint64_t i = b;
    for (; i + 2 <= e; i += 2) {
      const uint32_t z0 = ans_zigzag(s[i], center), z1 = ans_zigzag(s[i + 1], center);
      ++t[0][z0 & 0xFF];
      ++t[1][z0 >> 8];
      ++t[2][z1 & 0xFF];
      ++t[3][z1 >> 8];
    }
    if (i < e) {
      const uint32_t z = ans_zigzag(s[i], center);
      ++t[0][z & 0xFF];
      ++t[1][z >> 8];
    }
    for (int v = 0; v < 256; ++v) {
      lo[v] += uint64_t{t[0][v]} + t[2][v];
      hi[v] += uint64_t{t[1][v]} + t[3][v];
    }
  }
}

// Exact counts; sums of per-part counts do not depend on how the parts are scheduled.
void plane_histograms(std::span<const uint16_t> symbols, uint16_t center, int threads, Histogram& lo,
                      Histogram& hi) {
  const uint64_t n = symbols.size();
  const int parts = n < kParallelHistogramMin ? 1 : threads;
  std::vector<Histogram> partial(2 * static_cast<size_t>(parts), Histogram{});
#pragma omp parallel for num_threads(parts) schedule(static)
  for (int p = 0; p < parts; ++p) {
    const uint64_t b = part_begin(n, parts, p), e = part_begin(n, parts, p + 1);
    count_planes(symbols.data() + b, e - b, center, partial[2 * p], partial[2 * p + 1]);
  }
  lo.fill(0);
  hi.fill(0);
  for (int p = 0; p < parts; ++p) {
    for (int v = 0; v < 256; ++v) {
      lo[v] += partial[2 * p][v];
      hi[v] += partial[2 * p + 1][v];
    }
  }
}

}  // namespace

// ---------------------------------------------------------------- normalization

void ans_normalize_frequencies(std::span<const uint64_t, 256> histogram, std::span<uint32_t, 256> freqs) {
  uint64_t total = 0;
  for (const uint64_t c : histogram) total += c;
  // Proportional share, rounded down, at least 1 for every present value.
  int64_t sum = 0;
  for (int v = 0; v < 256; ++v) {
    const uint64_t c = histogram[v];
    freqs[v] = c == 0 ? 0 : static_cast<uint32_t>(std::max<uint64_t>(1, c * kScale / total));
    sum += freqs[v];
  }
  // Greedy repair to the exact sum. The cost of a value in bits is c * log2(M / f); one
  // more slot saves about c / (f + 1/2) units and one fewer costs about c / (f - 1/2).
  // Both are compared as exact integer cross products, so the choice is platform-free;
  // ties go to the smaller byte value (the strict comparisons keep the first one found).
  for (; sum < kScale; ++sum) {
    int best = -1;
    for (int v = 0; v < 256; ++v) {
      if (histogram[v] == 0) continue;
      if (best < 0 || histogram[v] * (2 * uint64_t{freqs[best]} + 1) > histogram[best] * (2 * uint64_t{freqs[v]} + 1)) {
        best = v;
      }
    }
    ++freqs[best];
  }
  for (; sum > kScale; --sum) {
    int best = -1;
    for (int v = 0; v < 256; ++v) {
      if (freqs[v] <= 1) continue;
      if (best < 0 || histogram[v] * (2 * uint64_t{freqs[best]} - 1) < histogram[best] * (2 * uint64_t{freqs[v]} - 1)) {
        best = v;
      }
    }
    --freqs[best];
  }
}

namespace {

// ---------------------------------------------------------------- encoding

// How one plane is coded.
struct PlaneCode {
  bool constant = true;  // a single byte value (or no symbols at all)
  uint8_t value = 0;     // that value
  std::array<uint32_t, 256> freqs{};
  std::array<RansEncodeSymbol, 256> symbols{};
};

PlaneCode plan_plane(const Histogram& hist) {
  PlaneCode p;
  int present = 0;
  for (int v = 0; v < 256; ++v) {
    if (hist[v] == 0) continue;
    if (present++ == 0) p.value = static_cast<uint8_t>(v);
  }
  p.constant = present <= 1;
  if (p.constant) return p;
  ans_normalize_frequencies(hist, p.freqs);
  uint32_t cum = 0;
  for (int v = 0; v < 256; ++v) {
    if (p.freqs[v] != 0) p.symbols[v] = rans_encode_symbol(cum, p.freqs[v]);
    cum += p.freqs[v];
  }
  return p;
}

// Frequency table as runs of present values: varint run count, then per run varint skip
// (absent values since the previous run; >= 1 except before the first run), varint run
// length (>= 1) and one varint frequency per value.
void write_frequencies(const std::array<uint32_t, 256>& freqs, std::vector<uint8_t>& out) {
  std::vector<std::array<int, 2>> runs;  // [start, end)
  for (int v = 0; v < 256;) {
    if (freqs[v] == 0) {
      ++v;
      continue;
    }
    int e = v;
    while (e < 256 && freqs[e] != 0) ++e;
    runs.push_back({v, e});
    v = e;
  }
  put_varint(out, runs.size());
  int next = 0;
  for (const auto& [start, end] : runs) {
    put_varint(out, start - next);
    put_varint(out, end - start);
    for (int v = start; v < end; ++v) put_varint(out, freqs[v]);
    next = end;
  }
}

// Codes the plane bytes b[0..m) as one chunk. The words are pushed downwards from `end`,
// then the lane states (u32 LE, lane 0 first) go in front of them; returns the chunk's
// first byte. The buffer before `end` must hold 4 * 32 + 2 * m bytes.
uint8_t* encode_chunk(const uint8_t* b, uint64_t m, const std::array<RansEncodeSymbol, 256>& table, uint8_t* end) {
  uint32_t x[kLanes];
  for (uint32_t& xi : x) xi = kRansLow;
  uint8_t* w = end;
  // Reverse order: the decoder's first symbol is pushed last.
  for (uint64_t i = m; i-- > 0;) {
    const RansEncodeSymbol& sym = table[b[i]];
    uint32_t& xi = x[i % kLanes];
    uint16_t word = 0;
    // The word is stored whether or not it is emitted (branch-free). At most m words are
    // emitted, so w - 2 stays inside the room reserved for the states.
    const bool emitted = rans_encode_renorm(xi, sym, word);
    w[-2] = static_cast<uint8_t>(word);
    w[-1] = static_cast<uint8_t>(word >> 8);
    w -= 2 * static_cast<int>(emitted);
    xi = rans_encode_put(xi, sym);
  }
  const int lanes = chunk_lanes(m);
  w -= 4 * lanes;
  for (int l = 0; l < lanes; ++l) {
    for (int k = 0; k < 4; ++k) w[4 * l + k] = static_cast<uint8_t>(x[l] >> (8 * k));
  }
  return w;
}

// Splits the zig-zag codes of s[0..m) into the low and the high plane bytes.
void split_planes(const uint16_t* s, uint64_t m, uint16_t center, uint8_t* lo, uint8_t* hi) {
  for (uint64_t i = 0; i < m; ++i) {
    const uint16_t z = ans_zigzag(s[i], center);
    lo[i] = static_cast<uint8_t>(z);
    hi[i] = static_cast<uint8_t>(z >> 8);
  }
}

// Appends one plane: mode byte, then the value (constant) or the frequency table, the chunk
// table and the chunks (rANS).
void append_plane(const PlaneCode& p, const std::vector<std::vector<uint8_t>>& chunks, std::vector<uint8_t>& out) {
  if (p.constant) {
    out.push_back(kPlaneConstant);
    out.push_back(p.value);
    return;
  }
  out.push_back(kPlaneRans);
  write_frequencies(p.freqs, out);
  uint64_t total = 0;
  for (const auto& c : chunks) {
    put_le(out, c.size(), 4);
    total += c.size();
  }
  out.reserve(out.size() + total);
  for (const auto& c : chunks) out.insert(out.end(), c.begin(), c.end());
}

}  // namespace

Status ans_encode(std::span<const uint16_t> symbols, uint16_t center, std::vector<uint8_t>& out, int threads) {
  threads = std::max(threads, 1);
  const uint64_t n = symbols.size();
  if (n >= kMaxSymbols) return invalid_argument("ans: too many symbols");
  Histogram hist_lo, hist_hi;
  plane_histograms(symbols, center, threads, hist_lo, hist_hi);
  const PlaneCode planes[2] = {plan_plane(hist_lo), plan_plane(hist_hi)};

  const uint64_t chunk = uint64_t{1} << kAnsChunkLog2;
  const int64_t n_chunks = static_cast<int64_t>((n + chunk - 1) / chunk);
  std::vector<std::vector<uint8_t>> coded[2];
  for (int p = 0; p < 2; ++p) coded[p].resize(planes[p].constant ? 0 : n_chunks);
  if (!planes[0].constant || !planes[1].constant) {
    const int workers = static_cast<int>(std::min<int64_t>(threads, n_chunks));
    // Per thread: the chunk's two planes, then room for one coded chunk.
    const uint64_t bytes_size = std::min(n, chunk);
    const uint64_t scratch_size = 2 * bytes_size + 4 * kLanes + 2 * bytes_size;
    std::vector<uint8_t> scratch(static_cast<size_t>(workers) * scratch_size);
    int out_of_memory = 0;
#pragma omp parallel for num_threads(workers) schedule(static) reduction(+ : out_of_memory)
    for (int64_t k = 0; k < n_chunks; ++k) {
      uint8_t* bytes = scratch.data() + omp_get_thread_num() * scratch_size;
      uint8_t* end = bytes + scratch_size;
      const uint64_t first = k * chunk, m = std::min(n - first, chunk);
      split_planes(symbols.data() + first, m, center, bytes, bytes + bytes_size);
      for (int p = 0; p < 2; ++p) {
        if (planes[p].constant) continue;
        uint8_t* begin = encode_chunk(bytes + p * bytes_size, m, planes[p].symbols, end);
        try {  // no exception may leave an OpenMP region
          coded[p][k].assign(begin, end);
        } catch (const std::bad_alloc&) {
          ++out_of_memory;
        }
      }
    }
    if (out_of_memory != 0) return Status(Code::internal, "ans: out of memory");
  }

  out.clear();
  out.push_back(kAnsVersion);
  out.push_back(static_cast<uint8_t>(kAnsChunkLog2));
  put_le(out, center, 2);
  put_le(out, n, 8);
  for (int p = 0; p < 2; ++p) append_plane(planes[p], coded[p], out);
  return Status::Ok();
}

// ---------------------------------------------------------------- decoding

namespace {

// One plane as read from a blob.
struct PlaneView {
  bool constant = true;
  uint8_t value = 0;
  std::array<uint32_t, kScale> table{};  // rans_decode_entry per slot
  std::vector<uint64_t> chunk_pos;       // n_chunks + 1 offsets into the blob
};

Status read_frequencies(ByteReader& cur, std::array<uint32_t, 256>& freqs) {
  freqs.fill(0);
  uint64_t runs = 0;
  if (!cur.varint_at_most(128, runs)) return corrupt_stream("ans: bad frequency run count");
  uint64_t next = 0;
  for (uint64_t r = 0; r < runs; ++r) {
    uint64_t skip = 0, run = 0;
    if (!cur.varint_at_most(256, skip) || !cur.varint_at_most(256, run) || (r > 0 && skip == 0) || run == 0 ||
        next + skip + run > 256) {
      return corrupt_stream("ans: bad frequency run");
    }
    next += skip;
    for (uint64_t k = 0; k < run; ++k) {
      uint64_t f = 0;
      if (!cur.varint_at_most(kScale - 1, f) || f == 0) return corrupt_stream("ans: bad frequency");
      freqs[next++] = static_cast<uint32_t>(f);
    }
  }
  return Status::Ok();
}

// Builds the slot table; the frequencies must sum to exactly M over two or more values
// (a single value is a constant plane), so every slot decodes to a present value.
Status build_table(const std::array<uint32_t, 256>& freqs, PlaneView& pv) {
  uint32_t cum = 0;
  int present = 0;
  for (const uint32_t f : freqs) {
    cum += f;
    present += f != 0;
  }
  if (cum != kScale || present < 2) return corrupt_stream("ans: frequencies do not sum to the scale");
  cum = 0;
  for (uint32_t v = 0; v < 256; ++v) {
    for (uint32_t k = 0; k < freqs[v]; ++k) pv.table[cum + k] = rans_decode_entry(v, freqs[v], k);
    cum += freqs[v];
  }
  return Status::Ok();
}

// Reads one plane of n symbols in chunks of `chunk` and checks its chunk table against
// the blob; the cursor ends past the plane's chunks.
Status read_plane(ByteReader& cur, uint64_t n, uint64_t chunk, PlaneView& pv) {
  uint64_t mode = 0, value = 0;
  if (!cur.le(1, mode)) return corrupt_stream("ans: plane truncated");
  if (mode == kPlaneConstant) {
    if (!cur.le(1, value)) return corrupt_stream("ans: plane truncated");
    pv.constant = true;
    pv.value = static_cast<uint8_t>(value);
    return Status::Ok();
  }
  if (mode != kPlaneRans || n == 0) return corrupt_stream("ans: bad plane mode");
  pv.constant = false;
  std::array<uint32_t, 256> freqs{};
  FACTZ_RETURN_IF_ERROR(read_frequencies(cur, freqs));
  FACTZ_RETURN_IF_ERROR(build_table(freqs, pv));

  const uint64_t n_chunks = n / chunk + (n % chunk != 0);
  if (cur.remaining() / 4 < n_chunks) return corrupt_stream("ans: chunk table truncated");
  pv.chunk_pos.assign(n_chunks + 1, 0);
  uint64_t pos = cur.pos() + 4 * n_chunks;
  const uint64_t blob_size = cur.pos() + cur.remaining();
  for (uint64_t k = 0; k < n_chunks; ++k) {
    uint64_t size = 0;
    (void)cur.le(4, size);
    // States, then whole words, at most one word per symbol.
    const uint64_t m = std::min(n - k * chunk, chunk);
    const uint64_t states = 4 * static_cast<uint64_t>(chunk_lanes(m));
    if (size > blob_size - pos || size < states || (size - states) % 2 != 0 || (size - states) / 2 > m) {
      return corrupt_stream("ans: bad chunk size");
    }
    pv.chunk_pos[k] = pos;
    pos += size;
  }
  pv.chunk_pos[n_chunks] = pos;
  (void)cur.skip(pos - cur.pos());
  return Status::Ok();
}

// One decoding step of a lane whose word stream may run out: false if it does.
inline bool decode_step_checked(const uint32_t* table, uint32_t& x, const uint8_t*& w, const uint8_t* end,
                                uint8_t& out) {
  const uint32_t e = table[rans_decode_slot(x)];
  out = rans_entry_value(e);
  x = rans_decode_advance(x, e);
  if (rans_decode_needs_word(x)) {
    if (end - w < 2) return false;
    x = rans_decode_take_word(x, load_u16le(w));
    w += 2;
  }
  return true;
}

// Decodes the m plane bytes of the chunk blob[begin, begin + size) (sizes already checked
// by read_plane). True iff every word is consumed and every lane ends in the state L.
bool decode_chunk(const uint32_t* table, const uint8_t* begin, uint64_t size, uint8_t* out, uint64_t m) {
  const int lanes = chunk_lanes(m);
  uint32_t x[kLanes];
  for (int l = 0; l < lanes; ++l) {
    x[l] = load_u32le(begin + 4 * l);
    if (x[l] < kRansLow) return false;
  }
  const uint8_t* w = begin + 4 * lanes;
  const uint8_t* const end = begin + size;
  uint64_t i = 0;
  for (; i + kLanes <= m; i += kLanes) {
    if (end - w >= 2 * kLanes) {
      // A group takes at most one word per lane: no bounds checks needed. The word is
      // loaded unconditionally and kept only by lanes that need it (no branch).
      for (int l = 0; l < kLanes; ++l) {
        const uint32_t e = table[rans_decode_slot(x[l])];
        out[i + l] = rans_entry_value(e);
        uint32_t consumed = 0;
        x[l] = rans_decode_refill(rans_decode_advance(x[l], e), load_u16le(w), consumed);
        w += consumed;
      }
    } else {
      for (int l = 0; l < kLanes; ++l) {
        if (!decode_step_checked(table, x[l], w, end, out[i + l])) return false;
      }
    }
  }
  for (int l = 0; i < m; ++i, ++l) {
    if (!decode_step_checked(table, x[l], w, end, out[i])) return false;
  }
  for (int l = 0; l < lanes; ++l) {
    if (x[l] != kRansLow) return false;
  }
  return w == end;
}

// Decodes chunk k of a plane into `buf` (rANS) or reports its constant; false if corrupt.
bool decode_plane_chunk(const PlaneView& pv, std::span<const uint8_t> in, uint64_t k, uint8_t* buf, uint64_t m) {
  if (pv.constant) return true;
  const uint64_t b = pv.chunk_pos[k];
  return decode_chunk(pv.table.data(), in.data() + b, pv.chunk_pos[k + 1] - b, buf, m);
}

}  // namespace

Status ans_decode(std::span<const uint8_t> in, uint16_t center, std::span<uint16_t> symbols, int threads) {
  threads = std::max(threads, 1);
  ByteReader cur(in);
  uint64_t version = 0, chunk_log2 = 0, stored_center = 0, n = 0;
  if (!cur.le(1, version) || !cur.le(1, chunk_log2) || !cur.le(2, stored_center) ||
      !cur.le(8, n)) {
    return corrupt_stream("ans: header truncated");
  }
  if (version != kAnsVersion) return corrupt_stream("ans: unknown blob version");
  if (chunk_log2 < kMinChunkLog2 || chunk_log2 > kMaxChunkLog2) return corrupt_stream("ans: bad chunk size");
  if (stored_center != center) return corrupt_stream("ans: center mismatch");
  if (n != symbols.size()) return corrupt_stream("ans: symbol count mismatch");

  const uint64_t chunk = uint64_t{1} << chunk_log2;
  auto planes = std::make_unique<PlaneView[]>(2);
  for (int p = 0; p < 2; ++p) FACTZ_RETURN_IF_ERROR(read_plane(cur, n, chunk, planes[p]));
  if (cur.remaining() != 0) return corrupt_stream("ans: trailing bytes");
  if (n == 0) return Status::Ok();

  const PlaneView& lo_plane = planes[0];
  const PlaneView& hi_plane = planes[1];
  const int64_t n_chunks = static_cast<int64_t>(n / chunk + (n % chunk != 0));
  const int workers = static_cast<int>(std::min<int64_t>(threads, n_chunks));
  const uint64_t buf_size = std::min(n, chunk);
  std::vector<uint8_t> bufs(2 * static_cast<size_t>(workers) * buf_size);
  std::vector<uint8_t> failed(n_chunks, 0);
#pragma omp parallel for num_threads(workers) schedule(static)
  for (int64_t k = 0; k < n_chunks; ++k) {
    uint8_t* lo_buf = bufs.data() + 2 * omp_get_thread_num() * buf_size;
    uint8_t* hi_buf = lo_buf + buf_size;
    const uint64_t first = k * chunk, m = std::min(n - first, chunk);
    if (!decode_plane_chunk(lo_plane, in, k, lo_buf, m) || !decode_plane_chunk(hi_plane, in, k, hi_buf, m)) {
      failed[k] = 1;
      continue;
    }
    uint16_t* out = symbols.data() + first;
    if (hi_plane.constant) {
      const uint32_t hi = uint32_t{hi_plane.value} << 8;
      if (lo_plane.constant) {
        std::fill(out, out + m, ans_unzigzag(static_cast<uint16_t>(hi | lo_plane.value), center));
      } else {
        for (uint64_t i = 0; i < m; ++i) out[i] = ans_unzigzag(static_cast<uint16_t>(hi | lo_buf[i]), center);
      }
    } else {
      if (lo_plane.constant) std::memset(lo_buf, lo_plane.value, m);
      for (uint64_t i = 0; i < m; ++i) {
        out[i] = ans_unzigzag(static_cast<uint16_t>(uint32_t{hi_buf[i]} << 8 | lo_buf[i]), center);
      }
    }
  }
  for (int64_t k = 0; k < n_chunks; ++k) {
    if (failed[k]) return corrupt_stream("ans: invalid payload in chunk " + std::to_string(k));
  }
  return Status::Ok();
}

}  // namespace factz::detail
