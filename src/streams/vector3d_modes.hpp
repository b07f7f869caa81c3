// What a 3D frontend hands the stream layer (issue 22): the decisions of the tiled modes
// (none, block) and of the speculative mode, per vertex, and the functions that turn them
// into the payloads of streams/vector3d_stream.hpp; and the set-up every 3D compressor
// shares (field and option checks, missing vertices, the plan and its bound). Both
// backends fill these structures (the CPU's backend/cpu/*3d_mode.cpp, the CUDA backend's
// device frontends and GPU model) and build the stream through these functions, so the
// bytes are the same whenever the decisions are. OpenMP loops here write disjoint elements
// and join in index order: no byte depends on the thread count.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/field3d.hpp"
#include "factz/status.hpp"
#include "format/container.hpp"
#include "streams/vector3d_stream.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {

/// What a 3D tiled frontend decided, per component c (u, v, w). T: float, or double for a
/// float64 field.
template <class T>
struct Tiled3DResultOf {
  std::vector<uint8_t> tile_ids[3];  ///< one per tile (TileLayout3D order)
  BigVector<T> recon[3];             ///< the decoder's values
  BigVector<uint8_t> exact[3];       ///< 1: the component is stored exactly
  std::vector<uint16_t> symbols[3];  ///< the code symbols (kernels/tiles3d.hpp), index order
  std::vector<std::pair<int64_t, int64_t>> escapes[3];  ///< (index, code) of symbol 0, by index
  int64_t exact_vertices = 0;        ///< vertices with at least one component stored exactly
  int64_t repair_rounds = 0;         ///< rounds of the exact check (1: nothing to repair)
  int64_t repaired_vertices = 0;     ///< vertices the repair stored exactly
  std::vector<std::pair<std::string, double>> stage_seconds;
};
using Tiled3DResult = Tiled3DResultOf<float>;
using Tiled3DResult64 = Tiled3DResultOf<double>;

/// What a 3D speculative frontend decided, per vertex (float64 fields: format version 13).
template <class T>
struct Speculative3DResultOf {
  std::vector<T> recon[3];     ///< the decoder's values (u, v, w); a plain vector: it may be the caller's planes
  BigVector<uint8_t> id;       ///< 0 exact (anchors too), 1..30 bound id, kZeroVectorId, kMissingVertex
  BigVector<uint16_t> sym[3];  ///< code + kRadius where 1 <= id <= 30
  int64_t exact_vertices = 0;  ///< anchors, exact targets and zero vectors
};
using Speculative3DResult = Speculative3DResultOf<float>;
using Speculative3DResult64 = Speculative3DResultOf<double>;

/// The stream payload of a tiled result (its symbols move out): symbols (of the valid
/// vertices only when `missing` is given), outliers and exact lists per component; the tile
/// ids when `block`. Float64 results write their exact values as f64.
void tiled3d_payload(Tiled3DResult& r, bool block, int threads, Tiled3DPayload& out, const uint8_t* missing = nullptr);
void tiled3d_payload(Tiled3DResult64& r, bool block, int threads, Tiled3DPayload& out,
                     const uint8_t* missing = nullptr);

/// The stream payload of a speculative result on field f (the working copy the frontend
/// saw) with anchor stride s0: ids in schedule order, the codes of coded targets, the exact
/// values (anchors, then exact targets); missing vertices (kMissingVertex) left out. With
/// `transform` each phase's codes take the code transform transform_phase_codes chooses
/// (streams/phase_choices3d.hpp; out.transforms records it); without, they stay as they are
/// (tests compare the two). `threads`: the three components' transforms run side by side
/// (the payload does not depend on it). `originals_in_state`: f's planes were given up to
/// the frontend (run_speculative3d's `state`; only f's dimensions are read), so the exact
/// values come from r.recon, where every anchor and every exact target (id 0) kept its
/// original bits.
void speculative3d_payload(const VectorField3D& f, int64_t s0, const Speculative3DResult& r,
                           Speculative3DPayload& out, bool transform = true, int threads = 1,
                           bool originals_in_state = false);
void speculative3d_payload(const VectorField3D64& f, int64_t s0, const Speculative3DResult64& r,
                           Speculative3DPayload& out, bool transform = true, int threads = 1,
                           bool originals_in_state = false);

/// A 3D field made ready for a frontend: work() is the field, or its filled working copy
/// when vertices are missing (streams/missing_fill.hpp); `missing` the mask or null; the
/// mask section carries the missing vertices' original bits (format version 12); the plan
/// holds the grid, the options, the host threads and the absolute bound (REL: of the
/// three components' range over the working copy).
template <class Field>
struct Prepared3D {
  const Field* source = nullptr;  ///< the caller's field
  Field filled;                   ///< its filled working copy when vertices are missing
  bool in_place = false;          ///< the caller's field given up and filled itself (no copy)
  std::vector<uint8_t> mask;
  const uint8_t* missing = nullptr;
  int64_t masked = 0;  ///< missing vertices
  std::vector<Section> mask_section;
  Stream3DPlan plan;

  /// The field the frontend works on.
  const Field& work() const { return mask.empty() || in_place ? *source : filled; }
};

/// The checks and set-up every 3D compressor runs before its frontend: validate_field, the
/// option rules (check_vector3d_options), the mask and filled copy, the plan with `threads`
/// host threads and its bound (float_bound of the requested one; a float64 field also sets
/// dtype and eb64 = double_bound, the header's eb being float_bound of it). `field` must
/// outlive `out`. `given` (null, or &field when its caller gave it up): missing vertices are
/// filled in its own planes, after the mask section took their bits, instead of a copy.
Status prepare3d(const VectorField3D& field, const Options& o, int threads, Prepared3D<VectorField3D>& out,
                 VectorField3D* given = nullptr);
Status prepare3d(const VectorField3D64& field, const Options& o, int threads, Prepared3D<VectorField3D64>& out,
                 VectorField3D64* given = nullptr);

}  // namespace factz::detail
