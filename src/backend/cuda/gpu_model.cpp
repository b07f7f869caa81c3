#include "backend/cuda/gpu_model.hpp"

#include <algorithm>
#include <string>

#include "codec/coder.hpp"
#include "codec/huffman.hpp"
#include "util/byte_io.hpp"

#include "backend/cuda/ans_bodies.hpp"
#include "backend/cuda/ans_encode_bodies.hpp"
#include "backend/cuda/ans_encode_host.hpp"
#include "backend/cuda/ans_host.hpp"
#include "backend/cuda/crc_bodies.hpp"
#include "backend/cuda/host_stream.hpp"
#include "backend/cuda/huffman_bodies.hpp"
#include "backend/cuda/huffman_host.hpp"
#include "backend/cuda/section_crc.hpp"
#include "backend/cuda/speculative_bodies.hpp"
#include "streams/speculative_trial.hpp"
#include "streams/code_segments.hpp"
#include "streams/tiled_lists.hpp"

namespace factz::cuda_detail {
namespace {

/// Stable compaction of the indices i with flag[i] != 0 (the device: cub::DeviceSelect).
std::vector<int64_t> select_flagged(const std::vector<uint8_t>& flag) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < flag.size(); ++i)
    if (flag[i]) out.push_back(int64_t(i));
  return out;
}

/// The blob the device writes with `coder` (an empty blob, which no decoder accepts, if the
/// model fails: the tests then see the difference).
/// crc: the blob's crc32c as the device gives it (its payload checksummed by the device
/// CRC, model_crc32c, the heads, chunk tables and escape lists on the host; blob_crc).
/// escapes: ANS blobs of version 3 allowed (device_ans_encode's allow_escapes).
std::vector<uint8_t> model_encode(Coder coder, std::span<const uint16_t> symbols, uint16_t center,
                                  std::optional<uint32_t>& crc, bool escapes = false) {
  std::vector<uint8_t> blob;
  if (coder == Coder::huffman) blob = model_huffman_encode(symbols);
  else if (!model_ans_encode(symbols, center, blob, detail::kAnsEncoderMaxLanes, escapes).ok()) blob.clear();
  std::vector<CrcPiece> pieces;
  auto device_piece = [&](uint64_t at, uint64_t end) {
    if (end > at) pieces.push_back({at, end - at, model_crc32c(std::span<const uint8_t>(blob).subspan(at, end - at))});
  };
  crc.reset();
  if (coder == Coder::huffman) {
    detail::HuffmanBlob parsed;
    if (!detail::huffman_parse(blob, symbols.size(), parsed).ok()) return blob;
    device_piece(parsed.chunk_pos.front(), parsed.chunk_pos.back());
  } else {
    detail::AnsBlob parsed;
    if (!detail::ans_parse(blob, center, symbols.size(), parsed).ok()) return blob;
    for (const auto& plane : parsed.planes)
      if (detail::ans_plane_is_rans(plane.mode)) device_piece(plane.chunk_pos.front(), plane.chunk_pos.back());
  }
  crc = blob_crc(blob, pieces);
  return blob;
}

/// The rANS chunks of a plane as ans_encode_kernel codes them: warps of 32 threads, groups
/// of ans_group_size threads per chunk, every step a ballot of the lanes that emitted.
/// Chunk k's bytes end at scratch + (k + 1) * kAnsChunkScratch; sizes[k] is their count.
void model_ans_chunks(const uint8_t* b, uint64_t n, const detail::AnsPlanePlan& plan, std::vector<uint8_t>& scratch,
                      std::vector<uint32_t>& sizes) {
  const uint64_t chunks = (n + kAnsChunk - 1) / kAnsChunk;
  const uint32_t group = ans_group_size(plan.lanes), per_warp = 32 / group;
  const uint32_t group_mask = group == 32 ? 0xFFFFFFFFu : (1u << group) - 1u;
  const detail::RansEncodeTables tables = detail::ans_encode_tables(plan);
  scratch.assign(size_t(chunks * kAnsChunkScratch), 0);
  sizes.assign(size_t(chunks), 0);
  for (uint64_t w = 0; w < (chunks + per_warp - 1) / per_warp; ++w) {
    AnsLane a[32];
    uint32_t x[32];
    uint64_t words[32] = {};
    uint64_t steps_max = 0;  // the device: __reduce_max_sync
    for (uint32_t th = 0; th < 32; ++th) {
      const uint64_t k = w * per_warp + th / group;
      a[th] = k < chunks ? ans_lane_of(n, plan.lanes, k, th % group) : AnsLane{};
      x[th] = detail::kRansLow;
      steps_max = std::max(steps_max, a[th].steps);
    }
    for (uint64_t t = steps_max; t-- > 0;) {
      bool emitted[32];
      uint16_t word[32] = {};
      uint32_t ballot = 0;  // the device: __ballot_sync
      for (uint32_t th = 0; th < 32; ++th) {
        emitted[th] = t < a[th].steps && detail::rans_encode_lane_step(tables, b, a[th].begin, t, x[th], word[th]);
        ballot |= uint32_t(emitted[th]) << th;
      }
      for (uint32_t th = 0; th < 32; ++th) {
        const uint32_t l = th % group, mask = (ballot >> (th - l)) & group_mask;
        uint8_t* end = scratch.data() + (w * per_warp + th / group + 1) * kAnsChunkScratch;
        if (emitted[th]) detail::rans_store_word(end, words[th] + detail::rans_word_rank(mask, l), word[th]);
        words[th] += uint64_t(detail::rans_popcount(mask));
      }
    }
    for (uint32_t th = 0; th < 32; ++th) {
      const uint32_t l = th % group;
      const uint64_t k = w * per_warp + th / group;
      if (l >= a[th].lanes) continue;
      uint8_t* end = scratch.data() + (k + 1) * kAnsChunkScratch;
      detail::rans_store_state(end, a[th].lanes, words[th], l, x[th]);
      if (l == 0) sizes[size_t(k)] = uint32_t(detail::rans_chunk_bytes(a[th].lanes, words[th]));
    }
  }
}

/// Exclusive scan (the device: cub::DeviceScan::ExclusiveSum); returns the total.
uint64_t exclusive_scan(std::vector<uint64_t>& x) {
  uint64_t run = 0;
  for (auto& e : x) {
    const uint64_t t = e;
    e = run;
    run += t;
  }
  return run;
}

