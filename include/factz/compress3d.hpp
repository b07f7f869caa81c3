// FaCTz for 3D vector fields (issue 22): error-bounded lossy compression of a float32 3D
// vector field that keeps every critical point of its Freudenthal tetrahedra
// (factz/topology3d.hpp) exactly, on the CPU or the GPU: the 3D speculative mode
// (docs/architecture.md, "3D speculative mode") and the 3D block mode ("3D block mode"), plus mode none (the bound
// alone); format versions 8, 10 and 12 (missing vertices), docs/format.md; float64 fields
// (VectorField3D64) in format version 13.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "factz/factz.hpp"
#include "factz/field3d.hpp"
#include "factz/status.hpp"

namespace factz {

/// Compresses a 3D vector field: G0 (|x' - x| <= eb for every component of every vertex;
/// REL: eb = bound * (max - min) over the three components) and G1 (every tetrahedron
/// keeps its exact signature: no critical point lost, spurious or of changed type) hold by
/// construction in modes speculative (the default) and block; mode none keeps G0 only.
/// Options: mode, either coder, zstd, anchor_stride (mode speculative); policy serial, omp or
/// cuda (the CUDA backend's 3D pipeline for float32 fields, the same bytes; backend_unavailable
/// in a build without it, without a device, or with exact_edges); exact_edges names outer faces
/// whose vertices keep their original bits (bits 1 x = 0, 2 x = nx - 1, 4 y = 0, 8 y = ny - 1,
/// 16 z = 0, 32 z = nz - 1: the shared faces of a 3D block, factz/multiblock3d.hpp); source is a
/// 2D feature (invalid_argument). Missing
/// vertices (field.mask, NaN, and the fill values mark_missing declares) are handled as in
/// 2D: every tetrahedron touching one is removed from the mesh, G0 and REL apply to the
/// valid vertices, and the stream (format version 12) keeps each missing vertex's bits.
/// Bytes never depend on the thread count.
Result<std::vector<uint8_t>> compress(const VectorField3D& field, const Options& options,
                                      CompressStats* stats = nullptr);

/// compress of a field the caller gives up: the same stream, and the field is left empty
/// (whatever ran). The CPU's speculative mode then works in the field's planes instead of a
/// copy of them (a third less memory at the peak; on a fresh process the copy's first touch
/// is a sixth of a small field's compression, docs/benchmarks.md).
Result<std::vector<uint8_t>> compress(VectorField3D&& field, const Options& options, CompressStats* stats = nullptr);

/// Decompresses a 3D vector stream written by compress(const VectorField3D&, ...). A masked
/// stream gives every missing vertex the bits it held (fill values, NaN payloads) and its
/// mask in the field's `mask` (1 = missing; empty for a stream without missing vertices).
/// Untrusted bytes give corrupt_stream / unsupported_version (a 2D or scalar stream names
/// the decoder to use), never a crash. Policy serial, omp or cuda (the same values).
Result<VectorField3D> decompress3d(std::span<const uint8_t> stream, const DecompressOptions& options = {});

/// Grid size {nx, ny, nz} of a 3D vector stream (float32 or float64), checked as decompress3d
/// checks it before it allocates (container, header, the id count against the grid), without
/// decoding.
Result<std::array<int64_t, 3>> stream_dims3d(std::span<const uint8_t> stream);

/// The value type of a 3D vector stream (which decoder takes it: decompress3d or
/// decompress3d64), checked as stream_dims3d checks the stream.
Result<DType> stream_dtype3d(std::span<const uint8_t> stream);

/// Compresses a float64 3D vector field: the rules, modes, options and guarantees of the
/// float32 overload, every decision made exactly on the doubles (G0 on the exact difference,
/// G1 by src/kernels/tet64.hpp); REL takes the range of the doubles. Format version 13.
Result<std::vector<uint8_t>> compress(const VectorField3D64& field, const Options& options,
                                      CompressStats* stats = nullptr);
/// The float64 field given up (as compress(VectorField3D&&, ...)).
Result<std::vector<uint8_t>> compress(VectorField3D64&& field, const Options& options,
                                      CompressStats* stats = nullptr);

/// Decompresses a float64 3D vector stream (format version 13); a float32 3D stream is refused
/// with invalid_argument (decompress3d takes it), as decompress3d refuses a float64 one.
Result<VectorField3D64> decompress3d64(std::span<const uint8_t> stream, const DecompressOptions& options = {});

}  // namespace factz
