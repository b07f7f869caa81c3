// The context coder (context_coder.hpp; byte layout in docs/codec.md, "Context-coded blob").
#include "codec/context_coder.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include <omp.h>

#include "codec/range_coder.hpp"
#include "util/byte_io.hpp"

namespace factz::detail {
namespace {

constexpr int kProbBits = 12;    // a probability of the bit being 0, in 1/4096
constexpr int kAdapt = 5;        // each decision moves its probability 1/32 of the way
constexpr int kUnary = 16;       // residual magnitudes 1..16 in unary, then escapes
constexpr int kEscapeBits = 15;  // escape values below 2^15

using RangeEncoder = BinaryRangeEncoder<kProbBits, kAdapt>;
using RangeDecoder = BinaryRangeDecoder<kProbBits, kAdapt>;

// The adaptive probabilities of one chunk, all starting at one half.
struct Model {
  uint16_t zero[64];            // residual 0? by the classes of left, up, lower z
  uint16_t exact[4];            // stored exactly? by left / up stored exactly
  uint16_t sign[9];             // negative? by the signs of left and up
  uint16_t unary[kUnary][4];    // magnitude > i? by position and the largest neighbour class
  uint16_t escape[kEscapeBits]; // escape bit count, unary
  Model() {
    std::fill_n(&zero[0], sizeof(Model) / sizeof(uint16_t), RangeEncoder::kHalf);
  }
};
static_assert(sizeof(Model) % sizeof(uint16_t) == 0);

// What a coded vertex leaves for its neighbours' contexts: bits 0-1 its class (0: residual
// 0, 1: +-1, 2: +-2 or +-3, 3: larger or stored exactly), bits 2-3 its sign (0: none,
// 1: positive, 2: negative), bit 4 stored exactly. A missing vertex, or one outside the
// chunk, leaves 0.
uint8_t info_of(uint16_t s) {
  if (s == 0) return uint8_t(3 | (1 << 4));
  const int r = int(s) - int(kContextCenter);
  const int a = r < 0 ? -r : r;
  const uint8_t cls = a == 0 ? 0 : a == 1 ? 1 : a <= 3 ? 2 : 3;
  const uint8_t sign = r == 0 ? 0 : r > 0 ? 1 : 2;
  return uint8_t(cls | (sign << 2));
}

// One symbol through the coder: the encoder passes `s` and gets it back; the decoder passes
// 0 and gets the decoded symbol, or -1 for a residual the encoder cannot have written.
template <class Coder>
int code_symbol(Coder& rc, Model& m, uint8_t L, uint8_t U, uint8_t B, uint16_t s) {
  const int cl = L & 3, cu = U & 3, cb = B & 3;
  if (rc.bit(m.zero[cl * 16 + cu * 4 + cb], s == kContextCenter)) return kContextCenter;
  if (rc.bit(m.exact[((L >> 4) & 1) | (((U >> 4) & 1) << 1)], s == 0)) return 0;
  const int r_in = int(s) - int(kContextCenter);
  const int neg = rc.bit(m.sign[((L >> 2) & 3) * 3 + ((U >> 2) & 3)], r_in < 0);
  const int mag_in = (r_in < 0 ? -r_in : r_in) - 1;  // the encoder's; >= 0
  const int k = std::max({cl, cu, cb});
  int mag = 0;
  while (mag < kUnary && rc.bit(m.unary[mag][k], mag_in > mag)) ++mag;
  if (mag == kUnary) {  // escape: v = mag - kUnary + 1 >= 1 in Elias-gamma form
    const uint32_t v_in = uint32_t(mag_in - kUnary + 1);
    const int nb_in = std::bit_width(v_in) - 1;
    int nb = 0;
    while (rc.bit(m.escape[nb], nb < nb_in)) {
      if (++nb == kEscapeBits) return -1;
    }
    uint32_t v = 1;
    for (int j = nb - 1; j >= 0; --j) v = (v << 1) | uint32_t(rc.bypass(int((v_in >> j) & 1)));
    mag = kUnary + int(v) - 1;
  }
  if (mag > 32766) return -1;  // |residual| <= 32767: symbols 1 .. 65535
  return int(kContextCenter) + (neg ? -(mag + 1) : mag + 1);
}

struct Layout {
  int64_t rows = 0, rows_per_chunk = 1, chunks = 0;
};

Layout layout_of(const CodeGrid& g, int64_t rows_per_chunk) {
  Layout l;
  l.rows = g.ny * g.nz;
  l.rows_per_chunk = rows_per_chunk;
  l.chunks = (l.rows + rows_per_chunk - 1) / rows_per_chunk;
  return l;
}

// The valid vertices before each chunk (chunks + 1 entries).
std::vector<uint64_t> symbol_offsets(const CodeGrid& g, const Layout& l) {
  std::vector<uint64_t> at(size_t(l.chunks) + 1, 0);
  for (int64_t c = 0; c < l.chunks; ++c) {
    const int64_t v0 = c * l.rows_per_chunk * g.nx, v1 = std::min(l.rows, (c + 1) * l.rows_per_chunk) * g.nx;
    uint64_t valid = uint64_t(v1 - v0);
    if (!g.missing.empty())
      valid -= uint64_t(std::count_if(g.missing.begin() + v0, g.missing.begin() + v1, [](uint8_t b) { return b != 0; }));
    at[size_t(c) + 1] = at[size_t(c)] + valid;
  }
  return at;
}

// Codes chunk c's symbols: the encoder reads them from `in` (out null), the decoder writes
// them to `out` (in null); false when the decoder meets a residual out of range.
template <class Coder>
bool code_chunk(Coder& rc, const CodeGrid& g, const Layout& l, int64_t c, const uint16_t* in, uint16_t* out) {
  const int64_t r0 = c * l.rows_per_chunk, r1 = std::min(l.rows, r0 + l.rows_per_chunk);
  const int64_t nx = g.nx, plane = g.ny * nx;
  std::vector<uint8_t> info(size_t((r1 - r0) * nx), 0);
  Model m;
  size_t next = 0;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t y = r % g.ny, z = r / g.ny;
    const bool has_up = y > 0 && r - 1 >= r0, has_back = z > 0 && r - g.ny >= r0;
    uint8_t* row = info.data() + (r - r0) * nx;
    const uint8_t* miss = g.missing.empty() ? nullptr : g.missing.data() + r * nx;
    for (int64_t x = 0; x < nx; ++x) {
      if (miss && miss[x]) continue;
      const uint8_t L = x > 0 ? row[x - 1] : 0;
      const uint8_t U = has_up ? row[x - nx] : 0;
      const uint8_t B = has_back ? row[x - plane] : 0;
      const int s = code_symbol(rc, m, L, U, B, in ? in[next] : uint16_t(0));
      if (s < 0) return false;
      if (out) out[next] = uint16_t(s);
      ++next;
      row[x] = info_of(uint16_t(s));
    }
  }
  return true;
}

bool grid_ok(const CodeGrid& g) {
  return g.nx > 0 && g.ny > 0 && g.nz > 0 &&
         (g.missing.empty() || g.missing.size() == size_t(g.nx * g.ny * g.nz));
}

}  // namespace

