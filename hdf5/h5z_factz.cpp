// HDF5 filter plugin libh5zfactz.so: FaCTz compression of float32 and float64 chunks
// (docs/python.md, "HDF5 filter"; docs/usage.md, "C, Python, HDF5").
//
// Dataset layouts:
// - vector field: rank >= 3, the third-to-last axis is the component axis (u, v) of
//   length 2 and is chunked whole; every axis before it is chunked by 1. A chunk is then
//   one (2, cy, cx) vector field, compressed by factz::compress: a float32 dataset
//   (H5T_IEEE_F32LE) as a VectorField2D, a float64 one (H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE)
//   as a VectorField2D64 (format version 6 streams: the bound checked in double, missing
//   values with all 64 bits; docs/architecture.md, "float64 compression").
// - 3D vector field (issue 22): rank >= 4, the fourth-to-last axis is the component axis
//   (u, v, w) of length 3 and is chunked whole; every axis before it is chunked by 1. A chunk
//   is then one (3, cz, cy, cx) field, compressed by factz::compress: a float32 dataset as a
//   VectorField3D (format version 10, or 8 in modes none and block, 12 with missing vertices;
//   factz/compress3d.hpp), a float64 one as a VectorField3D64 (format version 13: the bound
//   checked in double, missing values with all 64 bits), with the options of the user's
//   cd_values passed through: which modes and policies 3D fields take is the library's
//   decision, and a chunk it refuses fails with its message. No exact edges (set_local
//   refuses them); missing data as in the 2D layouts: a NaN, or a value equal to the
//   dataset's or the declared fill value in any component, marks a missing vertex (float64:
//   the dataset's fill value only, as for 2D float64 datasets).
//   Such a dataset matched no layout before (its component axis, chunked by 3, sits where
//   the 2D and scalar layouts require a chunk of 1), so no file changes meaning.
// - scalar field (rank >= 2, any other shape): one (cy, cx) field per chunk, compressed by
//   factz::compress_scalar with mode none (cd_values[0] must be 0, or no cd_values at all),
//   when the plugin is built with the scalar module (FACTZ_HAVE_SCALAR); otherwise refused
//   by can_apply with a clear message. float32 only: can_apply refuses float64 scalar
//   datasets (not yet).
//
// cd_values (user part, all optional, defaults in brackets):
//   [0] mode: 0 none, 1 block, 2 speculative [2]
//   [1] bound type: 0 ABS, 1 REL [1]
//   [2] bound, low 32 bits of the IEEE float64 [bits of 1e-2]
//   [3] bound, high 32 bits of the IEEE float64
//   [4] coder: 0 Huffman, 1 ANS [the library's default, factz::Options]
//   [5] exact edges: bits of factz::EdgeBits (multiblock.hpp), the chunk's outer rows and
//       columns stored exactly [0]. 15 (all four) makes the guarantee hold across chunk
//       boundaries: a triangle then lies inside one chunk (that chunk's guarantee) or has
//       its three vertices exact (docs/multiblock.md, "Parallel HDF5"). Give the bound as ABS,
//       resolved over the whole dataset: a REL bound would be resolved per chunk.
//   [6] declared fill value: the bits of an IEEE float32 (1e20f is 1621981420) that marks a
//       vertex missing, for data whose dataset has no fill value property (nccopy writes
//       its copies in no-fill mode: the netCDF `_FillValue` attribute is then the only
//       record of it, and attributes are out of a filter's reach) [none]. float32 datasets
//       only: set_local refuses it for a float64 dataset (a float widened to double rarely
//       equals the double fill value it was rounded from: 1e20f is not 1e20), whose fill
//       value is its fill value property, read with all 64 bits.
//
// Missing data (docs/architecture.md, "Masks"): a vertex is missing when a component is
// NaN, or equals the dataset's fill value (when user-defined) or the declared fill value.
// Missing vertices are stored bit for bit and are outside the mesh and the bound (REL is
// relative to the range of the valid vertices), so they decode to the fill value's bits.
// The dataset's fill value counts only when H5Pfill_value_defined says USER_DEFINED
// (h5py's fillvalue=, netCDF-4 in fill mode: the `_FillValue` attribute, or the netCDF
// default 9.96921e36 without one); HDF5's default (0, H5D_FILL_VALUE_DEFAULT) is data, and
// zeros stay data. Scalar streams have no mask yet: a scalar chunk that holds a fill value
// fails (an optional filter then stores it unfiltered) instead of losing its data to a
// bound stretched by the fill value.
//
// set_local stores the chunk geometry after the first five user values and moves the
// optional ones behind it; which slots exist is told by the count alone, so that files
// without the newer slots are what the plugin always wrote:
//   [5] layout: 1 vector (float32), 2 scalar (float32), 3 vector float64, 4 3D vector
//       (float32), 5 3D vector float64 (to layout 4 what layout 3 is to layout 1); 0 when
//       can_apply refused the dataset but the filter is optional (HDF5 still calls
//       set_local): every chunk is then refused, and HDF5 stores it unfiltered
//   [6] chunk cy   [7] chunk cx                                            (8 values)
//   [8] exact edges                  (9 values: written when non-zero or a fill follows)
//       layouts 4 and 5: the chunk's cz instead, always written (9 values at least): 3D
//       chunks have no exact edges
// layouts 1, 2 and 4:
//   [9] the dataset's fill value, float32 bits, when user-defined         (10 values)
//  [10] the declared fill value (user's [6]); [9] is then the quiet NaN 0x7FC00000
//       when the dataset has no user-defined fill value (NaN marks nothing more) (11 values)
// layouts 3 and 5 (float64; no declared fill value, so 10 values never occur):
//   [9], [10] the dataset's fill value, float64 bits, low and high 32-bit words, when
//       user-defined                                                      (11 values)
// The layout also tells the decoder which stream type a chunk must hold (a float32 stream
// in a float64 dataset, a 2D stream in a 3D dataset, or the reverse, is refused). A plugin
// from before layout 3 refuses its chunks with the library's message (a float64 stream
// given to the float decoder); one from before layout 4 refuses to write a layout-4
// dataset ("layout must be 1, 2 or 3") and to read its chunks (a 3D stream given to the 2D
// decoder); one from before layout 5 refuses to write a layout-5 dataset ("layout must be
// 1, 2, 3 or 4") and to read its chunks (a 3D stream in what it takes for a 2D dataset).
// User counts are 0 to 7, set_local's 8 to 11: the two never overlap. set_local also
// accepts its own values back (a property list copied from a dataset): it keeps the
// declared fill value and reads [9] again from the new dataset's property list. Files
// written before the fill slots (8 or 9 values) read and write as before; a plugin from
// before them writes into a dataset with 10 or 11 values as if it had none (no mask).
// The stream is self-describing (docs/format.md): decoding needs no cd_values, and a
// masked chunk (format version 3) carries its mask and the missing vertices' bits.
//
// Where the work runs is the environment variable FACTZ_POLICY of the process that reads or
// writes (serial, omp, cuda or cuda:N; unset: omp; plain cuda: the node-local MPI rank
// modulo the device count), not a cd_values slot: it is a setting of the machine, not of
// the data, and a file written on a GPU must read anywhere. The vector path hands it to
// factz::compress / decompress_into (Policy::cuda: the GPU, or backend_unavailable);
// scalar datasets have no GPU path and refuse cuda.
#include <hdf5.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "factz/compress3d.hpp"
#include "factz/factz.h"
#include "factz/factz.hpp"
#include "factz/topology.hpp"
#include "factz/topology3d.hpp"
#ifdef FACTZ_HAVE_SCALAR
#include "factz/scalar.hpp"
#endif

