// Byte-plane interleaved rANS encoder with order-1 contexts: plans (context maps,
// normalized tables, sparse planes), chunk coding and blob assembly. The blob layout is
// specified in docs/codec.md, the per-lane coding steps live in src/kernels/rans.hpp and
// src/kernels/rans_encoder.hpp; the decoder is ans_decode.cpp.
#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <new>

#include "codec/ans.hpp"
#include "codec/ans_internal.hpp"
#include "kernels/rans.hpp"
#include "kernels/varint.hpp"
#include "util/byte_io.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {
namespace {

using namespace ans_format;

// Normalization compares count * (2 * freq + 1) in 64 bits: counts stay below 2^48.
constexpr uint64_t kMaxSymbols = uint64_t{1} << 48;
// Below this many symbols the histograms are counted by one thread, which flags the byte
// values present as it goes; larger inputs find them by scanning their pair counts.
constexpr uint64_t kParallelHistogramMin = uint64_t{1} << 20;
// The encoder keeps the lane states of a chunk below 1/16 of its estimated coded size.
constexpr uint64_t kStateShare = 128;
// ... but keeps at least kMinLanes lanes in chunks of kMinLanes * kMinLaneSymbols symbols.
// By default it writes at most kAnsEncoderMaxLanes = 8 (the format allows 32): on the CPU
// eight states fit the registers and keep the decoder's dependency chains busy, where 32
// spill to memory and run at half the speed; a GPU warp decodes four such chunks side by side.
constexpr uint32_t kMinLanes = 8;
constexpr uint64_t kMinLaneSymbols = 4096;

// First item of part `p` when n items are cut into `parts` near-equal contiguous parts.
uint64_t part_begin(uint64_t n, uint64_t parts, uint64_t p) {
  return (n / parts) * p + std::min(p, n % parts);
}

using Histogram = std::array<uint64_t, 256>;

// Calls f(v) for every byte value v of the set, in increasing order.
template <class F>
void for_each_byte(const AnsByteSet& set, F&& f) {
  for (int w = 0; w < 4; ++w) {
    for (uint64_t bits = set[w]; bits != 0; bits &= bits - 1) f(w * 64 + std::countr_zero(bits));
  }
}

void add_byte(AnsByteSet& set, uint8_t v) { set[v >> 6] |= uint64_t{1} << (v & 63); }

// The pair counts of a plane and the rows (previous bytes) that may hold nonzero counts: the
// byte values present and 0, the previous byte at chunk and lane starts. Every loop runs
// over these rows alone, and the per-thread histograms are cleared row by row: a small
// plane then costs what it holds, not 65536 counts (512 KiB) per pass. Rows are cleared
// lazily too: a row outside `valid` was never cleared (the storage starts uninitialized),
// so a first call touches the rows it uses, not 512 KiB of fresh pages per histogram (a
// millisecond on a virtual machine, where a small field's coding takes a few).
struct PairCounts {
  std::unique_ptr<uint64_t[]> counts;  // 256 * 256: the counts in `rows`, zero in valid rows outside it
  AnsByteSet rows{};
  AnsByteSet valid{};  // rows cleared at least once (every row in `rows` is)

