// The entry point of libfactz-mpi.so (mpi_module.hpp): comm_mpi.cpp's table.
#include "mpi/mpi_module.hpp"

const factz::mpi::MpiModule* factz_mpi_module() { return &factz::mpi::linked_mpi(); }