/// The varint list "count, then per entry" from the per-entry length / write bodies.
template <class Len, class Write>
std::vector<uint8_t> build_list(int64_t count, Len&& length, Write&& write) {
  std::vector<uint64_t> offset(static_cast<size_t>(count));
  const int head = varint_length(uint64_t(count));
  for (int64_t e = 0; e < count; ++e) offset[size_t(e)] = length(e);
  const uint64_t body = exclusive_scan(offset);
  std::vector<uint8_t> out(static_cast<size_t>(head) + body);
  put_varint_at(out.data(), uint64_t(count));
  for (int64_t e = 0; e < count; ++e) write(e, offset.data(), out.data() + head);
  return out;
}

struct PlaneLists {
  std::vector<uint8_t> outliers, exact_index, exact_values;
};

/// recon: the decoder's values (the exact list holds them).
template <class T>
PlaneLists plane_lists(const T* recon, const std::vector<uint8_t>& escape, const std::vector<int64_t>& code,
                       const std::vector<uint8_t>& exact) {
  PlaneLists pl;
  const std::vector<int64_t> oi = select_flagged(escape);
  std::vector<int64_t> oc(oi.size());
  for (size_t e = 0; e < oi.size(); ++e) oc[e] = code[size_t(oi[e])];  // gather
  pl.outliers = build_list(
      int64_t(oi.size()), [&](int64_t e) { return outlier_entry_length(oi.data(), oc.data(), e); },
      [&](int64_t e, const uint64_t* off, uint8_t* dst) { write_outlier_entry(oi.data(), oc.data(), e, off, dst); });
  const std::vector<int64_t> ei = select_flagged(exact);
  pl.exact_index = build_list(
      int64_t(ei.size()), [&](int64_t e) { return index_entry_length(ei.data(), e); },
      [&](int64_t e, const uint64_t* off, uint8_t* dst) { write_index_entry(ei.data(), e, off, dst); });
  pl.exact_values.resize(sizeof(T) * ei.size());
  for (size_t e = 0; e < ei.size(); ++e) write_value_entry(ei.data(), recon, int64_t(e), pl.exact_values.data());
  return pl;
}

/// f: the working copy; missing: its mask (null when no vertex is missing).
template <class Field, class T = ValueOf<Field>>
void tiled_payload(const Field& f, const Plan& p, const uint8_t* missing, TiledIntermediatesOf<T>* mid,
                   TiledPayload& pl) {
  constexpr bool kFloat64 = std::is_same_v<T, double>;
  const Grid2D g{f.nx, f.ny};
  const int64_t n = f.size(), cells = g.cell_count();
  const int64_t tiles = ((f.nx + kTile - 1) / kTile) * ((f.ny + kTile - 1) / kTile);
  const T eb = plan_bound<T>(p);
  T bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = detail::bound_of_id(eb, id);
  const T* x[2] = {f.u.data(), f.v.data()};
  std::vector<uint8_t> vid[2], tile_ids[2], cp_free;
  const bool block = p.options.mode == Mode::block;
  if (block) {
    std::vector<detail::TriangleBounds<T>> tb(static_cast<size_t>(2 * cells));
    cp_free.resize(static_cast<size_t>(cells));
    for (int64_t c = 0; c < cells; ++c) cell_safe_bounds(g, c, x[0], x[1], missing, eb, tb.data(), cp_free.data());
    vid[0].resize(static_cast<size_t>(n));
    vid[1].resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) vertex_bound_ids(g, k, x[0], x[1], tb.data(), eb, vid[0].data(), vid[1].data());
    for (int c = 0; c < 2; ++c) {
      tile_ids[c].resize(static_cast<size_t>(tiles));
      for (int64_t t = 0; t < tiles; ++t) tile_ids[c][size_t(t)] = choose_tile_id(f.nx, f.ny, t, x[c], vid[c].data(), eb);
    }
  } else {
    for (int c = 0; c < 2; ++c) tile_ids[c].assign(static_cast<size_t>(tiles), uint8_t(eb > T(0) ? kMaxBoundId : 0));
  }
  std::vector<T> recon[2];
  std::vector<uint8_t> exact[2];
  std::vector<int32_t> q[2];
  for (int c = 0; c < 2; ++c) {
    recon[c].resize(static_cast<size_t>(n));
    exact[c].resize(static_cast<size_t>(n));
    q[c].resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k)
      quantize_vertex(f.nx, k, x[c], tile_ids[c].data(), block ? vid[c].data() : nullptr, missing, bound,
                      recon[c].data(), exact[c].data(), q[c].data());
    if constexpr (kFloat64)  // float64 block mode lists its exact vertices rounded where it may
      if (block)
        for (int64_t k = 0; k < n; ++k) round_exact_vertex(k, x[c], eb, recon[c].data(), exact[c].data());
  }
  int64_t rounds = 0, repaired = 0;
  // The float64 safe bounds are estimates: every original signature is derived.
  if (block) model_repair(f, kFloat64 ? nullptr : cp_free.data(), recon, exact, rounds, repaired, missing);
  for (int c = 0; c < 2; ++c) {
    if (missing)  // one warp per tile, its anti-diagonals in order
      for (int64_t t = 0; t < tiles; ++t)
        for (int64_t d = 0; d < 2 * kTile - 1; ++d)
          for (int64_t col = 0; col < kTile; ++col)
            missing_quant(f.nx, f.ny, t, d, col, missing, tile_ids[c].data(), bound, q[c].data());
    std::vector<uint16_t> symbols(static_cast<size_t>(n));
    std::vector<int64_t> code(static_cast<size_t>(n));
    std::vector<uint8_t> escape(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k)
      lorenzo_code(f.nx, k, q[c].data(), missing, symbols.data(), code.data(), escape.data());
    if (missing) {  // the device: DeviceSelect::Flagged of the valid vertices' symbols
      std::vector<uint16_t> valid;
      for (int64_t k = 0; k < n; ++k)
        if (!missing[k]) valid.push_back(symbols[size_t(k)]);
      pl.coded[c] = model_encode(p.options.coder, valid, detail::kAnsCodeCenter, pl.coded_crc[c]);
    } else {
      pl.coded[c] = model_encode(p.options.coder, symbols, detail::kAnsCodeCenter, pl.coded_crc[c]);
    }
    pl.precoded = true;
    PlaneLists lists = plane_lists(recon[c].data(), escape, code, exact[c]);
    pl.outliers[c] = std::move(lists.outliers);
    pl.exact_index[c] = std::move(lists.exact_index);
    pl.exact_values[c] = std::move(lists.exact_values);
  }
  if (block) {
    pl.tile_ids = tile_ids[0];
    pl.tile_ids.insert(pl.tile_ids.end(), tile_ids[1].begin(), tile_ids[1].end());
  }
  if (mid) {
    mid->id_u = std::move(vid[0]);
    mid->id_v = std::move(vid[1]);
    for (int c = 0; c < 2; ++c) {
      mid->tile_ids[c] = tile_ids[c];
      mid->recon[c] = std::move(recon[c]);
      mid->exact[c] = std::move(exact[c]);
    }
    mid->repair_rounds = rounds;
    mid->repaired_vertices = repaired;
  }
}