  const uint64_t* row(int prev) const { return counts.get() + static_cast<size_t>(prev) * 256; }
  uint64_t* row(int prev) { return counts.get() + static_cast<size_t>(prev) * 256; }
  // Row `prev`, cleared first if it never was (writers call this before writing a row that
  // may be outside `rows`).
  uint64_t* clean_row(int prev) {
    if (!ans_byte_in(valid, uint8_t(prev))) {
      std::fill_n(row(prev), 256, 0);
      add_byte(valid, uint8_t(prev));
    }
    return row(prev);
  }
  // Every row cleared (before a pass that adds into all 65536 counts).
  void clean_all() {
    for (int prev = 0; prev < 256; ++prev) clean_row(prev);
  }
  // All counts zero and no rows, clearing only the rows written since the last reset.
  void reset() {
    if (!counts) {
      counts.reset(new uint64_t[256 * 256]);  // uninitialized: rows are cleared when first used
      valid = {};
    } else {
      for_each_byte(rows, [&](int prev) { std::fill_n(row(prev), 256, 0); });
    }
    rows = {};
  }
};

// Row 0 and the rows of 256 * 256 pair counts that hold a nonzero count.
AnsByteSet nonzero_rows(const uint64_t* counts) {
  AnsByteSet rows{};
  add_byte(rows, 0);
  for (int prev = 0; prev < 256; ++prev) {
    const uint64_t* row = counts + static_cast<size_t>(prev) * 256;
    if (std::any_of(row, row + 256, [](uint64_t c) { return c != 0; })) add_byte(rows, uint8_t(prev));
  }
  return rows;
}

// ---------------------------------------------------------------- context model

// 2^8 * log2(M / f) for f = 1 .. M (costs in 1/256 bit), rounded down, by integer
// arithmetic only: the encoder's choices must not depend on the platform's libm. With
// fewer than 2^48 symbols a plane's cost stays below 2^60.
const std::array<uint32_t, kScale + 1>& cost_table() {
  static const std::array<uint32_t, kScale + 1> table = [] {
    std::array<uint32_t, kScale + 1> t{};
    for (uint32_t f = 1; f <= kScale; ++f) {
      int msb = 31;
      while (!(f >> msb)) --msb;
      uint64_t m = uint64_t{f} << (31 - msb);  // f / 2^msb in [1, 2) as Q31
      uint32_t frac = 0;
      for (int i = 0; i < 16; ++i) {  // one bit of the fraction per squaring
        m = (m * m) >> 31;
        frac <<= 1;
        if (m >= (uint64_t{1} << 32)) {
          m >>= 1;
          frac |= 1;
        }
      }
      const uint32_t log2_f = (static_cast<uint32_t>(msb) << 16) | frac;
      t[f] = ((static_cast<uint32_t>(kRansScaleBits) << 16) - log2_f) >> 8;
    }
    return t;
  }();
  return table;
}

// Frequency table as runs of present values: varint run count, then per run varint skip
// (absent values since the previous run; >= 1 except before the first run), varint run
// length (>= 1) and one varint frequency per value. `put` receives each varint in order:
// the writer appends them, the planner only counts their bytes.
template <typename Put>
void frequency_varints(const std::array<uint32_t, 256>& freqs, Put&& put) {
  std::array<std::array<int, 2>, 128> runs;  // [start, end): runs are separated by a gap
  int count = 0;
  for (int v = 0; v < 256;) {
    if (freqs[v] == 0) {
      ++v;
      continue;
    }
    int e = v;
    while (e < 256 && freqs[e] != 0) ++e;
    runs[count++] = {v, e};
    v = e;
  }
  put(static_cast<uint64_t>(count));
  int next = 0;
  for (int r = 0; r < count; ++r) {
    const auto [start, end] = runs[r];
    put(static_cast<uint64_t>(start - next));
    put(static_cast<uint64_t>(end - start));
    for (int v = start; v < end; ++v) put(uint64_t{freqs[v]});
    next = end;
  }
}

void write_frequencies(const std::array<uint32_t, 256>& freqs, std::vector<uint8_t>& out) {
  frequency_varints(freqs, [&](uint64_t x) { put_varint(out, x); });
}

using ContextTable = AnsContextTable;

// A context's frequencies (single: at most one value present), without the encoder's
// symbols: what the planner's costs need (add_symbols completes a chosen table).
ContextTable table_frequencies(const Histogram& hist) {
  ContextTable t;
  int present = 0;
  for (int v = 0; v < 256; ++v) {
    if (hist[v] == 0) continue;
    if (present++ == 0) t.value = static_cast<uint8_t>(v);
  }
  t.single = present <= 1;
  if (!t.single) ans_normalize_frequencies(hist, t.freqs);
  return t;
}

void add_symbols(ContextTable& t) {
  if (t.single) return;
  uint32_t cum = 0;
  for (int v = 0; v < 256; ++v) {
    if (t.freqs[v] != 0) t.symbols[v] = rans_encode_symbol(cum, t.freqs[v]);
    cum += t.freqs[v];
  }
}

// Bytes of a table in the blob.
void write_table(const ContextTable& t, std::vector<uint8_t>& out) {
  if (t.single) {
    out.push_back(kTableSingle);
    out.push_back(t.value);
  } else {
    out.push_back(kTableFrequencies);
    write_frequencies(t.freqs, out);
  }
}

// Estimated cost of coding `hist` with table `t`, in 1/256 bit, table bytes included.
uint64_t table_cost(const Histogram& hist, const ContextTable& t) {
  uint64_t bytes = t.single ? 2 : 1;  // write_table's bytes, counted
  if (!t.single) frequency_varints(t.freqs, [&](uint64_t x) { bytes += uint64_t(varint_length(x)); });
  uint64_t cost = bytes * (8u << 8);
  if (t.single) return cost;
  const auto& c = cost_table();
  for (int v = 0; v < 256; ++v) cost += static_cast<uint64_t>(hist[v]) * c[t.freqs[v]];
  return cost;
}

// ---------------------------------------------------------------- plane plans

using PlanePlan = AnsPlanePlan;

// Lanes for a plane whose chunks hold `chunk_symbols` symbols (the first chunk's count) and
// code to about `chunk_bytes` bytes: the most (a power of two up to 8) whose states stay
// within 1/kStateShare of that, but at least kMinLanes when every lane gets kMinLaneSymbols
// or more: a nearly constant plane costs few bytes yet as many decoding steps as any
// other, and one lane would make them one long dependency chain.
uint32_t choose_lanes(uint64_t chunk_bytes, uint64_t chunk_symbols, uint32_t max_lanes) {
  uint32_t lanes = max_lanes;
  while (lanes > 1 && 4 * uint64_t{lanes} * kStateShare > chunk_bytes) lanes /= 2;
  uint32_t floor_lanes = kMinLanes;
  while (floor_lanes > 1 && uint64_t{floor_lanes} * kMinLaneSymbols > chunk_symbols) floor_lanes /= 2;
  return std::min(std::max(lanes, floor_lanes), max_lanes);
}

// Histograms of the contexts of a map, from the pair counts.
std::vector<Histogram> context_histograms(const PairCounts& pairs, const ContextMap& cm) {
  std::vector<Histogram> h(static_cast<size_t>(cm.count), Histogram{});
  for_each_byte(pairs.rows, [&](int prev) {
    Histogram& dst = h[cm.context_of[prev]];
    const uint64_t* row = pairs.row(prev);
    for (int v = 0; v < 256; ++v) dst[v] += row[v];
  });
  return h;
}

// The order-0 table of a plane and its cost: the same for the lanes-only plan and the full
// plan after the lane start corrections (they move counts between rows, not values), so
// plan_plane_counts plans it once.
struct Order0Table {
  bool known = false;
  ContextTable table;
  uint64_t cost = 0;
};

// Chooses the lanes, the context map and the tables of a non-constant plane from its pair
// counts (lane starts counted with previous byte 0). Deterministic: integer costs, ties to
// fewer contexts and smaller byte values. lanes: the lanes to use (0: chosen here).
// lanes_only: return once the mode, the value and the lanes are known (no context search).
// order0_table: the plane's order-0 table, planned here when not known yet.
PlanePlan plan_plane(const PairCounts& pairs, uint64_t n, uint64_t chunk, uint32_t max_lanes, uint32_t lanes = 0,
                     bool lanes_only = false, Order0Table* order0_table = nullptr) {
  PlanePlan plan;
  Histogram order0{}, as_prev{};
  for_each_byte(pairs.rows, [&](int prev) {
    const uint64_t* row = pairs.row(prev);
    for (int v = 0; v < 256; ++v) {
      order0[v] += row[v];
      as_prev[prev] += row[v];
    }
  });
  int present = 0;
  for (int v = 0; v < 256; ++v) {
    if (order0[v] == 0) continue;
    if (present++ == 0) plan.value = static_cast<uint8_t>(v);
  }
  if (present <= 1) return plan;
  plan.mode = kPlaneRans;

  // Lanes from the order-0 estimate of a full chunk's size.
  Order0Table local;
  Order0Table& o0 = order0_table != nullptr ? *order0_table : local;
  if (!o0.known) {
    o0.table = table_frequencies(order0);
    o0.cost = table_cost(order0, o0.table);
    o0.known = true;
  }
  const uint64_t n_chunks = n / chunk + (n % chunk != 0);
  plan.lanes = lanes != 0 ? lanes : choose_lanes(o0.cost / ((8u << 8) * n_chunks), std::min(n, chunk), max_lanes);
  if (lanes_only) return plan;

  // Candidate maps: the most frequent previous bytes first (ties to smaller values). Only
  // those that occur are sorted: the absent ones would all follow them.
  std::array<int, 256> order{};
  int usable = 0;
  for_each_byte(pairs.rows, [&](int prev) {
    if (as_prev[prev] > 0) order[usable++] = prev;
  });
  std::stable_sort(order.begin(), order.begin() + usable, [&](int a, int b) { return as_prev[a] > as_prev[b]; });

  // K contexts: the rows of the K - 1 most frequent previous bytes, then the rest pooled.
  // A row's table is the same for every K that maps it, so it is planned once; the pooled
  // context of K = 1 is the order-0 table. Tables are planned without their encoder symbols;
  // the chosen ones get them at the end.
  // A decoder builds M table entries per context: at most 16 per symbol.
  const int max_contexts = static_cast<int>(
      std::min<uint64_t>({n / 256 + 1, static_cast<uint64_t>(usable) + 1, kAnsMaxContexts}));
  std::vector<ContextTable> rows;
  std::vector<uint64_t> row_costs;
  std::vector<ContextTable> rest_tables;  // rest_tables[k - 1]: the pooled context of K = k
  std::vector<uint64_t> costs;            // costs[k - 1]
  Histogram rest = order0;                // pooled counts of the previous bytes not mapped yet
  for (int k = 1; k <= max_contexts; ++k) {
    uint64_t rest_cost = o0.cost;
    if (k > 1) {
      const uint64_t* row = pairs.row(order[k - 2]);
      Histogram h{};
      for (int v = 0; v < 256; ++v) {
        h[v] = row[v];
        rest[v] -= h[v];
      }
      rows.push_back(table_frequencies(h));
      row_costs.push_back(table_cost(h, rows.back()));
      rest_tables.push_back(table_frequencies(rest));
      rest_cost = table_cost(rest, rest_tables.back());
    } else {
      rest_tables.push_back(o0.table);
    }
    uint64_t cost = static_cast<uint64_t>(1 + k) * (8u << 8) + rest_cost;  // K and the map
    for (const uint64_t c : row_costs) cost += c;
    costs.push_back(cost);
  }
  // The fewest contexts within 1/256 of the least cost: on data without order-1 structure
  // more tables would win a few bytes from sampling noise and cost decoding speed (their
  // tables leave the first-level cache).
  const uint64_t least = *std::min_element(costs.begin(), costs.end());
  int k = 1;
  while (costs[k - 1] > least + least / 256) ++k;
  plan.contexts.count = k;
  for (int c = 0; c + 1 < k; ++c) plan.contexts.map[c] = static_cast<uint8_t>(order[c]);
  plan.contexts.finish();
  plan.tables.assign(rows.begin(), rows.begin() + (k - 1));
  plan.tables.push_back(rest_tables[k - 1]);
  for (auto& t : plan.tables) add_symbols(t);
  return plan;
}

// ---------------------------------------------------------------- histograms

// Adds the pair counts of the chunk's plane bytes b[0..m), with the previous byte taken as
// 0 at the chunk's start (lane starts are corrected once the lanes are known). The rows it
// adds to must be clean (PairCounts::clean_row).
void count_pairs(const uint8_t* b, uint64_t m, uint64_t* counts) {
  constexpr uint64_t kEveryByte = 0x0101010101010101ull;
  uint32_t prev = 0;
  uint64_t i = 0;
  // Eight bytes at a time: eight bytes equal to the previous one are eight (prev, prev) pairs
  // counted at once. A plane of mostly one value (the high bytes of small codes) is then
  // not one long chain of increments of the same counter, each waiting for the last.
  for (; i + 8 <= m; i += 8) {
    uint64_t word;
    std::memcpy(&word, b + i, 8);
    if (word == kEveryByte * prev) {
      counts[prev * 257] += 8;
      continue;
    }
    for (uint64_t k = i; k < i + 8; ++k) {
      ++counts[prev * 256 + b[k]];
      prev = b[k];
    }
  }
  for (; i < m; ++i) {
    ++counts[prev * 256 + b[i]];
    prev = b[i];
  }
}

// Splits the zig-zag codes of s[0..m) into the low and the high plane bytes.
void split_planes(const uint16_t* s, uint64_t m, uint16_t center, uint8_t* lo, uint8_t* hi) {
  for (uint64_t i = 0; i < m; ++i) {
    const uint16_t z = ans_zigzag(s[i], center);
    lo[i] = static_cast<uint8_t>(z);
    hi[i] = static_cast<uint8_t>(z >> 8);
  }
}

// Byte i of plane p (0 low, 1 high) of the zig-zag codes of s: split_planes's, one at a time.
uint8_t plane_byte(const uint16_t* s, uint64_t i, uint16_t center, int p) {
  return static_cast<uint8_t>(ans_zigzag(s[i], center) >> (8 * p));
}

// fn(bytes, first, m) for the plane p bytes of s[0..n) a chunk of at most 64 K at a time
// (split_planes's bytes, in a buffer of the caller): the scans over a whole plane read
// bytes as they did when the planes were stored.
template <class Fn>
void for_each_plane_chunk(const uint16_t* s, uint64_t n, uint16_t center, int p, Fn&& fn) {
  const uint64_t chunk = uint64_t{1} << kAnsChunkLog2;
  std::vector<uint8_t> buf(static_cast<size_t>(std::min(n, chunk)));
  for (uint64_t first = 0; first < n; first += chunk) {
    const uint64_t m = std::min(n - first, chunk);
    uint8_t* const b = buf.data();
    for (uint64_t i = 0; i < m; ++i) b[i] = plane_byte(s, first + i, center, p);
    fn(static_cast<const uint8_t*>(b), first, m);
  }
}

// ---------------------------------------------------------------- encoding

uint64_t rans_plane_bytes(const PlanePlan& plan, const PairCounts& pairs, uint64_t n, uint64_t chunk);

// Appends one plane: its head, then (rANS) the chunk table and the chunks, then its tail.
void append_plane(const PlanePlan& p, const std::vector<std::vector<uint8_t>>& chunks, std::vector<uint8_t>& out) {
  ans_append_plane_head(p, out);
  if (!ans_plane_is_rans(p.mode)) return;
  uint64_t total = 0;
  for (const auto& c : chunks) {
    put_le(out, c.size(), 4);
    total += c.size();
  }
  out.reserve(out.size() + total + p.escaped.size() + 10);
  for (const auto& c : chunks) out.insert(out.end(), c.begin(), c.end());
  ans_append_plane_tail(p, out);
}

// The escape plan of a plane (docs/codec.md, "Escapes"), from its pair counts (lane starts
// corrected) and order-0 counts, with the lanes of its rANS plan: the rare values R (count
// * M < n: ideal frequency below one slot) all coded as e = min R, the tables planned on
// the remapped counts (rows and columns of R merged into e's). Its estimated size goes to
// `bytes`; an empty plan (mode constant) when R has fewer than two values.
PlanePlan escape_plan(const PairCounts& pairs, const Histogram& order0, uint64_t n, uint64_t chunk,
                      uint32_t max_lanes, uint32_t lanes, uint64_t& bytes) {
  AnsByteSet rare{};
  int count = 0, e = -1;
  uint64_t escaped = 0;
  for (int v = 0; v < 256; ++v) {
    if (order0[v] == 0 || order0[v] * kScale >= n) continue;
    add_byte(rare, uint8_t(v));
    if (e < 0) e = v;
    ++count;
    escaped += order0[v];
  }
  if (count < 2) return PlanePlan{};
  std::array<uint8_t, 256> to{};
  for (int v = 0; v < 256; ++v) to[v] = ans_byte_in(rare, uint8_t(v)) ? uint8_t(e) : uint8_t(v);
  thread_local PairCounts remapped;
  remapped.reset();
  for_each_byte(pairs.rows, [&](int prev) {
    add_byte(remapped.rows, to[prev]);
    const uint64_t* src = pairs.row(prev);
    uint64_t* dst = remapped.clean_row(to[prev]);
    for (int v = 0; v < 256; ++v) dst[to[v]] += src[v];
  });
  PlanePlan plan = plan_plane(remapped, n, chunk, max_lanes, lanes);
  plan.mode = kPlaneEscapes;
  plan.value = uint8_t(e);
  plan.rare = rare;
  bytes = rans_plane_bytes(plan, remapped, n, chunk) + 1 + uint64_t(varint_length(escaped)) + escaped;
  return plan;
}

// The sparse form of a plane (docs/codec.md): its most frequent byte (ties to the smaller
// value), then the positions and bytes of the other symbols. Empty when it would take more
// than `limit` bytes; the exceptions are listed only when they may fit.
Status sparse_plane(uint64_t n, const Histogram& order0, uint64_t limit, const AnsPlaneExceptions& list,
                    std::vector<uint8_t>& out) {
  out.clear();
  int dominant = 0;
  for (int v = 1; v < 256; ++v) {
    if (order0[v] > order0[dominant]) dominant = v;
  }
  const uint64_t exceptions = n - order0[dominant];
  if (2 * exceptions + 2 > limit) return Status::Ok();  // at least two bytes per exception
  std::vector<uint64_t> positions;
  std::vector<uint8_t> bytes;
  FACTZ_RETURN_IF_ERROR(list(static_cast<uint8_t>(dominant), positions, bytes));
  if (positions.size() != exceptions || bytes.size() != exceptions)
    return Status(Code::internal, "ans: exception list does not match the counts");
  out.push_back(static_cast<uint8_t>(dominant));
  put_varint(out, exceptions);
  uint64_t next = 0;
  for (uint64_t e = 0; e < exceptions; ++e) {
    put_varint(out, positions[e] - next);
    out.push_back(bytes[e]);
    next = positions[e] + 1;
    if (out.size() > limit) {  // sizes only grow: the same as checking the whole list
      out.clear();
      return Status::Ok();
    }
  }
  return Status::Ok();
}

// Bytes a rANS plane will take, estimated from its plan (exact but for the words).
uint64_t rans_plane_bytes(const PlanePlan& plan, const PairCounts& pairs, uint64_t n, uint64_t chunk) {
  uint64_t cost = static_cast<uint64_t>(1 + plan.contexts.count) * (8u << 8);
  const auto hists = context_histograms(pairs, plan.contexts);
  for (size_t c = 0; c < hists.size(); ++c) cost += table_cost(hists[c], plan.tables[c]);
  uint64_t bytes = 2 + cost / (8u << 8);
  for (uint64_t first = 0; first < n; first += chunk) bytes += 4 + 4 * uint64_t{chunk_lanes(std::min(chunk, n - first), plan.lanes)};
  return bytes;
}

// ans_plan_plane on pair counts it may change (the lane start corrections).
Status plan_plane_counts(PairCounts& pairs, uint64_t n, uint32_t max_lanes, const AnsPlaneGather& gather,
                         const AnsPlaneExceptions& exceptions, AnsPlanePlan& plan, const AnsPlaneEscapes* escapes) {
  const uint64_t chunk = uint64_t{1} << kAnsChunkLog2;
  // Lane starts: the lanes follow from the order-0 estimate, which lane starts do not
  // change; then their previous byte becomes 0 in the pair counts.
  Order0Table order0_table;
  plan = plan_plane(pairs, n, chunk, max_lanes, 0, /*lanes_only=*/true, &order0_table);
  if (plan.mode == kPlaneConstant) return Status::Ok();
  std::vector<uint64_t> around;  // (i - 1, i) for every lane start i but the chunks' first
  for (uint64_t base = 0; base < n; base += chunk) {
    const uint64_t m = std::min(n - base, chunk);
    const uint32_t lanes = chunk_lanes(m, plan.lanes);
    for (uint32_t l = 1; l < lanes; ++l) {
      const uint64_t i = base + rans_lane_begin(m, lanes, l);
      around.push_back(i - 1);
      around.push_back(i);
    }
  }
  std::vector<uint8_t> bytes;
  FACTZ_RETURN_IF_ERROR(gather(around, bytes));
  if (bytes.size() != around.size()) return Status(Code::internal, "ans: gather returned the wrong count");
  for (size_t e = 0; e < bytes.size(); e += 2) {
    add_byte(pairs.rows, bytes[e]);  // present already, unless `gather` is wrong: keep it cleared
    --pairs.clean_row(bytes[e])[bytes[e + 1]];
    ++pairs.clean_row(0)[bytes[e + 1]];
  }
  // Same lanes and order-0 table: the order-0 counts are unchanged.
  plan = plan_plane(pairs, n, chunk, max_lanes, 0, false, &order0_table);
  Histogram order0{};
  for_each_byte(pairs.rows, [&](int prev) {
    const uint64_t* row = pairs.row(prev);
    for (int v = 0; v < 256; ++v) order0[v] += row[v];
  });
  uint64_t plane_bytes = rans_plane_bytes(plan, pairs, n, chunk);
  // Rare values escaped, when that is strictly smaller. The lanes stay those of the plan
  // above: the lane start corrections of the pair counts were made for them.
  if (escapes != nullptr) {
    uint64_t escape_bytes = 0;
    PlanePlan alt = escape_plan(pairs, order0, n, chunk, max_lanes, plan.lanes, escape_bytes);
    if (alt.mode == kPlaneEscapes && escape_bytes < plane_bytes) {
      FACTZ_RETURN_IF_ERROR((*escapes)(alt.rare, alt.escaped));
      uint64_t expected = 0;
      for (int v = 0; v < 256; ++v) expected += ans_byte_in(alt.rare, uint8_t(v)) ? order0[v] : 0;
      if (alt.escaped.size() != expected) return Status(Code::internal, "ans: escape list does not match the counts");
      plan = std::move(alt);
      plane_bytes = escape_bytes;
    }
  }
  // A plane of rare exceptions to one byte is cheaper, and far faster to decode, as a list.
  FACTZ_RETURN_IF_ERROR(sparse_plane(n, order0, plane_bytes, exceptions, plan.sparse));
  if (!plan.sparse.empty()) {
    plan.mode = kPlaneSparse;
    plan.escaped.clear();
    return Status::Ok();
  }
  plan.single.resize(plan.tables.size());
  plan.symbols.resize(plan.tables.size() * 256);
  for (size_t c = 0; c < plan.tables.size(); ++c) {
    plan.single[c] = plan.tables[c].single;
    std::copy(plan.tables[c].symbols.begin(), plan.tables[c].symbols.end(), plan.symbols.begin() + c * 256);
  }
  if (plan.mode == kPlaneEscapes) {  // every rare value coded as e, in e's context
    const uint8_t e = plan.value;
    for (int r = 0; r < 256; ++r) {
      if (r == e || !ans_byte_in(plan.rare, uint8_t(r))) continue;
      plan.contexts.context_of[r] = plan.contexts.context_of[e];
      for (size_t c = 0; c < plan.tables.size(); ++c) plan.symbols[c * 256 + r] = plan.symbols[c * 256 + e];
    }
  }
  return Status::Ok();
}

}  // namespace