namespace {

constexpr H5Z_filter_t kFilterId = FACTZ_HDF5_FILTER_ID;
constexpr size_t kUserValues = 5;            ///< mode, bound type, bound (2), coder
constexpr size_t kMostUserValues = 7;        ///< ... + exact edges + declared fill value
constexpr size_t kAllValues = 8;             ///< user values + geometry
constexpr size_t kEdgeValues = 9;            ///< ... + exact edges
constexpr size_t kDatasetFillValues = 10;    ///< ... + the dataset's fill value
constexpr size_t kDeclaredFillValues = 11;   ///< ... + the declared fill value
/// can_apply refused the dataset, yet HDF5 keeps an optional filter in the pipeline and
/// calls set_local: every chunk is then refused by encode, so HDF5 stores it unfiltered.
constexpr unsigned kLayoutRefused = 0;
constexpr unsigned kLayoutVector = 1;
constexpr unsigned kLayoutScalar = 2;
constexpr unsigned kLayoutVector64 = 3;      ///< a vector field of float64 values
constexpr unsigned kLayoutVector3D = 4;      ///< a 3D vector field of float32 values (u, v, w)
constexpr unsigned kLayoutVector3D64 = 5;    ///< a 3D vector field of float64 values (u, v, w)
constexpr uint32_t kNoFill = 0x7FC00000u;    ///< a quiet NaN: marks nothing NaN does not
constexpr uint64_t kNoFill64 = 0x7FF8000000000000u;  ///< the float64 quiet NaN

/// Pushes a message on the HDF5 error stack (what h5py shows in its exception).
void report(const char* func, hid_t minor, const std::string& message) {
  H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_PLINE, minor, "factz: %s", message.c_str());
}

struct Params {
  unsigned mode = 2;
  unsigned bound_mode = 1;
  double bound = 1e-2;
  unsigned coder = unsigned(factz::Options{}.coder);
  unsigned exact_edges = 0;
  uint32_t dataset_fill = kNoFill;      ///< float32 bits; NaN: none
  uint64_t dataset_fill64 = kNoFill64;  ///< float64 bits (layouts 3 and 5); NaN: none
  uint32_t declared_fill = kNoFill;     ///< float32 bits; NaN: none
  bool declared = false;                ///< a declared fill value was given (kept even if NaN)
};

/// Layouts whose chunks hold 3D vector fields (u, v, w), and float64 values.
bool is_3d(unsigned layout) { return layout == kLayoutVector3D || layout == kLayoutVector3D64; }
bool is_f64(unsigned layout) { return layout == kLayoutVector64 || layout == kLayoutVector3D64; }

