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

/// Frees a vector's storage now, for the allocations that follow to reuse. (`v = {}` does not:
/// it assigns an empty initializer list and keeps the capacity.)
template <class V>
void release(V& v) {
  V().swap(v);
}

}  // namespace factz::detail