/// Calls fn(step, phase, lattice, stream offset) for every phase in stream order.
template <class F>
void for_each_phase(int64_t nx, int64_t ny, int64_t s0, F&& fn) {
  detail::PhaseSchedule schedule(nx, ny, s0);
  for (detail::ScheduledPhase ph; schedule.next(ph);) fn(ph.step, ph.phase, ph.lattice, ph.offset);
}

/// The device's fill_missing_anchors (cuda_compress.cu device_fill_missing_anchors): the
/// first valid anchor (the device: an atomic minimum), column 0, then every anchor row.
template <class T>
void fill_anchor_stand_ins(const PhaseLattice& A, int64_t nx, const uint8_t* missing, T* u, T* v,
                           detail::Predictor pred) {
  int64_t first = A.count();
  for (int64_t a = 0; a < A.count(); ++a)
    if (!missing[lattice_vertex(A, nx, a)]) first = std::min(first, a);
  detail::fill_missing_anchor_column(A, nx, missing, first, u, v, pred);
  for (int64_t row = 0; row < A.count_y; ++row) detail::fill_missing_anchor_row(A, nx, missing, row, u, v, pred);
}

/// f: the working copy; missing: its mask (null when no vertex is missing).
template <class Field, class T = ValueOf<Field>>
void speculative_payload(const Field& f, const Plan& p, const uint8_t* missing, SpeculativePayload& pl) {
  const Grid2D g{f.nx, f.ny};
  const int64_t n = f.size(), s0 = p.options.anchor_stride;
  const PhaseLattice A = detail::anchor_lattice(f.nx, f.ny, s0);
  const int64_t targets = n - A.count();
  T bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = detail::bound_of_id(plan_bound<T>(p), id);
  std::vector<T> cur_u(static_cast<size_t>(n)), cur_v(static_cast<size_t>(n));
  std::vector<uint8_t> vid(static_cast<size_t>(n)), sig(static_cast<size_t>(g.triangle_count()));
  for (int64_t k = 0; k < n; ++k) speculative_init(k, f.u.data(), f.v.data(), cur_u.data(), cur_v.data(), vid.data());
  for (int64_t c = 0; c < g.cell_count(); ++c) speculative_signatures(g, c, f.u.data(), f.v.data(), missing, sig.data());
  if (missing) fill_anchor_stand_ins(A, f.nx, missing, cur_u.data(), cur_v.data(), detail::kDefaultPredictor);
  // The level-wise bound's trial on the crop, as the device driver runs it on the crop it
  // copies to the host (cuda_compress.cu).
  const int64_t tight = detail::choose_tight_step(f.nx, f.ny, f.u.data(), f.v.data(), missing, plan_bound<T>(p), s0,
                                                  detail::kDefaultPredictor, 1);
  std::vector<uint16_t> ids(static_cast<size_t>(targets)), su(static_cast<size_t>(targets)), sv(static_cast<size_t>(targets));
  for_each_phase(f.nx, f.ny, s0, [&](int64_t step, Phase ph, const PhaseLattice& L, int64_t offset) {
    for (int64_t t = 0; t < L.count(); ++t)
      speculate_target(g, L, step, ph, t, f.u.data(), f.v.data(), missing, cur_u.data(), cur_v.data(), sig.data(),
                       bound, offset, ids.data(), su.data(), sv.data(), detail::kDefaultPredictor, tight);
  });
  // Stream positions -> vertices (for the exact values), then stable compactions.
  std::vector<int64_t> vertex_of(static_cast<size_t>(targets));
  for_each_phase(f.nx, f.ny, s0, [&](int64_t, Phase, const PhaseLattice& L, int64_t offset) {
    for (int64_t t = 0; t < L.count(); ++t) vertex_of[size_t(offset + t)] = lattice_vertex(L, f.nx, t);
  });
  std::vector<uint8_t> has_code(static_cast<size_t>(targets)), is_exact(static_cast<size_t>(targets));
  for (int64_t t = 0; t < targets; ++t) {
    has_code[size_t(t)] = id_has_code(ids[size_t(t)]);
    is_exact[size_t(t)] = id_is_exact(ids[size_t(t)]);
  }
  for (int64_t pos : select_flagged(has_code)) {
    pl.codes_u.push_back(su[size_t(pos)]);
    pl.codes_v.push_back(sv[size_t(pos)]);
  }
  std::vector<int64_t> exact_vertex;
  for (int64_t pos : select_flagged(is_exact)) exact_vertex.push_back(vertex_of[size_t(pos)]);
  // The stored anchors: all, or the valid ones when vertices are missing.
  std::vector<int64_t> stored_anchor;
  if (missing) {
    std::vector<int64_t> vertex(static_cast<size_t>(A.count()));
    std::vector<uint8_t> stored(static_cast<size_t>(A.count()));
    for (int64_t a = 0; a < A.count(); ++a) anchor_vertex(A, f.nx, a, missing, vertex.data(), stored.data());
    for (int64_t a : select_flagged(stored)) stored_anchor.push_back(vertex[size_t(a)]);
  }
  const int64_t anchors = missing ? int64_t(stored_anchor.size()) : A.count();
  const int64_t entries = anchors + int64_t(exact_vertex.size());
  pl.exact.resize(static_cast<size_t>(2 * int64_t(sizeof(T)) * entries));
  for (int64_t e = 0; e < entries; ++e)
    write_speculative_exact(A, f.nx, e, anchors, missing ? stored_anchor.data() : nullptr, exact_vertex.data(),
                            f.u.data(), f.v.data(), pl.exact.data());
  // A missing target has no id in the stream.
  std::vector<uint8_t> stored_id(static_cast<size_t>(targets));
  for (int64_t t = 0; t < targets; ++t) stored_id[size_t(t)] = ids[size_t(t)] != uint16_t(kMissingVertex);
  for (int64_t pos : select_flagged(stored_id)) pl.ids.push_back(ids[size_t(pos)]);
  pl.predictor = detail::kDefaultPredictor;  // the CPU encoder's (run_speculative)
  // Segmented codes (format version 9): ANS blobs of version 3 for the ids and the codes.
  const bool escapes = pl.predictor != detail::Predictor::linear;
  pl.coded_ids = model_encode(p.options.coder, pl.ids, 0, pl.coded_ids_crc, escapes);
  // Segmented codes (format version 9): the phases' code counts (the device: a count_if per
  // phase), then each segment coded as the device codes a blob, the section's CRC folded
  // from the blobs' (write_segmented).
  std::vector<int64_t> phase_codes;
  for_each_phase(f.nx, f.ny, s0, [&](int64_t, Phase, const PhaseLattice& L, int64_t offset) {
    phase_codes.push_back(0);
    for (int64_t t = 0; t < L.count(); ++t) phase_codes.back() += has_code[size_t(offset + t)];
  });
  auto encode_codes = [&](const std::vector<uint16_t>& codes, std::vector<uint8_t>& out, std::optional<uint32_t>& crc) {
    const std::span<const uint16_t> all(codes);
    const Status st = detail::write_segmented(
        phase_codes, int64_t(all.size()),
        [&](int64_t first, int64_t count, std::vector<uint8_t>& blob, std::optional<uint32_t>& blob_crc) {
          blob = model_encode(p.options.coder, all.subspan(size_t(first), size_t(count)), detail::kAnsCodeCenter, blob_crc,
                              escapes);
          return Status::Ok();
        },
        out, &crc);
    if (!st.ok()) out.clear();  // no decoder accepts it: the tests see the difference
  };
  encode_codes(pl.codes_u, pl.coded_u, pl.coded_u_crc);
  encode_codes(pl.codes_v, pl.coded_v, pl.coded_v_crc);
  pl.ids.clear();
  pl.codes_u.clear();
  pl.codes_v.clear();
  pl.precoded = true;
}

