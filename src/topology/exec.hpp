// Thread count resolution shared by the CPU drivers.
#pragma once

#include <omp.h>

#include "factz/topology.hpp"

namespace factz::detail {

/// Threads an OpenMP region uses for `exec`: the requested count, or OpenMP's default.
inline int thread_count(const Exec& exec) {
  return exec.threads > 0 ? exec.threads : omp_get_max_threads();
}

}  // namespace factz::detail
