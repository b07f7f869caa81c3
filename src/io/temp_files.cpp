// The registry of temporary files under way (temp_files.hpp): fixed slots a signal handler can
// read without allocating or locking.
#include "io/temp_files.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace factz::temp_files {
namespace {

constexpr int kSlots = 16;
constexpr size_t kPathBytes = 4096;
// A slot is free (0), being filled (1) or holds a path (2).
std::atomic<int> g_state[kSlots];
char g_path[kSlots][kPathBytes];
std::atomic<void (*)() noexcept> g_also{nullptr};
std::atomic<int> g_ending{0};

/// Unlinks every registered path (async-signal-safe).
void unlink_registered() noexcept {
  for (int k = 0; k < kSlots; ++k)
    if (g_state[k].load() == 2) ::unlink(g_path[k]);
}

void on_signal(int sig) {
  unlink_all();
  if (void (*also)() noexcept = g_also.load()) also();
  ::signal(sig, SIG_DFL);
  // To the process, not this thread: a thread that does not block it ends the process now,
  // while this one still runs its handler (or when it returns, if it is the only one).
  ::kill(::getpid(), sig);
  // A thread that went on meanwhile may have created a registered file again (an MPI-IO open
  // creating its lock-test file): once more, in the moment before the end.
  unlink_registered();
}

}  // namespace

std::string temporary_path(const std::filesystem::path& target) {
  static std::atomic<unsigned> counter{0};
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::string name = ".";  // appended piece by piece: GCC 12 warns (-Wrestrict) on "." + std::string
  name += target.filename().string();
  name += ".factz-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".tmp";
  return (folder / name).string();
}

bool read_only_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  return ::access(path.c_str(), W_OK) != 0 && errno == EACCES;
}

bool special_path(const std::string& path) {
  return path.rfind("/proc/", 0) == 0 || path.rfind("/dev/fd/", 0) == 0 || path.rfind("/dev/std", 0) == 0;
}

Registration::Registration(const std::string& path) {
  if (path.size() >= kPathBytes) return;
  for (int k = 0; k < kSlots; ++k) {
    int expected = 0;
    if (!g_state[k].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_path[k], path.c_str(), path.size() + 1);
    g_state[k].store(2);
    slot_ = k;
    return;
  }
}

void Registration::release() {
  if (slot_ >= 0) g_state[slot_].store(0);
  slot_ = -1;
}

bool ending() noexcept { return g_ending.load() != 0; }

void wait_for_the_end() noexcept {
  for (;;) ::pause();
}

void created(const std::string& path) noexcept {
  // unlink_all sets the flag before it unlinks: either it sees this file, or this sees the flag.
  if (!ending()) return;
  ::unlink(path.c_str());
  wait_for_the_end();
}

void unlink_all() noexcept {
  g_ending.store(1);
  unlink_registered();
}

void install_signal_cleanup(void (*also)() noexcept) {
  g_also.store(also);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    ::sigaction(sig, &sa, nullptr);
  }
}

}  // namespace factz::temp_files
