// Temporary files a write has under way (field_io.cpp, and the netCDF writer of
// libfactz-io.so): every complete output is written under a hidden temporary name and renamed
// (docs/usage.md, "Every write is checked"). A process stopped by a signal in between would
// leave that hidden file behind, as large as the output; the CLI's handlers for SIGINT,
// SIGTERM and SIGHUP (install_signal_cleanup) remove the registered ones before the process
// ends as the signal ends it. The library installs no handler: Python and the HDF5 plugin run
// in other programs' processes.
#pragma once

#include <filesystem>
#include <string>

namespace factz::temp_files {

/// Where a complete output for `target` is written first: `.NAME.factz-PID-N.tmp` in its
/// folder (hidden; the rename stays in one file system), unique by process and counter.
std::string temporary_path(const std::filesystem::path& target);

/// Paths that name another open file (/dev/stdout, /dev/fd/N, /proc/...): written in place,
/// through the descriptor they name, never renamed over (renaming would replace the file the
/// shell redirected, not write to it).
bool special_path(const std::string& path);

/// Whether `path` names an existing regular file that this process may not write (its mode or
/// an ACL forbids it: access(W_OK) fails with EACCES). Writers refuse to replace such a file,
/// as writing it in place would be refused, although its folder would let a temporary be
/// renamed over it: a user's write protection holds (root writes every file, as cp does).
bool read_only_file(const std::string& path);
/// The reason writers give for such a file, after "cannot write PATH: ".
inline constexpr const char* kReadOnlyReason = "permission denied (the file is read-only; factz does not replace it)";

/// Registers `path` from construction (before the file is created) to release() or
/// destruction (after it is renamed or removed). At most 16 at once, each under 4096 bytes;
/// beyond that a path is not registered (the write works the same, it is only not removed by
/// a signal).
class Registration {
 public:
  explicit Registration(const std::string& path);
  ~Registration() { release(); }
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;
  void release();

 private:
  int slot_ = -1;
};

/// Removes every registered file. Async-signal-safe (unlink only): for signal handlers.
void unlink_all() noexcept;

/// Whether unlink_all has run: the process is ending by a signal. A writer whose rename or
/// write fails then waits for the end (wait_for_the_end) instead of reporting an error that
/// the signal caused (another thread may run the handler while the writer goes on).
bool ending() noexcept;
[[noreturn]] void wait_for_the_end() noexcept;

/// To call right after creating a registered file: when the handler has already run on
/// another thread (its unlink came before the file existed), removes it and waits for the end.
void created(const std::string& path) noexcept;

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that call unlink_all() and `also` (when
/// not null: the CLI's variable_io::unlink_temporaries, for the module's own registry), then end the process by the same signal
/// with its default action (the exit status a shell reports stays 128 + signal). Signals the
/// process ignores at start (nohup's SIGHUP) stay ignored.
void install_signal_cleanup(void (*also)() noexcept = nullptr);

}  // namespace factz::temp_files