Status context_encode(std::span<const uint16_t> symbols, const CodeGrid& g, std::vector<uint8_t>& out, int threads) {
  if (!grid_ok(g)) return invalid_argument("context coder: bad grid");
  const int64_t rows = g.ny * g.nz;
  const Layout l = layout_of(g, std::clamp<int64_t>(kContextChunkVertices / g.nx, 1, rows));
  const std::vector<uint64_t> at = symbol_offsets(g, l);
  if (at.back() != symbols.size())
    return invalid_argument("context coder: " + std::to_string(symbols.size()) + " symbols for " +
                            std::to_string(at.back()) + " valid vertices");
  std::vector<std::vector<uint8_t>> parts(size_t(l.chunks));
#pragma omp parallel for num_threads(std::max(1, std::min<int>(threads, int(l.chunks)))) schedule(dynamic, 1)
  for (int64_t c = 0; c < l.chunks; ++c) {
    RangeEncoder rc(parts[size_t(c)]);
    code_chunk(rc, g, l, c, symbols.data() + at[size_t(c)], nullptr);
    rc.finish();
  }
  ByteWriter w;
  w.u8(kContextCoderVersion);
  w.u8(0);
  w.u64(symbols.size());
  w.u32(uint32_t(l.rows_per_chunk));
  w.u32(uint32_t(l.chunks));
  for (const auto& part : parts) w.u32(uint32_t(part.size()));
  for (const auto& part : parts) w.append(part);
  out = std::move(w.bytes());
  return Status::Ok();
}

