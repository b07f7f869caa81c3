// The netCDF/HDF5 module libfactz-io.so (docs/architecture.md, "Loadable modules"): the
// readers and the writer of variable_io.hpp, which link netCDF-C and the serial HDF5, built
// as a shared module that the CLI loads (variable_io.cpp) the first time a run reads or
// writes a netCDF or HDF5 variable. The module and the CLI come from one build and pass C++
// types; kModuleVersion changes whenever this table or the types it passes change, so that
// a module of another build is refused instead of misread.
#pragma once

#include <cstdint>

#include "dynload/module_loader.hpp"
#include "io/variable/variable_io.hpp"

namespace factz::variable_io {

// 3: SourceAuxiliary::own_dimensions; 4: unlink_temporaries; 5: the readers' RowRange; 6: its
// columns (VariableData::first_col, cols)
inline constexpr uint32_t kModuleVersion = 6;
inline constexpr char kModuleFile[] = "libfactz-io.so";
inline constexpr char kModuleEntry[] = "factz_variable_io_module";

/// The module's functions (variable_io.hpp says what each does). The entries of a library
/// this build has not found are null; the CLI knows which (FACTZ_HAVE_NETCDF,
/// FACTZ_HAVE_HDF5) and answers backend_unavailable without loading the module.
struct Module {
  uint32_t version = kModuleVersion;
  /// netCDF-C: reading, the variables of a file, writing (of both kinds: a netCDF-4 file).
  Result<VariableData> (*read_netcdf)(const VariableSpec& spec, int whole, bool values, Auxiliaries auxiliaries,
                                      RowRange rows) = nullptr;
  std::string (*netcdf_variables_hint)(const std::string& path) = nullptr;
  Status (*write_variables)(const std::string& file, std::span<const OutputVariable> variables,
                            std::vector<std::string>* notes) = nullptr;
  /// The serial HDF5: reading, the datasets of a file.
  Result<VariableData> (*read_hdf5)(const VariableSpec& spec, int whole, bool values, Auxiliaries auxiliaries,
                                    RowRange rows) = nullptr;
  std::string (*hdf5_variables_hint)(const std::string& path) = nullptr;
  /// The module's temp_files::unlink_all (its own registry: the module links its own copy of
  /// the core library). Always set.
  void (*unlink_temporaries)() noexcept = nullptr;
};

}  // namespace factz::variable_io

/// The module's entry point (variable_module.cpp): its table, valid while it stays loaded.
FACTZ_MODULE_ENTRY const factz::variable_io::Module* factz_variable_io_module();
