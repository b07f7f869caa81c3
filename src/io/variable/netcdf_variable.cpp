// netCDF variables through netCDF-C (variable_io.hpp): reading one variable's slice with its
// dimensions, attributes, fill values and 1D coordinate variables (netcdf_writer.cpp writes
// them). Part of libfactz-io.so when netCDF-C is found.
#include <algorithm>
#include <bit>
#include <filesystem>
#include <set>

#include "io/variable/netcdf_file.hpp"

namespace factz::variable_io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "attribute and coordinate bytes are kept little-endian as netCDF-C returns them on this host");

using detail::Dim;
using detail::NcFile;
using detail::nc_text;

std::optional<SourceType> source_type(nc_type t) {
  if (t >= NC_BYTE && t <= NC_STRING) return SourceType(uint8_t(t));
  return std::nullopt;
}

std::string type_name(int ncid, nc_type t) {
  char name[NC_MAX_NAME + 1] = {};
  size_t size = 0;
  if (nc_inq_type(ncid, t, name, &size) != NC_NOERR) return "type " + std::to_string(t);
  return name;
}

SourceFormat format_of(int ncid) {
  int f = 0;
  if (nc_inq_format(ncid, &f) != NC_NOERR) return SourceFormat::netcdf4;
  switch (f) {
    case NC_FORMAT_CLASSIC: return SourceFormat::netcdf_classic;
    case NC_FORMAT_64BIT_OFFSET: return SourceFormat::netcdf_64bit_offset;
    case NC_FORMAT_CDF5: return SourceFormat::netcdf_64bit_data;
    case NC_FORMAT_NETCDF4_CLASSIC: return SourceFormat::netcdf4_classic;
    default: return SourceFormat::netcdf4;
  }
}

/// Attribute `k` of variable `varid` (NC_GLOBAL for the group). `kept` false: a type the
/// record has no code for (a note says so).
Status read_attribute(int grp, int varid, int k, SourceAttribute& a, bool& kept, const std::string& owner,
                      std::vector<std::string>& notes) {
  char name[NC_MAX_NAME + 1] = {};
  nc_type type = 0;
  size_t len = 0;
  int s = nc_inq_attname(grp, varid, k, name);
  if (s == NC_NOERR) s = nc_inq_att(grp, varid, name, &type, &len);
  if (s != NC_NOERR) return io_error("cannot read the attributes of " + owner + ": " + nc_text(s));
  a.name = name;
  kept = false;
  const auto st = source_type(type);
  if (!st) {
    notes.push_back("attribute " + a.name + " of " + owner + " has the user-defined type " + type_name(grp, type) +
                    ", which FaCTz does not keep");
    return Status::Ok();
  }
  a.type = *st;
  if (a.type == SourceType::string) {
    std::vector<char*> p(len, nullptr);
    s = nc_get_att_string(grp, varid, name, p.data());
    if (s == NC_NOERR) {
      for (char* c : p) a.strings.emplace_back(c ? c : "");
      nc_free_string(len, p.data());
    }
  } else {
    a.data.resize(len * size_t(source_type_size(a.type)));
    s = len ? nc_get_att(grp, varid, name, a.data.data()) : NC_NOERR;
  }
  if (s != NC_NOERR) return io_error("cannot read attribute " + a.name + " of " + owner + ": " + nc_text(s));
  kept = true;
  return Status::Ok();
}

Status read_attributes(int grp, int varid, const std::string& owner, std::vector<SourceAttribute>& out,
                       std::vector<std::string>& notes) {
  int natts = 0;
  if (int s = nc_inq_varnatts(grp, varid, &natts); s != NC_NOERR)
    return io_error("cannot read the attributes of " + owner + ": " + nc_text(s));
  for (int k = 0; k < natts; ++k) {
    SourceAttribute a;
    bool kept = false;
    FACTZ_RETURN_IF_ERROR(read_attribute(grp, varid, k, a, kept, owner, notes));
    if (kept && !detail::internal_attribute(a.name)) out.push_back(std::move(a));
  }
  return Status::Ok();
}