// ---------------------------------------------------------------- encoder stages

Status ans_plan_plane(std::span<const uint64_t> pairs_in, uint64_t n, uint32_t max_lanes, const AnsPlaneGather& gather,
                      const AnsPlaneExceptions& exceptions, AnsPlanePlan& plan, const AnsPlaneEscapes* escapes) {
  // A per-thread copy of the rows that hold counts, reused: on small inputs, fresh pages for
  // 512 KiB of counts cost far more than the planning itself (page faults are slow on
  // virtual machines), and so does copying or clearing all of them.
  thread_local PairCounts pairs;
  pairs.reset();
  pairs.rows = nonzero_rows(pairs_in.data());  // with 0: lane starts
  for_each_byte(pairs.rows, [&](int prev) {
    std::copy_n(pairs_in.data() + static_cast<size_t>(prev) * 256, 256, pairs.row(prev));
    add_byte(pairs.valid, uint8_t(prev));  // written whole
  });
  return plan_plane_counts(pairs, n, max_lanes, gather, exceptions, plan, escapes);
}

uint8_t ans_blob_version(const AnsPlanePlan& lo, const AnsPlanePlan& hi) {
  return lo.mode == kPlaneEscapes || hi.mode == kPlaneEscapes ? kAnsVersionEscapes : kAnsVersion;
}