/// The slots after the first five among n cd_values; the count alone tells the layout
/// (the comment at the top of this file), with the stored layout for the fill slots. Reads
/// the exact edges and the fill values.
bool optional_values(size_t n, const unsigned* cd, Params& p, std::string& why) {
  if (n > kDeclaredFillValues) {
    why = "at most 7 cd_values (mode, bound type, bound low, bound high, coder, exact edges, fill value), or the " +
          std::to_string(kAllValues) + " to " + std::to_string(kDeclaredFillValues) + " set_local writes; got " +
          std::to_string(n) + " (a newer plugin's?)";
    return false;
  }
  const bool geometry = n >= kAllValues;
  p.exact_edges = geometry ? (n >= kEdgeValues ? cd[8] : 0) : (n > kUserValues ? cd[5] : 0);
  if (geometry && is_3d(cd[5])) {
    p.exact_edges = 0;  // slot 8 holds the chunk's cz
    if (n < kEdgeValues)
      why = "8 cd_values with the 3D layout (" + std::to_string(cd[5]) + "), whose chunk cz takes slot 8";
  }
  if (geometry && is_f64(cd[5])) {
    if (n == kDatasetFillValues)
      why = "10 cd_values with the float64 layout (" + std::to_string(cd[5]) +
            "), whose fill value takes slots 9 and 10";
    if (n == kDeclaredFillValues) p.dataset_fill64 = uint64_t(cd[9]) | uint64_t(cd[10]) << 32;
  } else {
    if (n == kDatasetFillValues || n == kDeclaredFillValues) p.dataset_fill = cd[9];
    p.declared = n == kMostUserValues || n == kDeclaredFillValues;
    if (p.declared) p.declared_fill = cd[n == kMostUserValues ? 6 : 10];
  }
  if (why.empty() && p.exact_edges > 15)
    why = "the exact edges (cd_values[5]) are bits 1, 2, 4, 8 (at most 15), got " + std::to_string(p.exact_edges);
  return why.empty();
}

float float_of(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// The fill values that mark vertices missing (NaN ones add nothing: NaN always does).
std::vector<float> fill_values(const Params& p) {
  std::vector<float> out;
  for (const uint32_t bits : {p.dataset_fill, p.declared_fill})
    if (const float f = float_of(bits); !std::isnan(f) && std::find(out.begin(), out.end(), f) == out.end())
      out.push_back(f);
  return out;
}

/// The float64 dataset fill value (layouts 3 and 5), or none for its NaN.
std::optional<double> fill_value64(const Params& p) {
  const double f = std::bit_cast<double>(p.dataset_fill64);
  return std::isnan(f) ? std::nullopt : std::optional<double>(f);
}

/// Reads the user's cd_values (fewer than five: defaults for the rest).
bool parse(size_t n, const unsigned* cd, Params& p, std::string& why) {
  if (n > 0) p.mode = cd[0];
  if (n > 1) p.bound_mode = cd[1];
  if (n > 3) {
    const uint64_t bits = uint64_t(cd[2]) | (uint64_t(cd[3]) << 32);
    std::memcpy(&p.bound, &bits, sizeof bits);
  } else if (n == 3) {
    why = "cd_values[2] and [3] hold the bound as two 32-bit words: give both";
    return false;
  }
  if (n > 4) p.coder = cd[4];
  if (p.mode > 2) why = "cd_values[0] (mode) must be 0 none, 1 block or 2 speculative, got " + std::to_string(p.mode);
  else if (p.bound_mode > 1) why = "cd_values[1] (bound type) must be 0 ABS or 1 REL, got " + std::to_string(p.bound_mode);
  else if (p.coder > 1) why = "cd_values[4] (coder) must be 0 Huffman or 1 ANS, got " + std::to_string(p.coder);
  else if (!(p.bound >= 0) || p.bound > 1e308) why = "the bound (cd_values[2..3]) must be finite and >= 0";
  return why.empty();
}

/// The execution settings of this process (FACTZ_POLICY), read at every chunk.
struct Execution {
  factz::Policy policy = factz::Policy::omp;
  int device = 0;
};

bool execution_of_environment(Execution& e, std::string& why) {
  const char* env = std::getenv("FACTZ_POLICY");
  const std::string spec = env ? env : "";
  if (spec.empty() || spec == "omp") return true;
  if (spec == "serial") {
    e.policy = factz::Policy::serial;
    return true;
  }
  e.policy = factz::Policy::cuda;
  e.device = factz::kDeviceAuto;
  if (spec == "cuda") return true;
  const std::string digits = spec.rfind("cuda:", 0) == 0 ? spec.substr(5) : "";
  if (!digits.empty() && digits.size() <= 6 && digits.find_first_not_of("0123456789") == std::string::npos) {
    e.device = std::stoi(digits);
    return true;
  }
  why = "FACTZ_POLICY must be serial, omp, cuda or cuda:N, got '" + spec + "'";
  return false;
}

struct Geometry {
  unsigned layout = 0;
  hsize_t cy = 0, cx = 0;
  hsize_t cz = 1;  ///< layouts 4 and 5 only
};

/// The layout of a chunked dataset, or a reason why the filter cannot apply.
bool geometry(hid_t dcpl, hid_t space, Geometry& g, std::string& why) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 2 || rank > 32) {
    why = "datasets of rank 2 (scalar), >= 3 with a component axis of length 2 (vector) or >= 4 with one of "
          "length 3 (3D vector) only, got rank " +
          std::to_string(rank);
    return false;
  }
  hsize_t dims[32], chunk[32];
  if (H5Sget_simple_extent_dims(space, dims, nullptr) < 0 || H5Pget_chunk(dcpl, rank, chunk) != rank) {
    why = "the dataset must be chunked";
    return false;
  }
  // A 3D vector field's component axis (length 3, chunked whole) lies where the other
  // layouts need a chunk of 1: the two never match the same dataset.
  const bool vector3d = rank >= 4 && dims[rank - 4] == 3 && chunk[rank - 4] == 3;
  const bool vector = !vector3d && rank >= 3 && dims[rank - 3] == 2 && chunk[rank - 3] == 2;
  const int lead = rank - (vector3d ? 4 : vector ? 3 : 2);
  for (int k = 0; k < lead; ++k)
    if (chunk[k] != 1) {
      why = "chunk every axis before the field's by 1 (axis " + std::to_string(k) + " is chunked by " +
            std::to_string(chunk[k]) + "); a vector field's component axis (length 2, third to last; 3D: length 3, "
            "fourth to last) goes whole in each chunk";
      return false;
    }
  g.layout = vector3d ? kLayoutVector3D : vector ? kLayoutVector : kLayoutScalar;
  g.cz = vector3d ? chunk[rank - 3] : 1;
  g.cy = chunk[rank - 2];
  g.cx = chunk[rank - 1];
  return true;
}

