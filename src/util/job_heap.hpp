// The heap of the factz executable (glibc's malloc settings and the huge-page reservation):
// kept out of big_vector.hpp, which the library's sources include, so that only the
// programs that call it depend on mallopt.
#pragma once

#include <malloc.h>

#include <climits>
#include <cstdint>
#include <cstdlib>

#include "util/big_vector.hpp"

namespace factz::detail {

inline void* huge_heap_skipped = nullptr;  // see reserve_huge_heap; reachable for leak checkers

/// Grows the heap by `bytes` at once, asks for transparent huge pages on it and hands it
/// back to malloc, which keeps it (for a process that set M_MMAP_MAX 0 and M_TRIM_THRESHOLD
/// INT_MAX, as prepare_job_heap below does): the allocations of a small field then fault in
/// a few 2 MiB pages instead of a thousand 4 KiB ones. Only address space is taken; pages
/// are cleared when first touched, as before.
///
/// The heap starts wherever address randomization put it, so the reservation's first 2 MiB
/// block is partial and can only take 4 KiB pages; the arrays allocated next would land
/// there and fault page by page (up to 512 faults, several ms on a virtual machine, and a
/// different count in every run). That partial block is kept by one allocation that is
/// never touched (address space only, no memory), made by shrinking the reservation in
/// place (realloc splits the chunk; the rest goes back to the heap's top), so that what
/// comes next starts on the first huge page. Returns that page's address (nullptr when the
/// heap could not grow).
inline void* reserve_huge_heap(size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  void* p = std::malloc(bytes);
  if (!p) return nullptr;
  hint_huge_pages(p, bytes);
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  size_t skip = ((at + kHuge - 1) & ~(kHuge - 1)) - at;
  if (skip == 0) {
    std::free(p);
    return p;
  }
  if (skip < 4 * sizeof(void*)) skip += kHuge;  // below malloc's smallest chunk: the next boundary
  void* kept = std::realloc(p, skip);
  if (kept != p) {  // not shrunk in place (another allocator): nothing is skipped
    std::free(kept ? kept : p);
    return nullptr;
  }
  huge_heap_skipped = kept;
  return static_cast<char*>(p) + skip;
}

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
