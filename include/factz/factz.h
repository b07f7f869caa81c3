/* FaCTz stable C API: error-bounded lossy compression of 2D and 3D vector fields that keeps
 * every critical point (see README.md and docs/python.md).
 *
 * Rules of this interface (they hold for every function below):
 * - Plain C99: no C++ type crosses it and no exception escapes it; every function returns
 *   a factz_status (or a plain value that cannot fail).
 * - Buffers are owned by the caller. compress writes into a caller buffer whose capacity is
 *   given; factz_compress_bound() says how much always suffices, and a too small buffer is
 *   FACTZ_BUFFER_TOO_SMALL with the size needed written to *out_size (nothing else changes).
 * - Fields are two planes u and v of nx * ny values each, x fastest (index = y * nx + x):
 *   a numpy array of shape (ny, nx) in C order. The values are float32 (factz_compress, ...)
 *   or, since 1.4.0, float64 (the functions ending in _f64, which write format version 6
 *   streams, 7 in mode speculative). Each decoder returns the type a stream was written with: the float32
 *   functions refuse a float64 stream and the _f64 functions a float32 one
 *   (FACTZ_INVALID_ARGUMENT naming the functions to use; factz_stream_info tells which), so
 *   values are never rounded or widened silently. 3D fields (since 1.5.0) are three planes
 *   u, v, w of nx * ny * nz values: the functions ending in 3d (float32) and, since 1.8.0,
 *   the same ending in 3d_f64 (float64; section "3D vector fields").
 * - Missing data (since 1.2.0 declarable; docs/usage.md, "Missing data"): a vertex is
 *   missing when u or v is NaN, when its byte of an optional mask (nx * ny bytes, same
 *   indexing) is nonzero, or when u equals the declared fill_u or v the declared fill_v of
 *   factz_options. Missing vertices are stored bit for bit (NaN payloads and fill values
 *   included), are outside the error bound and the mesh (a triangle touching one holds no
 *   critical point), and come back in the mask of factz_decompress_masked. An infinite
 *   value is an error at a valid vertex and allowed at a missing one (so +-inf may be a
 *   declared fill value).
 * - After a failure, factz_last_error() returns a message for the calling thread
 *   ("corrupt_stream: section 3 (codes_u) checksum mismatch").
 * - The bytes of a stream depend only on the field and the options (not on the thread
 *   count) and are the same as the C++ API's (include/factz/factz.hpp) for the same options.
 *
 * Versioning: FACTZ_C_API_VERSION is bumped whenever a declaration here changes; existing
 * enum values and struct members are never renumbered or reordered. factz_options carries
 * its own size (struct_size) so that a later, longer struct stays compatible: members are
 * only appended, and the library reads a member only when struct_size covers it (a program
 * built against 1.0.0, without policy and device, keeps its behaviour). factz_comparison,
 * which the library writes, is versioned the same way through the size the program passes
 * (factz_compare and factz_compare_masked are macros that pass sizeof(factz_comparison)).
 *
 * 1.1.0: factz_policy, factz_options.policy and .device, factz_decompress_with_options,
 *        factz_options_init as a macro over factz_options_init_sized.
 * 1.2.0: missing data: factz_options.has_fill_u / fill_u / has_fill_v / fill_v,
 *        factz_compress_masked, factz_decompress_masked, factz_compare_masked,
 *        factz_count_critical_points_masked; factz_comparison.masked_vertices and
 *        .mask_mismatch; factz_compare as a macro over factz_compare_sized;
 *        FACTZ_FORMAT_VERSION 3.
 * 1.3.0: factz_options.progress / progress_user (a progress report during compression);
 *        FACTZ_FORMAT_VERSION 5.
 * 1.4.0: float64 fields: factz_compress_f64, factz_compress_masked_f64, factz_decompress_f64,
 *        factz_decompress_with_options_f64, factz_decompress_masked_f64, factz_compare_f64,
 *        factz_compare_masked_f64, factz_count_critical_points_f64 (+ _masked_f64);
 *        factz_dtype and factz_stream_info; factz_options.has_fill_u64 / has_fill_v64 /
 *        fill_u64 / fill_v64; FACTZ_FORMAT_VERSION 6.
 * 1.4.x: mode speculative predicts with the cubic predictor and names it in the stream:
 *        FACTZ_FORMAT_VERSION 7 (no interface change; older builds refuse these streams
 *        as FACTZ_UNSUPPORTED_VERSION).
 * 1.4.x: mode speculative segments its codes (one entropy table per group of levels):
 *        FACTZ_FORMAT_VERSION 9 (no interface change; version 7 streams still decode).
 * 1.5.0: 3D vector fields (the section "3D vector fields" at the end): factz_compress3d,
 *        factz_compress_bound3d, factz_stream_dims3d, factz_decompress3d,
 *        factz_count_critical_points3d, factz_comparison3d and factz_compare3d (a macro over
 *        factz_compare3d_sized); the 2D decoders and factz_stream_dims / factz_stream_info
 *        given a 3D stream (and the 3D ones given a 2D stream) answer FACTZ_INVALID_ARGUMENT
 *        naming the functions to use; 3D streams are format version 8 (10 in mode
 *        speculative, whose codes are segmented: FACTZ_FORMAT_VERSION 10).
 * 1.6.0: missing vertices in 3D fields, as in 2D (the tetrahedra touching one leave the
 *        mesh, its bits come back exactly): a NaN component marks one, and
 *        factz_compress3d_masked / factz_decompress3d_masked take and return a mask; such
 *        streams are format version 12: FACTZ_FORMAT_VERSION 12 (3D fields still refuse
 *        the fill values of factz_options, which name u and v).
 * 1.7.0: the analysis of 3D fields with a mask, as in 2D: factz_count_critical_points3d_masked
 *        and factz_compare3d_masked (a macro over factz_compare3d_masked_sized, which takes a
 *        mask per field). No stream changes: FACTZ_FORMAT_VERSION stays 12.
 * 1.7.x: the C++ library writes float64 3D vector fields as format version 13:
 *        FACTZ_FORMAT_VERSION 13 (no interface change: this interface does not take such
 *        fields yet, and its 3D decoders refuse their streams as FACTZ_INVALID_ARGUMENT).
 * 1.8.0: float64 3D fields: factz_compress3d_f64, factz_compress3d_masked_f64,
 *        factz_decompress3d_f64, factz_decompress3d_masked_f64, factz_count_critical_points3d_f64
 *        (+ _masked_f64), factz_compare3d_f64 and factz_compare3d_masked_f64 (macros over
 *        factz_compare3d_sized_f64 / factz_compare3d_masked_sized_f64), factz_stream_info3d;
 *        the fill values of 3D fields: factz_options.has_fill_w / fill_w / has_fill_w64 /
 *        fill_w64, and the 3D functions read the fill values of u, v and w (until 1.7.0
 *        they refused every fill value). No stream changes: FACTZ_FORMAT_VERSION stays 13.
 */
