// HDF5 filter plugin libh5zfactz.so: FaCTz compression of float32 chunks (docs/python.md,
// "HDF5 filter"; docs/usage.md, "C, Python, HDF5").
//
// Dataset layouts:
// - vector field: rank >= 3, the third-to-last axis is the component axis (u, v) of
//   length 2 and is chunked whole; every axis before it is chunked by 1. A chunk is then
//   one (2, cy, cx) vector field, compressed by factz::compress.
// - scalar field (rank >= 2, any other shape): one (cy, cx) field per chunk, compressed by
//   factz::compress_scalar with mode none (cd_values[0] must be 0, or no cd_values at all),
//   when the plugin is built with the scalar module (FACTZ_HAVE_SCALAR); otherwise refused
//   by can_apply with a clear message.
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
//       record of it, and attributes are out of a filter's reach) [none]
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
//   [5] layout: 1 vector, 2 scalar   [6] chunk cy   [7] chunk cx          (8 values)
//   [8] exact edges                  (9 values: written when non-zero or a fill follows)
//   [9] the dataset's fill value, float32 bits, when user-defined         (10 values)
//  [10] the declared fill value (user's [6]); [9] is then the quiet NaN 0x7FC00000
//       when the dataset has no user-defined fill value (NaN marks nothing more) (11 values)
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
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "factz/factz.h"
#include "factz/factz.hpp"
#include "factz/topology.hpp"
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
constexpr unsigned kLayoutVector = 1;
constexpr unsigned kLayoutScalar = 2;
constexpr uint32_t kNoFill = 0x7FC00000u;    ///< a quiet NaN: marks nothing NaN does not

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
  uint32_t dataset_fill = kNoFill;   ///< float32 bits; NaN: none
  uint32_t declared_fill = kNoFill;  ///< float32 bits; NaN: none
  bool declared = false;             ///< a declared fill value was given (kept even if NaN)
};

/// The slots after the first five among n cd_values; the count alone tells the layout
/// (the comment at the top of this file). Reads the exact edges and the fill values.
bool optional_values(size_t n, const unsigned* cd, Params& p, std::string& why) {
  if (n > kDeclaredFillValues) {
    why = "at most 7 cd_values (mode, bound type, bound low, bound high, coder, exact edges, fill value), or the " +
          std::to_string(kAllValues) + " to " + std::to_string(kDeclaredFillValues) + " set_local writes; got " +
          std::to_string(n) + " (a newer plugin's?)";
    return false;
  }
  const bool geometry = n >= kAllValues;
  p.exact_edges = geometry ? (n >= kEdgeValues ? cd[8] : 0) : (n > kUserValues ? cd[5] : 0);
  if (n == kDatasetFillValues || n == kDeclaredFillValues) p.dataset_fill = cd[9];
  p.declared = n == kMostUserValues || n == kDeclaredFillValues;
  if (p.declared) p.declared_fill = cd[n == kMostUserValues ? 6 : 10];
  if (p.exact_edges > 15)
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
};

/// The layout of a chunked dataset, or a reason why the filter cannot apply.
bool geometry(hid_t dcpl, hid_t space, Geometry& g, std::string& why) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 2 || rank > 32) {
    why = "datasets of rank 2 (scalar) or >= 3 with a component axis of length 2 (vector) only, got rank " +
          std::to_string(rank);
    return false;
  }
  hsize_t dims[32], chunk[32];
  if (H5Sget_simple_extent_dims(space, dims, nullptr) < 0 || H5Pget_chunk(dcpl, rank, chunk) != rank) {
    why = "the dataset must be chunked";
    return false;
  }
  const bool vector = rank >= 3 && dims[rank - 3] == 2 && chunk[rank - 3] == 2;
  const int lead = rank - (vector ? 3 : 2);
  for (int k = 0; k < lead; ++k)
    if (chunk[k] != 1) {
      why = "chunk every axis before the field's by 1 (axis " + std::to_string(k) + " is chunked by " +
            std::to_string(chunk[k]) + "); a vector field's component axis (length 2) goes whole in each chunk";
      return false;
    }
  g.layout = vector ? kLayoutVector : kLayoutScalar;
  g.cy = chunk[rank - 2];
  g.cx = chunk[rank - 1];
  return true;
}

bool float32_le(hid_t type) {
  return H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) == 4 && H5Tget_order(type) == H5T_ORDER_LE &&
         H5Tequal(type, H5T_IEEE_F32LE) > 0;
}