bool float32_le(hid_t type) {
  return H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) == 4 && H5Tget_order(type) == H5T_ORDER_LE &&
         H5Tequal(type, H5T_IEEE_F32LE) > 0;
}

bool float64_le(hid_t type) {
  return H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) == 8 && H5Tget_order(type) == H5T_ORDER_LE &&
         H5Tequal(type, H5T_IEEE_F64LE) > 0;
}

/// The dataset's layout for the filter: geometry's, with float64 vector fields as layout 3
/// and float64 3D vector fields as layout 5; a reason when the type or the shape cannot be
/// compressed.
bool layout_of(hid_t dcpl, hid_t type, hid_t space, Geometry& g, std::string& why) {
  const bool f64 = float64_le(type);
  if (!f64 && !float32_le(type)) {
    why = "the dataset type must be 32-bit or 64-bit little-endian IEEE float";
    return false;
  }
  if (!geometry(dcpl, space, g, why)) return false;
  if (!f64) return true;
  if (g.layout == kLayoutScalar) {
    why = "float64 datasets must be vector fields (a component axis of length 2, third to last, or 3, fourth to "
          "last, chunked whole): float64 scalar datasets are not supported yet";
    return false;
  }
  g.layout = g.layout == kLayoutVector3D ? kLayoutVector3D64 : kLayoutVector64;
  return true;
}

htri_t can_apply(hid_t dcpl, hid_t type, hid_t space) {
  Geometry g;
  std::string why;
  if (!layout_of(dcpl, type, space, g, why)) {
    report("factz can_apply", H5E_CANAPPLY, why);
    return 0;
  }
#ifndef FACTZ_HAVE_SCALAR
  if (g.layout == kLayoutScalar) {
    report("factz can_apply", H5E_CANAPPLY,
           "scalar datasets need the scalar module, not built in this plugin; a vector field is a dataset with a "
           "component axis of length 2 in third-to-last position, chunked whole");
    return 0;
  }
#endif
  return 1;
}

/// The dataset's fill value when the user defined one (h5py fillvalue=, H5Pset_fill_value,
/// netCDF-4 in fill mode); `none` (a NaN's bits) for HDF5's default (0: data like any other)
/// or none. Bits is uint32_t for a float32 dataset, uint64_t for a float64 one.
template <class Bits>
bool dataset_fill_value(hid_t dcpl, hid_t type, Bits none, Bits& bits, std::string& why) {
  bits = none;
  H5D_fill_value_t status = H5D_FILL_VALUE_ERROR;
  if (H5Pfill_value_defined(dcpl, &status) < 0 || status == H5D_FILL_VALUE_ERROR) {
    why = "cannot tell whether the dataset has a fill value";
    return false;
  }
  if (status != H5D_FILL_VALUE_USER_DEFINED) return true;
  // The dataset's own type (float32 or float64 LE, checked by layout_of): the value's bits,
  // unconverted.
  Bits value = 0;
  if (H5Tget_size(type) != sizeof value || H5Pget_fill_value(dcpl, type, &value) < 0) {
    why = "cannot read the dataset's fill value";
    return false;
  }
  bits = value;
  return true;
}