Status context_decode(std::span<const uint8_t> in, const CodeGrid& g, std::span<uint16_t> symbols, int threads) {
  if (!grid_ok(g)) return invalid_argument("context coder: bad grid");
  ByteReader r(in);
  uint8_t version = 0, reserved = 0;
  uint64_t count = 0;
  uint32_t per = 0, chunks = 0;
  if (!r.u8(version) || !r.u8(reserved) || !r.u64(count) || !r.u32(per) || !r.u32(chunks))
    return corrupt_stream("context-coded symbols: blob truncated");
  if (version != kContextCoderVersion)
    return Status(Code::unsupported_version, "context-coded symbols: blob version " + std::to_string(version));
  if (reserved != 0) return corrupt_stream("context-coded symbols: reserved byte is not zero");
  if (count != symbols.size())
    return corrupt_stream("context-coded symbols: the blob holds " + std::to_string(count) + " symbols, the grid " +
                          std::to_string(symbols.size()));
  const int64_t rows = g.ny * g.nz;
  if (per == 0 || per > uint64_t(rows)) return corrupt_stream("context-coded symbols: rows per chunk out of range");
  const Layout l = layout_of(g, int64_t(per));
  if (chunks != uint64_t(l.chunks)) return corrupt_stream("context-coded symbols: chunk count disagrees with the grid");
  if (r.remaining() < 4 * uint64_t(chunks)) return corrupt_stream("context-coded symbols: chunk table truncated");
  std::vector<uint64_t> begin(size_t(chunks) + 1, kContextHeadBytes + 4 * uint64_t(chunks));
  for (uint32_t c = 0; c < chunks; ++c) {
    uint32_t size = 0;
    (void)r.u32(size);  // inside the table, whose length was checked above
    begin[size_t(c) + 1] = begin[size_t(c)] + size;
    if (size < 5 || begin[size_t(c) + 1] > in.size()) return corrupt_stream("context-coded symbols: chunk sizes overrun the blob");
  }
  if (begin.back() != in.size()) return corrupt_stream("context-coded symbols: bytes after the last chunk");
  const std::vector<uint64_t> at = symbol_offsets(g, l);
  if (at.back() != symbols.size()) return corrupt_stream("context-coded symbols: count disagrees with the mask");
  int bad = 0;
#pragma omp parallel for num_threads(std::max(1, std::min<int>(threads, int(l.chunks)))) schedule(dynamic, 1) reduction(| : bad)
  for (int64_t c = 0; c < l.chunks; ++c) {
    RangeDecoder rc(in.subspan(begin[size_t(c)], begin[size_t(c) + 1] - begin[size_t(c)]));
    if (!code_chunk(rc, g, l, c, nullptr, symbols.data() + at[size_t(c)]) || !rc.clean()) bad |= 1;
  }
  if (bad) return corrupt_stream("context-coded symbols: a chunk does not decode");
  return Status::Ok();
}

}  // namespace factz::detail