htri_t can_apply(hid_t dcpl, hid_t type, hid_t space) {
  if (!float32_le(type)) {
    report("factz can_apply", H5E_CANAPPLY, "the dataset type must be 32-bit little-endian IEEE float");
    return 0;
  }
  Geometry g;
  std::string why;
  if (!geometry(dcpl, space, g, why)) {
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
/// netCDF-4 in fill mode); kNoFill for HDF5's default (0: data like any other) or none.
bool dataset_fill_value(hid_t dcpl, hid_t type, uint32_t& bits, std::string& why) {
  bits = kNoFill;
  H5D_fill_value_t status = H5D_FILL_VALUE_ERROR;
  if (H5Pfill_value_defined(dcpl, &status) < 0 || status == H5D_FILL_VALUE_ERROR) {
    why = "cannot tell whether the dataset has a fill value";
    return false;
  }
  if (status != H5D_FILL_VALUE_USER_DEFINED) return true;
  // The dataset's own type (float32 LE, checked by can_apply): the value's bits, unconverted.
  uint32_t value = 0;
  if (H5Pget_fill_value(dcpl, type, &value) < 0) {
    why = "cannot read the dataset's fill value";
    return false;
  }
  bits = value;
  return true;
}

herr_t set_local(hid_t dcpl, hid_t type, hid_t space) {
  unsigned flags = 0;
  size_t n = kDeclaredFillValues;
  unsigned cd[kDeclaredFillValues] = {};
  if (H5Pget_filter_by_id2(dcpl, kFilterId, &flags, &n, cd, 0, nullptr, nullptr) < 0) return -1;
  Params p;
  std::string why;
  if (!parse(std::min(n, kUserValues), cd, p, why) || !optional_values(n, cd, p, why) ||
      !dataset_fill_value(dcpl, type, p.dataset_fill, why)) {
    report("factz set_local", H5E_SETLOCAL, why);
    return -1;
  }
  Geometry g;
  if (!geometry(dcpl, space, g, why)) {
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
  if (g.cy > 0xFFFFFFFFu || g.cx > 0xFFFFFFFFu) {
    report("factz set_local", H5E_SETLOCAL, "chunk dimensions above 2^32");
    return -1;
  }
  const uint64_t bits = [&] {
    uint64_t b = 0;
    std::memcpy(&b, &p.bound, sizeof b);
    return b;
  }();
  const unsigned out[kDeclaredFillValues] = {
      p.mode,         p.bound_mode,    unsigned(bits & 0xFFFFFFFFu), unsigned(bits >> 32), p.coder, g.layout,
      unsigned(g.cy), unsigned(g.cx),  p.exact_edges,                p.dataset_fill,       p.declared_fill};
  // The shortest layout that holds every value set (the comment at the top of this file).
  const size_t count = p.declared                  ? kDeclaredFillValues
                       : p.dataset_fill != kNoFill ? kDatasetFillValues
                       : p.exact_edges             ? kEdgeValues
                                                   : kAllValues;
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

size_t encode(size_t nelmts, const unsigned* cd, size_t nbytes, size_t* buf_size, void** buf) {
  Params p;
  std::string why;
  if (nelmts < kAllValues || !parse(kUserValues, cd, p, why) || !optional_values(nelmts, cd, p, why)) {
    report("factz filter", H5E_CALLBACK, why.empty() ? "cd_values lack the chunk geometry (set_local not run)" : why);
    return 0;
  }
  const unsigned layout = cd[5];
  const uint64_t cy = cd[6], cx = cd[7], n = cy * cx;
  const uint64_t comps = layout == kLayoutVector ? 2 : 1;
  if (nbytes != comps * n * sizeof(float)) {
    report("factz filter", H5E_CALLBACK,
           "chunk of " + std::to_string(nbytes) + " bytes, expected " + std::to_string(comps * n * 4));
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
    factz::VectorField2D f;
    f.nx = int64_t(cx);
    f.ny = int64_t(cy);
    f.u.assign(in, in + n);
    f.v.assign(in + n, in + 2 * n);
    // A vertex equal to a fill value in either component is missing, as NaN is.
    for (const float fill : fills) factz::mark_missing(f, factz::FillValues{fill, fill});
    factz::Options o;
    o.mode = factz::Mode(p.mode);
    o.bound_mode = factz::BoundMode(p.bound_mode);
    o.bound = p.bound;
    o.coder = factz::Coder(p.coder);
    o.exact_edges = uint8_t(p.exact_edges);
    o.policy = ex.policy;
    o.device = ex.device;
    stream = factz::compress(f, o);
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
  if (nelmts < kAllValues) return true;
  const uint64_t comps = cd[5] == kLayoutVector ? 2 : 1;
  const uint64_t want = comps * uint64_t(cd[6]) * uint64_t(cd[7]) * sizeof(float);
  if (want == got) return true;
  report("factz filter", H5E_CALLBACK,
         "the stream decodes to " + std::to_string(got) + " bytes, the chunk has " + std::to_string(want));
  return false;
}

size_t decode(size_t nelmts, const unsigned* cd, size_t nbytes, size_t* buf_size, void** buf) {
  const std::span<const uint8_t> stream(static_cast<const uint8_t*>(*buf), nbytes);
  // Header byte 7 is the component count (docs/format.md); the container checks it again.
  const bool scalar = nbytes > 7 && stream[7] == 1;
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
  if (!scalar) {
    auto dims = factz::stream_dims(stream);
    if (!dims.ok()) {
      report("factz filter", H5E_CALLBACK, dims.status().to_string());
      return 0;
    }
    const size_t n = size_t(dims->first * dims->second);
    if (!expected_size(nelmts, cd, 2 * n * sizeof(float))) return 0;
    auto* out = static_cast<float*>(H5allocate_memory(2 * n * sizeof(float), false));
    if (!out) {
      report("factz filter", H5E_CALLBACK, "out of memory");
      return 0;
    }
    const factz::Status st = factz::decompress_into(stream, std::span<float>(out, n), std::span<float>(out + n, n), d);
    if (!st.ok()) {
      H5free_memory(out);
      report("factz filter", H5E_CALLBACK, st.to_string());
      return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = 2 * n * sizeof(float);
    return *buf_size;
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
    "factz: topology-preserving lossy compression of float32 vector fields", can_apply, set_local, filter,
};

}  // namespace

extern "C" {

__attribute__((visibility("default"))) H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }
__attribute__((visibility("default"))) const void* H5PLget_plugin_info(void) { return &kFactzClass; }

}  // extern "C"