/// Every variable of a group and its subgroups ("group/name"), at most `limit`.
void list_variables(int grp, const std::string& prefix, std::vector<std::string>& out, size_t limit) {
  int n = 0;
  if (nc_inq_varids(grp, &n, nullptr) == NC_NOERR && n > 0) {
    std::vector<int> ids(size_t(n), 0);
    nc_inq_varids(grp, &n, ids.data());
    for (int id : ids) {
      char name[NC_MAX_NAME + 1] = {};
      if (out.size() < limit && nc_inq_varname(grp, id, name) == NC_NOERR) out.push_back(prefix + name);
    }
  }
  int ng = 0;
  if (nc_inq_grps(grp, &ng, nullptr) != NC_NOERR || ng <= 0) return;
  std::vector<int> groups(size_t(ng), 0);
  nc_inq_grps(grp, &ng, groups.data());
  for (int g : groups) {
    char name[NC_MAX_NAME + 1] = {};
    if (nc_inq_grpname(g, name) == NC_NOERR) list_variables(g, prefix + name + "/", out, limit);
  }
}

/// The group and id of a variable path ("U", "group/U", "/group/U").
Status locate(int ncid, const VariableSpec& spec, int& grp, int& varid) {
  std::vector<std::string> parts;
  size_t from = spec.variable[0] == '/' ? 1 : 0;
  for (;;) {
    const size_t at = spec.variable.find('/', from);
    parts.push_back(spec.variable.substr(from, at == std::string::npos ? std::string::npos : at - from));
    if (at == std::string::npos) break;
    from = at + 1;
  }
  grp = ncid;
  auto missing = [&] {
    return invalid_argument(spec.file + " has no variable " + spec.variable + "; " +
                            netcdf_variables_hint(spec.file));
  };
  for (size_t k = 0; k + 1 < parts.size(); ++k) {
    int child = 0;
    if (parts[k].empty() || nc_inq_grp_ncid(grp, parts[k].c_str(), &child) != NC_NOERR) return missing();
    grp = child;
  }
  if (parts.back().empty() || nc_inq_varid(grp, parts.back().c_str(), &varid) != NC_NOERR) return missing();
  return Status::Ok();
}

/// Ids of the unlimited dimensions visible from `grp` (its own and its ancestors').
std::vector<int> unlimited_dims(int grp) {
  std::vector<int> out;
  for (int g = grp;;) {
    int n = 0;
    if (nc_inq_unlimdims(g, &n, nullptr) == NC_NOERR && n > 0) {
      std::vector<int> ids(size_t(n), 0);
      nc_inq_unlimdims(g, &n, ids.data());
      out.insert(out.end(), ids.begin(), ids.end());
    }
    int parent = 0;
    if (nc_inq_grp_parent(g, &parent) != NC_NOERR) break;
    g = parent;
  }
  return out;
}

/// The 1D numeric variable named like dimension `dimid` (its coordinate variable), searched
/// from `grp` up through its ancestors; -1 when there is none.
int coordinate_variable(int grp, int dimid, const std::string& dim_name, int& cgrp) {
  for (int g = grp;;) {
    int cv = 0, ndims = 0, cdim = -1;
    nc_type t = 0;
    if (nc_inq_varid(g, dim_name.c_str(), &cv) == NC_NOERR && nc_inq_varndims(g, cv, &ndims) == NC_NOERR &&
        ndims == 1 && nc_inq_vardimid(g, cv, &cdim) == NC_NOERR && cdim == dimid &&
        nc_inq_vartype(g, cv, &t) == NC_NOERR && t != NC_CHAR && t < NC_STRING && t >= NC_BYTE) {
      cgrp = g;
      return cv;
    }
    int parent = 0;
    if (nc_inq_grp_parent(g, &parent) != NC_NOERR) return -1;
    g = parent;
  }
}

