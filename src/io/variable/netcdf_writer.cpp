// Writing variables into a new netCDF-4 file through netCDF-C (variable_io.hpp,
// write_variables): dimensions and 1D coordinate variables shared by name in the root group,
// each variable in its group with the attributes of its source record, then the record's
// auxiliary variables in the root group. float32 values make
// NC_FLOAT variables, float64 values NC_DOUBLE ones, re-packed integers (PackedValues) a
// variable of their type, through the same code. Part of libfactz-io.so when netCDF-C is found.
#include <sys/statvfs.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <type_traits>
#include <variant>

#include "io/temp_files.hpp"
#include "io/variable/netcdf_file.hpp"

namespace factz::variable_io {
namespace {

using detail::Dim;
using detail::NcFile;
using detail::nc_text;

/// The netCDF type of a value type.
template <class T>
constexpr nc_type kNcType = std::is_same_v<T, double> ? NC_DOUBLE : NC_FLOAT;

/// Where a variable's values are, and their netCDF type.
struct TypedValues {
  const void* data;
  size_t size;
  nc_type type;
};
TypedValues typed(const OutputValues& values) {
  return std::visit(
      [](auto s) -> TypedValues {
        if constexpr (std::is_same_v<decltype(s), PackedValues>) {
          const size_t size = size_t(source_type_size(s.type));
          return {s.bytes.data(), size ? s.bytes.size() / size : 0, nc_type(s.type)};
        } else {
          return {s.data(), s.size(), kNcType<typename decltype(s)::value_type>};
        }
      },
      values);
}

/// `value` as a _FillValue of `type` (NC_FLOAT, NC_DOUBLE, or an integer type of a re-packed
/// variable; netCDF requires the variable's type). A float32 variable's fill value is a float
/// and a re-packed one's an integer of its type, so the conversion is exact for them.
int put_fill(int grp, int varid, nc_type type, double value) {
  const char* name = "_FillValue";
  switch (type) {
    case NC_DOUBLE: return nc_put_att_double(grp, varid, name, type, 1, &value);
    case NC_FLOAT: { const float f = float(value); return nc_put_att_float(grp, varid, name, type, 1, &f); }
    case NC_BYTE: { const signed char v = static_cast<signed char>(value); return nc_put_att_schar(grp, varid, name, type, 1, &v); }
    case NC_UBYTE: { const unsigned char v = static_cast<unsigned char>(value); return nc_put_att_uchar(grp, varid, name, type, 1, &v); }
    case NC_SHORT: { const short v = static_cast<short>(value); return nc_put_att_short(grp, varid, name, type, 1, &v); }
    case NC_USHORT: { const unsigned short v = static_cast<unsigned short>(value); return nc_put_att_ushort(grp, varid, name, type, 1, &v); }
    case NC_INT: { const int v = static_cast<int>(value); return nc_put_att_int(grp, varid, name, type, 1, &v); }
    case NC_UINT: { const unsigned v = static_cast<unsigned>(value); return nc_put_att_uint(grp, varid, name, type, 1, &v); }
    case NC_INT64: { const long long v = static_cast<long long>(value); return nc_put_att_longlong(grp, varid, name, type, 1, &v); }
    case NC_UINT64: { const unsigned long long v = static_cast<unsigned long long>(value); return nc_put_att_ulonglong(grp, varid, name, type, 1, &v); }
    default: return NC_EBADTYPE;
  }
}

/// One file being defined and written.
class Writer {
 public:
  Writer(int ncid, std::vector<std::string>* notes) : ncid_(ncid), notes_(notes) {}