#ifndef FACTZ_FACTZ_H
#define FACTZ_FACTZ_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of this C interface (major * 10000 + minor * 100 + patch). */
#define FACTZ_C_API_VERSION 10800
/** Newest stream format version (docs/format.md): 13 for every float64 3D vector field
 *  (factz_compress3d_f64, since 1.8.0), 12 for every 3D
 *  vector field with missing vertices (a NaN component), 10 for the other 3D vector fields of
 *  mode speculative (factz_compress3d, since 1.5.0; its codes are segmented), 8 for the
 *  other 3D modes; 9 for every 2D stream of mode speculative (its meta
 *  section names the cubic predictor, its codes are segmented), float32 or float64; otherwise 6 for every float64 field (the _f64 functions). A float32 2D field in
 *  modes none and block is written as version 5 when it has missing vertices, and as
 *  version 2 without any, byte for byte as before. */
#define FACTZ_FORMAT_VERSION 13
/** HDF5 filter id of the plugin libh5zfactz.so (hdf5/), from the range 32768-65535 that
 *  The HDF Group leaves unregistered for testing; to be registered before 1.0. */
#define FACTZ_HDF5_FILTER_ID 40410

/** Result of every fallible call. Values 0-7 equal factz::Code; never renumbered. */
typedef enum factz_status {
  FACTZ_OK = 0,
  FACTZ_INVALID_ARGUMENT = 1,    /**< bad field, options, sizes or pointers */
  FACTZ_CORRUPT_STREAM = 2,      /**< the bytes are not a valid FaCTz stream */
  FACTZ_UNSUPPORTED_VERSION = 3, /**< a stream of another format version */
  FACTZ_BACKEND_UNAVAILABLE = 4, /**< e.g. FACTZ_POLICY_CUDA without a CUDA backend or device */
  FACTZ_IO = 5,
  FACTZ_CUDA = 6,
  FACTZ_INTERNAL = 7,            /**< out of memory or a bug */
  FACTZ_BUFFER_TOO_SMALL = 8     /**< output capacity too small; *out_size holds the size needed */
} factz_status;

/** How much error each vertex may take (header mode byte). */
typedef enum factz_mode {
  FACTZ_MODE_NONE = 0,        /**< one uniform bound, no topological guarantee (baseline) */
  FACTZ_MODE_BLOCK = 1,       /**< FaCTz-B: keeps every critical point, the fast mode */
  FACTZ_MODE_SPECULATIVE = 2  /**< FaCTz-S: keeps every critical point, best ratio (default) */
} factz_mode;

typedef enum factz_coder {
  FACTZ_CODER_HUFFMAN = 0, /**< canonical Huffman */
  FACTZ_CODER_ANS = 1      /**< byte-plane interleaved rANS */
} factz_coder;

/** Where the work runs (factz::Policy); the bytes never depend on it. Since 1.1.0. */
typedef enum factz_policy {
  FACTZ_POLICY_SERIAL = 0, /**< one CPU thread */
  FACTZ_POLICY_OMP = 1,    /**< OpenMP threads (threads; threads == 1 is serial) (default) */
  FACTZ_POLICY_CUDA = 2    /**< the CUDA backend on `device`; FACTZ_BACKEND_UNAVAILABLE in builds
                                without it or on machines without a device */
} factz_policy;

/** The value type of a stream's fields (header data type; factz::DType). Since 1.4.0. */
typedef enum factz_dtype {
  FACTZ_DTYPE_FLOAT32 = 1, /**< float32 planes: factz_decompress, ..._with_options, ..._masked */
  FACTZ_DTYPE_FLOAT64 = 2  /**< float64 planes (format version 6): the same functions ending in _f64 */
} factz_dtype;

