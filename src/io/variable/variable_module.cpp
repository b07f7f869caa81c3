// The entry point of libfactz-io.so (variable_module.hpp): the readers and the writer this
// build has found libraries for.
#include "io/variable/variable_module.hpp"

#include "io/temp_files.hpp"
#include "io/variable/variable_internal.hpp"

const factz::variable_io::Module* factz_variable_io_module() {
  using namespace factz::variable_io;
  static const Module m = [] {
    Module t;
#if FACTZ_HAVE_NETCDF
    t.read_netcdf = read_netcdf;
    t.netcdf_variables_hint = netcdf_variables_hint;
    t.write_variables = write_netcdf;
#endif
#if FACTZ_HAVE_HDF5
    t.read_hdf5 = read_hdf5;
    t.hdf5_variables_hint = hdf5_variables_hint;
#endif
    t.unlink_temporaries = factz::temp_files::unlink_all;
    return t;
  }();
  return &m;
}
