// Loadable modules of the CLI (docs/architecture.md, "Loadable modules"): the libraries that
// only some runs need (netCDF-C and HDF5: libfactz-io.so; MPI: libfactz-mpi.so) live in
// shared modules that factz dlopens the first time a run needs them, so that every other run
// starts without mapping and relocating them. A module exports one extern "C" function that
// returns its table of functions; the table starts with a version the caller checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "factz/status.hpp"

/// Marks a module's entry point: the one symbol a module exports (modules are built with
/// hidden visibility).
#define FACTZ_MODULE_ENTRY extern "C" __attribute__((visibility("default")))

namespace factz::dynload {

/// Where modules are looked for, in order: $FACTZ_MODULE_DIR when it is set and not empty;
/// the folder of the running executable (the build tree, the Python package's bin/); from
/// there the installed layout's LIBDIR/factz (../lib/factz). Each with why it is there, for
/// messages.
struct ModuleDir {
  std::string path;
  std::string why;  ///< "$FACTZ_MODULE_DIR", "factz's folder", "the install layout"
};
std::vector<ModuleDir> module_dirs();

/// "A ($FACTZ_MODULE_DIR), B (factz's folder) or C (the install layout)", for messages.
std::string dirs_text(const std::vector<ModuleDir>& dirs);

/// The path of `file` in the first of module_dirs() that holds it, or empty. Loads nothing.
std::string find_module(const std::string& file);

/// A loaded module: where it was found, and the address of its entry point.
struct LoadedModule {
  std::string path;
  void* entry = nullptr;
};

/// Loads module `file` from the first folder of module_dirs() that holds it and returns the
/// address of its function `entry`. `global`: RTLD_GLOBAL, for a module whose libraries
/// dlopen plugins of their own that need their symbols (OpenMPI's components). The module
/// stays loaded until the process exits. Errors (backend_unavailable) are one line naming
/// the module, what it is `for_what`, and where it was looked for, with dlerror()'s reason.
Result<LoadedModule> load_module_entry(const std::string& file, const char* entry, const std::string& for_what,
                                       bool global);

/// A module's function table: load_module_entry, then the entry point called and the
/// table's `version` member checked against `version`; a table of another build is refused
/// with one line (backend_unavailable). Table: the module's struct of function pointers.
template <class Table>
Result<const Table*> load_module_table(const std::string& file, const char* entry, const std::string& for_what,
                                       bool global, uint32_t version) {
  auto m = load_module_entry(file, entry, for_what, global);
  if (!m.ok()) return m.status();
  const Table* table = reinterpret_cast<const Table* (*)()>(m->entry)();
  if (!table || table->version != version)
    return Status(Code::backend_unavailable, m->path + " is from another build of factz (module version " +
                                                 std::to_string(table ? table->version : 0) + ", this factz needs " +
                                                 std::to_string(version) + "): reinstall factz");
  return table;
}

}  // namespace factz::dynload
