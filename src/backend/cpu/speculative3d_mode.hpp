// The 3D FaCTz-S driver on the CPU (issue 22; docs/architecture.md, "3D speculative mode"):
// the schedule of kernels/interpolation3d.hpp, one OpenMP loop per phase calling the
// per-vertex decision of kernels/speculation3d.hpp, and the decoder, which replays the
// schedule. The result type and its payload live in the stream layer
// (streams/vector3d_modes.hpp), which the CUDA backend shares.
#pragma once

#include <cstdint>
#include <span>

#include "factz/field3d.hpp"
#include "factz/status.hpp"
#include "format/container.hpp"
#include "streams/vector3d_modes.hpp"  // Speculative3DResult, speculative3d_payload
#include "streams/vector3d_stream.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {

/// Runs the schedule on a validated field, with absolute bound `eb` and anchor stride s0.
/// `check` false skips the signature verification (tests only). `missing` (null for none):
/// the field's missing vertices, f then being the filled working copy; a missing vertex takes
/// id kMissingVertex and the stand-in zero in every component for the whole run (the
/// decoder's), and the tetrahedra touching one are never compared (kMaskedTet). A valid vertex
/// on a face named by `exact_faces` (Options::exact_edges, kernels/exact_faces3d.hpp) is not
/// speculated: it keeps its original bits (id 0, or kZeroVectorId for +0, +0, +0). `along`
/// (Stream3DPlan::along, 3 per phase; null: the mean everywhere) the predictor's choices,
/// which the stream must then carry (assemble_speculative3d writes the plan's). `state`
/// (null: none) a field whose planes the frontend may take as its current state, moved into
/// out.recon (f itself, or f's copy, given up by its owner): the frontend then allocates no
/// plane of its own, and f's planes are empty afterwards (speculative3d_payload then reads
/// the originals from out.recon: originals_in_state).
void run_speculative3d(const VectorField3D& f, float eb, int64_t s0, int threads, bool check,
                       Speculative3DResult& out, const uint8_t* missing = nullptr, uint8_t exact_faces = 0,
                       const uint8_t* along = nullptr, VectorField3D* state = nullptr);
void run_speculative3d(const VectorField3D64& f, double eb, int64_t s0, int threads, bool check,
                       Speculative3DResult64& out, const uint8_t* missing = nullptr, uint8_t exact_faces = 0,
                       const uint8_t* along = nullptr, VectorField3D64* state = nullptr);

/// Reconstructs the planes (nx * ny * nz floats each) of a stream from its parsed input,
/// one OpenMP loop per phase; corrupt_stream when a decoded value is not finite. `missing`
/// (read_mask3d; null for none): those vertices take the stand-in zero (their bits come
/// from the mask section afterwards).
Status decode_speculative3d(const Header& h, const Speculative3DInput& in, int threads, std::span<float> u,
                            std::span<float> v, std::span<float> w, const uint8_t* missing = nullptr);
Status decode_speculative3d(const Header& h, const Speculative3DInput64& in, int threads, std::span<double> u,
                            std::span<double> v, std::span<double> w, const uint8_t* missing = nullptr);

}  // namespace factz::detail
