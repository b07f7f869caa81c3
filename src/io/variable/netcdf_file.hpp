// The netCDF-C pieces the reader (netcdf_variable.cpp) and the writer (netcdf_writer.cpp)
// share.
#pragma once

#include <string>

#include "io/variable/variable_internal.hpp"

#include <netcdf.h>

namespace factz::variable_io::detail {

/// A file handle closed on scope exit.
class NcFile {
 public:
  NcFile() = default;
  ~NcFile() {
    if (id_ >= 0) nc_close(id_);
  }
  NcFile(const NcFile&) = delete;
  NcFile& operator=(const NcFile&) = delete;
  int* out() { return &id_; }
  int id() const { return id_; }
  /// Closes now; the close's own error (data flushed at close) counts.
  int close() {
    const int id = id_;
    id_ = -1;
    return id >= 0 ? nc_close(id) : NC_NOERR;
  }

 private:
  int id_ = -1;
};

inline std::string nc_text(int status) { return nc_strerror(status); }

}  // namespace factz::variable_io::detail