/// symbols: every vertex's symbol per plane (decoded and checked).
template <class T>
Status decode_tiled(const TiledInputOf<T>& in, const std::vector<uint16_t> (&symbols)[2], FieldOf<T>& f) {
  const int64_t nx = f.nx, ny = f.ny;
  const int64_t tiles_x = (nx + kTile - 1) / kTile, tiles = tiles_x * ((ny + kTile - 1) / kTile);
  T bound[kMaxBoundId + 1];
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = detail::bound_of_id(T(in.eb), id);
  int bad = 0;
  std::vector<uint64_t> scratch(static_cast<size_t>(kTile * kTile));
  T* out[2] = {f.u.data(), f.v.data()};
  for (int c = 0; c < 2; ++c) {
    const uint8_t* tid = in.tile_ids.data() + c * tiles;
    for (int64_t t = 0; t < tiles; ++t) {  // one block per tile: a row pass, then a column pass
      for (int64_t r = 0; r < kTile; ++r)
        decode_tile_row(nx, ny, t, r, symbols[c].data(), in.outlier_index[c].data(), in.outlier_code[c].data(),
                        int64_t(in.outlier_index[c].size()), scratch.data());
      for (int64_t col = 0; col < kTile; ++col)
        decode_tile_column(nx, ny, t, col, tid, bound, scratch.data(), in.exact_index[c].data(),
                           in.exact_value[c].data(), int64_t(in.exact_index[c].size()), out[c], &bad);
    }
  }
  if (bad) return corrupt_stream("decoded value out of range");
  return Status::Ok();
}

/// in.ids: the stream's ids (one per stored target); missing: the stream's mask or null.
template <class T>
Status decode_spec(const detail::ParsedContainer& pc, SpeculativeInputOf<T>& in, const uint8_t* missing,
                   FieldOf<T>& f) {
  const auto& h = pc.header;
  const Grid2D g{f.nx, f.ny};
  const int64_t s0 = h.anchor_stride;
  const PhaseLattice A = detail::anchor_lattice(f.nx, f.ny, s0);
  const int64_t targets = f.size() - A.count();
  T bound[kMaxBoundId + 1];  // in.eb: the header's bound, or a float64 stream's f64 one
  for (int id = 0; id <= kMaxBoundId; ++id) bound[id] = detail::bound_of_id(T(in.eb), id);
  std::vector<uint16_t> ids = in.ids;
  std::vector<int64_t> anchor_pos;
  int64_t anchors = A.count();
  if (missing) {
    // Every stream position's id (kMissingVertex for a missing target), then the stored
    // anchors' positions: exclusive scans of the stored flags.
    std::vector<int64_t> stored(static_cast<size_t>(targets));
    for_each_phase(f.nx, f.ny, s0, [&](int64_t, Phase, const PhaseLattice& L, int64_t offset) {
      for (int64_t t = 0; t < L.count(); ++t) target_stored(L, f.nx, t, offset, missing, stored.data());
    });
    std::vector<uint64_t> scan(stored.begin(), stored.end());
    exclusive_scan(scan);
    const std::vector<int64_t> pos(scan.begin(), scan.end());
    ids.assign(static_cast<size_t>(targets), 0);
    for (int64_t p = 0; p < targets; ++p) expand_target_id(p, stored.data(), pos.data(), in.ids.data(), ids.data());
    std::vector<uint64_t> apos(static_cast<size_t>(A.count()));
    for (int64_t a = 0; a < A.count(); ++a) apos[size_t(a)] = missing[lattice_vertex(A, f.nx, a)] == 0;
    anchors = int64_t(exclusive_scan(apos));
    anchor_pos.assign(apos.begin(), apos.end());
  }
  std::vector<uint64_t> cpos(static_cast<size_t>(targets)), epos(static_cast<size_t>(targets));
  for (size_t t = 0; t < cpos.size(); ++t) {
    cpos[t] = id_has_code(ids[t]);
    epos[t] = id_is_exact(ids[t]);
  }
  exclusive_scan(cpos);
  exclusive_scan(epos);
  const std::vector<int64_t> code_pos(cpos.begin(), cpos.end()), exact_pos(epos.begin(), epos.end());
  for (int64_t a = 0; a < A.count(); ++a)
    decode_anchor(A, f.nx, a, missing, anchor_pos.data(), in.exact.data(), f.u.data(), f.v.data());
  if (missing) fill_anchor_stand_ins(A, f.nx, missing, f.u.data(), f.v.data(), in.predictor);
  int bad = 0;
  for_each_phase(f.nx, f.ny, s0, [&](int64_t step, Phase ph, const PhaseLattice& L, int64_t offset) {
    for (int64_t t = 0; t < L.count(); ++t)
      decode_target(g, L, step, ph, t, offset, ids.data(), in.codes_u.data(), in.codes_v.data(), code_pos.data(),
                    exact_pos.data(), anchors, in.exact.data(), bound, f.u.data(), f.v.data(), &bad, in.predictor);
  });
  if (bad) return corrupt_stream("decoded value is not finite");
  return Status::Ok();
}

}  // namespace