/// The cd_values set_local stores (into out) and their count: the shortest layout that holds
/// every value set (the comment at the top of this file).
size_t local_values(const Params& p, const Geometry& g, unsigned (&out)[kDeclaredFillValues]) {
  const uint64_t bits = std::bit_cast<uint64_t>(p.bound);
  const unsigned values[kDeclaredFillValues] = {
      p.mode,         p.bound_mode,    unsigned(bits & 0xFFFFFFFFu), unsigned(bits >> 32), p.coder, g.layout,
      unsigned(g.cy), unsigned(g.cx),  p.exact_edges,                p.dataset_fill,       p.declared_fill};
  std::copy(std::begin(values), std::end(values), out);
  if (g.layout == kLayoutVector3D) {
    out[8] = unsigned(g.cz);
    return p.declared ? kDeclaredFillValues : p.dataset_fill != kNoFill ? kDatasetFillValues : kEdgeValues;
  }
  if (g.layout == kLayoutVector3D64) {
    out[8] = unsigned(g.cz);
    out[9] = unsigned(p.dataset_fill64 & 0xFFFFFFFFu);
    out[10] = unsigned(p.dataset_fill64 >> 32);
    return p.dataset_fill64 != kNoFill64 ? kDeclaredFillValues : kEdgeValues;
  }
  if (g.layout == kLayoutVector64) {
    out[9] = unsigned(p.dataset_fill64 & 0xFFFFFFFFu);
    out[10] = unsigned(p.dataset_fill64 >> 32);
    return p.dataset_fill64 != kNoFill64 ? kDeclaredFillValues : p.exact_edges ? kEdgeValues : kAllValues;
  }
  return p.declared                  ? kDeclaredFillValues
         : p.dataset_fill != kNoFill ? kDatasetFillValues
         : p.exact_edges             ? kEdgeValues
                                     : kAllValues;
}

herr_t set_local(hid_t dcpl, hid_t type, hid_t space) {
  unsigned flags = 0;
  size_t n = kDeclaredFillValues;
  unsigned cd[kDeclaredFillValues] = {};
  if (H5Pget_filter_by_id2(dcpl, kFilterId, &flags, &n, cd, 0, nullptr, nullptr) < 0) return -1;
  Params p;
  Geometry g;
  std::string why;
  if (!parse(std::min(n, kUserValues), cd, p, why) || !optional_values(n, cd, p, why) ||
      !geometry(dcpl, space, g, why)) {
    report("factz set_local", H5E_SETLOCAL, why);
    return -1;
  }
  if (std::string refused; !layout_of(dcpl, type, space, g, refused)) {
    // An optional filter that can_apply refused (a mandatory one never gets here).
    unsigned out[kDeclaredFillValues] = {};
    local_values(Params{p.mode, p.bound_mode, p.bound, p.coder}, Geometry{kLayoutRefused, 0, 0}, out);
    return H5Pmodify_filter(dcpl, kFilterId, flags, kAllValues, out);
  }
  const bool f64 = is_f64(g.layout);
  if (f64 && p.declared) {
    report("factz set_local", H5E_SETLOCAL,
           "a declared fill value (cd_values[6]) holds float32 bits, which a float64 dataset's doubles rarely "
           "equal (1e20f is not 1e20): give the dataset its fill value instead (h5py fillvalue=, "
           "H5Pset_fill_value, netCDF-4 in fill mode), which the filter reads with all 64 bits");
    return -1;
  }
  if (!(f64 ? dataset_fill_value(dcpl, type, kNoFill64, p.dataset_fill64, why)
            : dataset_fill_value(dcpl, type, kNoFill, p.dataset_fill, why))) {
    report("factz set_local", H5E_SETLOCAL, why);
    return -1;
  }
  if (g.layout == kLayoutScalar) {
    // Scalar fields take mode none; no cd_values at all means exactly that.
    if (n == 0) p.mode = 0;
    if (p.mode != 0) {
      report("factz set_local", H5E_SETLOCAL,
             "scalar datasets take mode 0 (none); modes block and speculative are for vector fields, whose "
             "component axis of length 2 comes third to last and is chunked whole");
      return -1;
    }
  }
  if (is_3d(g.layout) && p.exact_edges != 0) {
    report("factz set_local", H5E_SETLOCAL,
           "exact edges (cd_values[5]) store a 2D chunk's outer rows and columns; 3D vector datasets (a component "
           "axis of length 3) do not take them: give 0, or no value");
    return -1;
  }
  if (g.cy > 0xFFFFFFFFu || g.cx > 0xFFFFFFFFu || g.cz > 0xFFFFFFFFu) {
    report("factz set_local", H5E_SETLOCAL, "chunk dimensions above 2^32");
    return -1;
  }
  unsigned out[kDeclaredFillValues] = {};
  const size_t count = local_values(p, g, out);
  return H5Pmodify_filter(dcpl, kFilterId, flags, count, out);
}