/** factz_options.device: one device per process, the node-local MPI rank modulo the device
 *  count (docs/multiblock.md, "GPUs"). */
#define FACTZ_DEVICE_AUTO (-1)

typedef enum factz_bound_mode {
  FACTZ_BOUND_ABS = 0, /**< eb = bound */
  FACTZ_BOUND_REL = 1  /**< eb = bound * (max - min) over both components (default) */
} factz_bound_mode;

/** Compression options. Initialize with factz_options_init, then change fields. */
typedef struct factz_options {
  size_t struct_size;     /**< sizeof(factz_options); set by factz_options_init */
  int mode;               /**< factz_mode; default FACTZ_MODE_SPECULATIVE */
  int coder;              /**< factz_coder; default: the C++ API's (factz::Options) */
  int bound_mode;         /**< factz_bound_mode; default FACTZ_BOUND_REL */
  double bound;           /**< ABS value or REL fraction, finite and >= 0; default 1e-2 */
  int zstd;               /**< nonzero: lossless zstd stage where it shrinks a section; default 1 */
  int threads;            /**< OpenMP threads, 0 = OpenMP default, 1 = serial; bytes never depend on it */
  int64_t anchor_stride;  /**< speculative mode: power of two in [2, 4096]; default 4096 */
  /* Since 1.1.0 (read only when struct_size covers them): */
  int policy;             /**< factz_policy; default FACTZ_POLICY_OMP */
  int device;             /**< FACTZ_POLICY_CUDA: device ordinal or FACTZ_DEVICE_AUTO; default 0.
                               A device that does not exist is FACTZ_INVALID_ARGUMENT */
  /* Since 1.2.0 (read only when struct_size covers them): declared fill values, e.g. a
     netCDF _FillValue / missing_value such as 1e20f, -9999.0f or INFINITY. A vertex is
     missing when its u equals fill_u (has_fill_u nonzero) or its v equals fill_v
     (has_fill_v nonzero). A NaN fill value adds nothing (NaN is always missing). Read by
     every function that takes options and a field; the fill values of a program built
     before 1.2.0 are none. */
  int has_fill_u;         /**< nonzero: fill_u is declared; default 0 */
  float fill_u;           /**< the fill value of u; default 0 (unused unless has_fill_u) */
  int has_fill_v;         /**< nonzero: fill_v is declared; default 0 */
  float fill_v;           /**< the fill value of v; default 0 (unused unless has_fill_v) */
  /* Since 1.3.0 (read only when struct_size covers them): a progress report while
     factz_compress / factz_compress_masked run: the stage that has just finished ("mask",
     "frontend", "encode", "entropy", "container") and the fraction of the run done,
     increasing, 1.0 on the last call. Calls never overlap and come from the calling thread;
     the callback cannot change the stream. NULL (the default): none. */
  void (*progress)(const char* stage, double fraction, void* user);
  void* progress_user;    /**< passed to progress as `user`; default NULL */
  /* Since 1.4.0 (read only when struct_size covers them): the declared fill values of the
     float64 functions (factz_*_f64), compared with the doubles as they are (netCDF's
     NC_FILL_DOUBLE 9.969209968386869e36, a double _FillValue, -9999.0, INFINITY). The _f64
     functions read only these and refuse has_fill_u / has_fill_v (a float32 fill value);
     the float32 functions refuse these. Types never mix: a float rounded from a double fill
     value rarely equals it. */
  int has_fill_u64;       /**< nonzero: fill_u64 is declared; default 0 */
  int has_fill_v64;       /**< nonzero: fill_v64 is declared; default 0 */
  double fill_u64;        /**< the float64 fill value of u; default 0 (unused unless has_fill_u64) */
  double fill_v64;        /**< the float64 fill value of v; default 0 (unused unless has_fill_v64) */
  /* Since 1.8.0 (read only when struct_size covers them): the fill values of the third
     component w of 3D fields, float32 (read by the functions ending in 3d) and float64
     (those ending in 3d_f64), with the rules above: a vertex of a 3D field is missing when
     its u, v or w equals the declared fill value of that component. 2D fields have no w: the
     2D functions refuse these. The fill values of a program built before 1.8.0 name no w. */
  int has_fill_w;         /**< nonzero: fill_w is declared; default 0 */
  float fill_w;           /**< the float32 fill value of w; default 0 (unused unless has_fill_w) */
  int has_fill_w64;       /**< nonzero: fill_w64 is declared; default 0 */
  double fill_w64;        /**< the float64 fill value of w; default 0 (unused unless has_fill_w64) */
} factz_options;

/** Fills the first `size` bytes of *options with the defaults above and sets struct_size to
 *  `size`, which is the caller's sizeof(factz_options) (at least that of 1.0.0, which ends
 *  with anchor_stride). Since 1.1.0; call it through factz_options_init. */
void factz_options_init_sized(factz_options* options, size_t size);

/** Fills *options with the defaults above (options may not be NULL). A macro since 1.1.0, so
 *  that the library learns the struct size the program was built with; the 1.0.0 function
 *  of this name stays in the library for programs built before (it fills the 1.0.0 members). */
void factz_options_init(factz_options* options);
#define factz_options_init(options) factz_options_init_sized((options), sizeof(factz_options))

/** Version string of the library, e.g. "0.1.0". */
const char* factz_version_string(void);
/** FACTZ_C_API_VERSION of the library actually linked. */
int factz_c_api_version(void);