std::vector<uint8_t> model_huffman_encode(std::span<const uint16_t> symbols) {
  const uint64_t n = symbols.size();
  std::vector<uint64_t> hist(65536, 0);  // the device: cub::DeviceHistogram (integer counts)
  for (uint16_t x : symbols) ++hist[x];
  HuffmanHead h = huffman_head(hist, n);
  std::vector<uint8_t> blob = h.bytes;
  // Kernel 1, one block per chunk: per-thread bits, a block exclusive scan, chunk bytes.
  std::vector<uint32_t> thread_bit(size_t(h.chunks) * kHuffmanThreadsPerChunk);
  std::vector<uint64_t> chunk_bytes(static_cast<size_t>(h.chunks));
  for (uint64_t c = 0; c < h.chunks; ++c) {
    uint32_t run = 0;
    for (int t = 0; t < kHuffmanThreadsPerChunk; ++t) {
      uint64_t lo, hi;
      huffman_thread_range(n, c, t, lo, hi);
      thread_bit[size_t(c * kHuffmanThreadsPerChunk + uint64_t(t))] = run;
      run += huffman_range_bits(h.table.data(), symbols.data(), lo, hi);
    }
    chunk_bytes[size_t(c)] = (uint64_t(run) + 7) / 8;
  }
  // Chunk table, then chunk positions by an exclusive scan of the sizes.
  std::vector<uint64_t> chunk_pos(chunk_bytes);
  const uint64_t payload = exclusive_scan(chunk_pos);
  for (uint64_t b : chunk_bytes) detail::put_le(blob, b, 4);
  const size_t head = blob.size();
  blob.resize(head + size_t(payload), 0);
  // Kernel 2, one block per chunk: every thread ORs its bytes in.
  uint8_t* out = blob.data() + head;
  for (uint64_t c = 0; c < h.chunks; ++c)
    for (int t = 0; t < kHuffmanThreadsPerChunk; ++t) {
      uint64_t lo, hi;
      huffman_thread_range(n, c, t, lo, hi);
      huffman_write_range(h.table.data(), symbols.data(), lo, hi, chunk_pos[size_t(c)],
                          thread_bit[size_t(c * kHuffmanThreadsPerChunk + uint64_t(t))],
                          [&](uint64_t i, uint8_t b) { out[i] |= b; });
    }
  return blob;
}

Status model_ans_encode(std::span<const uint16_t> symbols, uint16_t center, std::vector<uint8_t>& blob,
                        uint32_t max_lanes, bool allow_escapes) {
  if (max_lanes < 1 || max_lanes > uint32_t(detail::kRansLanes)) return invalid_argument("ans: bad max_lanes");
  const uint64_t n = symbols.size();
  std::vector<uint8_t> planes[2] = {std::vector<uint8_t>(size_t(n)), std::vector<uint8_t>(size_t(n))};
  for (uint64_t i = 0; i < n; ++i) ans_split_symbol(symbols.data(), i, center, planes[0].data(), planes[1].data());
  detail::AnsPlanePlan plans[2];
  std::vector<uint32_t> sizes[2];
  std::vector<uint8_t> scratch[2];
  for (int p = 0; p < 2; ++p) {
    const uint8_t* b = planes[p].data();
    std::vector<uint64_t> pairs(65536, 0);  // the device: integer atomics, shared and global
    for (uint64_t i = 0; i < n; ++i) ++pairs[ans_pair_key(b, i)];
    const detail::AnsPlaneGather gather = [&](std::span<const uint64_t> pos, std::vector<uint8_t>& out) {
      out.resize(pos.size());  // the device: one thread per position
      for (size_t e = 0; e < pos.size(); ++e) out[e] = b[pos[e]];
      return Status::Ok();
    };
    const detail::AnsPlaneExceptions exceptions = [&](uint8_t dominant, std::vector<uint64_t>& pos,
                                                      std::vector<uint8_t>& bytes) {
      std::vector<uint8_t> flag(static_cast<size_t>(n), 0);  // the device: flags, cub::DeviceSelect, a gather
      for (uint64_t i = 0; i < n; ++i) flag[size_t(i)] = b[i] != dominant;
      for (int64_t i : select_flagged(flag)) {
        pos.push_back(uint64_t(i));
        bytes.push_back(b[i]);
      }
      return Status::Ok();
    };
    const detail::AnsPlaneEscapes escapes = [&](const detail::AnsByteSet& rare, std::vector<uint8_t>& bytes) {
      std::vector<uint8_t> flag(static_cast<size_t>(n), 0);  // the device: flags, cub::DeviceSelect, a gather
      for (uint64_t i = 0; i < n; ++i) flag[size_t(i)] = detail::ans_byte_in(rare, b[i]);
      for (int64_t i : select_flagged(flag)) bytes.push_back(b[i]);
      return Status::Ok();
    };
    FACTZ_RETURN_IF_ERROR(
        detail::ans_plan_plane(pairs, n, max_lanes, gather, exceptions, plans[p], allow_escapes ? &escapes : nullptr));
    if (detail::ans_plane_is_rans(plans[p].mode)) model_ans_chunks(b, n, plans[p], scratch[p], sizes[p]);
  }
  uint64_t at[2], bytes[2];
  ans_blob_layout(center, n, plans, sizes, blob, at, bytes);
  for (int p = 0; p < 2; ++p) {  // the device: chunk offsets by a scan, one block per chunk copies
    uint64_t off = at[p];
    for (size_t k = 0; k < sizes[p].size(); ++k) {
      const uint8_t* end = scratch[p].data() + (k + 1) * kAnsChunkScratch;
      std::copy(end - sizes[p][k], end, blob.begin() + int64_t(off));
      off += sizes[p][k];
    }
  }
  return Status::Ok();
}

