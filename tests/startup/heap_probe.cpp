// The factz executable's heap, set up as its main does (util/job_heap.hpp,
// prepare_job_heap), in a process of its own: the arrays a small field allocates first must
// start on the first huge page of the reservation, not in the partial 2 MiB block before it
// (4 KiB pages, one fault each), and that page must carry the huge-page hint. Exit 0 when
// they do, 1 with the reason when not, 77 (skipped) on a kernel without transparent huge
// pages. Run many times by tests/startup/CMakeLists.txt: the heap's start is random.
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "util/job_heap.hpp"

namespace {

/// The VmFlags line of /proc/self/smaps for the mapping holding `p` ("" when not found).
std::string vm_flags_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') inside = lo <= at && at < hi;
    else if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

int fail(const char* what, const void* a, const void* b) {
  std::printf("%s: %p against %p\n", what, a, b);
  return 1;
}

}  // namespace

int main() {
  struct stat st;
  if (::stat("/sys/kernel/mm/transparent_hugepage", &st) != 0) {
    std::puts("no transparent huge pages in this kernel: nothing to check");
    return 77;
  }
  char* first_huge = static_cast<char*>(factz::detail::prepare_job_heap());
  if (!first_huge) return fail("the heap did not grow", nullptr, nullptr);
  if (reinterpret_cast<uintptr_t>(first_huge) % (uintptr_t(2) << 20) != 0)
    return fail("the first huge page is not on a 2 MiB boundary", first_huge, nullptr);
  // A small field's arrays: the output planes of a 360 x 181 field, then a work array.
  auto* u = static_cast<char*>(std::malloc(260640));
  auto* v = static_cast<char*>(std::malloc(260640));
  auto* work = static_cast<char*>(std::malloc(size_t(1) << 20));
  // malloc's chunk headers sit between them: a few words.
  if (u < first_huge || u >= first_huge + 64) return fail("the first array is not on the first huge page", u, first_huge);
  if (v < u + 260640 || v >= u + 260640 + 64) return fail("the second array does not follow the first", v, u);
  if (work < v + 260640 || work >= v + 260640 + 64) return fail("the work array does not follow", work, v);
  const std::string flags = vm_flags_at(first_huge);
  if (flags.find(" hg") == std::string::npos) {
    std::printf("the first huge page's mapping has no huge-page hint: '%s'\n", flags.c_str());
    return 1;
  }
  std::free(work);
  std::free(v);
  std::free(u);
  return 0;
}
