// HDF5 datasets through the HDF5 library (variable_io.hpp): one dataset's slice with its
// dimension names and 1D coordinates (from attached dimension scales, as netCDF-4 and
// h5netcdf write them), attributes and fill values (_FillValue, the dataset's user-defined
// fill value, missing_value). Part of libfactz-io.so when the serial HDF5 is found.
#include <algorithm>
#include <cstring>

#include "io/variable/variable_internal.hpp"

#include <hdf5.h>
#include <hdf5_hl.h>

namespace factz::variable_io {
namespace {

using detail::Dim;

/// An HDF5 identifier closed on scope exit with its own close function.
class Id {
 public:
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Id() {
    if (id_ >= 0) close_(id_);
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

/// HDF5 prints its error stack on stderr by default; FaCTz reports errors itself.
void quiet() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

std::string basename_of(const std::string& path) {
  const size_t at = path.rfind('/');
  return at == std::string::npos ? path : path.substr(at + 1);
}

std::string object_name(hid_t id) {
  const ssize_t n = H5Iget_name(id, nullptr, 0);
  if (n <= 0) return "";
  std::string s(size_t(n) + 1, '\0');
  H5Iget_name(id, s.data(), s.size());
  s.resize(size_t(n));
  return s;
}

/// The record's code and the native memory type of an HDF5 numeric type, if it has one.
std::optional<std::pair<SourceType, hid_t>> numeric_type(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  const size_t size = H5Tget_size(type);
  if (cls == H5T_FLOAT) {
    if (size == 4) return std::pair{SourceType::float32, H5T_NATIVE_FLOAT};
    if (size == 8) return std::pair{SourceType::float64, H5T_NATIVE_DOUBLE};
    return std::nullopt;
  }
  if (cls != H5T_INTEGER) return std::nullopt;
  const bool sign = H5Tget_sign(type) == H5T_SGN_2;
  switch (size) {
    case 1: return sign ? std::pair{SourceType::int8, H5T_NATIVE_INT8} : std::pair{SourceType::uint8, H5T_NATIVE_UINT8};
    case 2: return sign ? std::pair{SourceType::int16, H5T_NATIVE_INT16} : std::pair{SourceType::uint16, H5T_NATIVE_UINT16};
    case 4: return sign ? std::pair{SourceType::int32, H5T_NATIVE_INT32} : std::pair{SourceType::uint32, H5T_NATIVE_UINT32};
    case 8: return sign ? std::pair{SourceType::int64, H5T_NATIVE_INT64} : std::pair{SourceType::uint64, H5T_NATIVE_UINT64};
    default: return std::nullopt;
  }
}

std::string class_name(hid_t type) {
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float of " + std::to_string(H5Tget_size(type)) + " bytes";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length";
    case H5T_ARRAY: return "array";
    case H5T_REFERENCE: return "reference";
    case H5T_OPAQUE: return "opaque";
    case H5T_BITFIELD: return "bitfield";
    default: return "unknown";
  }
}

/// The strings of an attribute of string type (fixed or variable length).
bool read_strings(hid_t attr, hid_t type, hssize_t n, std::vector<std::string>& out) {
  Id space(H5Aget_space(attr), H5Sclose);
  Id mem(H5Tcopy(H5T_C_S1), H5Tclose);
  if (!space.ok() || !mem.ok()) return false;
  if (H5Tis_variable_str(type) > 0) {
    std::vector<char*> p(size_t(n), nullptr);
    if (H5Tset_size(mem.get(), H5T_VARIABLE) < 0 || H5Tset_cset(mem.get(), H5Tget_cset(type)) < 0 ||
        H5Aread(attr, mem.get(), p.data()) < 0)
      return false;
    for (char* c : p) out.emplace_back(c ? c : "");
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, p.data());
    return true;
  }
  const size_t size = H5Tget_size(type);
  std::vector<char> buf(size_t(n) * size + 1, '\0');
  if (size == 0 || H5Tset_size(mem.get(), size) < 0 || H5Aread(attr, mem.get(), buf.data()) < 0) return false;
  for (hssize_t k = 0; k < n; ++k) {
    const char* at = buf.data() + size_t(k) * size;
    out.emplace_back(at, strnlen(at, size));
  }
  return true;
}

struct AttributeVisit {
  std::vector<SourceAttribute>* out;
  std::vector<std::string>* notes;
  std::string owner;
};

herr_t visit_attribute(hid_t loc, const char* name, const H5A_info_t*, void* data) {
  auto& v = *static_cast<AttributeVisit*>(data);
  if (detail::internal_attribute(name)) return 0;
  Id attr(H5Aopen(loc, name, H5P_DEFAULT), H5Aclose);
  if (!attr.ok()) return -1;
  Id type(H5Aget_type(attr.get()), H5Tclose);
  Id space(H5Aget_space(attr.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (!type.ok() || n < 0) return -1;
  SourceAttribute a;
  a.name = name;
  if (H5Tget_class(type.get()) == H5T_STRING) {
    if (!read_strings(attr.get(), type.get(), n, a.strings)) return -1;
    if (a.strings.size() == 1) {  // one string: netCDF's text attribute
      a.type = SourceType::text;
      a.data.assign(a.strings[0].begin(), a.strings[0].end());
      a.strings.clear();
    } else {
      a.type = SourceType::string;
    }
  } else if (auto t = numeric_type(type.get())) {
    a.type = t->first;
    a.data.resize(size_t(n) * size_t(source_type_size(a.type)));
    if (n > 0 && H5Aread(attr.get(), t->second, a.data.data()) < 0) return -1;
  } else {
    v.notes->push_back("attribute " + a.name + " of " + v.owner + " has the HDF5 type " + class_name(type.get()) +
                       ", which FaCTz does not keep");
    return 0;
  }
  v.out->push_back(std::move(a));
  return 0;
}

Status read_attributes(hid_t obj, const std::string& owner, std::vector<SourceAttribute>& out,
                       std::vector<std::string>& notes) {
  AttributeVisit v{&out, &notes, owner};
  // Creation order where the file tracks it (netCDF-4 does), else by name.
  hsize_t at = 0;
  if (H5Aiterate2(obj, H5_INDEX_CRT_ORDER, H5_ITER_INC, &at, visit_attribute, &v) >= 0) return Status::Ok();
  out.clear();
  at = 0;
  if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &at, visit_attribute, &v) < 0)
    return io_error("cannot read the attributes of " + owner);
  return Status::Ok();
}

/// A dimension scale attached to a dataset's dimension: its name, and whether it holds
/// coordinates (netCDF-4 marks a dimension without a coordinate variable with a NAME
/// attribute "This is a netCDF dimension but not a netCDF variable").
struct Scale {
  std::string name, path;
  bool coordinates = false;
};

herr_t visit_scale(hid_t, unsigned, hid_t dsid, void* data) {
  auto& s = *static_cast<Scale*>(data);
  s.path = object_name(dsid);
  s.name = basename_of(s.path);
  s.coordinates = true;
  if (H5Aexists(dsid, "NAME") > 0) {
    Id attr(H5Aopen(dsid, "NAME", H5P_DEFAULT), H5Aclose);
    Id type(H5Aget_type(attr.get()), H5Tclose);
    std::vector<std::string> text;
    if (attr.ok() && type.ok() && H5Tget_class(type.get()) == H5T_STRING && read_strings(attr.get(), type.get(), 1, text) &&
        !text.empty() && text[0].rfind("This is a netCDF dimension but not a netCDF variable", 0) == 0)
      s.coordinates = false;
  }
  return 1;  // the first scale is the dimension's
}

struct ListVisit {
  std::vector<std::string>* out;
  size_t limit;
};

herr_t visit_link(hid_t group, const char* name, const H5L_info_t*, void* data) {
  auto& v = *static_cast<ListVisit*>(data);
  Id obj(H5Oopen(group, name, H5P_DEFAULT), H5Oclose);
  if (obj.ok() && H5Iget_type(obj.get()) == H5I_DATASET) {
    std::string path = "/";  // appended: GCC 12 warns (-Wrestrict) on "/" + std::string
    path += name;
    v.out->push_back(std::move(path));
  }
  return v.out->size() >= v.limit ? 1 : 0;
}

/// "/a/b/c" with every prefix checked, so a missing group is not an HDF5 error.
bool path_exists(hid_t file, const std::string& path) {
  for (size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    const std::string prefix = path.substr(0, at);
    if (prefix.size() > 1 && H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (at == std::string::npos) return true;
  }
}

/// Reads values of a 1D dataset: `count` from `start`.
Status read_coordinate(hid_t ds, hsize_t start, hsize_t count, SourceCoordinate& co) {
  Id type(H5Dget_type(ds), H5Tclose);
  Id space(H5Dget_space(ds), H5Sclose);
  const auto t = type.ok() ? numeric_type(type.get()) : std::nullopt;
  if (!t || !space.ok() || H5Sget_simple_extent_ndims(space.get()) != 1) return invalid_argument("not numeric 1D");
  hsize_t len = 0;
  H5Sget_simple_extent_dims(space.get(), &len, nullptr);
  if (start + count > len) return invalid_argument("shorter than its dimension");
  co.type = t->first;
  co.data.resize(size_t(count) * size_t(source_type_size(co.type)));
  Id mem(H5Screate_simple(1, &count, nullptr), H5Sclose);
  if (H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr) < 0 ||
      H5Dread(ds, t->second, mem.get(), space.get(), H5P_DEFAULT, co.data.data()) < 0)
    return io_error("cannot read");
  return Status::Ok();
}

}  // namespace

// HDF5 datasets name no auxiliary variables FaCTz reads (CF's `coordinates` is a netCDF
// convention; a netCDF-4 file is read with netCDF-C): `auxiliaries` is not used.
Result<VariableData> read_hdf5(const VariableSpec& spec, int whole, bool values, Auxiliaries, RowRange rows) {
  quiet();
  const std::string what = spec.text();
  Id file(H5Fopen(spec.file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return io_error("cannot read " + spec.file + ": not a readable HDF5 file (truncated or damaged?)");
  std::string path = spec.variable;
  if (path[0] != '/') path.insert(path.begin(), '/');
  if (!path_exists(file.get(), path))
    return invalid_argument(spec.file + " has no dataset " + path + "; " + hdf5_variables_hint(spec.file));
  Id ds(H5Oopen(file.get(), path.c_str(), H5P_DEFAULT), H5Oclose);
  if (!ds.ok()) return io_error("cannot read " + what + " (damaged file?)");
  if (H5Iget_type(ds.get()) != H5I_DATASET)
    return invalid_argument(what + " is a group, not a dataset; " + hdf5_variables_hint(spec.file));
  VariableData out;
  out.format = SourceFormat::hdf5;
  out.source.name = spec.variable;
  Id type(H5Dget_type(ds.get()), H5Tclose);
  if (!type.ok()) return io_error("cannot read the type of " + what);
  const H5T_class_t cls = H5Tget_class(type.get());
  const size_t size = H5Tget_size(type.get());
  hid_t memtype = H5T_NATIVE_FLOAT;
  // A dataset with scale_factor or add_offset is packed, integers or floats (detail::Packing).
  std::optional<detail::Packing> packing;
  if (cls == H5T_INTEGER || (cls == H5T_FLOAT && (size == 4 || size == 8))) {
    // The dataset's attributes, once: its packing and its record need them.
    FACTZ_RETURN_IF_ERROR(read_attributes(ds.get(), spec.variable, out.source.attributes, out.notes));
    const detail::StoredType stored{int(size), cls == H5T_FLOAT,
                                    cls == H5T_FLOAT || H5Tget_sign(type.get()) == H5T_SGN_2};
    auto p = detail::packing_of(out.source.attributes, stored, what);
    if (!p.ok()) return p.status();
    if (p.value()) packing = *p.value();
  }
  if (packing) {
    out.dtype = packing->dtype;  // unpack_metadata sets it again, with the attributes
    memtype = H5T_NATIVE_DOUBLE;   // every stored value as a double: exact for floats, and integers to 2^53
  } else if (cls == H5T_FLOAT && size == 4) {
    out.dtype = DType::float32;
  } else if (cls == H5T_FLOAT && size == 8) {
    out.dtype = DType::float64;
    memtype = H5T_NATIVE_DOUBLE;
  } else if (cls == H5T_INTEGER) {
    return invalid_argument(what + " holds integers (" + std::string(H5Tget_sign(type.get()) == H5T_SGN_2 ? "" : "u") +
                            "int" + std::to_string(8 * size) +
                            ") without scale_factor or add_offset; FaCTz compresses floating-point fields "
                            "(float32 or float64, or integers packed with scale_factor/add_offset)");
  } else {
    return invalid_argument(what + " is not a float32 or float64 dataset (HDF5 type " + class_name(type.get()) +
                            "); FaCTz compresses floating-point fields (float32 or float64)");
  }
  out.source.type = out.dtype == DType::float64 ? SourceType::float64 : SourceType::float32;
  Id space(H5Dget_space(ds.get()), H5Sclose);
  const int rank = space.ok() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank < 0) return io_error("cannot read the shape of " + what);
  std::vector<hsize_t> extent(size_t(rank), 0), maxima(size_t(rank), 0);
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), extent.data(), maxima.data());
  std::vector<Dim> dims;
  std::vector<Scale> scales(static_cast<size_t>(rank));
  for (int k = 0; k < rank; ++k) {
    Scale& s = scales[size_t(k)];
    if (H5DSget_num_scales(ds.get(), unsigned(k)) > 0) H5DSiterate_scales(ds.get(), unsigned(k), nullptr, visit_scale, &s);
    if (s.name.empty()) s.name = "phony_dim_" + std::to_string(k);  // netCDF's name for an unnamed dimension
    dims.push_back({s.name, uint64_t(extent[size_t(k)]), maxima[size_t(k)] == H5S_UNLIMITED});
  }
  auto index = detail::resolve_selection(spec, dims, whole);
  if (!index.ok()) return index.status();
  out.source.dimensions = detail::source_dimensions(dims, index.value());
  uint64_t n = 1;
  for (size_t k = dims.size() - size_t(whole); k < dims.size(); ++k) {
    if (dims[k].size == 0) return invalid_argument(what + ": dimension " + dims[k].name + " is empty");
    if (dims[k].size > (uint64_t(1) << 40) / n)
      return invalid_argument(what + ": " + detail::dims_text(dims) + " is too large (more than 2^40 values)");
    out.shape.push_back(dims[k].size);
    n *= dims[k].size;
  }
  {
    Id root(H5Gopen2(file.get(), "/", H5P_DEFAULT), H5Gclose);
    if (root.ok()) FACTZ_RETURN_IF_ERROR(read_attributes(root.get(), spec.file, out.global_attributes, out.notes));
  }
  bool fill_attribute = false;
  for (const auto& a : out.source.attributes)
    if (a.name == "_FillValue") {
      detail::add_fill_values(a, out.fill_values);
      fill_attribute = true;
    }
  {
    // The dataset's user-defined fill value (h5py's fillvalue=) declares missing data as a
    // _FillValue does; without that attribute the record holds it as one, in the dataset's
    // type, so that the decompressed variable declares it, and only it (field_files.cpp).
    Id dcpl(H5Dget_create_plist(ds.get()), H5Pclose);
    H5D_fill_value_t defined = H5D_FILL_VALUE_UNDEFINED;
    const auto native = numeric_type(type.get());
    SourceAttribute property;
    property.name = "_FillValue";
    property.type = native ? native->first : SourceType::float64;
    property.data.resize(H5Tget_size(native ? native->second : H5T_NATIVE_DOUBLE));
    if (dcpl.ok() && H5Pfill_value_defined(dcpl.get(), &defined) >= 0 && defined == H5D_FILL_VALUE_USER_DEFINED &&
        H5Pget_fill_value(dcpl.get(), native ? native->second : H5T_NATIVE_DOUBLE, property.data.data()) >= 0) {
      detail::add_fill_values(property, out.fill_values);
      if (!fill_attribute && native) out.source.attributes.insert(out.source.attributes.begin(), std::move(property));
    }
  }
  for (const auto& a : out.source.attributes)
    if (a.name == "missing_value") detail::add_fill_values(a, out.fill_values);
  if (packing) detail::unpack_metadata(*packing, out);
  if (!values) return out;