/// netCDF-C reads the missing end of a truncated netCDF-3 file as zeros (ncdump too): the
/// data of every variable must fit in the file. A lower bound on the size, from public
/// metadata only (the header's own size is not public): every fixed-size variable's bytes,
/// plus every record's; HDF5-based files are checked by HDF5 itself.
Status check_classic_size(int ncid, const std::string& path) {
  int format = 0, nvars = 0, unlimited = -1;
  if (nc_inq_format(ncid, &format) != NC_NOERR || format == NC_FORMAT_NETCDF4 || format == NC_FORMAT_NETCDF4_CLASSIC)
    return Status::Ok();
  if (nc_inq(ncid, nullptr, &nvars, nullptr, &unlimited) != NC_NOERR) return Status::Ok();
  size_t records = 0;
  if (unlimited >= 0) nc_inq_dimlen(ncid, unlimited, &records);
  uint64_t need = 0;
  for (int v = 0; v < nvars; ++v) {
    nc_type t = 0;
    int ndims = 0;
    int dimids[NC_MAX_VAR_DIMS];
    size_t type_size = 0;
    if (nc_inq_var(ncid, v, nullptr, &t, &ndims, dimids, nullptr) != NC_NOERR ||
        nc_inq_type(ncid, t, nullptr, &type_size) != NC_NOERR)
      return Status::Ok();
    uint64_t bytes = type_size;
    bool record = false;
    for (int k = 0; k < ndims; ++k) {
      size_t len = 0;
      if (dimids[k] == unlimited) {
        record = true;
        continue;
      }
      nc_inq_dimlen(ncid, dimids[k], &len);
      bytes = len == 0 ? 0 : (bytes > UINT64_MAX / len ? UINT64_MAX / 2 : bytes * len);
    }
    if (record) bytes = records == 0 ? 0 : (bytes > UINT64_MAX / 2 / records ? UINT64_MAX / 2 : bytes * records);
    need = need > UINT64_MAX / 2 - bytes ? UINT64_MAX / 2 : need + bytes;
  }
  std::error_code ec;
  const uint64_t have = std::filesystem::file_size(path, ec);
  if (!ec && have < need)
    return io_error("cannot read " + path + ": truncated (its variables need at least " + std::to_string(need) +
                    " bytes, the file has " + std::to_string(have) + ")");
  return Status::Ok();
}

/// The variable named `name` seen from `grp` (its own, else its ancestors'); -1 when none.
int visible_variable(int grp, const std::string& name, int& vgrp) {
  for (int g = grp;;) {
    int id = 0;
    if (nc_inq_varid(g, name.c_str(), &id) == NC_NOERR) {
      vgrp = g;
      return id;
    }
    int parent = 0;
    if (nc_inq_grp_parent(g, &parent) != NC_NOERR) return -1;
    g = parent;
  }
}

