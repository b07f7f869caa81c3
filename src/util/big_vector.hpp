// Vectors for the large per-vertex and per-triangle work arrays of the CPU drivers.
// Two costs dominate such arrays on a fresh allocation: zero-filling memory that is
// overwritten anyway, and one page fault per 4 KiB on first touch. BigAllocator
// default-initializes (no fill for trivial types: every user writes every element before
// reading it) and asks for transparent huge pages on large blocks.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace factz::detail {

template <class T>
struct BigAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t(2) << 20;

  BigAllocator() = default;
  template <class U>
  BigAllocator(const BigAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < 4 * kHuge) {
      void* p = std::malloc(bytes ? bytes : 1);
      if (!p) throw std::bad_alloc();
      return static_cast<T*>(p);
    }
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);  // a hint; failure is harmless
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }

  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) ::new (static_cast<void*>(p)) U;  // default-init
    else ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const BigAllocator<U>&) const { return true; }
};

/// Asks for transparent huge pages on the 2 MiB-aligned interior of [p, p + bytes):
/// first touch of fresh memory is expensive on virtual machines (one fault per 4 KiB).
inline void hint_huge_pages(void* p, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  const uintptr_t lo = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}

inline void* huge_heap_skipped = nullptr;  // see reserve_huge_heap; reachable for leak checkers

/// Grows the heap by `bytes` at once, asks for transparent huge pages on it and hands it
/// back to malloc, which keeps it (for a process that set M_MMAP_MAX 0 and M_TRIM_THRESHOLD
/// INT_MAX, as prepare_job_heap in util/job_heap.hpp does): the allocations of a small field then fault in a few
/// 2 MiB pages instead of a thousand 4 KiB ones. Only address space is taken; pages are
/// cleared when first touched, as before.
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

/// v.resize(n) for a std::vector of a large array: when the storage must grow, huge pages
/// are asked for before resize's zero fill first touches it (see hint_huge_pages).
template <class V>
void resize_fresh(V& v, size_t n) {
  if (n > v.capacity()) {
    v.reserve(n);
    hint_huge_pages(v.data(), v.capacity() * sizeof(typename V::value_type));
  }
  v.resize(n);
}

/// v = the n values at `from`, in fresh storage with huge pages asked for before the copy
/// first touches it (a frontend's current state starting as the original field).
template <class T>
void assign_fresh(std::vector<T>& v, const T* from, size_t n) {
  v.clear();
  v.reserve(n);
  hint_huge_pages(v.data(), n * sizeof(T));
  v.insert(v.end(), from, from + n);
}

/// A std::vector whose resize(n) leaves trivial elements uninitialized.
template <class T>
using BigVector = std::vector<T, BigAllocator<T>>;

}  // namespace factz::detail