/** Short name of a status ("ok", "invalid_argument", ..., "buffer_too_small"). */
const char* factz_status_name(factz_status status);

/** Message of the last failed call on this thread ("" after a success). The pointer stays
 *  valid until the next factz_ call on the same thread. */
const char* factz_last_error(void);

/** Upper bound on the size of any stream that factz_compress or factz_compress_f64 writes
 *  for an nx x ny field, for every mode, coder and bound (derivation in docs/python.md). 0
 *  when nx or ny is < 1 or the bound does not fit in size_t. 3D fields:
 *  factz_compress_bound3d. */
size_t factz_compress_bound(int64_t nx, int64_t ny);

/** Compresses the field (u, v) of nx * ny floats each into dst[0, dst_capacity).
 *  options may be NULL (defaults). On FACTZ_OK *out_size is the stream size; on
 *  FACTZ_BUFFER_TOO_SMALL it is the capacity needed and dst is unspecified. A vertex with a
 *  NaN component, or holding a fill value declared in options, is missing (see the rules
 *  above); an infinite value at any other vertex is FACTZ_INVALID_ARGUMENT (the message
 *  gives the count and the first position). Equals factz_compress_masked with mask NULL. */
factz_status factz_compress(const float* u, const float* v, int64_t nx, int64_t ny,
                            const factz_options* options, void* dst, size_t dst_capacity,
                            size_t* out_size);

/** factz_compress with a mask of missing vertices: mask is NULL (none) or nx * ny bytes,
 *  nonzero where the vertex is missing, whatever u and v hold there (their bits are stored
 *  as they are). NaN and the fill values of options mark further vertices missing. The
 *  stream is the one the C++ API writes for the field with this mask (VectorField2D::mask);
 *  with no vertex missing it is the stream of factz_compress. Since 1.2.0. */
factz_status factz_compress_masked(const float* u, const float* v, const uint8_t* mask, int64_t nx,
                                   int64_t ny, const factz_options* options, void* dst,
                                   size_t dst_capacity, size_t* out_size);

/** Grid size of a 2D stream (float32 or float64), validated (container, header, symbol
 *  counts) without decoding, so that a caller can allocate the planes for factz_decompress.
 *  A 3D stream is FACTZ_INVALID_ARGUMENT naming factz_stream_dims3d (since 1.5.0). */
factz_status factz_stream_dims(const void* src, size_t src_size, int64_t* nx, int64_t* ny);

/** factz_stream_dims with the stream's value type: *dtype is FACTZ_DTYPE_FLOAT32 (decode with
 *  factz_decompress*) or FACTZ_DTYPE_FLOAT64 (factz_decompress*_f64, planes of doubles). The
 *  same checks; no pointer may be NULL. Since 1.4.0. */
factz_status factz_stream_info(const void* src, size_t src_size, int64_t* nx, int64_t* ny, factz_dtype* dtype);

/** Decompresses a float32 stream into caller planes u and v of exactly nx * ny floats each,
 *  where nx and ny must equal the stream's (factz_stream_dims). threads as in factz_options.
 *  Untrusted bytes give FACTZ_CORRUPT_STREAM / FACTZ_UNSUPPORTED_VERSION, never a crash; a
 *  float64 stream is FACTZ_INVALID_ARGUMENT (decode it with factz_decompress_f64), and so is
 *  a 3D stream (decode it with factz_decompress3d). */
factz_status factz_decompress(const void* src, size_t src_size, float* u, float* v, int64_t nx,
                              int64_t ny, int threads);

/** factz_decompress with the execution settings of options (policy, device, threads; the
 *  other members are read from the stream and ignored here). options may be NULL (defaults).
 *  Since 1.1.0. */
factz_status factz_decompress_with_options(const void* src, size_t src_size, float* u, float* v, int64_t nx,
                                           int64_t ny, const factz_options* options);

/** factz_decompress_with_options that also returns the mask: mask_out (NULL: not wanted)
 *  receives nx * ny bytes, 1 where the vertex is missing and 0 elsewhere (all 0 for a
 *  stream without missing vertices). u and v hold, at a missing vertex, the bits it had
 *  when compressed (the NaN with its payload, the fill value, whatever a mask covered).
 *  The fill values of options play no part in decompression. Since 1.2.0. */
factz_status factz_decompress_masked(const void* src, size_t src_size, float* u, float* v, uint8_t* mask_out,
                                     int64_t nx, int64_t ny, const factz_options* options);

/** Critical point counts of a field and the comparison of an original with a
 *  reconstruction (P1 lost, P2 spurious, P3 type changed), as `factz verify` prints.
 *  Violations are lost + spurious + type_changed + mask_mismatch. The pointwise statistics
 *  run over the vertices valid in both fields. */
typedef struct factz_comparison {
  int64_t cp_original;
  int64_t cp_decompressed;
  int64_t lost;
  int64_t spurious;
  int64_t type_changed;
  double max_abs_error_u;
  double max_abs_error_v;
  double rmse;
  double nrmse;
  double psnr;  /**< +inf when the fields are identical */
  double value_range;  /**< max - min over both components of the original's valid vertices */
  /* Since 1.2.0 (written when the size the program passes covers them): */
  int64_t masked_vertices;  /**< vertices missing in the original */
  int64_t mask_mismatch;    /**< vertices missing in one field only: a violation */
} factz_comparison;