/// Replaces the chunk buffer by `bytes` (allocated with HDF5's allocator, as HDF5 frees it).
size_t hand_over(const void* bytes, size_t size, size_t* buf_size, void** buf) {
  void* out = H5allocate_memory(size > 0 ? size : 1, false);
  if (!out) {
    report("factz filter", H5E_CALLBACK, "out of memory");
    return 0;
  }
  std::memcpy(out, bytes, size);
  H5free_memory(*buf);
  *buf = out;
  *buf_size = size;
  return size;
}

/// Scalar streams have no mask (yet): a chunk holding a fill value is refused, not
/// compressed with a bound stretched by it. True when the chunk holds none.
bool scalar_without_fill(std::span<const float> values, const std::vector<float>& fills, std::string& why) {
  for (const float fill : fills) {
    const auto count = std::count(values.begin(), values.end(), fill);
    if (count == 0) continue;
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", double(fill));
    why = std::to_string(count) + " value(s) of the chunk equal the fill value " + text +
          ": scalar datasets cannot mask missing values yet (vector fields can)";
    return false;
  }
  return true;
}

/// The compression options of a vector chunk.
factz::Options vector_options(const Params& p, const Execution& ex) {
  factz::Options o;
  o.mode = factz::Mode(p.mode);
  o.bound_mode = factz::BoundMode(p.bound_mode);
  o.bound = p.bound;
  o.coder = factz::Coder(p.coder);
  o.exact_edges = uint8_t(p.exact_edges);
  o.policy = ex.policy;
  o.device = ex.device;
  return o;
}

/// A (2, cy, cx) chunk of float32 (VectorField2D) or float64 (VectorField2D64) values as a
/// vector field: u then v.
template <class Field>
Field vector_chunk(const void* buf, uint64_t cy, uint64_t cx) {
  const auto* in = static_cast<const typename decltype(Field::u)::value_type*>(buf);
  const uint64_t n = cy * cx;
  Field f;
  f.nx = int64_t(cx);
  f.ny = int64_t(cy);
  f.u.assign(in, in + n);
  f.v.assign(in + n, in + 2 * n);
  return f;
}

/// Bytes of one value of a layout's chunks.
size_t value_bytes(unsigned layout) { return is_f64(layout) ? sizeof(double) : sizeof(float); }

/// Values of a chunk of the layout that set_local recorded in cd (components times vertices).
uint64_t chunk_values(const unsigned* cd) {
  if (is_3d(cd[5])) return 3 * uint64_t(cd[8]) * uint64_t(cd[6]) * uint64_t(cd[7]);
  return (cd[5] == kLayoutScalar ? 1 : 2) * uint64_t(cd[6]) * uint64_t(cd[7]);
}

/// A (3, cz, cy, cx) chunk of float32 (VectorField3D) or float64 (VectorField3D64) values as
/// a 3D vector field.
template <class Field>
Field vector3d_chunk(const void* buf, uint64_t cz, uint64_t cy, uint64_t cx) {
  const auto* in = static_cast<const typename decltype(Field::u)::value_type*>(buf);
  const uint64_t n = cz * cy * cx;
  Field f;
  f.nx = int64_t(cx);
  f.ny = int64_t(cy);
  f.nz = int64_t(cz);
  f.u.assign(in, in + n);
  f.v.assign(in + n, in + 2 * n);
  f.w.assign(in + 2 * n, in + 3 * n);
  return f;
}

