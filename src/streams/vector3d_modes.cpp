#include "streams/vector3d_modes.hpp"

#include <algorithm>
#include <bit>
#include <new>
#include <type_traits>

#include "factz/topology3d.hpp"
#include "kernels/interpolation3d.hpp"
#include "kernels/quantizer.hpp"           // kMaxBoundId
#include "kernels/speculative_decode.hpp"  // kMissingVertex
#include "streams/mask_sections.hpp"
#include "streams/missing_fill.hpp"
#include "streams/phase_choices3d.hpp"
#include "streams/stream_common.hpp"
#include "streams/vector_stream.hpp"  // double_bound
#include "util/byte_io.hpp"
#include "util/phase_team.hpp"  // phases_of

namespace factz::detail {
namespace {

/// Below this many vertices the exact lists are gathered on the calling thread.
constexpr int64_t kMinParallel = 8192;

/// Appends one exact value: f32, or f64 in a float64 stream.
void put_exact(ByteWriter& w, float x) { w.f32(x); }
void put_exact(ByteWriter& w, double x) { w.f64(x); }

/// One component's exact list: the count and index gaps (varints), and the values (the
/// original's bits, f32 or f64), in index order.
template <class T>
void put_exact_list(const BigVector<uint8_t>& exact, const BigVector<T>& recon, int threads,
                    std::vector<uint8_t>& index, std::vector<uint8_t>& values) {
  const int64_t n = int64_t(exact.size());
  // Chunks of the index range in parallel, joined in order: the bytes do not depend on the
  // thread count.
  constexpr int64_t kChunk = int64_t(1) << 18;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::vector<int64_t>> at(static_cast<size_t>(chunks));
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= kMinParallel)
  for (int64_t c = 0; c < chunks; ++c)
    for (int64_t k = c * kChunk; k < std::min(n, (c + 1) * kChunk); ++k)
      if (exact[size_t(k)]) at[size_t(c)].push_back(k);
  ByteWriter idx, vals;
  int64_t count = 0;
  for (const auto& a : at) count += int64_t(a.size());
  idx.varint(uint64_t(count));
  int64_t last = -1;
  for (const auto& a : at)
    for (int64_t k : a) {
      idx.varint(uint64_t(k - last - 1));
      put_exact(vals, recon[size_t(k)]);
      last = k;
    }
  index = std::move(idx.bytes());
  values = std::move(vals.bytes());
}

template <class T>
void tiled3d_payload_any(Tiled3DResultOf<T>& r, bool block, int threads, Tiled3DPayload& out, const uint8_t* missing) {
  if (block) {
    out.tile_ids.clear();
    for (int c = 0; c < 3; ++c) out.tile_ids.insert(out.tile_ids.end(), r.tile_ids[c].begin(), r.tile_ids[c].end());
  }
  for (int c = 0; c < 3; ++c) {
    out.symbols[c] = std::move(r.symbols[c]);
    if (missing) {  // a missing vertex's symbol is implied (tiled_symbol): keep the valid ones
      size_t kept = 0;
      for (size_t k = 0; k < out.symbols[c].size(); ++k)
        if (!missing[k]) out.symbols[c][kept++] = out.symbols[c][k];
      out.symbols[c].resize(kept);
    }
    ByteWriter outl;
    outl.varint(uint64_t(r.escapes[c].size()));
    int64_t last = -1;
    for (const auto& [k, code] : r.escapes[c]) {
      outl.varint(uint64_t(k - last - 1));
      outl.zigzag(code);
      last = k;
    }
    out.outliers[c] = std::move(outl.bytes());
    put_exact_list(r.exact[c], r.recon[c], threads, out.exact_index[c], out.exact_values[c]);
  }
}

/// Calls visit(t, k) for each target of lattice L in target order (x fastest): its position t
/// and vertex k (lattice_vertex3d's, without a division).
template <class Visit>
void for_each_target(const PhaseLattice3D& L, int64_t nx, int64_t ny, Visit&& visit) {
  int64_t t = 0;
  for (int64_t l = 0; l < L.count_z; ++l)
    for (int64_t j = 0; j < L.count_y; ++j) {
      const int64_t row = ((L.z0 + l * L.d) * ny + L.y0 + j * L.d) * nx + L.x0;
      for (int64_t i = 0; i < L.count_x; ++i, ++t) visit(t, row + i * L.d);
    }
}

/// Writes x's bits at `at` as put_exact appends them (ByteWriter's f32 / f64 layout).
void store_exact(uint8_t* at, float x) { store_le(at, std::bit_cast<uint32_t>(x), 4); }
void store_exact(uint8_t* at, double x) { store_le(at, std::bit_cast<uint64_t>(x), 8); }

template <class Field, class T>
void speculative3d_payload_any(const Field& f, int64_t s0, const Speculative3DResultOf<T>& r,
                               Speculative3DPayload& out, bool transform, int threads, bool originals_in_state) {
  const int64_t nx = f.nx, ny = f.ny, nz = f.nz;
  const T* orig[3] = {f.u.data(), f.v.data(), f.w.data()};
  if (originals_in_state)
    for (int c = 0; c < 3; ++c) orig[c] = r.recon[c].data();
  const uint8_t* id = r.id.data();
  ByteWriter exact;
  const PhaseLattice3D A = anchor_lattice3d(nx, ny, nz, s0);
  for (int64_t a = 0; a < A.count(); ++a) {
    const int64_t k = lattice_vertex3d(A, nx, ny, a);
    if (id[k] == kMissingVertex) continue;  // not stored
    for (int c = 0; c < 3; ++c) put_exact(exact, orig[c][k]);
  }
  // Each phase's ids, codes and exact values go to ranges of their own, known once the phases
  // are counted: the phases are then gathered (and their codes transformed) in parallel, and
  // the bytes do not depend on the thread count.
  const std::vector<ScheduledPhase3D> phases = phases_of<ScheduledPhase3D>(PhaseSchedule3D(nx, ny, nz, s0));
  const int64_t np = int64_t(phases.size());
  const int team = f.size() >= kMinParallel ? std::max(threads, 1) : 1;
  std::vector<int64_t> n_ids(static_cast<size_t>(np)), n_exact(static_cast<size_t>(np));
  out.phase_codes.assign(size_t(np), 0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) if (team > 1)
  for (int64_t p = 0; p < np; ++p) {
    int64_t ids = 0, codes = 0, exacts = 0;
    for_each_target(phases[size_t(p)].lattice, nx, ny, [&](int64_t, int64_t k) {
      const uint8_t b = id[k];
      ids += b != kMissingVertex;
      codes += b >= 1 && b <= kMaxBoundId;
      exacts += b == 0;
    });
    n_ids[size_t(p)] = ids;
    out.phase_codes[size_t(p)] = codes;
    n_exact[size_t(p)] = exacts;
  }
  std::vector<int64_t> id_at(size_t(np) + 1, 0), code_at(size_t(np) + 1, 0), exact_at(size_t(np) + 1, 0);
  for (int64_t p = 0; p < np; ++p) {
    id_at[size_t(p) + 1] = id_at[size_t(p)] + n_ids[size_t(p)];
    code_at[size_t(p) + 1] = code_at[size_t(p)] + out.phase_codes[size_t(p)];
    exact_at[size_t(p) + 1] = exact_at[size_t(p)] + n_exact[size_t(p)];
  }
  out.ids.resize(size_t(id_at[size_t(np)]));
  for (int c = 0; c < 3; ++c) out.codes[c].resize(size_t(code_at[size_t(np)]));
  out.transforms.assign(size_t(3 * np), 0);
  std::vector<uint8_t> bytes = std::move(exact.bytes());
  const size_t anchor_bytes = bytes.size(), per_exact = 3 * sizeof(T);
  bytes.resize(anchor_bytes + size_t(exact_at[size_t(np)]) * per_exact);
  bool out_of_memory = false;
#pragma omp parallel num_threads(team) if (team > 1)
  {
    std::vector<int64_t> at;  // the phase's coded targets: lattice positions
    CodeLattice lattices[3];
#pragma omp for schedule(dynamic, 1)
    for (int64_t q = 0; q < np; ++q) {
      const int64_t p = np - 1 - q;  // the largest phases (the last level's) first
      const ScheduledPhase3D& ph = phases[size_t(p)];
      const PhaseLattice3D& L = ph.lattice;
      const bool choices = transform && has_transform_choice(L);
      uint16_t* ids = out.ids.data() + id_at[size_t(p)];
      const size_t first = size_t(code_at[size_t(p)]);
      uint16_t* codes[3] = {out.codes[0].data() + first, out.codes[1].data() + first, out.codes[2].data() + first};
      uint8_t* ex = bytes.data() + anchor_bytes + size_t(exact_at[size_t(p)]) * per_exact;
      try {  // no exception may leave an OpenMP region
        at.clear();
        for_each_target(L, nx, ny, [&](int64_t t, int64_t k) {
          const uint8_t b = id[k];
          if (b == kMissingVertex) return;  // not in the stream
          *ids++ = b;
          if (b >= 1 && b <= kMaxBoundId) {
            if (choices) at.push_back(t);
            for (int c = 0; c < 3; ++c) *codes[c]++ = r.sym[c][size_t(k)];
          } else if (b == 0) {
            for (int c = 0; c < 3; ++c, ex += sizeof(T)) store_exact(ex, orig[c][k]);
          }
        });
        if (!choices || at.empty()) continue;
        bool may = false;  // a phase whose costed codes are all 0 keeps "none" (may_transform)
        for (int c = 0; c < 3 && !may; ++c)
          may = CodeLattice::may_transform(std::span<const uint16_t>(out.codes[c]).subspan(first, at.size()));
        if (!may) continue;
        // Each component's transform (it depends on its codes only), in turn: the phases
        // already share the threads.
        const int64_t cells[3] = {L.count_x, L.count_y, L.count_z};
        for_each_component(cells, CodeLattice::padded_positions(cells, at), 1, lattices,
                           [&](int c, CodeLattice& lattice) {
                             out.transforms[size_t(3 * p + c)] = uint8_t(lattice.choose_and_apply(
                                 std::span<uint16_t>(out.codes[c]).subspan(first, at.size())));
                           });
      } catch (const std::bad_alloc&) {
#pragma omp atomic write
        out_of_memory = true;
      }
    }
  }
  if (out_of_memory) throw std::bad_alloc();  // the callers report it
  out.exact = std::move(bytes);
}

template <class Field>
Status prepare3d_any(const Field& field, const Options& o, int threads, Prepared3D<Field>& out, Field* given) {
  FACTZ_RETURN_IF_ERROR(validate_field(field));
  FACTZ_RETURN_IF_ERROR(check_vector3d_options(field.nx, field.ny, field.nz, o));
  out.source = &field;
  out.mask = missing_mask(field);
  out.filled = Field{};
  out.in_place = false;
  out.mask_section.clear();
  if (!out.mask.empty()) {
    // The original bits first: filling in place overwrites them.
    append_mask_section3d(out.mask, field.nx, field.ny * field.nz, field.u, field.v, field.w, out.mask_section);
    if (given) {  // *given is `field`
      fill_missing_in_place(*given, out.mask);
      out.in_place = true;
    } else {
      out.filled = fill_missing(field, out.mask);
    }
  }
  out.missing = out.mask.empty() ? nullptr : out.mask.data();
  out.masked = std::count(out.mask.begin(), out.mask.end(), uint8_t(1));
  Stream3DPlan& p = out.plan;
  p = Stream3DPlan{};
  p.nx = field.nx;
  p.ny = field.ny;
  p.nz = field.nz;
  p.options = o;
  p.threads = threads;
  const double requested = o.bound_mode == BoundMode::abs ? o.bound : o.bound * value_range3d(out.work());
  if constexpr (std::is_same_v<Field, VectorField3D64>) {
    p.dtype = kDtypeFloat64;
    p.eb64 = double_bound(requested);
    p.eb = float_bound(p.eb64);
  } else {
    p.eb = float_bound(requested);
  }
  if (o.mode == Mode::speculative) {
    const double eb = p.dtype == kDtypeFloat64 ? p.eb64 : double(p.eb);
    p.along = choose_axes3d(out.work(), o.anchor_stride, eb, out.missing, threads);
  }
  return Status::Ok();
}

}  // namespace

