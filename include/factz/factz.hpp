// FaCTz public C++ API: error-bounded lossy compression of 2D vector fields that keeps
// every critical point (ARCHITECTURE.md sections 1 and 7).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "factz/field.hpp"
#include "factz/status.hpp"
#include "factz/topology.hpp"

namespace factz {

/// Frontend deciding how much error each vertex may take.
enum class Mode : uint8_t {
  none = 0,         ///< one uniform bound: the topology-agnostic baseline
  block = 1,        ///< FaCTz-B: per-tile bounds from analytic safe bounds + exact repair
  speculative = 2,  ///< FaCTz-S: per-vertex speculation, the ratio mode (default)
};
/// The entropy coder of the codes. `context` (adaptive binary coding with the neighbours' codes
/// as contexts, docs/codec.md) codes scalar streams only. `smallest` is an option, never a
/// stream's coder: a scalar stream is written with each of the three and the smallest is kept
/// (ANS, then Huffman, then context on ties). The vector APIs refuse both (their GPU path
/// writes the CPU's bytes with ANS or Huffman).
enum class Coder : uint8_t { huffman = 0, ans = 1, context = 2, smallest = 255 };
enum class BoundMode : uint8_t {
  abs = 0,  ///< eb = bound
  rel = 1,  ///< eb = bound * (max - min) over both components
};
/// Where the work runs. The bytes never depend on it (a GPU writes the CPU's bytes).
enum class Policy : uint8_t {
  serial = 0,  ///< one CPU thread
  omp = 1,     ///< OpenMP threads (Options::threads)
  /// The CUDA backend on device Options::device (docs/architecture.md, "CUDA backend").
  /// Builds without it, and machines without a device, give backend_unavailable.
  cuda = 2,
};
/// The value type of a stream (its header's data type): float32 fields (VectorField2D) or
/// float64 fields (VectorField2D64, format version 6). Each decoder returns the type it was
/// written with: decompress / decompress_into(float) refuse a float64 stream and
/// decompress64 / decompress_into(double) a float32 one (invalid_argument naming the other
/// call), so values are never rounded or widened silently.
enum class DType : uint8_t { float32 = 1, float64 = 2 };

/// Options::device value that picks a device per process: the node-local MPI rank
/// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, ...; 0 when launched
/// otherwise) modulo the number of devices (docs/multiblock.md, "GPUs").
inline constexpr int kDeviceAuto = -1;

/// Where a compression stands (Options::progress): the stage that has just finished
/// ("mask", "frontend", "encode", "entropy", "container"; "block" for each block of a
/// multi-block file) and the fraction of the run done, increasing, 1 on the last call.
struct Progress {
  std::string_view stage;
  double fraction = 0;
};
/// Calls never overlap; they come from the calling thread, except in compress_multiblock,
/// whose blocks may report from OpenMP worker threads (one at a time). The hook cannot
/// change the stream and must not throw. The CUDA backend reports only the end.
using ProgressHook = std::function<void(const Progress&)>;

struct Options {
  Mode mode = Mode::speculative;
  Coder coder = Coder::ans;  ///< ans (byte-plane rANS with contexts; default) or huffman
  BoundMode bound_mode = BoundMode::rel;
  double bound = 1e-2;  ///< ABS value or REL fraction; must be finite and >= 0
  bool zstd = true;     ///< apply the lossless zstd stage where it shrinks a section
  Policy policy = Policy::omp;
  int threads = 0;      ///< OpenMP threads (0: OpenMP default); ignored for serial
  int64_t anchor_stride = 4096;  ///< speculative mode: anchor lattice stride, a power of two in [2, 4096]
  /// Outer rows/columns stored exactly, bits of factz::EdgeBits (multiblock.hpp): blocks of a
  /// decomposed field keep their shared boundaries exact (docs/multiblock.md). Decoders need
  /// not know it; the stream is an ordinary one.
  uint8_t exact_edges = 0;
  /// Policy::cuda: CUDA device ordinal in [0, device count), or kDeviceAuto. A device that
  /// does not exist is invalid_argument (the message gives the count); ignored otherwise.
  int device = 0;
  /// Where the field came from: the bytes of factz::encode_source_record (factz/io.hpp), a
  /// netCDF or HDF5 variable's name, dimensions, slice, attributes and coordinates, stored
  /// as they are in section 12 (format version 4) and read back with factz::stream_source.
  /// It must decode and describe this field (invalid_argument otherwise). Empty: none.
  std::vector<uint8_t> source{};
  /// Optional progress report (Progress); empty: none.
  ProgressHook progress{};
};

struct CompressStats {
  double eb_abs = 0;            ///< absolute bound used
  /// Vertices stored with all their bits (in either component). Modes none and block list
  /// other vertices that miss their tile's bound as shorter values within their own bound
  /// (docs/architecture.md, "FaCTz-B as built"), and float64 block mode some rounded to 24
  /// bits; those are not counted.
  int64_t exact_vertices = 0;
  int64_t repair_rounds = 0;    ///< block mode: rounds of exact check + repair
  int64_t repaired_vertices = 0;///< block mode: vertices sent to exact storage by repair
  int64_t masked_vertices = 0;  ///< missing vertices (the field's mask and NaN), stored losslessly
  /// Wall seconds per pipeline stage ("frontend", "encode", "entropy", "container").
  std::vector<std::pair<std::string, double>> stage_seconds;
};

struct DecompressOptions {
  Policy policy = Policy::omp;
  int threads = 0;
  int device = 0;  ///< Policy::cuda: CUDA device ordinal, or kDeviceAuto (as Options::device)
};

/// Compresses a vector field. Missing vertices (field.mask, and every vertex with a NaN
/// component: factz::missing_mask) are stored losslessly and excluded from the mesh and the
/// bound; a REL bound is relative to the range of the valid vertices. Fails with
/// invalid_argument on bad fields (an infinite value at a valid vertex, with the count and
/// first position) or options.
Result<std::vector<uint8_t>> compress(const VectorField2D& field, const Options& options,
                                      CompressStats* stats = nullptr);

/// Compresses a float64 field into a float64 stream (docs/architecture.md, "float64"): the
/// same modes, coders, zstd stage, masks and guarantees, decided on the doubles themselves:
/// |x' - x| <= eb checked exactly in double, the critical points of the float64 mesh kept by
/// the exact float64 predicates, exactly stored and missing vertices kept with all 64 bits.
/// CompressStats::eb_abs is the double bound used. Policy::cuda gives the same bytes from
/// the GPU. Not yet: multi-block files, the C API, Python and the HDF5 filter take float32
/// fields only.
Result<std::vector<uint8_t>> compress(const VectorField2D64& field, const Options& options,
                                      CompressStats* stats = nullptr);

/// compress of a field the caller gives up (std::move(field), or a temporary): the same
/// bytes, with less memory: the speculative mode on the CPU takes the planes as its working
/// state instead of copying them (peak memory about one field less). The field is left
/// empty (default-constructed) after the call, whatever its outcome.
Result<std::vector<uint8_t>> compress(VectorField2D&& field, const Options& options, CompressStats* stats = nullptr);
Result<std::vector<uint8_t>> compress(VectorField2D64&& field, const Options& options,
                                      CompressStats* stats = nullptr);

/// Decompresses a stream produced by compress. Missing vertices come back with the bits
/// they held and in the result's mask (decompress_into: their bits, and the mask in the
/// overload that takes one). Untrusted bytes give corrupt_stream / unsupported_version,
/// never a crash.
Result<VectorField2D> decompress(std::span<const uint8_t> stream, const DecompressOptions& options = {});

/// Decompresses a float64 stream (written by compress of a VectorField2D64) into a float64
/// field, missing vertices with their 64 bits and in the result's mask. A float32 stream is
/// invalid_argument (decode it with decompress). Policy::cuda decodes on the GPU, to the same
/// doubles.
Result<VectorField2D64> decompress64(std::span<const uint8_t> stream, const DecompressOptions& options = {});

/// Grid size {nx, ny} of a stream (float32 or float64): validates the container, the header
/// and the symbol count its per-vertex stream records (so a forged size is refused before a
/// caller allocates for it), without decoding.
Result<std::pair<int64_t, int64_t>> stream_dims(std::span<const uint8_t> stream);

/// The components a FaCTz stream's header declares (1: a scalar field, 2: a 2D vector field,
/// 3: a 3D vector field), read from its first bytes without validating the stream (the
/// decoders check everything), in either container (classic, or compact from format version
/// 18), so that a caller picks the decoder; 0 when they are not the start of a FaCTz stream of
/// a version this build reads.
int stream_components(std::span<const uint8_t> stream);

/// What a caller needs to allocate for a stream: its grid and its value type.
struct StreamInfo {
  int64_t nx = 0;
  int64_t ny = 0;
  DType dtype = DType::float32;  ///< which decoder takes it (decompress or decompress64)
};
/// stream_dims with the stream's data type (the same checks).
Result<StreamInfo> stream_info(std::span<const uint8_t> stream);

/// Decompresses into caller-owned planes of exactly nx * ny floats each (see stream_dims):
/// no allocation of the output, as a GPU or an HDF5 filter would use it.
Status decompress_into(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                       const DecompressOptions& options = {});

/// decompress_into that also writes the mask: `mask` holds nx * ny bytes (else
/// invalid_argument) and gets 1 where the vertex is missing (u and v hold the bits it had when
/// compressed), 0 elsewhere; all 0 for a stream without missing vertices.
Status decompress_into(std::span<const uint8_t> stream, std::span<float> u, std::span<float> v,
                       std::span<uint8_t> mask, const DecompressOptions& options = {});

/// decompress_into of a float64 stream into caller planes of nx * ny doubles each (a
/// float32 stream is invalid_argument); with `mask` as above.
Status decompress_into(std::span<const uint8_t> stream, std::span<double> u, std::span<double> v,
                       const DecompressOptions& options = {});
Status decompress_into(std::span<const uint8_t> stream, std::span<double> u, std::span<double> v,
                       std::span<uint8_t> mask, const DecompressOptions& options = {});

const char* mode_name(Mode m);
const char* coder_name(Coder c);
const char* dtype_name(DType t);  ///< "float32", "float64"

}  // namespace factz
