// What the netCDF and HDF5 readers of variable_io share: the selection of a variable's
// leading dimensions (one rule for both), and the source record's pieces.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/variable/variable_io.hpp"

namespace factz::variable_io::detail {

/// A dimension of a variable as a file declares it.
struct Dim {
  std::string name;
  uint64_t size = 0;
  bool unlimited = false;
};

/// "time=3, lat=33, lon=36".
std::string dims_text(const std::vector<Dim>& dims);

/// The index of every leading dimension (all but the last `whole`) that the selection of
/// `spec` picks: by name ([time=3,depth=0]; leading dimensions of length 1 need not be
/// named) or by position ([3,0,:,:], ':' for the whole ones); without a selection every
/// leading dimension must have length 1. Negative indices count from the end. Errors are
/// one line naming spec.text().
Result<std::vector<uint64_t>> resolve_selection(const VariableSpec& spec, const std::vector<Dim>& dims, int whole);

/// The record's dimensions: every leading one with its selected index.
std::vector<SourceDimension> source_dimensions(const std::vector<Dim>& dims, const std::vector<uint64_t>& index);

/// Appends the values of a _FillValue / missing_value attribute to `fills` (distinct).
void add_fill_values(const SourceAttribute& a, std::vector<double>& fills);

/// Whether an attribute name is bookkeeping of netCDF-4 or HDF5 dimension scales rather
/// than the variable's metadata (never copied).
bool internal_attribute(const std::string& name);

/// The range [first, first + count) of a dimension of `size` (count RowRange::kAll: to the
/// end), or invalid_argument naming `what` and the `axis` ("rows", "columns") when it does not
/// lie within it.
inline Result<std::pair<uint64_t, uint64_t>> range_within(uint64_t first, uint64_t count, uint64_t size,
                                                          const std::string& what, const char* axis) {
  if (count == RowRange::kAll && first <= size) count = size - first;
  if (first > size || count > size - first)
    return Status(Code::invalid_argument, what + ": " + axis + " " + std::to_string(first) + " to " +
                                              std::to_string(first + count) + " asked of " + std::to_string(size));
  return std::pair<uint64_t, uint64_t>{first, count};
}

/// The slice of the values a read of `rows` takes, from the whole slice (`start`, `count`, of
/// Index: size_t or hsize_t) whose outermost whole dimension is d0: `start` and `count` narrowed
/// to the rows and columns asked for, `first_row`, `first_col` and `cols` set in `out`. Returns
/// the values per row of the narrowed slice.
template <class Index>
Result<uint64_t> narrow_to(RowRange rows, size_t d0, std::vector<Index>& start, std::vector<Index>& count,
                           VariableData& out, const std::string& what) {
  const size_t last = count.size() - 1;
  const auto r = range_within(rows.first, rows.count, uint64_t(count[d0]), what, "rows");
  if (!r.ok()) return r.status();
  const auto c = range_within(rows.first_col, rows.cols, uint64_t(count[last]), what, "columns");
  if (!c.ok()) return c.status();
  start[d0] = Index(r->first);
  count[d0] = Index(r->second);
  start[last] = Index(c->first);
  count[last] = Index(c->second);
  out.first_row = r->first;
  out.first_col = c->first;
  out.cols = c->second;
  uint64_t per_row = 1;
  for (size_t k = d0 + 1; k < count.size(); ++k) per_row *= uint64_t(count[k]);
  return per_row;
}

}  // namespace factz::variable_io::detail

namespace factz::variable_io {

// The readers and the writer of libfactz-io.so (variable_module.hpp), one file per library,
// each compiled in only when its library is found; variable_io.hpp says what they do.
// netcdf_variable.cpp, netcdf_writer.cpp (write_variables of the module):
Result<VariableData> read_netcdf(const VariableSpec& spec, int whole, bool values, Auxiliaries auxiliaries,
                                 RowRange rows);
std::string netcdf_variables_hint(const std::string& path);
Status write_netcdf(const std::string& file, std::span<const OutputVariable> variables,
                    std::vector<std::string>* notes);
// hdf5_variable.cpp:
Result<VariableData> read_hdf5(const VariableSpec& spec, int whole, bool values, Auxiliaries auxiliaries,
                               RowRange rows);
std::string hdf5_variables_hint(const std::string& path);

}  // namespace factz::variable_io