/** Compares (u, v) with (u2, v2), all four nx * ny floats; a NaN component marks a vertex
 *  missing in its field. Writes the first `result_size` bytes of *result, which must cover
 *  the 1.1.0 members (up to value_range). Since 1.2.0; call it through factz_compare. */
factz_status factz_compare_sized(const float* u, const float* v, const float* u2, const float* v2,
                                 int64_t nx, int64_t ny, int threads, factz_comparison* result,
                                 size_t result_size);

/** Compares (u, v) with (u2, v2), all four nx * ny floats. A macro since 1.2.0, so that the
 *  library writes exactly the struct the program was compiled with; the function of this
 *  name stays in the library for programs built before (it writes the 1.1.0 members). */
factz_status factz_compare(const float* u, const float* v, const float* u2, const float* v2,
                           int64_t nx, int64_t ny, int threads, factz_comparison* result);
#define factz_compare(u, v, u2, v2, nx, ny, threads, result) \
  factz_compare_sized((u), (v), (u2), (v2), (nx), (ny), (threads), (result), sizeof(factz_comparison))

/** factz_compare with missing data declared: mask belongs to (u, v) and mask2 to (u2, v2)
 *  (each NULL or nx * ny bytes, nonzero = missing); the fill values of options apply to both
 *  fields, and its threads (policy and device play no part). options may be NULL (none, the
 *  OpenMP default). Pass the mask factz_decompress_masked returned as mask2, or declare the
 *  fill values: a vertex missing in one field only counts in mask_mismatch. Since 1.2.0;
 *  call it through factz_compare_masked. */
factz_status factz_compare_masked_sized(const float* u, const float* v, const uint8_t* mask, const float* u2,
                                        const float* v2, const uint8_t* mask2, int64_t nx, int64_t ny,
                                        const factz_options* options, factz_comparison* result,
                                        size_t result_size);
#define factz_compare_masked(u, v, mask, u2, v2, mask2, nx, ny, options, result)                  \
  factz_compare_masked_sized((u), (v), (mask), (u2), (v2), (mask2), (nx), (ny), (options), (result), \
                             sizeof(factz_comparison))

/** Number of critical points of a field (exact, SoS semantics); a NaN component marks a
 *  vertex missing. */
factz_status factz_count_critical_points(const float* u, const float* v, int64_t nx, int64_t ny,
                                         int threads, int64_t* count);

/** factz_count_critical_points of the field with missing vertices declared as in
 *  factz_compress_masked (mask, the fill values of options) and options' threads. options
 *  may be NULL. Since 1.2.0. */
factz_status factz_count_critical_points_masked(const float* u, const float* v, const uint8_t* mask,
                                                int64_t nx, int64_t ny, const factz_options* options,
                                                int64_t* count);

/* float64 fields (since 1.4.0; docs/architecture.md, "float64 compression"). Each function is
 * its float32 namesake on planes of doubles, with the same rules, except where said: the
 * bound |x' - x| <= eb is checked exactly in double, the critical points are those of the
 * float64 mesh (exact float64 predicates), missing vertices keep all 64 bits, and the
 * stream is format version 6, or 7 in mode speculative (its size stays within
 * factz_compress_bound).
 * Missing vertices: NaN, the mask, and the float64 fill values of options (has_fill_u64 /
 * fill_u64, has_fill_v64 / fill_v64; has_fill_u / has_fill_v are refused).
 * FACTZ_POLICY_CUDA gives the CPU's bytes on a GPU (FACTZ_BACKEND_UNAVAILABLE without one or
 * in a build without CUDA). */

factz_status factz_compress_f64(const double* u, const double* v, int64_t nx, int64_t ny,
                                const factz_options* options, void* dst, size_t dst_capacity,
                                size_t* out_size);

factz_status factz_compress_masked_f64(const double* u, const double* v, const uint8_t* mask, int64_t nx,
                                       int64_t ny, const factz_options* options, void* dst,
                                       size_t dst_capacity, size_t* out_size);

/** Decodes a float64 stream into planes of nx * ny doubles; a float32 stream is
 *  FACTZ_INVALID_ARGUMENT (decode it with factz_decompress). */
factz_status factz_decompress_f64(const void* src, size_t src_size, double* u, double* v, int64_t nx,
                                  int64_t ny, int threads);

factz_status factz_decompress_with_options_f64(const void* src, size_t src_size, double* u, double* v,
                                               int64_t nx, int64_t ny, const factz_options* options);

factz_status factz_decompress_masked_f64(const void* src, size_t src_size, double* u, double* v,
                                         uint8_t* mask_out, int64_t nx, int64_t ny,
                                         const factz_options* options);

/** factz_compare_sized on float64 fields (errors and statistics computed in double); call it
 *  through factz_compare_f64. */
factz_status factz_compare_sized_f64(const double* u, const double* v, const double* u2, const double* v2,
                                     int64_t nx, int64_t ny, int threads, factz_comparison* result,
                                     size_t result_size);
#define factz_compare_f64(u, v, u2, v2, nx, ny, threads, result) \
  factz_compare_sized_f64((u), (v), (u2), (v2), (nx), (ny), (threads), (result), sizeof(factz_comparison))

/** factz_compare_masked_sized on float64 fields; call it through factz_compare_masked_f64. */
factz_status factz_compare_masked_sized_f64(const double* u, const double* v, const uint8_t* mask,
                                            const double* u2, const double* v2, const uint8_t* mask2,
                                            int64_t nx, int64_t ny, const factz_options* options,
                                            factz_comparison* result, size_t result_size);
