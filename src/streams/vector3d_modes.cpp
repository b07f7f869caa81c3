#include "streams/vector3d_modes.hpp"

#include <algorithm>
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

template <class Field, class T>
void speculative3d_payload_any(const Field& f, int64_t s0, const Speculative3DResultOf<T>& r,
                               Speculative3DPayload& out, bool transform, int threads, bool originals_in_state) {
  const int64_t nx = f.nx, ny = f.ny, nz = f.nz;
  const T* orig[3] = {f.u.data(), f.v.data(), f.w.data()};
  if (originals_in_state)
    for (int c = 0; c < 3; ++c) orig[c] = r.recon[c].data();
  ByteWriter exact;
  const PhaseLattice3D A = anchor_lattice3d(nx, ny, nz, s0);
  for (int64_t a = 0; a < A.count(); ++a) {
    const int64_t k = lattice_vertex3d(A, nx, ny, a);
    if (r.id[size_t(k)] == kMissingVertex) continue;  // not stored
    for (int c = 0; c < 3; ++c) put_exact(exact, orig[c][k]);
  }
  out.ids.reserve(size_t(f.size() - A.count()));
  for (int c = 0; c < 3; ++c) out.codes[c].reserve(size_t(f.size() - A.count()));  // address space only
  out.transforms.assign(size_t(3 * phase_count3d(s0)), 0);
  PhaseSchedule3D schedule(nx, ny, nz, s0);
  std::vector<int64_t> at;  // the phase's coded targets: lattice positions
  CodeLattice lattices[3];
  int64_t index = 0;
  for (ScheduledPhase3D ph; schedule.next(ph); ++index) {
    const PhaseLattice3D& L = ph.lattice;
    const bool choices = transform && has_transform_choice(L);
    const size_t first = out.codes[0].size();
    at.clear();
    out.phase_codes.push_back(0);
    // The lattice in target order t (x fastest): lattice_vertex3d's vertex, without a division.
    int64_t t = 0;
    for (int64_t l = 0; l < L.count_z; ++l)
      for (int64_t j = 0; j < L.count_y; ++j) {
        const int64_t row = ((L.z0 + l * L.d) * ny + L.y0 + j * L.d) * nx + L.x0;
        for (int64_t i = 0; i < L.count_x; ++i, ++t) {
          const int64_t k = row + i * L.d;
          const uint8_t id = r.id[size_t(k)];
          if (id == kMissingVertex) continue;  // not in the stream
          out.ids.push_back(id);
          if (id >= 1 && id <= kMaxBoundId) {
            ++out.phase_codes.back();
            if (choices) at.push_back(t);
            for (int c = 0; c < 3; ++c) out.codes[c].push_back(r.sym[c][size_t(k)]);
          } else if (id == 0) {
            for (int c = 0; c < 3; ++c) put_exact(exact, orig[c][k]);
          }
        }
      }
    if (!choices || at.empty()) continue;
    bool may = false;  // a phase whose costed codes are all 0 keeps "none" (may_transform)
    for (int c = 0; c < 3 && !may; ++c)
      may = CodeLattice::may_transform(std::span<const uint16_t>(out.codes[c]).subspan(first, at.size()));
    if (!may) continue;
    // Each component's transform (it depends on its codes only), side by side on large phases.
    const int64_t cells[3] = {L.count_x, L.count_y, L.count_z};
    for_each_component(cells, CodeLattice::padded_positions(cells, at), threads, lattices,
                       [&](int c, CodeLattice& lattice) {
                         out.transforms[size_t(3 * index + c)] = uint8_t(
                             lattice.choose_and_apply(std::span<uint16_t>(out.codes[c]).subspan(first, at.size())));
                       });
  }
  out.exact = std::move(exact.bytes());
}

template <class Field>
Status prepare3d_any(const Field& field, const Options& o, int threads, Prepared3D<Field>& out) {
  FACTZ_RETURN_IF_ERROR(validate_field(field));
  FACTZ_RETURN_IF_ERROR(check_vector3d_options(field.nx, field.ny, field.nz, o));
  out.source = &field;
  out.mask = missing_mask(field);
  out.filled = Field{};
  out.mask_section.clear();
  if (!out.mask.empty()) {
    out.filled = fill_missing(field, out.mask);
    append_mask_section3d(out.mask, field.nx, field.ny * field.nz, field.u, field.v, field.w, out.mask_section);
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
Status prepare3d(const VectorField3D& field, const Options& o, int threads, Prepared3D<VectorField3D>& out) {
  return prepare3d_any(field, o, threads, out);
}
Status prepare3d(const VectorField3D64& field, const Options& o, int threads, Prepared3D<VectorField3D64>& out) {
  return prepare3d_any(field, o, threads, out);
}

}  // namespace factz::detail