RansEncodeTables ans_encode_tables(const AnsPlanePlan& plan) {
  return RansEncodeTables{plan.contexts.context_of.data(), plan.single.data(), plan.symbols.data()};
}

uint32_t ans_chunk_lanes(uint64_t m, uint32_t lanes) { return chunk_lanes(m, lanes); }

uint8_t* ans_encode_chunk(const uint8_t* b, uint64_t m, const AnsPlanePlan& plan, uint8_t* end) {
  const RansEncodeTables tables = ans_encode_tables(plan);
  const uint32_t lanes = chunk_lanes(m, plan.lanes);
  const uint64_t q = m / lanes, r = m % lanes;
  uint32_t x[kMaxLanes];
  uint64_t begin[kMaxLanes];
  for (uint32_t l = 0; l < lanes; ++l) {
    x[l] = kRansLow;
    begin[l] = rans_lane_begin(m, lanes, l);
  }
  // The decoder's schedule backwards: steps from the last, lanes from the last.
  uint64_t words = 0;
  for (uint64_t t = q + (r != 0); t-- > 0;) {
    for (uint32_t l = t < q ? lanes : static_cast<uint32_t>(r); l-- > 0;) {
      uint16_t word = 0;
      const bool emitted = rans_encode_lane_step(tables, b, begin[l], t, x[l], word);
      // Stored whether or not it is emitted (branch-free); an unemitted word lies where
      // the next word or the states go. At most m words: the room before `end` suffices.
      rans_store_word(end, words, word);
      words += emitted ? 1 : 0;
    }
  }
  for (uint32_t l = 0; l < lanes; ++l) rans_store_state(end, lanes, words, l, x[l]);
  return end - rans_chunk_bytes(lanes, words);
}