#define factz_compare_masked_f64(u, v, mask, u2, v2, mask2, nx, ny, options, result)                  \
  factz_compare_masked_sized_f64((u), (v), (mask), (u2), (v2), (mask2), (nx), (ny), (options), (result), \
                                 sizeof(factz_comparison))

factz_status factz_count_critical_points_f64(const double* u, const double* v, int64_t nx, int64_t ny,
                                             int threads, int64_t* count);

factz_status factz_count_critical_points_masked_f64(const double* u, const double* v, const uint8_t* mask,
                                                    int64_t nx, int64_t ny, const factz_options* options,
                                                    int64_t* count);

/* 3D vector fields (since 1.5.0; docs/architecture.md, "3D vector fields").
 * A field is three planes u, v, w of nx * ny * nz float32 values each (float64 since 1.8.0:
 * the functions ending in 3d_f64, at the end), x fastest
 * (index = (z * ny + y) * nx + x): a numpy array of shape (nz, ny, nx) in C order. The mesh
 * is the Freudenthal tetrahedralization of the grid (six tetrahedra per cube) and a
 * critical point is a tetrahedron whose four vectors span the origin, decided exactly
 * (Simulation of Simplicity), with its type from the exact Jacobian. The compressor keeps
 * G0 (|x' - x| <= eb for every component; REL: eb = bound * (max - min) over the three
 * components) and G1 (every tetrahedron keeps its critical point or its absence, and its
 * type). The streams are format version 8 (10 in mode speculative, 12 with missing
 * vertices), the C++ API's bytes (factz::compress(const VectorField3D&, ...)) for the same
 * options.
 *
 * The options are factz_options, read as by factz_compress: mode, coder, bound_mode,
 * bound, zstd, threads, anchor_stride, policy, device and progress. The library decides
 * which of them 3D fields take and answers the others with FACTZ_INVALID_ARGUMENT or
 * FACTZ_BACKEND_UNAVAILABLE and a message (today: modes none, block and speculative, on
 * the CPU; docs/architecture.md, "3D speculative mode", "3D block mode"). A
 * vertex with a NaN component is missing, as in 2D, and so is one whose byte is nonzero in
 * the mask of a function ending in 3d_masked (nx * ny * nz bytes, indexed as the planes): a
 * tetrahedron touching one holds no critical point (in the compressor and the analysis
 * functions alike), the bound applies to the valid vertices, and factz_decompress3d gives the
 * missing vertex back bit for bit. Since 1.8.0 every 3D function that takes options and a
 * field reads its fill values (until then they were FACTZ_INVALID_ARGUMENT): a vertex is
 * missing when its u equals fill_u (has_fill_u), its v fill_v or its w fill_w (has_fill_w,
 * 1.8.0), as factz::mark_missing with factz::FillValues3D marks it; a NaN fill value adds
 * nothing. The float32 functions read only these and refuse the float64 ones (has_fill_u64,
 * has_fill_v64, has_fill_w64), which the 3d_f64 functions read, refusing the float32 ones.
 * A program built before 1.8.0 declares no fill value of w. An infinite value at a valid
 * vertex is FACTZ_INVALID_ARGUMENT.
 *
 * The 3D and 2D functions never mix: a 2D stream given to factz_decompress3d or
 * factz_stream_dims3d, and a 3D stream given to factz_decompress*, factz_stream_dims or
 * factz_stream_info, is FACTZ_INVALID_ARGUMENT naming the functions to use. */

/** Upper bound on the size of any stream factz_compress3d or factz_compress3d_f64 writes for
 *  an nx x ny x nz field, for every mode, coder and bound (derivation in docs/python.md,
 *  "Size bound"). 0 when a dimension is < 1, the grid exceeds 2^40 vertices or the bound
 *  does not fit in size_t. */
size_t factz_compress_bound3d(int64_t nx, int64_t ny, int64_t nz);

/** Compresses the 3D field (u, v, w), nx * ny * nz floats each, into dst[0, dst_capacity).
 *  options may be NULL (defaults). On FACTZ_OK *out_size is the stream size; on
 *  FACTZ_BUFFER_TOO_SMALL it is the capacity needed and dst is unspecified. A null plane,
 *  a dimension below 1 or a grid above 2^40 vertices is FACTZ_INVALID_ARGUMENT. */
factz_status factz_compress3d(const float* u, const float* v, const float* w, int64_t nx, int64_t ny,
                              int64_t nz, const factz_options* options, void* dst, size_t dst_capacity,
                              size_t* out_size);

/** factz_compress3d with the caller's mask: NULL (none) or nx * ny * nz bytes, nonzero =
 *  missing, besides the vertices with a NaN component; the values under the mask are kept
 *  bit for bit (format version 12). Since 1.6.0. */
factz_status factz_compress3d_masked(const float* u, const float* v, const float* w, const uint8_t* mask,
                                     int64_t nx, int64_t ny, int64_t nz, const factz_options* options, void* dst,
                                     size_t dst_capacity, size_t* out_size);

/** Grid size of a 3D stream (float32 or float64), checked as factz_decompress3d checks it
 *  before it allocates (container, header, the id count against the grid), without
 *  decoding; no pointer may be NULL. */
