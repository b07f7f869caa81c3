// The heap of the factz executable (glibc's malloc settings): kept out of big_vector.hpp,
// which the library's sources include, so that only the programs that call it depend on
// mallopt.
#pragma once

#include <malloc.h>

#include <climits>

#include "util/big_vector.hpp"

namespace factz::detail {

/// The heap of a process that runs one job (the factz executable): its large work arrays
/// are allocated and freed in turn (the input, the frontend's state, the payload, the
/// coders' planes). Served by mmap, each would take fresh pages that the kernel clears on
/// first touch (a fifth of a large compression on a virtual machine); from the heap, freed
/// blocks are reused. Peak memory is unchanged: nothing is freed earlier or later. Every
/// thread allocates from that heap: a second arena would be mmap'ed memory in 4 KiB pages,
/// first touched by the coders running side by side (3D speculative at 64^3: the coding
/// stage took 8.4 ms instead of 4.6, docs/benchmarks.md); the large arrays are few, so one
/// arena's lock costs nothing measurable. The first 64 MiB take transparent huge pages
/// (reserve_huge_heap; a 1024^2 field compressed 22-36 % faster). Returns
/// reserve_huge_heap's answer. Call it first thing in main, before any thread starts.
inline void* prepare_job_heap() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  mallopt(M_ARENA_MAX, 1);
  return reserve_huge_heap(size_t(64) << 20);
}

}  // namespace factz::detail