  std::vector<hsize_t> start(dims.size(), 0), count(dims.size(), 1);
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k < index->size()) start[k] = hsize_t((*index)[k]);
    else count[k] = hsize_t(dims[k].size);
  }
  const std::string unreadable = "cannot read the values of " + what +
                                 " (a truncated or damaged file, or a compression filter that is not installed)";
  // The rows and columns asked for (all by default).
  const size_t d0 = dims.size() - size_t(whole);
  std::vector<hsize_t> vstart = start, vcount = count;
  const auto per_row = detail::narrow_to(rows, d0, vstart, vcount, out, what);
  if (!per_row.ok()) return per_row.status();
  const uint64_t row0 = vstart[d0], row_count = vcount[d0], row_values = per_row.value();
  if (row_count == 0) {
    // no values: the record's coordinates only
  } else if (packing) {  // slabs of its rows (detail::unpack_in_slabs)
    FACTZ_RETURN_IF_ERROR(detail::unpack_in_slabs(
        *packing, row_count, row_values, out, what, [&](uint64_t row, uint64_t m, double* buffer) {
          std::vector<hsize_t> from = vstart, size = vcount;
          from[d0] = hsize_t(row0 + row);
          size[d0] = hsize_t(m);
          const hsize_t slab = m * row_values;
          Id mem(H5Screate_simple(1, &slab, nullptr), H5Sclose);
          const bool ok = H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, from.data(), nullptr, size.data(), nullptr) >= 0 &&
                          H5Dread(ds.get(), memtype, mem.get(), space.get(), H5P_DEFAULT, buffer) >= 0;
          return ok ? Status::Ok() : io_error(unreadable);
        }));
  } else {
    const hsize_t total = hsize_t(row_count * row_values);
    Id mem(H5Screate_simple(1, &total, nullptr), H5Sclose);
    void* buffer = nullptr;
    if (out.dtype == DType::float32) {
      out.f32.resize(size_t(total));
      buffer = out.f32.data();
    } else {
      out.f64.resize(size_t(total));
      buffer = out.f64.data();
    }
    if ((rank > 0 && H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, vstart.data(), nullptr, vcount.data(), nullptr) < 0) ||
        H5Dread(ds.get(), memtype, mem.get(), space.get(), H5P_DEFAULT, buffer) < 0)
      return io_error(unreadable);
  }

  // Coordinates: the attached scales that hold values.
  for (size_t k = 0; k < dims.size(); ++k) {
    const Scale& s = scales[k];
    if (!s.coordinates || s.path.empty()) continue;
    Id scale(H5Dopen2(file.get(), s.path.c_str(), H5P_DEFAULT), H5Dclose);
    if (!scale.ok()) continue;
    SourceCoordinate co;
    co.dimension = uint32_t(k);
    co.name = s.name;
    const bool sliced = k < index->size();
    if (!read_coordinate(scale.get(), sliced ? start[k] : 0, sliced ? 1 : count[k], co).ok()) {
      out.notes.push_back("dimension scale " + s.path + " of " + spec.variable +
                          " is not a numeric 1D dataset of the dimension's length: not kept");
      continue;
    }
    FACTZ_RETURN_IF_ERROR(read_attributes(scale.get(), s.name, co.attributes, out.notes));
    out.source.coordinates.push_back(std::move(co));
  }
  return out;
}

std::string hdf5_variables_hint(const std::string& path) {
  quiet();
  Id file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return "(cannot list its datasets)";
  std::vector<std::string> names;
  ListVisit v{&names, 41};
  H5Lvisit(file.get(), H5_INDEX_NAME, H5_ITER_INC, visit_link, &v);
  if (names.empty()) return "it has no datasets";
  std::string s = "its datasets: ";
  for (size_t k = 0; k < names.size() && k < 40; ++k) s += (k ? ", " : "") + names[k];
  return s + (names.size() > 40 ? ", ..." : "");
}

}  // namespace factz::variable_io