size_t encode(size_t nelmts, const unsigned* cd, size_t nbytes, size_t* buf_size, void** buf) {
  Params p;
  std::string why;
  if (nelmts < kAllValues || !parse(kUserValues, cd, p, why) || !optional_values(nelmts, cd, p, why)) {
    report("factz filter", H5E_CALLBACK, why.empty() ? "cd_values lack the chunk geometry (set_local not run)" : why);
    return 0;
  }
  const unsigned layout = cd[5];
  if (layout == kLayoutRefused) {
    report("factz filter", H5E_CALLBACK, "the filter does not take this dataset (can_apply refused its type or shape)");
    return 0;
  }
  if (layout != kLayoutVector && layout != kLayoutScalar && layout != kLayoutVector64 && !is_3d(layout)) {
    report("factz filter", H5E_CALLBACK,
           "cd_values[5] (layout) must be 1, 2, 3, 4 or 5, got " + std::to_string(layout) + " (a newer plugin's?)");
    return 0;
  }
  const uint64_t cy = cd[6], cx = cd[7], n = cy * cx;
  const uint64_t expected = chunk_values(cd) * value_bytes(layout);
  if (nbytes != expected) {
    report("factz filter", H5E_CALLBACK,
           "chunk of " + std::to_string(nbytes) + " bytes, expected " + std::to_string(expected));
    return 0;
  }
  Execution ex;
  if (!execution_of_environment(ex, why)) {
    report("factz filter", H5E_CALLBACK, why);
    return 0;
  }
  const auto* in = static_cast<const float*>(*buf);
  const std::vector<float> fills = fill_values(p);
  factz::Result<std::vector<uint8_t>> stream = factz::Status();
  if (layout == kLayoutVector) {
    auto f = vector_chunk<factz::VectorField2D>(*buf, cy, cx);
    // A vertex equal to a fill value in either component is missing, as NaN is.
    for (const float fill : fills) factz::mark_missing(f, factz::FillValues{fill, fill});
    stream = factz::compress(f, vector_options(p, ex));
  } else if (layout == kLayoutVector64) {
    auto f = vector_chunk<factz::VectorField2D64>(*buf, cy, cx);
    if (const std::optional<double> fill = fill_value64(p)) factz::mark_missing(f, factz::FillValues64{fill, fill});
    stream = factz::compress(f, vector_options(p, ex));
  } else if (layout == kLayoutVector3D) {
    auto f = vector3d_chunk<factz::VectorField3D>(*buf, cd[8], cy, cx);
    // A vertex equal to a fill value in any component is missing, as NaN is.
    for (const float fill : fills) factz::mark_missing(f, factz::FillValues3D{fill, fill, fill});
    stream = factz::compress(f, vector_options(p, ex));
  } else if (layout == kLayoutVector3D64) {
    auto f = vector3d_chunk<factz::VectorField3D64>(*buf, cd[8], cy, cx);
    if (const std::optional<double> fill = fill_value64(p))
      factz::mark_missing(f, factz::FillValues3D64{fill, fill, fill});
    stream = factz::compress(f, vector_options(p, ex));
  } else if (ex.policy == factz::Policy::cuda) {
    report("factz filter", H5E_CALLBACK, "backend_unavailable: FACTZ_POLICY=cuda: scalar datasets have no GPU path");
    return 0;
  } else if (!scalar_without_fill(std::span<const float>(in, n), fills, why)) {
    report("factz filter", H5E_CALLBACK, why);
    return 0;
  } else {
#ifdef FACTZ_HAVE_SCALAR
    factz::ScalarField f;
    f.nx = int64_t(cx);
    f.ny = int64_t(cy);
    f.values.assign(in, in + n);
    factz::ScalarOptions o;
    o.mode = factz::ScalarMode::none;
    o.policy = ex.policy;
    o.bound_mode = factz::BoundMode(p.bound_mode);
    o.bound = p.bound;
    o.coder = factz::Coder(p.coder);
    stream = factz::compress_scalar(f, o);
#else
    report("factz filter", H5E_CALLBACK, "scalar datasets need the scalar module, not built in this plugin");
    return 0;
#endif
  }
  if (!stream.ok()) {
    report("factz filter", H5E_CALLBACK, stream.status().to_string());
    return 0;
  }
  return hand_over(stream->data(), stream->size(), buf_size, buf);
}

/// When set_local recorded the chunk geometry, a decoded chunk must have exactly its size.
bool expected_size(size_t nelmts, const unsigned* cd, size_t got) {
  if (nelmts < kAllValues || (is_3d(cd[5]) && nelmts < kEdgeValues)) return true;
  const uint64_t want = chunk_values(cd) * value_bytes(cd[5]);
  if (want == got) return true;
  report("factz filter", H5E_CALLBACK,
         "the stream decodes to " + std::to_string(got) + " bytes, the chunk has " + std::to_string(want));
  return false;
}

/// Decodes a vector stream of T values (n per component) into a new chunk buffer.
template <class T>
size_t decode_vector(std::span<const uint8_t> stream, size_t n, size_t nelmts, const unsigned* cd,
                     const factz::DecompressOptions& d, size_t* buf_size, void** buf) {
  if (!expected_size(nelmts, cd, 2 * n * sizeof(T))) return 0;
  auto* out = static_cast<T*>(H5allocate_memory(2 * n * sizeof(T), false));
  if (!out) {
    report("factz filter", H5E_CALLBACK, "out of memory");
    return 0;
  }
  const factz::Status st = factz::decompress_into(stream, std::span<T>(out, n), std::span<T>(out + n, n), d);
  if (!st.ok()) {
    H5free_memory(out);
    report("factz filter", H5E_CALLBACK, st.to_string());
    return 0;
  }
  H5free_memory(*buf);
  *buf = out;
  *buf_size = 2 * n * sizeof(T);
  return *buf_size;
}

/// A 3D vector stream decoded as float32 (decompress3d) or float64 (decompress3d64) fields.
factz::Result<factz::VectorField3D> decode3d(std::span<const uint8_t> s, const factz::DecompressOptions& d, float*) {
  return factz::decompress3d(s, d);
}
factz::Result<factz::VectorField3D64> decode3d(std::span<const uint8_t> s, const factz::DecompressOptions& d,
                                               double*) {
  return factz::decompress3d64(s, d);
}

/// Decodes a 3D vector stream of T values into a new (3, cz, cy, cx) chunk buffer: u, then
/// v, then w.
template <class T>
size_t decode_vector3d(std::span<const uint8_t> stream, size_t nelmts, const unsigned* cd,
                       const factz::DecompressOptions& d, size_t* buf_size, void** buf) {
  auto f = decode3d(stream, d, static_cast<T*>(nullptr));
  if (!f.ok()) {
    report("factz filter", H5E_CALLBACK, f.status().to_string());
    return 0;
  }
  const size_t n = size_t(f->size()), bytes = 3 * n * sizeof(T);
  if (!expected_size(nelmts, cd, bytes)) return 0;
  auto* out = static_cast<T*>(H5allocate_memory(bytes > 0 ? bytes : 1, false));
  if (!out) {
    report("factz filter", H5E_CALLBACK, "out of memory");
    return 0;
  }
  std::copy(f->u.begin(), f->u.end(), out);
  std::copy(f->v.begin(), f->v.end(), out + n);
  std::copy(f->w.begin(), f->w.end(), out + 2 * n);
  H5free_memory(*buf);
  *buf = out;
  *buf_size = bytes;
  return bytes;
}

