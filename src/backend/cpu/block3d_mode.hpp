// The 3D tiled modes on the CPU (issue 22; docs/architecture.md, "3D block mode"): FaCTz-B
// on the Freudenthal mesh (per-tetrahedron safe bounds, kernels/safe_bound3d.hpp; per-vertex
// bound ids; tile ids on 16^3 tiles, kernels/tiles3d.hpp; quantization; the exact check of
// every tetrahedron's signature with repair) and mode none (the pointwise bound alone); the
// decoder; the result type and its payload live in the stream layer (streams/vector3d_modes.hpp). OpenMP loops
// write disjoint elements and lists are built in index order: the bytes and the decoded
// values never depend on the thread count.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "factz/field3d.hpp"
#include "factz/status.hpp"
#include "format/container.hpp"
#include "streams/vector3d_modes.hpp"  // Tiled3DResult, tiled3d_payload
#include "streams/vector3d_stream.hpp"
#include "util/big_vector.hpp"

namespace factz::detail {

/// Test hooks of run_block3d; the library always runs both stages.
struct Block3DStages {
  bool safe_bounds = true;  ///< false: every vertex takes eb (mode none's bounds)
  bool check = true;        ///< false: no exact check and no repair
};

/// Mode none in 3D: every tile id 30 (0 when eb is 0), every vertex checked against eb.
/// `missing` (null for none): the field's missing vertices, f then being the filled working
/// copy (streams/missing_fill.hpp); a missing vertex is never stored exactly and its code is
/// its Lorenzo prediction's (docs/architecture.md, "Masks"). `exact_faces`: the face bits of
/// Options::exact_edges (kernels/exact_faces3d.hpp), whose vertices keep their original bits.
void run_none3d(const VectorField3D& f, float eb, int threads, Tiled3DResult& out, const uint8_t* missing = nullptr,
                uint8_t exact_faces = 0);
void run_none3d(const VectorField3D64& f, double eb, int threads, Tiled3DResult64& out,
                const uint8_t* missing = nullptr, uint8_t exact_faces = 0);

/// FaCTz-B in 3D on a validated field, absolute bound eb; `missing` and `exact_faces` as for
/// run_none3d: the tetrahedra touching a missing vertex constrain no bound and are never
/// checked; the face vertices are exact before the check.
void run_block3d(const VectorField3D& f, float eb, int threads, Tiled3DResult& out, Block3DStages stages = {},
                 const uint8_t* missing = nullptr, uint8_t exact_faces = 0);
void run_block3d(const VectorField3D64& f, double eb, int threads, Tiled3DResult64& out, Block3DStages stages = {},
                 const uint8_t* missing = nullptr, uint8_t exact_faces = 0);

/// Reconstructs the planes (nx * ny * nz floats each) of a 3D tiled stream from its parsed
/// input, tiles in parallel; corrupt_stream when a value is out of range or not finite.
Status decode_tiled3d(const Header& h, const Tiled3DInput& in, int threads, std::span<float> u, std::span<float> v,
                      std::span<float> w);
Status decode_tiled3d(const Header& h, const Tiled3DInput64& in, int threads, std::span<double> u,
                      std::span<double> v, std::span<double> w);

}  // namespace factz::detail
