// The CLI's side of variable_io.hpp: reading and writing go through the module
// libfactz-io.so (variable_module.hpp), loaded the first time a run needs it, so that a run
// on raw or .npy fields never maps netCDF-C, HDF5 and their dozens of libraries. What this
// build has found is known here without loading anything (FACTZ_HAVE_NETCDF, FACTZ_HAVE_HDF5
// and their versions, set by CMakeLists.txt from the configure-time search).
#include "io/variable/variable_module.hpp"

#include <atomic>

namespace factz::variable_io {
namespace {

/// The module's unlink_all once it is loaded (for unlink_temporaries, from a signal handler).
std::atomic<void (*)() noexcept> g_module_unlink{nullptr};

/// The module, loaded on the first call; the outcome (a table, or why there is none) is kept.
Result<const Module*> module() {
  static const Result<const Module*> loaded = [] {
    auto m = dynload::load_module_table<Module>(kModuleFile, kModuleEntry, "reading and writing netCDF and HDF5 files",
                                                false, kModuleVersion);
    if (m.ok()) g_module_unlink.store(m.value()->unlink_temporaries);
    return m;
  }();
  return loaded;
}

/// "cannot read storm.nc:U: <why>", keeping the code of `why`.
Status cannot(const std::string& what, const Status& why) {
  return Status(why.code(), "cannot " + what + ": " + why.message());
}

}  // namespace

void unlink_temporaries() noexcept {
  if (void (*f)() noexcept = g_module_unlink.load()) f();
}

bool netcdf_available() { return FACTZ_HAVE_NETCDF; }
bool hdf5_available() { return FACTZ_HAVE_HDF5; }

Result<VariableData> read_variable(const VariableSpec& spec, int whole, bool values, Auxiliaries auxiliaries,
                                   RowRange rows) {
  const bool hdf5 = spec.kind == FileKind::hdf5;
  if (hdf5 && !hdf5_available())
    return Status(Code::backend_unavailable, "cannot read " + spec.text() + ": this factz was built without the HDF5 "
                                             "library (install libhdf5-dev and rebuild)");
  if (!hdf5 && !netcdf_available())
    return Status(Code::backend_unavailable, "cannot read " + spec.text() + ": this factz was built without netCDF-C "
                                             "(install libnetcdf-dev and rebuild)");
  const auto m = module();
  if (!m.ok()) return cannot("read " + spec.text(), m.status());
  return hdf5 ? m.value()->read_hdf5(spec, whole, values, auxiliaries, rows)
              : m.value()->read_netcdf(spec, whole, values, auxiliaries, rows);
}

std::string variables_hint(const std::string& path, FileKind kind) {
  const bool hdf5 = kind == FileKind::hdf5;
  if (hdf5 && !hdf5_available()) return "(this factz was built without HDF5)";
  if (!hdf5 && !netcdf_available()) return "(this factz was built without netCDF-C)";
  const auto m = module();
  if (!m.ok()) return "(cannot list them: " + m.status().message() + ")";
  return hdf5 ? m.value()->hdf5_variables_hint(path) : m.value()->netcdf_variables_hint(path);
}

Status write_variables(const std::string& file, std::span<const OutputVariable> variables,
                       std::vector<std::string>* notes) {
  if (!netcdf_available())
    return Status(Code::backend_unavailable,
                  "cannot write " + file + ": this factz was built without netCDF-C (install libnetcdf-dev and rebuild)");
  const auto m = module();
  if (!m.ok()) return cannot("write " + file, m.status());
  return m.value()->write_variables(file, variables, notes);
}

std::string built_in() {
  if (!netcdf_available() && !hdf5_available()) return "no netCDF or HDF5 support";
  std::string s;
  if (netcdf_available()) s += "netCDF-C " FACTZ_NETCDF_VERSION " (reads netCDF-3 and netCDF-4, writes netCDF-4)";
  if (hdf5_available())
    s += (s.empty() ? "" : ", ") + std::string("HDF5 " FACTZ_HDF5_VERSION " (reads HDF5 datasets)");
  // Where the module is, found without loading it: `factz --version` stays as quick as a
  // raw-file run, and a missing module shows here before a netCDF run fails.
  const std::string at = dynload::find_module(kModuleFile);
  if (!at.empty()) return s + " in " + at;
  return s + " in " + kModuleFile + ", which is missing (not in " + dynload::dirs_text(dynload::module_dirs()) + ")";
}

}  // namespace factz::variable_io