  Status add(const OutputVariable& v) {
    const std::string& path = v.variable;
    std::vector<std::string> parts;
    for (size_t from = path[0] == '/' ? 1 : 0;;) {
      const size_t at = path.find('/', from);
      const std::string part = path.substr(from, at == std::string::npos ? std::string::npos : at - from);
      if (!part.empty()) parts.push_back(part);
      if (at == std::string::npos) break;
      from = at + 1;
    }
    if (parts.empty()) return invalid_argument("no variable name in '" + path + "'");
    int grp = ncid_;
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
      int child = 0;
      if (nc_inq_grp_ncid(grp, parts[k].c_str(), &child) != NC_NOERR)
        FACTZ_RETURN_IF_ERROR(check(nc_def_grp(grp, parts[k].c_str(), &child), "group " + parts[k]));
      grp = child;
    }
    // Dimensions: the source's (sliced ones of length 1), or plain (y, x) / (z, y, x).
    std::vector<Dim> dims;
    if (v.source) {
      for (const auto& d : v.source->dimensions) dims.push_back({d.name, d.index ? 1 : d.size, d.unlimited});
    } else {
      static const char* const kPlain[] = {"z", "y", "x"};
      for (size_t k = 0; k < v.shape.size(); ++k) dims.push_back({kPlain[3 - v.shape.size() + k], v.shape[k], false});
    }
    if (dims.size() < v.shape.size()) return invalid_argument(path + ": the source has fewer dimensions than the field");
    uint64_t values = 1;
    for (size_t k = 0; k < v.shape.size(); ++k) {
      const Dim& d = dims[dims.size() - v.shape.size() + k];
      if (d.size != v.shape[k])
        return invalid_argument(path + ": dimension " + d.name + " of the source has length " + std::to_string(d.size) +
                                ", the field " + std::to_string(v.shape[k]));
      values *= v.shape[k];
    }
    const TypedValues data = typed(v.values);
    if (values != data.size) return invalid_argument(path + ": the values do not fill the dimensions");
    std::vector<int> dimids;
    for (const auto& d : dims) {
      auto id = dimension(d, path);
      if (!id.ok()) return id.status();
      dimids.push_back(id.value());
    }
    if (v.global_attributes && !globals_written_) {
      for (const auto& a : *v.global_attributes) put_attribute(ncid_, NC_GLOBAL, a, "the file");
      globals_written_ = true;
    }
    // Coordinate variables first, as files usually list them.
    if (v.source)
      for (const auto& co : v.source->coordinates) FACTZ_RETURN_IF_ERROR(coordinate(co, dimids[co.dimension]));
    int varid = 0;
    const int s = nc_def_var(grp, parts.back().c_str(), data.type, int(dimids.size()), dimids.data(), &varid);
    if (s == NC_ENAMEINUSE) return invalid_argument(path + " is written twice (or is also a coordinate variable)");
    FACTZ_RETURN_IF_ERROR(check(s, "variable " + path));
    bool declares_fill = false;
    if (v.source) {
      for (const auto& a : v.source->attributes) {
        declares_fill = declares_fill || a.name == "_FillValue" || a.name == "missing_value";
        put_attribute(grp, varid, a, path, data.type);
      }
    }
    if (v.fill && !declares_fill)
      FACTZ_RETURN_IF_ERROR(check(put_fill(grp, varid, data.type, *v.fill), path + ":_FillValue"));
    std::vector<size_t> count;
    for (const auto& d : dims) count.push_back(size_t(d.size));
    data_.push_back({grp, varid, data.type, std::move(count), data.data, path});
    return Status::Ok();
  }