uint32_t model_crc32c(std::span<const uint8_t> data) {
  const uint64_t n = data.size();
  if (n == 0) return 0;
  uint32_t table[256];  // the device: built in shared memory by every thread block
  for (uint32_t b = 0; b < 256; ++b) table[b] = detail::crc32c_byte_entry(b);
  uint64_t count = (n + kCrcBlockBytes - 1) / kCrcBlockBytes;
  std::vector<uint32_t> crc[2] = {std::vector<uint32_t>(size_t(count)), std::vector<uint32_t>(size_t(count))};
  std::vector<uint64_t> len[2] = {std::vector<uint64_t>(size_t(count)), std::vector<uint64_t>(size_t(count))};
  for (uint64_t j = 0; j < count; ++j) crc_block(data.data(), n, j, table, crc[0].data(), len[0].data());
  int cur = 0;
  for (; count > 1; count = (count + 1) / 2, cur = 1 - cur)  // one kernel per tree level
    for (uint64_t i = 0; i < (count + 1) / 2; ++i)
      crc_tree_step(crc[cur].data(), len[cur].data(), count, i, crc[1 - cur].data(), len[1 - cur].data());
  return crc[cur][0];
}

Status model_huffman_decode(std::span<const uint8_t> blob, std::span<uint16_t> out) {
  HuffmanParsed hp;
  FACTZ_RETURN_IF_ERROR(huffman_parse(blob, out.size(), hp));
  const uint64_t n = out.size(), chunk = uint64_t{1} << hp.chunk_log2;
  for (size_t k = 0; k + 1 < hp.chunk_pos.size(); ++k) {  // the device: one thread per chunk
    const uint64_t lo = uint64_t(k) * chunk, m = std::min(n - lo, chunk);
    if (!huffman_decode_chunk(hp.book, hp.sorted.data(), blob.data() + hp.chunk_pos[k],
                              hp.chunk_pos[k + 1] - hp.chunk_pos[k], out.data() + lo, m))
      return corrupt_stream("huffman: invalid payload in chunk " + std::to_string(k));
  }
  return Status::Ok();
}

Status model_entropy_decode(uint8_t coder, std::span<const uint8_t> blob, uint16_t center, std::span<uint16_t> out) {
  if (coder == uint8_t(Coder::ans)) return model_ans_decode(blob, center, out);
  return model_huffman_decode(blob, out);
}

/// A component's codes as the device decodes them: one blob, or each segment of a version 9
/// section (parse_segmented on the host) into its part of `out`.
Status model_codes_decode(uint8_t coder, std::span<const uint8_t> coded, bool segmented, std::span<uint16_t> out) {
  if (!segmented) return model_entropy_decode(coder, coded, 32768, out);
  std::vector<detail::CodeSegment> segs;
  FACTZ_RETURN_IF_ERROR(detail::parse_segmented(coded, int64_t(out.size()), segs));
  for (const auto& g : segs)
    FACTZ_RETURN_IF_ERROR(model_entropy_decode(coder, g.blob, 32768, out.subspan(size_t(g.first), size_t(g.count))));
  return Status::Ok();
}

Status model_ans_decode(std::span<const uint8_t> blob, uint16_t center, std::span<uint16_t> out) {
  AnsParsed ap;
  const uint64_t n = out.size();
  FACTZ_RETURN_IF_ERROR(ans_parse_for_device(blob, center, n, ap));
  const uint64_t chunk = uint64_t{1} << ap.chunk_log2;
  std::vector<uint8_t> bytes[2];
  for (int p = 0; p < 2; ++p) {
    const AnsPlane& pl = ap.planes[p];
    bytes[p].assign(static_cast<size_t>(n), pl.value);  // the device: a memset
    if (pl.mode == detail::kAnsPlaneSparse)  // the device: a scatter
      for (size_t e = 0; e < pl.positions.size(); ++e) bytes[p][size_t(pl.positions[e])] = pl.bytes[e];
    if (!detail::ans_plane_is_rans(pl.mode)) continue;
    for (size_t k = 0; k + 1 < pl.chunk_pos.size(); ++k) {  // the device: one thread per chunk
      const uint64_t first = uint64_t(k) * chunk, m = std::min(n - first, chunk);
      if (!ans_decode_chunk_bytes(pl.entries.data(), pl.values.data(), pl.lanes, pl.first_context,
                                  blob.data() + pl.chunk_pos[k], pl.chunk_pos[k + 1] - pl.chunk_pos[k],
                                  bytes[p].data() + first, m))
        return corrupt_stream("ans: invalid payload in chunk " + std::to_string(k));
    }
    if (pl.mode != detail::kAnsPlaneEscapes) continue;
    // Escapes: a count kernel (one thread per chunk), the prefix on the host over the chunk
    // counts, a replace kernel (one thread per chunk).
    const size_t chunks = pl.chunk_pos.size() - 1;
    std::vector<uint64_t> first_escape(chunks);
    for (size_t k = 0; k < chunks; ++k) {
      const uint64_t first = uint64_t(k) * chunk, m = std::min(n - first, chunk);
      first_escape[k] = detail::rans_count_escapes(bytes[p].data() + first, m, pl.value);
    }
    if (exclusive_scan(first_escape) != pl.bytes.size())
      return corrupt_stream("ans: escape count does not match the escape list");
    for (size_t k = 0; k < chunks; ++k) {
      const uint64_t first = uint64_t(k) * chunk, m = std::min(n - first, chunk);
      detail::rans_replace_escapes(bytes[p].data() + first, m, pl.value, pl.bytes.data() + first_escape[k]);
    }
  }
  for (uint64_t i = 0; i < n; ++i) out[size_t(i)] = ans_symbol(bytes[0][size_t(i)], bytes[1][size_t(i)], center);
  return Status::Ok();
}

