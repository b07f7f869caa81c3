// Byte-plane interleaved rANS decoder: parses and validates a blob (docs/codec.md, "ANS
// byte-plane coder") and decodes its chunks in parallel with every check of the format;
// the per-lane steps live in src/kernels/rans.hpp, the encoder is ans_encode.cpp.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>

#include "codec/ans.hpp"
#include "codec/ans_internal.hpp"
#include "kernels/rans.hpp"
#include "util/byte_io.hpp"

namespace factz::detail {
namespace {

using namespace ans_format;

// Accepted range of the chunk size field (the encoder writes kAnsChunkLog2). Bounded so
// that a chunk's byte size (at most 4 * 32 + 2 * 2^24) fits the u32 chunk table entries.
constexpr int kMinChunkLog2 = 8;
constexpr int kMaxChunkLog2 = 24;

uint32_t load_u32le(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

uint16_t load_u16le(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// One plane as read from a blob.
using PlaneView = AnsPlane;

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

// Reads one context table: its frequencies must sum to exactly M over two or more values
// (kTableFrequencies), or it names a single value (kTableSingle, frequency M).
Status read_table(ByteReader& cur, std::array<uint32_t, 256>& freqs) {
  uint64_t kind = 0;
  if (!cur.le(1, kind)) return corrupt_stream("ans: context table truncated");
  if (kind == kTableSingle) {
    uint64_t value = 0;
    if (!cur.le(1, value)) return corrupt_stream("ans: context table truncated");
    freqs.fill(0);
    freqs[value] = kScale;
    return Status::Ok();
  }
  if (kind != kTableFrequencies) return corrupt_stream("ans: bad context table kind");
  FACTZ_RETURN_IF_ERROR(read_frequencies(cur, freqs));
  uint32_t cum = 0;
  int present = 0;
  for (const uint32_t f : freqs) {
    cum += f;
    present += f != 0;
  }
  if (cum != kScale || present < 2) return corrupt_stream("ans: frequencies do not sum to the scale");
  return Status::Ok();
}

// Fills the entries of a rANS plane and, per entry, sym[index] = symbol(byte value): the
// byte itself, or the 16-bit symbol it completes.
template <class T, class F>
void build_tables(PlaneView& pv, std::vector<T>& sym, F symbol) {
  pv.entries.assign(pv.freqs.size() * kScale, 0);
  sym.assign(pv.freqs.size() * kScale, T{});
  for (size_t c = 0; c < pv.freqs.size(); ++c) {
    uint32_t cum = static_cast<uint32_t>(c * kScale);
    for (uint32_t v = 0; v < 256; ++v) {
      const uint32_t f = pv.freqs[c][v];
      if (f == 0) continue;
      const T value = symbol(static_cast<uint8_t>(v));
      const uint32_t next = pv.context_of[v];
      for (uint32_t k = 0; k < f; ++k) {
        pv.entries[cum + k] = rans_decode_entry(f, k, next);
        sym[cum + k] = value;
      }
      cum += f;
    }
  }
}

// Reads one plane of n symbols in chunks of `chunk` of a blob of version `version` and
// checks its chunk table against the blob; the cursor ends past the plane's chunks (and,
// with escapes, past its escape list).
Status read_plane(ByteReader& cur, uint64_t n, uint64_t chunk, uint64_t version, PlaneView& pv) {
  uint64_t mode = 0, value = 0;
  if (!cur.le(1, mode)) return corrupt_stream("ans: plane truncated");
  if (mode == kPlaneConstant) {
    if (!cur.le(1, value)) return corrupt_stream("ans: plane truncated");
    pv.mode = kPlaneConstant;
    pv.value = static_cast<uint8_t>(value);
    return Status::Ok();
  }
  if (mode == kPlaneSparse && n > 0) {
    uint64_t count = 0;
    // Each exception takes at least two bytes: bound the count before allocating.
    if (!cur.le(1, value) || !cur.varint_at_most(std::min(n, cur.remaining() / 2), count) || count == 0) {
      return corrupt_stream("ans: bad sparse plane");
    }
    pv.mode = kPlaneSparse;
    pv.value = static_cast<uint8_t>(value);
    pv.positions.resize(count);
    pv.bytes.resize(count);
    uint64_t next = 0;
    for (uint64_t e = 0; e < count; ++e) {
      uint64_t gap = 0, byte = 0;
      if (!cur.varint_at_most(n - next, gap) || next + gap >= n || !cur.le(1, byte) || byte == value) {
        return corrupt_stream("ans: bad sparse plane exception");
      }
      pv.positions[e] = next + gap;
      pv.bytes[e] = static_cast<uint8_t>(byte);
      next += gap + 1;
    }
    return Status::Ok();
  }
  const bool escapes = mode == kPlaneEscapes && version >= kAnsVersionEscapes;
  if ((mode != kPlaneRans && !escapes) || n == 0) return corrupt_stream("ans: bad plane mode");
  pv.mode = static_cast<uint8_t>(mode);
  if (escapes) {
    if (!cur.le(1, value)) return corrupt_stream("ans: plane truncated");
    pv.value = static_cast<uint8_t>(value);
  }
  uint64_t lanes = 0, contexts = 0;
  if (!cur.le(1, lanes) || !cur.le(1, contexts)) return corrupt_stream("ans: plane truncated");
  if (lanes < 1 || lanes > kMaxLanes) return corrupt_stream("ans: bad lane count");
  if (contexts < 1 || contexts > kAnsMaxContexts) return corrupt_stream("ans: bad context count");
  pv.lanes = static_cast<uint32_t>(lanes);
  ContextMap cm;
  cm.count = static_cast<int>(contexts);
  std::array<bool, 256> mapped{};
  for (int c = 0; c + 1 < cm.count; ++c) {
    uint64_t v = 0;
    if (!cur.le(1, v)) return corrupt_stream("ans: context map truncated");
    if (mapped[v]) return corrupt_stream("ans: context map repeats a value");
    mapped[v] = true;
    cm.map[c] = static_cast<uint8_t>(v);
  }
  cm.finish();
  pv.context_of = cm.context_of;
  pv.first_context = cm.context_of[0];
  pv.freqs.resize(contexts);
  bool has_escape = false;
  for (auto& f : pv.freqs) {
    FACTZ_RETURN_IF_ERROR(read_table(cur, f));
    has_escape = has_escape || f[pv.value] != 0;
  }
  if (escapes && !has_escape) return corrupt_stream("ans: escape value absent from the tables");

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
    const uint64_t states = 4 * uint64_t{chunk_lanes(m, pv.lanes)};
    if (size > blob_size - pos || size < states || (size - states) % 2 != 0 || (size - states) / 2 > m) {
      return corrupt_stream("ans: bad chunk size");
    }
    pv.chunk_pos[k] = pos;
    pos += size;
  }
  pv.chunk_pos[n_chunks] = pos;
  (void)cur.skip(pos - cur.pos());
  if (escapes) {
    // At most one escape per symbol, one byte each: bounded before allocating. Their count
    // is checked against the decoded escape values (ans_decode, the CUDA decoder).
    uint64_t count = 0;
    if (!cur.varint_at_most(n, count) || count > cur.remaining()) return corrupt_stream("ans: bad escape count");
    pv.bytes.resize(count);
    for (auto& b : pv.bytes) {
      uint64_t byte = 0;
      (void)cur.le(1, byte);  // within remaining(), checked above
      b = static_cast<uint8_t>(byte);
    }
  }
  return Status::Ok();
}

// One decoding step of a lane whose word stream may run out: false if it does.
template <class T>
inline bool decode_step_checked(const uint32_t* entries, const T* sym, uint32_t& x, uint32_t& context,
                                const uint8_t*& w, const uint8_t* end, T& out) {
  const uint32_t i = rans_decode_index(context, x);
  const uint32_t e = entries[i];
  out = sym[i];
  context = rans_entry_next_context(e);
  x = rans_decode_advance(x, e);
  if (rans_decode_needs_word(x)) {
    if (end - w < 2) return false;
    x = rans_decode_take_word(x, load_u16le(w));
    w += 2;
  }
  return true;
}

// Steps 0, 1, ... of LANES lanes while a whole step's words (at most one per lane) lie
// before `end`; returns the first step not done. The word is loaded unconditionally and kept
// only by lanes that need it (no branch).
template <int LANES, class T>
uint64_t unchecked_steps(const uint32_t* entries, const T* sym, uint32_t* xs, uint32_t* contexts, T* const* dst,
                         const uint8_t*& w, const uint8_t* end, uint64_t q) {
  uint32_t x[LANES], c[LANES];
  for (int l = 0; l < LANES; ++l) {
    x[l] = xs[l];
    c[l] = contexts[l];
  }
  const uint8_t* p = w;
  uint64_t t = 0;
  for (; t < q && end - p >= 2 * LANES; ++t) {
    // First every lane's symbol and new state (independent of each other), then the refills,
    // whose only serial part is the word pointer: no lane waits for another lane's table
    // lookup before its own.
#pragma GCC unroll 32
    for (int l = 0; l < LANES; ++l) {
      const uint32_t i = rans_decode_index(c[l], x[l]);
      const uint32_t e = entries[i];
      dst[l][t] = sym[i];
      c[l] = rans_entry_next_context(e);
      x[l] = rans_decode_advance(x[l], e);
    }
#pragma GCC unroll 32
    for (int l = 0; l < LANES; ++l) {
      uint32_t consumed = 0;
      x[l] = rans_decode_refill(x[l], load_u16le(p), consumed);
      p += consumed;
    }
  }
  for (int l = 0; l < LANES; ++l) {
    xs[l] = x[l];
    contexts[l] = c[l];
  }
  w = p;
  return t;
}

// Decodes the m symbols of chunk k of a rANS plane; symbol t of lane l goes to
// out[lane begin + t] as sym[entry index]: the plane byte (T = uint8_t), or the whole
// 16-bit symbol when the other plane is common (T = uint16_t). True iff every word is
// consumed and every lane ends in the state L.
template <class T>
bool decode_chunk(const PlaneView& pv, const T* sym, std::span<const uint8_t> in, uint64_t k, T* out, uint64_t m) {
  const uint8_t* const begin = in.data() + pv.chunk_pos[k];
  const uint8_t* const end = in.data() + pv.chunk_pos[k + 1];
  const uint32_t lanes = chunk_lanes(m, pv.lanes);
  const uint64_t q = m / lanes, r = m % lanes;
  uint32_t x[kMaxLanes], context[kMaxLanes];
  T* dst[kMaxLanes];
  for (uint32_t l = 0; l < lanes; ++l) {
    x[l] = load_u32le(begin + 4 * l);
    if (x[l] < kRansLow) return false;
    context[l] = pv.first_context;
    dst[l] = out + rans_lane_begin(m, lanes, l);
  }
  const uint32_t* const entries = pv.entries.data();
  const uint8_t* w = begin + 4 * lanes;
  // Steps whose words surely lie in the chunk run without checks; a lane count known at
  // compile time lets the states live in registers.
  uint64_t t = 0;
  switch (lanes) {
    case 8: t = unchecked_steps<8>(entries, sym, x, context, dst, w, end, q); break;
    case 16: t = unchecked_steps<16>(entries, sym, x, context, dst, w, end, q); break;
    case 32: t = unchecked_steps<32>(entries, sym, x, context, dst, w, end, q); break;
    default: break;
  }
  for (; t < q; ++t) {
    if (static_cast<uint64_t>(end - w) >= 2 * uint64_t{lanes}) {
      // A step takes at most one word per lane: no bounds checks needed. The word is
      // loaded unconditionally and kept only by lanes that need it (no branch).
      for (uint32_t l = 0; l < lanes; ++l) {
        const uint32_t i = rans_decode_index(context[l], x[l]);
        const uint32_t e = entries[i];
        dst[l][t] = sym[i];
        context[l] = rans_entry_next_context(e);
        uint32_t consumed = 0;
        x[l] = rans_decode_refill(rans_decode_advance(x[l], e), load_u16le(w), consumed);
        w += consumed;
      }
    } else {
      for (uint32_t l = 0; l < lanes; ++l) {
        if (!decode_step_checked(entries, sym, x[l], context[l], w, end, dst[l][t])) return false;
      }
    }
  }
  for (uint32_t l = 0; l < r; ++l) {
    if (!decode_step_checked(entries, sym, x[l], context[l], w, end, dst[l][q])) return false;
  }
  for (uint32_t l = 0; l < lanes; ++l) {
    if (x[l] != kRansLow) return false;
  }
  return w == end;
}

// The exceptions of a sparse plane that fall in [first, first + m): [begin, end) indices.
std::pair<size_t, size_t> exceptions_in(const PlaneView& pv, uint64_t first, uint64_t m) {
  const auto b = std::lower_bound(pv.positions.begin(), pv.positions.end(), first);
  const auto e = std::lower_bound(b, pv.positions.end(), first + m);
  return {static_cast<size_t>(b - pv.positions.begin()), static_cast<size_t>(e - pv.positions.begin())};
}

// The bytes of chunk k (symbols [first, first + m)) of a plane, into `buf`; false if corrupt.
bool plane_bytes(const PlaneView& pv, std::span<const uint8_t> in, uint64_t k, uint64_t first, uint8_t* buf,
                 uint64_t m) {
  if (ans_plane_is_rans(pv.mode)) return decode_chunk(pv, pv.values.data(), in, k, buf, m);
  std::memset(buf, pv.value, m);
  if (pv.mode == kPlaneSparse) {
    const auto [b, e] = exceptions_in(pv, first, m);
    for (size_t x = b; x < e; ++x) buf[pv.positions[x] - first] = pv.bytes[x];
  }
  return true;
}

// Decodes a blob with a mode 3 plane (escapes): both planes' bytes per chunk, the escape
// values of each chunk counted, then after a prefix sum of the counts the escaped bytes put
// back per chunk; both passes run in parallel over the chunks.
Status decode_with_escapes(AnsBlob& blob, std::span<const uint8_t> in, uint16_t center, std::span<uint16_t> symbols,
                           int threads) {
  const uint64_t n = symbols.size();
  const uint64_t chunk = uint64_t{1} << blob.chunk_log2;
  auto& planes = blob.planes;
  for (auto& p : planes) ans_plane_byte_tables(p);
  const int64_t n_chunks = static_cast<int64_t>(n / chunk + (n % chunk != 0));
  const int workers = static_cast<int>(std::min<int64_t>(threads, n_chunks));
  std::vector<uint8_t> bytes[2];
  std::vector<uint64_t> escapes[2];  // per chunk, then exclusive prefix sums
  for (int p = 0; p < 2; ++p) {
    bytes[p].resize(n);
    escapes[p].assign(planes[p].mode == kPlaneEscapes ? n_chunks + 1 : 0, 0);
  }
  std::vector<uint8_t> failed(n_chunks, 0);
#pragma omp parallel for num_threads(workers) schedule(static)
  for (int64_t k = 0; k < n_chunks; ++k) {
    const uint64_t first = k * chunk, m = std::min(n - first, chunk);
    for (int p = 0; p < 2; ++p) {
      uint8_t* b = bytes[p].data() + first;
      if (!plane_bytes(planes[p], in, k, first, b, m)) failed[k] = 1;
      else if (planes[p].mode == kPlaneEscapes) escapes[p][k] = rans_count_escapes(b, m, planes[p].value);
    }
  }
  for (int64_t k = 0; k < n_chunks; ++k) {
    if (failed[k]) return corrupt_stream("ans: invalid payload in chunk " + std::to_string(k));
  }
  for (int p = 0; p < 2; ++p) {
    if (planes[p].mode != kPlaneEscapes) continue;
    uint64_t run = 0;
    for (auto& c : escapes[p]) {
      const uint64_t t = c;
      c = run;
      run += t;
    }
    if (run != planes[p].bytes.size()) return corrupt_stream("ans: escape count does not match the escape list");
  }
#pragma omp parallel for num_threads(workers) schedule(static)
  for (int64_t k = 0; k < n_chunks; ++k) {
    const uint64_t first = k * chunk, m = std::min(n - first, chunk);
    for (int p = 0; p < 2; ++p) {
      if (planes[p].mode != kPlaneEscapes) continue;
      rans_replace_escapes(bytes[p].data() + first, m, planes[p].value, planes[p].bytes.data() + escapes[p][k]);
    }
    for (uint64_t i = first; i < first + m; ++i)
      symbols[i] = ans_unzigzag(static_cast<uint16_t>(bytes[1][i] << 8 | bytes[0][i]), center);
  }
  return Status::Ok();
}

}  // namespace

Status ans_parse(std::span<const uint8_t> in, uint16_t center, uint64_t n, AnsBlob& out) {
  ByteReader cur(in);
  uint64_t version = 0, chunk_log2 = 0, stored_center = 0, count = 0;
  if (!cur.le(1, version) || !cur.le(1, chunk_log2) || !cur.le(2, stored_center) || !cur.le(8, count)) {
    return corrupt_stream("ans: header truncated");
  }
  if (version != kAnsVersion && version != kAnsVersionEscapes) return corrupt_stream("ans: unknown blob version");
  if (chunk_log2 < kMinChunkLog2 || chunk_log2 > kMaxChunkLog2) return corrupt_stream("ans: bad chunk size");
  if (stored_center != center) return corrupt_stream("ans: center mismatch");
  if (count != n) return corrupt_stream("ans: symbol count mismatch");
  out.version = static_cast<int>(version);
  out.chunk_log2 = static_cast<int>(chunk_log2);
  for (AnsPlane& p : out.planes) {
    p = AnsPlane{};
    FACTZ_RETURN_IF_ERROR(read_plane(cur, n, uint64_t{1} << chunk_log2, version, p));
  }
  if (cur.remaining() != 0) return corrupt_stream("ans: trailing bytes");
  // One encoding per blob: version 3 only when a plane has escapes (as the writer does).
  const bool escapes = out.planes[0].mode == kPlaneEscapes || out.planes[1].mode == kPlaneEscapes;
  if (version == kAnsVersionEscapes && !escapes) return corrupt_stream("ans: version 3 blob without escapes");
  return Status::Ok();
}

void ans_plane_byte_tables(AnsPlane& plane) {
  if (ans_plane_is_rans(plane.mode)) build_tables(plane, plane.values, [](uint8_t v) { return v; });
}

Status ans_decode(std::span<const uint8_t> in, uint16_t center, std::span<uint16_t> symbols, int threads) {
  threads = std::max(threads, 1);
  const uint64_t n = symbols.size();
  auto blob = std::make_unique<AnsBlob>();
  FACTZ_RETURN_IF_ERROR(ans_parse(in, center, n, *blob));
  if (n == 0) return Status::Ok();
  const uint64_t chunk = uint64_t{1} << blob->chunk_log2;
  auto& planes = blob->planes;
  if (planes[0].mode == kPlaneEscapes || planes[1].mode == kPlaneEscapes)
    return decode_with_escapes(*blob, in, center, symbols, threads);

  // With a common high byte (constant or sparse plane) a rANS low plane decodes straight
  // into 16-bit symbols through its table; the high plane's exceptions are patched after.
  const bool hi_common = planes[1].mode != kPlaneRans;
  const uint16_t hi_bits = static_cast<uint16_t>(planes[1].value << 8);
  std::vector<uint16_t> sym16;
  for (int p = 0; p < 2; ++p) {
    if (planes[p].mode != kPlaneRans) continue;
    if (p == 0 && hi_common) {
      build_tables(planes[p], sym16, [&](uint8_t v) { return ans_unzigzag(static_cast<uint16_t>(hi_bits | v), center); });
    } else {
      ans_plane_byte_tables(planes[p]);
    }
  }
  const PlaneView& lo = planes[0];
  const PlaneView& hi = planes[1];
  const int64_t n_chunks = static_cast<int64_t>(n / chunk + (n % chunk != 0));
  const int workers = static_cast<int>(std::min<int64_t>(threads, n_chunks));
  const uint64_t buf_size = hi_common ? 0 : std::min(n, chunk);
  std::vector<uint8_t> bufs(2 * static_cast<size_t>(workers) * buf_size);
  std::vector<uint8_t> failed(n_chunks, 0);
#pragma omp parallel for num_threads(workers) schedule(static)
  for (int64_t k = 0; k < n_chunks; ++k) {
    const uint64_t first = k * chunk, m = std::min(n - first, chunk);
    uint16_t* out = symbols.data() + first;
    if (!hi_common) {
      uint8_t* lo_buf = bufs.data() + 2 * omp_get_thread_num() * buf_size;
      uint8_t* hi_buf = lo_buf + buf_size;
      if (!plane_bytes(lo, in, k, first, lo_buf, m) || !plane_bytes(hi, in, k, first, hi_buf, m)) {
        failed[k] = 1;
        continue;
      }
      for (uint64_t i = 0; i < m; ++i) out[i] = ans_unzigzag(static_cast<uint16_t>(hi_buf[i] << 8 | lo_buf[i]), center);
      continue;
    }
    if (lo.mode == kPlaneRans) {
      if (!decode_chunk(lo, sym16.data(), in, k, out, m)) {
        failed[k] = 1;
        continue;
      }
    } else {
      std::fill(out, out + m, ans_unzigzag(static_cast<uint16_t>(hi_bits | lo.value), center));
      if (lo.mode == kPlaneSparse) {
        const auto [b, e] = exceptions_in(lo, first, m);
        for (size_t x = b; x < e; ++x) out[lo.positions[x] - first] = ans_unzigzag(hi_bits | lo.bytes[x], center);
      }
    }
    if (hi.mode == kPlaneSparse) {
      const auto [b, e] = exceptions_in(hi, first, m);
      for (size_t x = b; x < e; ++x) {
        uint16_t& o = out[hi.positions[x] - first];
        const uint16_t low = ans_zigzag(o, center) & 0xFF;
        o = ans_unzigzag(static_cast<uint16_t>(hi.bytes[x] << 8 | low), center);
      }
    }
  }
  for (int64_t k = 0; k < n_chunks; ++k) {
    if (failed[k]) return corrupt_stream("ans: invalid payload in chunk " + std::to_string(k));
  }
  return Status::Ok();
}

}  // namespace factz::detail