/// The auxiliary variables of variable `varid` (VariableData::auxiliaries): the ones its
/// `coordinates` and `grid_mapping` attributes name whose dimensions are all its own, and the
/// cell bounds (`bounds`, `climatology`) of its coordinate variables and of those auxiliary
/// variables, whose other dimensions (the cell's vertices: `nv`, `bnds`) are read whole as
/// their own; all read over its slice (`start`, `count` of its dimensions). A name that is
/// missing, that is the variable itself or one of its coordinate variables (kept already), a
/// variable of a string or user-defined type, or one named by `coordinates` with another
/// dimension is left out with a note; one spanning two or more whole dimensions is left out
/// under Auxiliaries::small (grids_left_out).
Status read_auxiliaries(int grp, int varid, const std::vector<int>& dimids, const std::vector<Dim>& dims,
                        const std::vector<size_t>& start, const std::vector<size_t>& count, Auxiliaries which,
                        VariableData& out) {
  const std::string& owner = out.source.name;
  struct Named {
    std::string name;
    bool bounds;  ///< named by a `bounds` attribute: dimensions of its own allowed
  };
  std::vector<Named> queue;
  std::set<std::string> seen;
  auto add = [&](const std::string& name, bool bounds) {
    if (seen.insert(name).second) queue.push_back({name, bounds});
  };
  for (const std::string& name : referenced_variables(out.source)) add(name, false);
  for (const SourceCoordinate& c : out.source.coordinates)
    for (const std::string& name : bounds_variables(c.attributes)) add(name, true);
  for (size_t q = 0; q < queue.size(); ++q) {
    const std::string name = queue[q].name;
    const bool bounds = queue[q].bounds;
    int agrp = 0;
    const int av = visible_variable(grp, name, agrp);
    if (av < 0) {
      out.notes.push_back(owner + " names " + name + (bounds ? " (bounds)" : " (coordinates / grid_mapping)") +
                          ", which the file does not have");
      continue;
    }
    if ((agrp == grp && av == varid) ||
        std::any_of(out.source.coordinates.begin(), out.source.coordinates.end(),
                    [&](const SourceCoordinate& c) { return c.name == name; }))
      continue;
    nc_type t = 0;
    int nd = 0;
    if (nc_inq_var(agrp, av, nullptr, &t, &nd, nullptr, nullptr) != NC_NOERR) continue;
    if (t < NC_BYTE || t > NC_UINT64) {
      out.notes.push_back("auxiliary variable " + name + " of " + owner + " has the type " + type_name(agrp, t) +
                          ", which FaCTz does not keep");
      continue;
    }
    std::vector<int> ids(size_t(nd), 0);
    if (nd > 0) nc_inq_vardimid(agrp, av, ids.data());
    SourceAuxiliary a;
    a.name = name;
    a.type = SourceType(uint8_t(t));
    std::vector<size_t> from, size;
    int whole_dims = 0;
    std::string foreign, shape;
    for (int id : ids) {
      const auto it = std::find(dimids.begin(), dimids.end(), id);
      char dname[NC_MAX_NAME + 1] = {};
      nc_inq_dimname(agrp, id, dname);
      if (std::find(a.dimensions.begin(), a.dimensions.end(), std::string(dname)) != a.dimensions.end()) {
        foreign = std::string(dname) + " (twice)";
        break;
      }
      if (it == dimids.end()) {
        size_t len = 0;
        const bool clash = std::any_of(dims.begin(), dims.end(), [&](const Dim& d) { return d.name == dname; });
        if (!bounds || clash || nc_inq_dimlen(agrp, id, &len) != NC_NOERR || len == 0) {
          foreign = dname;
          break;
        }
        a.dimensions.push_back(dname);  // the cell's vertices: read whole
        a.own_dimensions.emplace_back(dname, uint64_t(len));
        from.push_back(0);
        size.push_back(len);
        shape += (shape.empty() ? "" : ", ") + std::string(dname);
        continue;
      }
      const size_t k = size_t(it - dimids.begin());
      a.dimensions.push_back(dims[k].name);
      from.push_back(start[k]);
      size.push_back(count[k]);
      whole_dims += count[k] > 1 ? 1 : 0;
      shape += (shape.empty() ? "" : ", ") + dims[k].name;
    }
    if (!foreign.empty()) {
      out.notes.push_back("auxiliary variable " + name + " of " + owner + " not kept: its dimension " + foreign +
                          " is not one of " + owner + "'s");
      continue;
    }
    if (whole_dims >= 2 && which != Auxiliaries::all) {
      out.grids_left_out.push_back(name + "(" + shape + "), " + source_type_name(a.type));
      continue;
    }
    uint64_t n = 1;
    for (size_t c : size) n *= c;
    a.data.resize(size_t(n) * size_t(source_type_size(a.type)));
    const int s = nd == 0 ? nc_get_var(agrp, av, a.data.data())
                          : nc_get_vara(agrp, av, from.data(), size.data(), a.data.data());
    if (s != NC_NOERR) return io_error("cannot read the auxiliary variable " + name + " of " + owner + ": " + nc_text(s));
    FACTZ_RETURN_IF_ERROR(read_attributes(agrp, av, name, a.attributes, out.notes));
    for (const std::string& b : bounds_variables(a.attributes)) add(b, true);  // a curvilinear grid's cell corners
    out.auxiliaries.push_back(std::move(a));
  }
  return Status::Ok();
}

}  // namespace