namespace {

template <class Field, class T = ValueOf<Field>>
void model_repair_any(const Field& f, const uint8_t* cp_free, std::vector<T> recon[2], std::vector<uint8_t> exact[2],
                      int64_t& rounds, int64_t& repaired, const uint8_t* missing) {
  const Grid2D g{f.nx, f.ny};
  const int64_t n = f.size(), cells = g.cell_count(), tris = g.triangle_count();
  const T* x[2] = {f.u.data(), f.v.data()};
  std::vector<uint8_t> bad(static_cast<size_t>(tris)), changed(static_cast<size_t>(n));
  for (int64_t c = 0; c < cells; ++c)
    cell_check(g, c, recon[0].data(), recon[1].data(), x[0], x[1], cp_free, missing, bad.data());
  rounds = 1;
  repaired = 0;
  while (std::any_of(bad.begin(), bad.end(), [](uint8_t b) { return b != 0; })) {
    for (int64_t k = 0; k < n; ++k)
      repair_vertex(g, k, bad.data(), x[0], x[1], recon[0].data(), recon[1].data(), exact[0].data(), exact[1].data(),
                    changed.data());
    for (uint8_t ch : changed) repaired += ch;
    for (int64_t t = 0; t < tris; ++t)
      triangle_recheck(g, t, changed.data(), recon[0].data(), recon[1].data(), x[0], x[1], missing, bad.data());
    ++rounds;
  }
}

template <class Field, class T = ValueOf<Field>>
Result<std::vector<uint8_t>> model_compress_any(const Field& f, const Options& o, TiledIntermediatesOf<T>* mid) {
  FACTZ_RETURN_IF_ERROR(validate_field(f));
  FACTZ_RETURN_IF_ERROR(check_options(f.nx, f.ny, o));
  // The host finds the missing vertices and fills the working copy (cuda_api.cu), which
  // the device compresses with the mask.
  const MissingVerticesOf<Field> m = find_missing(f);
  const Field& work = m.any() ? m.work : f;
  const uint8_t* missing = m.any() ? m.mask.data() : nullptr;
  double range = 0.0;
  if (work.size() > 0) {  // the device: two cub::DeviceReduce calls (min and max are exact)
    const auto [ul, uh] = std::minmax_element(work.u.begin(), work.u.end());
    const auto [vl, vh] = std::minmax_element(work.v.begin(), work.v.end());
    range = double(std::max(*uh, *vh)) - double(std::min(*ul, *vl));
  }
  const Plan p = make_plan<T>(f.nx, f.ny, o, range);
  if (o.mode == Mode::speculative) {
    SpeculativePayload pl;
    speculative_payload(work, p, missing, pl);
    return assemble_stream(p, pl, &m);
  }
  TiledPayload pl;
  tiled_payload(work, p, missing, mid, pl);
  return assemble_stream(p, pl, &m);
}

/// The device's decode_valid_symbols: the valid vertices' symbols (count_if against the
/// blob's count), an exclusive scan of the valid flags, spread_valid_symbol per vertex,
/// escape_missing_outlier per outlier.
Status model_valid_symbols(uint8_t coder, std::span<const uint8_t> blob, const uint8_t* missing,
                           std::span<const int64_t> outlier_index, std::vector<uint16_t>& symbols) {
  const int64_t n = int64_t(symbols.size());
  auto stored = detail::coded_symbol_count(detail::EntropyCoder(coder), blob);
  if (!stored.ok()) return stored.status();
  int64_t valid = 0;
  for (int64_t k = 0; k < n; ++k) valid += missing[k] == 0;
  FACTZ_RETURN_IF_ERROR(detail::check_stored_symbols(stored.value(), uint64_t(valid)));
  std::vector<uint16_t> packed(static_cast<size_t>(valid));
  FACTZ_RETURN_IF_ERROR(model_entropy_decode(coder, blob, 32768, packed));
  std::vector<int64_t> pos(static_cast<size_t>(n));
  for (int64_t k = 0, sum = 0; k < n; ++k) {
    pos[size_t(k)] = sum;
    sum += missing[k] == 0;
  }
  for (int64_t k = 0; k < n; ++k) spread_valid_symbol(k, missing, pos.data(), packed.data(), symbols.data());
  for (int64_t e = 0; e < int64_t(outlier_index.size()); ++e)
    escape_missing_outlier(e, outlier_index.data(), missing, symbols.data());
  return Status::Ok();
}

/// The device's speculative decoder from parse_speculative's coded blobs: ids, their checks
/// and counts, exact values, codes, then the phases.
template <class T>
Status model_decode_speculative(std::span<const uint8_t> stream, const detail::ParsedContainer& pc,
                                const std::vector<uint8_t>& mask, FieldOf<T>& f) {
  const uint8_t* missing = mask.empty() ? nullptr : mask.data();
  SpeculativeInputOf<T> in;
  FACTZ_RETURN_IF_ERROR(
      parse_speculative(stream, pc, host_threads(), in, /*leave_coded=*/true, missing, detail::Predictor::cubic));
  if (in.device_coded) {  // as the device: ids, their checks and counts, exact values, codes
    const detail::PhaseLattice A = detail::anchor_lattice(f.nx, f.ny, pc.header.anchor_stride);
    int64_t anchors = A.count(), stored_targets = f.size() - A.count();
    if (missing) {  // the device: two count_if
      int64_t missing_anchors = 0, missing_all = 0;
      for (int64_t a = 0; a < A.count(); ++a) missing_anchors += missing[lattice_vertex(A, f.nx, a)] != 0;
      for (uint8_t x : mask) missing_all += x != 0;
      anchors -= missing_anchors;
      stored_targets -= missing_all - missing_anchors;
    }
    in.ids.resize(static_cast<size_t>(stored_targets));
    FACTZ_RETURN_IF_ERROR(model_entropy_decode(pc.header.coder, in.coded_ids, 0, in.ids));
    int64_t n_codes = 0, n_exact = 0;
    for (uint16_t id : in.ids) {
      if (!detail::valid_target_id(id)) return corrupt_stream("bound id out of range");
      n_codes += id_has_code(id);
      n_exact += id_is_exact(id);
    }
    FACTZ_RETURN_IF_ERROR(parse_speculative_exact(in.exact_raw, anchors + n_exact, in.exact));
    in.codes_u.resize(static_cast<size_t>(n_codes));
    in.codes_v.resize(static_cast<size_t>(n_codes));
    FACTZ_RETURN_IF_ERROR(model_codes_decode(pc.header.coder, in.coded_u, in.codes_segmented, in.codes_u));
    FACTZ_RETURN_IF_ERROR(model_codes_decode(pc.header.coder, in.coded_v, in.codes_segmented, in.codes_v));
  }
  return decode_spec(pc, in, missing, f);
}

/// The device's tiled decoder: the blobs decoded and checked against the outliers, then the
/// tiles.
template <class T>
Status model_decode_tiled(std::span<const uint8_t> stream, const detail::ParsedContainer& pc,
                          const std::vector<uint8_t>& mask, FieldOf<T>& f) {
  const uint8_t* missing = mask.empty() ? nullptr : mask.data();
  TiledInputOf<T> in;
  FACTZ_RETURN_IF_ERROR(parse_tiled_coded(stream, pc, in, missing));
  std::vector<uint16_t> symbols[2];
  for (int c = 0; c < 2; ++c) {  // the device decodes the blobs and checks the outliers
    symbols[c].resize(static_cast<size_t>(f.size()));
    if (in.codes_skip_missing)
      FACTZ_RETURN_IF_ERROR(model_valid_symbols(pc.header.coder, in.coded[c], missing, in.outlier_index[c], symbols[c]));
    else
      FACTZ_RETURN_IF_ERROR(model_entropy_decode(pc.header.coder, in.coded[c], 32768, symbols[c]));
    for (int64_t k : in.outlier_index[c])
      if (symbols[c][size_t(k)] != 0) return corrupt_stream("outlier at a vertex without escape symbol");
    const auto escapes = std::count(symbols[c].begin(), symbols[c].end(), uint16_t{0});
    if (escapes != std::ptrdiff_t(in.outlier_index[c].size()))
      return corrupt_stream("escape symbols and outlier list disagree");
  }
  return decode_tiled(in, symbols, f);
}

template <class T>
Result<FieldOf<T>> model_decompress_any(std::span<const uint8_t> stream) {
  auto pc = parse_checked(stream);
  if (!pc.ok()) return pc.status();
  FACTZ_RETURN_IF_ERROR(detail::require_dtype(pc->header, kDtypeOf<T>));
  FieldOf<T> f;
  f.nx = int64_t(pc->header.nx);
  f.ny = int64_t(pc->header.ny);
  f.u.resize(static_cast<size_t>(f.size()));
  f.v.resize(static_cast<size_t>(f.size()));
  std::vector<uint8_t> mask;  // read first: the speculative sections skip missing vertices
  FACTZ_RETURN_IF_ERROR(read_stream_mask(stream, pc.value(), mask));
  if (pc->header.mode == uint8_t(Mode::speculative))
    FACTZ_RETURN_IF_ERROR(model_decode_speculative<T>(stream, pc.value(), mask, f));
  else
    FACTZ_RETURN_IF_ERROR(model_decode_tiled<T>(stream, pc.value(), mask, f));
  if (!mask.empty()) {  // the missing vertices' stored bits go over the reconstruction last
    MaskedValuesOf<T> mv;
    FACTZ_RETURN_IF_ERROR(masked_values(stream, pc.value(), mask, mv));
    for (size_t e = 0; e < mv.index.size(); ++e) {  // the device: one thread per entry
      f.u[size_t(mv.index[e])] = mv.u[e];
      f.v[size_t(mv.index[e])] = mv.v[e];
    }
    f.mask = std::move(mask);
  }
  return f;
}

}  // namespace