namespace factz::variable_io::detail {

/// The attributes that declare fill values, and those that declare a valid range (CF).
inline bool fill_attribute(const std::string& name) { return name == "_FillValue" || name == "missing_value"; }
inline bool range_attribute(const std::string& name) {
  return name == "valid_min" || name == "valid_max" || name == "valid_range";
}

/// The name a packing attribute (scale_factor, add_offset, _Unsigned) takes in the record of a
/// variable read unpacked, so that no reader acts on it: factz_packed_scale_factor,
/// factz_packed_add_offset, factz_packed_Unsigned; and factz_packed_type (packed_name("type")),
/// the stored type as meant. repack reads them back.
inline constexpr std::string_view kPackedPrefix = "factz_packed_";
inline std::string packed_name(const std::string& name) {
  return std::string(kPackedPrefix) + (name[0] == '_' ? name.substr(1) : name);
}

/// How a variable stores its values: the type in the file.
struct StoredType {
  int bytes = 2;
  bool is_float = false;   ///< float32 or float64 storage (scale_factor / add_offset still apply)
  bool is_signed = true;   ///< integers only
};

/// CF packing of a variable (`scale_factor`, `add_offset`; CF section 8.1): its values are
/// read as `stored * scale_factor + add_offset` in the type numpy's promotion gives it (as
/// netCDF4-python computes it; xarray agrees when both attributes have one type), computed
/// as they compute it: the stored value converted to that type,
/// multiplied, then added, each operation rounded in that type (docs/usage.md, "Packed
/// variables"). Integers are the usual case; float variables with the attributes are
/// unpacked the same way, as those tools do.
struct Packing {
  DType dtype = DType::float32;  ///< packing_of says which
  double scale = 1;              ///< scale_factor (1 when absent), exactly as stored
  double offset = 0;             ///< add_offset (0 when absent)
  bool stored_float = false;     ///< the stored values are floats (no lattice, no _Unsigned)
  /// The declared fill values in stored units (compared with the values as stored).
  std::vector<double> packed_fills;
  /// `_Unsigned` (the netCDF-3 convention for unsigned integers, which netCDF4-python and
  /// xarray follow): the stored integers of this many bits are read as unsigned ("true" on
  /// a signed type, `to_unsigned`) or signed ("false" on an unsigned type); 0: as stored.
  int reinterpret_bits = 0;
  bool to_unsigned = false;
  /// The stored type as the variable means it: "int16", "uint8" (with _Unsigned), "float32", ...
  std::string stored_type;
  /// The integer the variable means by the stored `p` (`_Unsigned` applied).
  double integer(double p) const;
  /// The unpacked value of `p`, in `dtype` (held exactly by the double).
  double unpack(double p) const;
};

/// The packing a variable stored as `stored` declares, or none (no scale_factor and no
/// add_offset): float64 when an attribute is a double, the storage is float64, or the
/// integers are wider than 16 bits (numpy's promotion of int32 and float32), else float32.
/// invalid_argument naming `what` when the attributes cannot unpack it: not one finite float
/// or double value each.
Result<std::optional<Packing>> packing_of(const std::vector<SourceAttribute>& attributes, StoredType stored,
                                          const std::string& what);

/// After the reader has read the attributes and the declared fill values of a packed
/// variable (in stored units): keeps those fill values in `packing`, gives `out` the unpacked
/// type, its fill values unpacked, and attributes that describe the unpacked variable
/// (scale_factor, add_offset and _Unsigned renamed factz_packed_scale_factor,
/// factz_packed_add_offset and factz_packed_Unsigned, and factz_packed_type added, which no
/// reader acts on but which keep what re-packing needs; _FillValue and missing_value, and
/// valid_min, valid_max and valid_range of an integer type, unpacked into the unpacked type),
/// so that a variable written back is a plain float variable that no reader unpacks twice.
void unpack_metadata(Packing& packing, VariableData& out);

/// Fills `out`'s values (f32 or f64, as unpack_metadata set its type) from stored values
/// read as doubles (exact for every float and for integers up to 2^53): a vertex holding a
/// declared fill value takes that fill value unpacked (it is missing data, as in a float
/// variable). invalid_argument naming `what` when a value that is not a fill value unpacks to
/// the same float as one (the two could not be told apart).
/// The readers read a packed variable's stored values in slabs of whole rows (of the first
/// dimension read whole), at most kSlabValues values each, and unpack each slab into `out`'s
/// values at `first` (sized by the reader to the whole slice first): so the doubles take 8 MB
/// whatever the variable's size.
Status unpack_values(const Packing& packing, std::span<const double> stored, uint64_t first, VariableData& out,
                     const std::string& what);
inline constexpr uint64_t kSlabValues = uint64_t(1) << 20;

/// A packed slice of `rows` rows of `row_values` values (rows: the first dimension read
/// whole) read and unpacked into `out` slab by slab: `read(first_row, count, buffer)` reads
/// `count` whole rows from `first_row` into `buffer` as doubles, or says why it cannot.
template <class ReadSlab>
Status unpack_in_slabs(const Packing& packing, uint64_t rows, uint64_t row_values, VariableData& out,
                       const std::string& what, ReadSlab&& read) {
  const uint64_t per = std::max<uint64_t>(1, kSlabValues / std::max<uint64_t>(row_values, 1));
  if (packing.dtype == DType::float32) out.f32.resize(size_t(rows * row_values));
  else out.f64.resize(size_t(rows * row_values));
  std::vector<double> stored(size_t(std::min(rows, per) * row_values));
  for (uint64_t r = 0; r < rows; r += per) {
    const uint64_t m = std::min(per, rows - r);
    FACTZ_RETURN_IF_ERROR(read(r, m, stored.data()));
    FACTZ_RETURN_IF_ERROR(
        unpack_values(packing, std::span<const double>(stored.data(), size_t(m * row_values)), r * row_values, out, what));
  }
  return Status::Ok();
}

}  // namespace factz::variable_io::detail
