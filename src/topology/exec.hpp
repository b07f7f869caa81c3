// Thread count resolution shared by the CPU drivers, and the extractor for callers that
// already hold a field's mask.
#pragma once

#include <omp.h>

#include <cstdint>
#include <vector>

#include "factz/topology.hpp"

namespace factz::detail {

/// Threads an OpenMP region uses for `exec`: the requested count, or OpenMP's default.
inline int thread_count(const Exec& exec) {
  return exec.threads > 0 ? exec.threads : omp_get_max_threads();
}

/// The signatures of a validated field on the mesh of its missing vertices (`missing`:
/// missing_mask(f), empty for none), for callers that already hold the mask.
std::vector<uint8_t> signatures_on_mesh(const VectorField2D& f, const std::vector<uint8_t>& missing, Exec exec);
std::vector<uint8_t> signatures_on_mesh(const VectorField2D64& f, const std::vector<uint8_t>& missing, Exec exec);

}  // namespace factz::detail