void ans_append_header(uint16_t center, uint64_t n, std::vector<uint8_t>& out, uint8_t version) {
  out.push_back(version);
  out.push_back(static_cast<uint8_t>(kAnsChunkLog2));
  put_le(out, center, 2);
  put_le(out, n, 8);
}

void ans_append_plane_head(const AnsPlanePlan& p, std::vector<uint8_t>& out) {
  if (p.mode == kPlaneConstant) {
    out.push_back(kPlaneConstant);
    out.push_back(p.value);
    return;
  }
  if (p.mode == kPlaneSparse) {
    out.push_back(kPlaneSparse);
    out.insert(out.end(), p.sparse.begin(), p.sparse.end());
    return;
  }
  out.push_back(p.mode);
  if (p.mode == kPlaneEscapes) out.push_back(p.value);
  out.push_back(static_cast<uint8_t>(p.lanes));
  out.push_back(static_cast<uint8_t>(p.contexts.count));
  for (int c = 0; c + 1 < p.contexts.count; ++c) out.push_back(p.contexts.map[c]);
  for (const auto& t : p.tables) write_table(t, out);
}

void ans_append_plane_tail(const AnsPlanePlan& p, std::vector<uint8_t>& out) {
  if (p.mode != kPlaneEscapes) return;
  put_varint(out, p.escaped.size());
  out.insert(out.end(), p.escaped.begin(), p.escaped.end());
}