factz_status factz_stream_dims3d(const void* src, size_t src_size, int64_t* nx, int64_t* ny, int64_t* nz);

/** factz_stream_dims3d with the stream's value type: *dtype is FACTZ_DTYPE_FLOAT32 (decode
 *  with factz_decompress3d*) or FACTZ_DTYPE_FLOAT64 (factz_decompress3d*_f64, planes of
 *  doubles). The same checks; no pointer may be NULL. Since 1.8.0 (factz_stream_info, whose
 *  signature has no nz, answers a 3D stream with FACTZ_INVALID_ARGUMENT naming this one). */
factz_status factz_stream_info3d(const void* src, size_t src_size, int64_t* nx, int64_t* ny, int64_t* nz,
                                 factz_dtype* dtype);

/** Decompresses a float32 3D stream into caller planes u, v and w of exactly nx * ny * nz
 *  floats each, where the dimensions must equal the stream's (factz_stream_dims3d). options
 *  may be NULL (defaults); only its execution settings (policy, device, threads) are read.
 *  Untrusted bytes give FACTZ_CORRUPT_STREAM / FACTZ_UNSUPPORTED_VERSION, never a crash; a
 *  float64 3D stream is FACTZ_INVALID_ARGUMENT naming factz_decompress3d_f64. */
factz_status factz_decompress3d(const void* src, size_t src_size, float* u, float* v, float* w, int64_t nx,
                                int64_t ny, int64_t nz, const factz_options* options);

/** factz_decompress3d, and the stream's missing vertices into mask_out (NULL, or nx * ny *
 *  nz bytes: 1 = missing, 0 elsewhere; all 0 for a stream without any). Since 1.6.0. */
factz_status factz_decompress3d_masked(const void* src, size_t src_size, float* u, float* v, float* w,
                                       uint8_t* mask_out, int64_t nx, int64_t ny, int64_t nz,
                                       const factz_options* options);

/** Number of critical points of a 3D field (exact; tetrahedra touching a vertex with a NaN
 *  component hold none), as `factz cp -3` counts them. options may be NULL; its threads and
 *  (since 1.8.0) its fill values are read. */
factz_status factz_count_critical_points3d(const float* u, const float* v, const float* w, int64_t nx,
                                           int64_t ny, int64_t nz, const factz_options* options,
                                           int64_t* count);

/** factz_count_critical_points3d of the field with missing vertices declared as in
 *  factz_compress3d_masked: mask is NULL (none) or nx * ny * nz bytes, nonzero = missing,
 *  besides the vertices with a NaN component; a tetrahedron touching a missing vertex holds
 *  no critical point. The count is the one of the C++ API (factz::critical_points with the
 *  field's mask) and of `factz cp -3`. options may be NULL; its threads and (since 1.8.0) its
 *  fill values are read, as by factz_compress3d_masked. A null count or plane,
 *  a dimension below 1 or a grid above 2^40 vertices is FACTZ_INVALID_ARGUMENT; the mask,
 *  like the planes, must hold nx * ny * nz bytes (C cannot check its length). Since 1.7.0. */
factz_status factz_count_critical_points3d_masked(const float* u, const float* v, const float* w,
                                                  const uint8_t* mask, int64_t nx, int64_t ny, int64_t nz,
                                                  const factz_options* options, int64_t* count);

/** The comparison of an original 3D field with a reconstruction, as `factz verify -3`
 *  prints it: critical points per tetrahedron (P1 lost, P2 spurious, P3 type changed) and
 *  pointwise errors over the vertices valid in both. Versioned by size like
 *  factz_comparison: members are only appended. */
typedef struct factz_comparison3d {
  int64_t cp_original;
  int64_t cp_decompressed;
  int64_t lost;            /**< P1: a critical point of the original missing in its tetrahedron */
  int64_t spurious;        /**< P2: a critical point where the original has none */
  int64_t type_changed;    /**< P3: same tetrahedron, another type */
  int64_t masked_vertices; /**< vertices missing in the original (NaN, or its mask since 1.7.0) */
  int64_t mask_mismatch;   /**< vertices missing in one field only: a violation */
  double max_abs_error_u;
  double max_abs_error_v;
  double max_abs_error_w;
  double rmse;             /**< over the three components together */
  double nrmse;            /**< rmse / value_range */
  double psnr;             /**< +inf when the fields are identical */
  double value_range;      /**< max - min over the three components of the original's valid vertices */
} factz_comparison3d;

/** Compares (u, v, w) with (u2, v2, w2), all six nx * ny * nz floats; a NaN component marks
 *  a vertex missing in its field. Violations are lost + spurious + type_changed +
 *  mask_mismatch. options may be NULL; its threads and (since 1.8.0) its fill values are
 *  read, the fill values applying to both fields as in factz_compare_masked. Writes the first
 *  result_size bytes of *result, which must cover the 1.5.0 struct; call it through
 *  factz_compare3d. */
factz_status factz_compare3d_sized(const float* u, const float* v, const float* w, const float* u2,
                                   const float* v2, const float* w2, int64_t nx, int64_t ny, int64_t nz,
                                   const factz_options* options, factz_comparison3d* result, size_t result_size);
#define factz_compare3d(u, v, w, u2, v2, w2, nx, ny, nz, options, result)                             \
  factz_compare3d_sized((u), (v), (w), (u2), (v2), (w2), (nx), (ny), (nz), (options), (result), \
                        sizeof(factz_comparison3d))

