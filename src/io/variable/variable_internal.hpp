// What the netCDF and HDF5 readers of variable_io share: the selection of a variable's
// leading dimensions (one rule for both), and the source record's pieces.
#pragma once

#include <cstdint>
#include <string>
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

}  // namespace factz::variable_io::detail

namespace factz::variable_io {

// The readers and the writer of libfactz-io.so (variable_module.hpp), one file per library,
// each compiled in only when its library is found; variable_io.hpp says what they do.
// netcdf_variable.cpp, netcdf_writer.cpp (write_variables of the module):
Result<VariableData> read_netcdf(const VariableSpec& spec, int whole, bool values);
std::string netcdf_variables_hint(const std::string& path);
Status write_netcdf(const std::string& file, std::span<const OutputVariable> variables,
                    std::vector<std::string>* notes);
// hdf5_variable.cpp:
Result<VariableData> read_hdf5(const VariableSpec& spec, int whole, bool values);
std::string hdf5_variables_hint(const std::string& path);

}  // namespace factz::variable_io