size_t decode(size_t nelmts, const unsigned* cd, size_t nbytes, size_t* buf_size, void** buf) {
  const std::span<const uint8_t> stream(static_cast<const uint8_t*>(*buf), nbytes);
  // The header's component count (either container, docs/format.md); the decoders check it again.
  const int components = factz::stream_components(stream);
  const bool scalar = components == 1;
  const bool vector3d = components == 3;
  Execution ex;
  std::string why;
  if (!execution_of_environment(ex, why)) {
    report("factz filter", H5E_CALLBACK, why);
    return 0;
  }
  if (scalar && ex.policy == factz::Policy::cuda) {
    report("factz filter", H5E_CALLBACK, "backend_unavailable: FACTZ_POLICY=cuda: scalar datasets have no GPU path");
    return 0;
  }
  factz::DecompressOptions d;
  d.policy = ex.policy;
  d.device = ex.device;
  if (nelmts >= kAllValues && cd[5] != kLayoutScalar && vector3d != is_3d(cd[5])) {
    report("factz filter", H5E_CALLBACK,
           std::string("the chunk holds a ") + (vector3d ? "3D" : "2D") + " vector stream, the dataset is a " +
               (is_3d(cd[5]) ? "3D" : "2D") + " vector field");
    return 0;
  }
  if (vector3d) {
    auto dtype = factz::stream_dtype3d(stream);
    if (!dtype.ok()) {
      report("factz filter", H5E_CALLBACK, dtype.status().to_string());
      return 0;
    }
    const bool f64 = *dtype == factz::DType::float64;
    if (nelmts >= kAllValues && f64 != (cd[5] == kLayoutVector3D64)) {
      report("factz filter", H5E_CALLBACK,
             std::string("the chunk holds a ") + factz::dtype_name(*dtype) + " 3D stream, the dataset is " +
                 (cd[5] == kLayoutVector3D64 ? "float64" : "float32"));
      return 0;
    }
    return f64 ? decode_vector3d<double>(stream, nelmts, cd, d, buf_size, buf)
               : decode_vector3d<float>(stream, nelmts, cd, d, buf_size, buf);
  }
  if (!scalar) {
    auto info = factz::stream_info(stream);
    if (!info.ok()) {
      report("factz filter", H5E_CALLBACK, info.status().to_string());
      return 0;
    }
    const bool f64 = info->dtype == factz::DType::float64;
    if (nelmts >= kAllValues && f64 != (cd[5] == kLayoutVector64)) {
      report("factz filter", H5E_CALLBACK,
             std::string("the chunk holds a ") + factz::dtype_name(info->dtype) + " stream, the dataset is " +
                 (cd[5] == kLayoutVector64 ? "float64" : "float32"));
      return 0;
    }
    const size_t n = size_t(info->nx * info->ny);
    return f64 ? decode_vector<double>(stream, n, nelmts, cd, d, buf_size, buf)
               : decode_vector<float>(stream, n, nelmts, cd, d, buf_size, buf);
  }
#ifdef FACTZ_HAVE_SCALAR
  auto f = factz::decompress_scalar(stream, d);
  if (!f.ok()) {
    report("factz filter", H5E_CALLBACK, f.status().to_string());
    return 0;
  }
  if (!expected_size(nelmts, cd, f->values.size() * sizeof(float))) return 0;
  return hand_over(f->values.data(), f->values.size() * sizeof(float), buf_size, buf);
#else
  report("factz filter", H5E_CALLBACK, "a scalar stream: this plugin is built without the scalar module");
  return 0;
#endif
}

/// HDF5 calls this per chunk; 0 means failure (the message is on the error stack).
size_t filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes, size_t* buf_size,
              void** buf) {
  try {
    if (flags & H5Z_FLAG_REVERSE) return decode(cd_nelmts, cd_values, nbytes, buf_size, buf);
    return encode(cd_nelmts, cd_values, nbytes, buf_size, buf);
  } catch (const std::exception& e) {
    report("factz filter", H5E_CALLBACK, std::string("internal error: ") + e.what());
  } catch (...) {
    report("factz filter", H5E_CALLBACK, "internal error");
  }
  return 0;
}

const H5Z_class2_t kFactzClass = {
    H5Z_CLASS_T_VERS, kFilterId, 1, 1,
    "factz: topology-preserving lossy compression of float32 and float64 vector fields (2D and 3D)", can_apply,
    set_local,
    filter,
};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }
__attribute__((visibility("default"))) const void* H5PLget_plugin_info(void) { return &kFactzClass; }

}  // extern "C"