/** factz_compare3d with missing data declared: mask belongs to (u, v, w) and mask2 to
 *  (u2, v2, w2), each NULL (none) or nx * ny * nz bytes, nonzero = missing, besides the
 *  vertices with a NaN component. Pass the mask factz_decompress3d_masked returned as mask2:
 *  a vertex missing in one field only counts in mask_mismatch (a violation), and
 *  masked_vertices counts the original's missing vertices. Statuses as
 *  factz_count_critical_points3d_masked's (a null result, or result_size below the 1.5.0
 *  struct, is FACTZ_INVALID_ARGUMENT too). Since 1.7.0; call it through
 *  factz_compare3d_masked. */
factz_status factz_compare3d_masked_sized(const float* u, const float* v, const float* w, const uint8_t* mask,
                                          const float* u2, const float* v2, const float* w2, const uint8_t* mask2,
                                          int64_t nx, int64_t ny, int64_t nz, const factz_options* options,
                                          factz_comparison3d* result, size_t result_size);
#define factz_compare3d_masked(u, v, w, mask, u2, v2, w2, mask2, nx, ny, nz, options, result)                 \
  factz_compare3d_masked_sized((u), (v), (w), (mask), (u2), (v2), (w2), (mask2), (nx), (ny), (nz), (options), \
                               (result), sizeof(factz_comparison3d))

/* float64 3D fields (since 1.8.0). Each function is its float32 namesake on planes of
 * doubles, with the same rules, except where said: the bound |x' - x| <= eb is checked
 * exactly in double, the critical points are those of the float64 mesh (exact float64
 * predicates), missing vertices keep all 64 bits, and the stream is format version 13, the
 * C++ API's bytes (factz::compress(const VectorField3D64&, ...)) for the same options; its
 * size stays within factz_compress_bound3d. Missing vertices: NaN, the mask, and the float64
 * fill values of options (has_fill_u64 / fill_u64, has_fill_v64 / fill_v64, has_fill_w64 /
 * fill_w64; the float32 ones are FACTZ_INVALID_ARGUMENT). The float32 decoders refuse a
 * float64 3D stream and these a float32 one, with FACTZ_INVALID_ARGUMENT naming the function
 * to use; factz_stream_info3d tells which. */

factz_status factz_compress3d_f64(const double* u, const double* v, const double* w, int64_t nx, int64_t ny,
                                  int64_t nz, const factz_options* options, void* dst, size_t dst_capacity,
                                  size_t* out_size);

factz_status factz_compress3d_masked_f64(const double* u, const double* v, const double* w, const uint8_t* mask,
                                         int64_t nx, int64_t ny, int64_t nz, const factz_options* options,
                                         void* dst, size_t dst_capacity, size_t* out_size);

/** Decodes a float64 3D stream into planes of nx * ny * nz doubles; a float32 3D stream is
 *  FACTZ_INVALID_ARGUMENT (decode it with factz_decompress3d). */
factz_status factz_decompress3d_f64(const void* src, size_t src_size, double* u, double* v, double* w, int64_t nx,
                                    int64_t ny, int64_t nz, const factz_options* options);

factz_status factz_decompress3d_masked_f64(const void* src, size_t src_size, double* u, double* v, double* w,
                                           uint8_t* mask_out, int64_t nx, int64_t ny, int64_t nz,
                                           const factz_options* options);

factz_status factz_count_critical_points3d_f64(const double* u, const double* v, const double* w, int64_t nx,
                                               int64_t ny, int64_t nz, const factz_options* options,
                                               int64_t* count);

factz_status factz_count_critical_points3d_masked_f64(const double* u, const double* v, const double* w,
                                                      const uint8_t* mask, int64_t nx, int64_t ny, int64_t nz,
                                                      const factz_options* options, int64_t* count);

/** factz_compare3d_sized on float64 fields (errors and statistics computed in double); call
 *  it through factz_compare3d_f64. */
factz_status factz_compare3d_sized_f64(const double* u, const double* v, const double* w, const double* u2,
                                       const double* v2, const double* w2, int64_t nx, int64_t ny, int64_t nz,
                                       const factz_options* options, factz_comparison3d* result,
                                       size_t result_size);
#define factz_compare3d_f64(u, v, w, u2, v2, w2, nx, ny, nz, options, result)                             \
  factz_compare3d_sized_f64((u), (v), (w), (u2), (v2), (w2), (nx), (ny), (nz), (options), (result), \
                            sizeof(factz_comparison3d))

/** factz_compare3d_masked_sized on float64 fields; call it through factz_compare3d_masked_f64. */
factz_status factz_compare3d_masked_sized_f64(const double* u, const double* v, const double* w,
                                              const uint8_t* mask, const double* u2, const double* v2,
                                              const double* w2, const uint8_t* mask2, int64_t nx, int64_t ny,
                                              int64_t nz, const factz_options* options, factz_comparison3d* result,
                                              size_t result_size);
#define factz_compare3d_masked_f64(u, v, w, mask, u2, v2, w2, mask2, nx, ny, nz, options, result)                 \
  factz_compare3d_masked_sized_f64((u), (v), (w), (mask), (u2), (v2), (w2), (mask2), (nx), (ny), (nz), (options), \
                                   (result), sizeof(factz_comparison3d))

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* FACTZ_FACTZ_H */