void tiled3d_payload(Tiled3DResult& r, bool block, int threads, Tiled3DPayload& out, const uint8_t* missing) {
  tiled3d_payload_any(r, block, threads, out, missing);
}
void tiled3d_payload(Tiled3DResult64& r, bool block, int threads, Tiled3DPayload& out, const uint8_t* missing) {
  tiled3d_payload_any(r, block, threads, out, missing);
}
void speculative3d_payload(const VectorField3D& f, int64_t s0, const Speculative3DResult& r,
                           Speculative3DPayload& out, bool transform, int threads, bool originals_in_state) {
  speculative3d_payload_any(f, s0, r, out, transform, threads, originals_in_state);
}
void speculative3d_payload(const VectorField3D64& f, int64_t s0, const Speculative3DResult64& r,
                           Speculative3DPayload& out, bool transform, int threads, bool originals_in_state) {
  speculative3d_payload_any(f, s0, r, out, transform, threads, originals_in_state);
}
Status prepare3d(const VectorField3D& field, const Options& o, int threads, Prepared3D<VectorField3D>& out,
                 VectorField3D* given) {
  return prepare3d_any(field, o, threads, out, given);
}
Status prepare3d(const VectorField3D64& field, const Options& o, int threads, Prepared3D<VectorField3D64>& out,
                 VectorField3D64* given) {
  return prepare3d_any(field, o, threads, out, given);
}

}  // namespace factz::detail