  /// The source's auxiliary variables (after every variable: their dimensions are the
  /// variables', or their own, defined here: a cell's vertices), each once, in the root
  /// group; one whose dimension this file lacks (or has with another size), whose
  /// name another variable has, or that netCDF refuses is left out with a note (the field's
  /// variables are written whatever happens to them).
  void auxiliaries(const std::vector<SourceAuxiliary>& list) {
    for (const auto& a : list) {
      if (coords_.count(a.name)) continue;
      int existing = 0;
      if (nc_inq_varid(ncid_, a.name.c_str(), &existing) == NC_NOERR) {
        if (notes_) notes_->push_back("auxiliary variable " + a.name + " not written: a variable has its name");
        continue;
      }
      std::vector<int> dimids;
      std::vector<size_t> count;
      std::string missing;
      for (const auto& d : a.dimensions) {
        const uint64_t own = a.own_size(d);
        if (own && !dims_.count(d)) {  // a cell's vertices: defined here
          int id = 0;
          if (nc_def_dim(ncid_, d.c_str(), size_t(own), &id) != NC_NOERR) {
            missing = d;
            break;
          }
          dims_[d] = {id, own, a.name};
        }
        const auto it = dims_.find(d);
        if (it == dims_.end() || (own && it->second.size != own)) {
          missing = d;
          break;
        }
        dimids.push_back(it->second.id);
        count.push_back(size_t(it->second.size));
      }
      if (!missing.empty()) {
        if (notes_)
          notes_->push_back("auxiliary variable " + a.name + " not written: this file has no dimension " + missing +
                            " of its size");
        continue;
      }
      uint64_t n = 1;
      for (size_t c : count) n *= c;
      if (n != a.count()) {
        if (notes_) notes_->push_back("auxiliary variable " + a.name + " not written: its values do not fill its dimensions");
        continue;
      }
      int varid = 0;
      // One netCDF refuses (a name it reserves) is noted: the field's variables are written.
      if (int e = nc_def_var(ncid_, a.name.c_str(), nc_type(a.type), int(dimids.size()), dimids.data(), &varid);
          e != NC_NOERR) {
        if (notes_) notes_->push_back("auxiliary variable " + a.name + " not written: " + nc_text(e));
        continue;
      }
      coords_.insert(a.name);
      for (const auto& at : a.attributes) put_attribute(ncid_, varid, at, a.name);
      data_.push_back({ncid_, varid, nc_type(a.type), std::move(count), a.data.data(), a.name});
    }
  }

  /// Writes every value (after the definitions).
  Status write_values() {
    for (const auto& d : data_) {
      const std::vector<size_t> start(d.count.size(), 0);
      FACTZ_RETURN_IF_ERROR(
          check(nc_put_vara(d.grp, d.varid, start.data(), d.count.data(), d.values), "the values of " + d.name));
    }
    return Status::Ok();
  }

 private:
  struct Pending {
    int grp, varid;
    nc_type type;
    std::vector<size_t> count;
    const void* values;
    std::string name;  ///< the variable's, for messages
  };

  Status check(int s, const std::string& what) const {
    return s == NC_NOERR ? Status::Ok() : io_error("cannot write " + what + ": " + nc_text(s));
  }

  /// A dimension of the root group, shared by name.
  Result<int> dimension(const Dim& d, const std::string& path) {
    if (auto it = dims_.find(d.name); it != dims_.end()) {
      if (it->second.size != d.size)
        return invalid_argument("dimension " + d.name + " has length " + std::to_string(it->second.size) + " for " +
                                it->second.first_user + " and " + std::to_string(d.size) + " for " + path);
      return it->second.id;
    }
    int id = 0;
    FACTZ_RETURN_IF_ERROR(
        check(nc_def_dim(ncid_, d.name.c_str(), d.unlimited ? NC_UNLIMITED : size_t(d.size), &id), "dimension " + d.name));
    dims_[d.name] = {id, d.size, path};
    return id;
  }

  /// A coordinate variable in the root group, written once per name.
  Status coordinate(const SourceCoordinate& co, int dimid) {
    if (coords_.count(co.name)) return Status::Ok();
    coords_.insert(co.name);
    int varid = 0;
    FACTZ_RETURN_IF_ERROR(check(nc_def_var(ncid_, co.name.c_str(), nc_type(co.type), 1, &dimid, &varid),
                                "coordinate variable " + co.name));
    for (const auto& a : co.attributes) put_attribute(ncid_, varid, a, co.name);
    data_.push_back({ncid_, varid, nc_type(co.type), {size_t(co.count())}, co.data.data(), co.name});
    return Status::Ok();
  }

  /// An attribute as it was read; _FillValue of a data variable takes the variable's type
  /// (`data_type`; NC_NAT for anything else: netCDF requires it; one of that type already, a
  /// re-packed integer, is written as its bytes). One netCDF refuses is noted and left out.
  void put_attribute(int grp, int varid, const SourceAttribute& a, const std::string& owner,
                     nc_type data_type = NC_NAT) {
    int s = NC_NOERR;
    if (data_type != NC_NAT && a.name == "_FillValue" && nc_type(a.type) != data_type) {
      const auto values = a.numbers();
      s = values.empty() ? NC_EINVAL : put_fill(grp, varid, data_type, values[0]);
    } else if (a.type == SourceType::string) {
      std::vector<const char*> p;
      for (const auto& t : a.strings) p.push_back(t.c_str());
      s = nc_put_att_string(grp, varid, a.name.c_str(), p.size(), p.data());
    } else if (a.type == SourceType::text) {
      s = nc_put_att_text(grp, varid, a.name.c_str(), a.data.size(), reinterpret_cast<const char*>(a.data.data()));
    } else {
      s = nc_put_att(grp, varid, a.name.c_str(), nc_type(a.type), size_t(a.count()), a.data.data());
    }
    if (s != NC_NOERR && notes_) notes_->push_back("attribute " + a.name + " of " + owner + " not written: " + nc_text(s));
  }