// ---------------------------------------------------------------- normalization

void ans_normalize_frequencies(std::span<const uint64_t, 256> histogram, std::span<uint32_t, 256> freqs) {
  // The present values in increasing order: the steps below visit these alone (the others
  // keep frequency 0), as a context of a small plane often holds few of the 256.
  std::array<uint8_t, 256> present;
  int count = 0;
  uint64_t total = 0;
  for (int v = 0; v < 256; ++v) {
    total += histogram[v];
    if (histogram[v] != 0) present[count++] = static_cast<uint8_t>(v);
  }
  // Proportional share, rounded down, at least 1 for every present value.
  std::fill(freqs.begin(), freqs.end(), 0u);
  int64_t sum = 0;
  for (int i = 0; i < count; ++i) {
    const uint64_t c = histogram[present[i]];
    freqs[present[i]] = static_cast<uint32_t>(std::max<uint64_t>(1, c * kScale / total));
    sum += freqs[present[i]];
  }
  // Greedy repair to the exact sum. The cost of a value in bits is c * log2(M / f); one
  // more slot saves about c / (f + 1/2) units and one fewer costs about c / (f - 1/2).
  // Both are compared as exact integer cross products, so the choice is platform-free;
  // ties go to the smaller byte value. Each step takes the best value and changes only
  // its own key, for the worse, so the values sit in a binary heap ordered by that rule:
  // the same choices as scanning every value per step, in log time per step. A heap entry
  // carries its count and 2f +- 1 beside the value, so that a comparison reads one place.
  if (sum == kScale) return;
  const bool grow = sum < kScale;
  struct Entry {
    uint64_t count;  // the value's count
    uint64_t odd;    // 2f + 1 (grow) or 2f - 1 (shrink), f its frequency now
    int value;
  };
  // a before b: a's slot gained (grow) or lost (shrink) is worth more (less), or a tie and
  // a is the smaller value.
  const auto before = [grow](const Entry& a, const Entry& b) {
    const uint64_t lhs = a.count * b.odd, rhs = b.count * a.odd;
    if (lhs != rhs) return grow ? lhs > rhs : lhs < rhs;
    return a.value < b.value;
  };
  std::array<Entry, 256> heap;
  int size = 0;
  for (int i = 0; i < count; ++i) {
    const int v = present[i];
    if (grow) heap[size++] = {histogram[v], 2 * uint64_t{freqs[v]} + 1, v};
    else if (freqs[v] > 1) heap[size++] = {histogram[v], 2 * uint64_t{freqs[v]} - 1, v};
  }
  const auto sift_down = [&](int i) {
    const Entry e = heap[i];
    for (;;) {
      const int l = 2 * i + 1, r = l + 1;
      if (l >= size) break;
      const int child = (r < size && before(heap[r], heap[l])) ? r : l;
      if (!before(heap[child], e)) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = e;
  };
  for (int i = size / 2 - 1; i >= 0; --i) sift_down(i);
  for (; sum < kScale; ++sum) {
    ++freqs[heap[0].value];
    heap[0].odd += 2;
    sift_down(0);
  }
  for (; sum > kScale; --sum) {  // size > 0: at most 256 values keep one slot each
    if (--freqs[heap[0].value] == 1) heap[0] = heap[--size];
    else heap[0].odd -= 2;
    sift_down(0);
  }
}

Status ans_encode(std::span<const uint16_t> symbols, uint16_t center, std::vector<uint8_t>& out, int threads,
                  uint32_t max_lanes, bool allow_escapes) {
  threads = std::max(threads, 1);
  if (max_lanes < 1 || max_lanes > kMaxLanes) return invalid_argument("ans: max_lanes must be in [1, 32]");
  const uint64_t n = symbols.size();
  if (n >= kMaxSymbols) return invalid_argument("ans: too many symbols");
  const uint64_t chunk = uint64_t{1} << kAnsChunkLog2;
  const int64_t n_chunks = static_cast<int64_t>((n + chunk - 1) / chunk);

  // The pair counts of the two planes (summed over parts: exact for any schedule). The
  // planes are never stored whole: each pass splits a chunk at a time into a buffer of its
  // thread (split_planes), which saves two bytes per symbol of fresh memory; the planner's
  // scans take a plane a chunk at a time (for_each_plane_chunk), its gather single bytes
  // (plane_byte).
  // Per-thread pair counts, reused across calls (see ans_plan_plane); planning changes them
  // in place (lane starts), so they are cleared on the next call.
  thread_local PairCounts pairs[2];
  for (auto& h : pairs) h.reset();
  const uint16_t* const sym = symbols.data();
  {
    // With one part the counts go straight into the plane histograms: on small inputs
    // fresh pages for partial copies cost more than the counting itself.
    const bool small = n < kParallelHistogramMin;
    const int parts = small ? 1 : static_cast<int>(std::min<int64_t>(threads, n_chunks));
    std::vector<uint64_t> partial(parts > 1 ? static_cast<size_t>(parts) * 2 * 65536 : 0, 0);
    std::array<uint8_t, 256> seen[2] = {};  // small inputs: the byte values of each plane
    if (small) {
      // The planes' byte values first, so that only the rows the counts use are cleared
      // (PairCounts::clean_row).
      for (uint64_t i = 0; i < n; ++i) {
        const uint16_t z = ans_zigzag(sym[i], center);
        seen[0][z & 0xff] = 1;
        seen[1][z >> 8] = 1;
      }
      for (int q = 0; q < 2; ++q) {
        pairs[q].clean_row(0);
        for (int v = 0; v < 256; ++v)
          if (seen[q][v]) pairs[q].clean_row(v);
      }
    } else {
      for (auto& h : pairs) h.clean_all();
    }
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int p = 0; p < parts; ++p) {
      uint64_t* counts_lo = parts > 1 ? partial.data() + static_cast<size_t>(p) * 2 * 65536 : pairs[0].counts.get();
      uint64_t* counts_hi = parts > 1 ? counts_lo + 65536 : pairs[1].counts.get();
      const int64_t k0 = static_cast<int64_t>(part_begin(n_chunks, parts, p));
      const int64_t k1 = static_cast<int64_t>(part_begin(n_chunks, parts, p + 1));
      std::vector<uint8_t> split(2 * static_cast<size_t>(std::min(n, chunk)));
      for (int64_t k = k0; k < k1; ++k) {
        const uint64_t first = k * chunk, m = std::min(n - first, chunk);
        split_planes(sym + first, m, center, split.data(), split.data() + m);
        count_pairs(split.data(), m, counts_lo);
        count_pairs(split.data() + m, m, counts_hi);
      }
    }
    for (int p = 0; p < (parts > 1 ? parts : 0); ++p) {
      const uint64_t* counts = partial.data() + static_cast<size_t>(p) * 2 * 65536;
      for (int q = 0; q < 2; ++q) {
        for (size_t i = 0; i < 65536; ++i) pairs[q].counts[i] += counts[static_cast<size_t>(q) * 65536 + i];
      }
    }
    // The rows that hold counts: 0 (chunk starts) and the byte values present.
    for (int q = 0; q < 2; ++q) {
      if (small) {
        add_byte(pairs[q].rows, 0);
        for (int v = 0; v < 256; ++v) {
          if (seen[q][v]) add_byte(pairs[q].rows, uint8_t(v));
        }
      } else {
        pairs[q].rows = nonzero_rows(pairs[q].counts.get());
      }
    }
  }

  PlanePlan plans[2];
  for (int p = 0; p < 2; ++p) {
    const AnsPlaneGather gather = [&](std::span<const uint64_t> positions, std::vector<uint8_t>& out) {
      out.resize(positions.size());
      for (size_t e = 0; e < positions.size(); ++e) out[e] = plane_byte(sym, positions[e], center, p);
      return Status::Ok();
    };
    const AnsPlaneExceptions exceptions = [&](uint8_t dominant, std::vector<uint64_t>& positions,
                                              std::vector<uint8_t>& values) {
      for_each_plane_chunk(sym, n, center, p, [&](const uint8_t* bytes, uint64_t first, uint64_t m) {
        for (uint64_t i = 0; i < m; ++i) {
          if (bytes[i] == dominant) continue;
          positions.push_back(first + i);
          values.push_back(bytes[i]);
        }
      });
      return Status::Ok();
    };
    const AnsPlaneEscapes escapes = [&](const AnsByteSet& flagged, std::vector<uint8_t>& values) {
      const AnsByteSet rare = flagged;  // a copy: `values` may not alias it
      for_each_plane_chunk(sym, n, center, p, [&](const uint8_t* bytes, uint64_t, uint64_t m) {
        for (uint64_t i = 0; i < m; ++i)
          if (ans_byte_in(rare, bytes[i])) values.push_back(bytes[i]);
      });
      return Status::Ok();
    };
    try {
      FACTZ_RETURN_IF_ERROR(
          plan_plane_counts(pairs[p], n, max_lanes, gather, exceptions, plans[p], allow_escapes ? &escapes : nullptr));
    } catch (const std::bad_alloc&) {
      return Status(Code::internal, "ans: out of memory");
    }
  }

  std::vector<std::vector<uint8_t>> coded[2];
  for (int p = 0; p < 2; ++p) coded[p].resize(ans_plane_is_rans(plans[p].mode) ? n_chunks : 0);
  if (ans_plane_is_rans(plans[0].mode) || ans_plane_is_rans(plans[1].mode)) {
    const int workers = static_cast<int>(std::min<int64_t>(threads, n_chunks));
    // Per worker: the chunk's two planes (split_planes) and the room its coded words take.
    const uint64_t split_size = 2 * std::min(n, chunk);
    const uint64_t scratch_size = split_size + 4 * kMaxLanes + 2 * std::min(n, chunk);
    std::vector<uint8_t> scratch(static_cast<size_t>(workers) * scratch_size);
    int out_of_memory = 0;
#pragma omp parallel for num_threads(workers) schedule(static) reduction(+ : out_of_memory)
    for (int64_t k = 0; k < n_chunks; ++k) {
      uint8_t* const split = scratch.data() + omp_get_thread_num() * scratch_size;
      uint8_t* end = split + scratch_size;
      const uint64_t first = k * chunk, m = std::min(n - first, chunk);
      split_planes(sym + first, m, center, split, split + m);
      for (int p = 0; p < 2; ++p) {
        if (!ans_plane_is_rans(plans[p].mode)) continue;
        uint8_t* begin = ans_encode_chunk(split + p * m, m, plans[p], end);
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
  ans_append_header(center, n, out, ans_blob_version(plans[0], plans[1]));
  for (int p = 0; p < 2; ++p) append_plane(plans[p], coded[p], out);
  return Status::Ok();
}

}  // namespace factz::detail