Result<VariableData> read_netcdf(const VariableSpec& spec, int whole, bool values, Auxiliaries auxiliaries,
                                 RowRange rows) {
  NcFile f;
  if (int s = nc_open(spec.file.c_str(), NC_NOWRITE, f.out()); s != NC_NOERR)
    return io_error("cannot read " + spec.file + ": " + nc_text(s));
  FACTZ_RETURN_IF_ERROR(check_classic_size(f.id(), spec.file));
  const std::string what = spec.text();
  int grp = 0, varid = 0;
  FACTZ_RETURN_IF_ERROR(locate(f.id(), spec, grp, varid));
  nc_type type = 0;
  int ndims = 0;
  if (int s = nc_inq_var(grp, varid, nullptr, &type, &ndims, nullptr, nullptr); s != NC_NOERR)
    return io_error("cannot read " + what + ": " + nc_text(s));
  VariableData out;
  out.format = format_of(f.id());
  out.source.name = spec.variable;
  // The type first: a text variable, or an integer one that is not packed, is refused
  // whatever its shape. A variable with scale_factor or add_offset is packed, whatever its
  // type (detail::Packing).
  const bool integer = type == NC_BYTE || type == NC_SHORT || type == NC_INT || type == NC_INT64 ||
                       type == NC_UBYTE || type == NC_USHORT || type == NC_UINT || type == NC_UINT64;
  if (type != NC_FLOAT && type != NC_DOUBLE && !integer)
    return invalid_argument(what + " is not numeric (type " + type_name(grp, type) +
                            "); FaCTz compresses floating-point fields (float32 or float64)");
  std::optional<detail::Packing> packing;
  // The variable's attributes, once: its packing and its record need them.
  FACTZ_RETURN_IF_ERROR(read_attributes(grp, varid, spec.variable, out.source.attributes, out.notes));
  {
    size_t bytes = 0;
    if (int s = nc_inq_type(grp, type, nullptr, &bytes); s != NC_NOERR)
      return io_error("cannot read the type of " + what + ": " + nc_text(s));
    const detail::StoredType stored{int(bytes), !integer,
                                    type == NC_BYTE || type == NC_SHORT || type == NC_INT || type == NC_INT64};
    auto p = detail::packing_of(out.source.attributes, stored, what);
    if (!p.ok()) return p.status();
    if (p.value()) packing = *p.value();
  }
  if (packing) {
    out.dtype = packing->dtype;  // unpack_metadata sets it again, with the attributes
  } else if (type == NC_FLOAT) {
    out.dtype = DType::float32;
  } else if (type == NC_DOUBLE) {
    out.dtype = DType::float64;
  } else {
    return invalid_argument(what + " holds integers (" + type_name(grp, type) +
                            ") without scale_factor or add_offset; FaCTz compresses floating-point fields "
                            "(float32 or float64, or integers packed with scale_factor/add_offset)");
  }
  out.source.type = out.dtype == DType::float64 ? SourceType::float64 : SourceType::float32;
  std::vector<int> dimids(size_t(ndims), 0);
  if (ndims > 0) nc_inq_vardimid(grp, varid, dimids.data());
  const std::vector<int> unlimited = unlimited_dims(grp);
  std::vector<Dim> dims;
  for (int id : dimids) {
    char name[NC_MAX_NAME + 1] = {};
    size_t len = 0;
    if (int s = nc_inq_dim(grp, id, name, &len); s != NC_NOERR)
      return io_error("cannot read the dimensions of " + what + ": " + nc_text(s));
    dims.push_back({name, uint64_t(len), std::find(unlimited.begin(), unlimited.end(), id) != unlimited.end()});
  }
  auto index = detail::resolve_selection(spec, dims, whole);
  if (!index.ok()) return index.status();
  out.source.dimensions = detail::source_dimensions(dims, index.value());
  uint64_t n = 1;
  for (size_t k = dims.size() - size_t(whole); k < dims.size(); ++k) {
    out.shape.push_back(dims[k].size);
    if (dims[k].size == 0) return invalid_argument(what + ": dimension " + dims[k].name + " is empty");
    if (dims[k].size > (uint64_t(1) << 40) / n)
      return invalid_argument(what + ": " + detail::dims_text(dims) + " is too large (more than 2^40 values)");
    n *= dims[k].size;
  }
  FACTZ_RETURN_IF_ERROR(read_attributes(f.id(), NC_GLOBAL, spec.file, out.global_attributes, out.notes));
  for (const char* fill_name : {"_FillValue", "missing_value"})
    for (const auto& a : out.source.attributes)
      if (a.name == fill_name) detail::add_fill_values(a, out.fill_values);
  if (packing) detail::unpack_metadata(*packing, out);
  if (!values) return out;

  // The slice: the selected index of every leading dimension, all of the last ones.
  std::vector<size_t> start(dims.size(), 0), count(dims.size(), 1);
  for (size_t k = 0; k < dims.size(); ++k) {
    if (k < index->size()) start[k] = size_t((*index)[k]);
    else count[k] = size_t(dims[k].size);
  }
  // The rows and columns asked for (all by default).
  const size_t d0 = dims.size() - size_t(whole);
  std::vector<size_t> vstart = start, vcount = count;
  const auto per_row = detail::narrow_to(rows, d0, vstart, vcount, out, what);
  if (!per_row.ok()) return per_row.status();
  const uint64_t row0 = vstart[d0], row_count = vcount[d0], row_values = per_row.value();
  int s = NC_NOERR;
  if (row_count == 0) {
    // no values: the record's coordinates and auxiliaries only
  } else if (packing) {  // slabs of its rows (detail::unpack_in_slabs)
    FACTZ_RETURN_IF_ERROR(detail::unpack_in_slabs(
        *packing, row_count, row_values, out, what, [&](uint64_t row, uint64_t m, double* buffer) {
          std::vector<size_t> from = vstart, size = vcount;
          from[d0] = size_t(row0 + row);
          size[d0] = size_t(m);
          const int e = nc_get_vara_double(grp, varid, from.data(), size.data(), buffer);
          return e == NC_NOERR ? Status::Ok() : io_error("cannot read the values of " + what + ": " + nc_text(e));
        }));
  } else if (out.dtype == DType::float32) {
    out.f32.resize(size_t(row_count * row_values));
    s = nc_get_vara_float(grp, varid, vstart.data(), vcount.data(), out.f32.data());
  } else {
    out.f64.resize(size_t(row_count * row_values));
    s = nc_get_vara_double(grp, varid, vstart.data(), vcount.data(), out.f64.data());
  }
  if (s != NC_NOERR) return io_error("cannot read the values of " + what + ": " + nc_text(s));

  // Coordinate variables: all values of a whole dimension, the selected one of a sliced one.
  for (size_t k = 0; k < dims.size(); ++k) {
    int cgrp = 0;
    const int cv = coordinate_variable(grp, dimids[k], dims[k].name, cgrp);
    if (cv < 0) continue;
    SourceCoordinate co;
    nc_type ct = 0;
    nc_inq_vartype(cgrp, cv, &ct);
    co.dimension = uint32_t(k);
    co.name = dims[k].name;
    co.type = SourceType(uint8_t(ct));
    const size_t cstart = k < index->size() ? start[k] : 0, ccount = k < index->size() ? 1 : count[k];
    co.data.resize(ccount * size_t(source_type_size(co.type)));
    if (int cs = nc_get_vara(cgrp, cv, &cstart, &ccount, co.data.data()); cs != NC_NOERR)
      return io_error("cannot read the coordinate variable " + co.name + " of " + what + ": " + nc_text(cs));
    FACTZ_RETURN_IF_ERROR(read_attributes(cgrp, cv, co.name, co.attributes, out.notes));
    out.source.coordinates.push_back(std::move(co));
  }
  if (auxiliaries != Auxiliaries::none)
    FACTZ_RETURN_IF_ERROR(read_auxiliaries(grp, varid, dimids, dims, start, count, auxiliaries, out));
  return out;
}

std::string netcdf_variables_hint(const std::string& path) {
  NcFile f;
  if (int s = nc_open(path.c_str(), NC_NOWRITE, f.out()); s != NC_NOERR) return "(cannot list them: " + nc_text(s) + ")";
  std::vector<std::string> names;
  list_variables(f.id(), "", names, 41);
  if (names.empty()) return "it has no variables";
  std::string s = "its variables: ";
  for (size_t k = 0; k < names.size() && k < 40; ++k) s += (k ? ", " : "") + names[k];
  return s + (names.size() > 40 ? ", ..." : "");
}

}  // namespace factz::variable_io