void model_repair(const VectorField2D& f, const uint8_t* cp_free, std::vector<float> recon[2],
                  std::vector<uint8_t> exact[2], int64_t& rounds, int64_t& repaired, const uint8_t* missing) {
  model_repair_any(f, cp_free, recon, exact, rounds, repaired, missing);
}
void model_repair(const VectorField2D64& f, const uint8_t* cp_free, std::vector<double> recon[2],
                  std::vector<uint8_t> exact[2], int64_t& rounds, int64_t& repaired, const uint8_t* missing) {
  model_repair_any(f, cp_free, recon, exact, rounds, repaired, missing);
}

Result<std::vector<uint8_t>> model_compress(const VectorField2D& f, const Options& o, TiledIntermediates* mid) {
  return model_compress_any(f, o, mid);
}
Result<std::vector<uint8_t>> model_compress(const VectorField2D64& f, const Options& o, TiledIntermediates64* mid) {
  return model_compress_any(f, o, mid);
}

void model_payload(const VectorField2D& f, const Plan& p, TiledPayload* tiled, SpeculativePayload* speculative,
                   const uint8_t* missing) {
  if (tiled) tiled_payload(f, p, missing, static_cast<TiledIntermediates*>(nullptr), *tiled);
  if (speculative) speculative_payload(f, p, missing, *speculative);
}
void model_payload(const VectorField2D64& f, const Plan& p, TiledPayload* tiled, SpeculativePayload* speculative,
                   const uint8_t* missing) {
  if (tiled) tiled_payload(f, p, missing, static_cast<TiledIntermediates64*>(nullptr), *tiled);
  if (speculative) speculative_payload(f, p, missing, *speculative);
}

Result<VectorField2D> model_decompress(std::span<const uint8_t> stream) { return model_decompress_any<float>(stream); }
Result<VectorField2D64> model_decompress64(std::span<const uint8_t> stream) {
  return model_decompress_any<double>(stream);
}

}  // namespace factz::cuda_detail