  struct DimEntry {
    int id;
    uint64_t size;
    std::string first_user;
  };
  int ncid_;
  std::vector<std::string>* notes_;
  std::map<std::string, DimEntry> dims_;
  std::set<std::string> coords_;
  std::vector<Pending> data_;
  bool globals_written_ = false;
};

}  // namespace

Status write_netcdf(const std::string& file, std::span<const OutputVariable> variables,
                    std::vector<std::string>* notes) {
  namespace fs = std::filesystem;
  const fs::path target(file);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (fs::is_directory(target, ec)) return io_error("cannot write " + file + ": is a directory");
  if (temp_files::read_only_file(file)) return io_error("cannot write " + file + ": " + temp_files::kReadOnlyReason);
  if (!fs::is_directory(folder, ec)) return io_error("cannot write " + file + ": folder " + folder.string() + " does not exist");
  const std::string tmp = temp_files::temporary_path(target);
  temp_files::Registration registered(tmp);  // removed if a signal ends the process before the rename
  Status result;
  {
    NcFile f;
    if (int s = nc_create(tmp.c_str(), NC_NETCDF4 | NC_CLOBBER, f.out()); s != NC_NOERR)
      return io_error("cannot write " + file + ": " + nc_text(s));
    temp_files::created(tmp);
    Writer w(f.id(), notes);
    for (const auto& v : variables) {
      result = w.add(v);
      if (!result.ok()) break;
    }
    for (const auto& v : variables)
      if (result.ok() && v.auxiliaries) w.auxiliaries(*v.auxiliaries);
    if (result.ok()) {
      if (int s = nc_enddef(f.id()); s != NC_NOERR) result = io_error("cannot write " + file + ": " + nc_text(s));
    }
    if (result.ok()) result = w.write_values();
    const int closed = f.close();
    if (result.ok() && closed != NC_NOERR) result = io_error("cannot write " + file + ": " + nc_text(closed));
  }
  if (result.ok() && std::rename(tmp.c_str(), file.c_str()) != 0)
    result = io_error("cannot write " + file + ": " + std::strerror(errno));
  if (!result.ok()) {
    std::remove(tmp.c_str());
    if (temp_files::ending()) temp_files::wait_for_the_end();  // the signal's doing, not an error to report
    // Messages name the file the user gave, not the temporary one, and the file.
    std::string m = result.message();
    for (size_t at = m.find(tmp); at != std::string::npos; at = m.find(tmp)) m.replace(at, tmp.size(), file);
    if (m.find(file) == std::string::npos) m = file + ": " + m;
    // netCDF-4 (HDF5) reports a full disk as "HDF error": say what the folder has left.
    if (struct statvfs fs_info; statvfs(folder.c_str(), &fs_info) == 0) {
      uint64_t need = 0;
      for (const auto& v : variables)
        need += std::visit(
            [](const auto& values) -> uint64_t {
              if constexpr (std::is_same_v<std::decay_t<decltype(values)>, PackedValues>) return values.bytes.size();
              else return values.size_bytes();
            },
            v.values);
      const uint64_t free_bytes = uint64_t(fs_info.f_bavail) * uint64_t(fs_info.f_frsize);
      if (free_bytes < need + (uint64_t(1) << 20))
        m += " (the file system of " + folder.string() + " has " + std::to_string(free_bytes) +
             " bytes free; the values alone take " + std::to_string(need) + ")";
    }
    return Status(result.code(), m);
  }
  return Status::Ok();
}

}  // namespace factz::variable_io
