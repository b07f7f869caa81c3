#include "dynload/module_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace factz::dynload {
namespace {

/// The folder of the running executable (empty when /proc is not mounted). Its real path:
/// a symbolic link to factz (a package manager's bin/) leads to where the modules lie.
std::string executable_dir() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

std::vector<ModuleDir> module_dirs() {
  std::vector<ModuleDir> dirs;
  if (const char* env = std::getenv("FACTZ_MODULE_DIR"); env && *env) dirs.push_back({env, "$FACTZ_MODULE_DIR"});
  if (const std::string exe = executable_dir(); !exe.empty()) {
    dirs.push_back({exe, "factz's folder"});
    // FACTZ_MODULE_INSTALL_DIR: the installed modules' folder relative to the installed
    // executable's (CMake's BINDIR to LIBDIR/factz: "../lib/factz", or with a multiarch
    // LIBDIR "../lib/x86_64-linux-gnu/factz").
    const auto installed = (std::filesystem::path(exe) / FACTZ_MODULE_INSTALL_DIR).lexically_normal();
    dirs.push_back({installed.string(), "the install layout"});
  }
  return dirs;
}

std::string dirs_text(const std::vector<ModuleDir>& dirs) {
  if (dirs.empty()) return "nowhere (no $FACTZ_MODULE_DIR, and /proc/self/exe cannot be read)";
  std::string s;
  for (size_t k = 0; k < dirs.size(); ++k)
    s += (k == 0 ? "" : k + 1 == dirs.size() ? " or " : ", ") + dirs[k].path + " (" + dirs[k].why + ")";
  return s;
}

std::string find_module(const std::string& file) {
  for (const auto& d : module_dirs()) {
    const std::string path = d.path + "/" + file;
    if (::access(path.c_str(), F_OK) == 0) return path;
  }
  return {};
}

Result<LoadedModule> load_module_entry(const std::string& file, const char* entry, const std::string& for_what,
                                       bool global) {
  const auto dirs = module_dirs();
  std::string reason;
  for (const auto& dir : dirs) {
    const std::string path = dir.path + "/" + file;
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!handle) {
      reason = ::dlerror();
      // A module that is there but cannot be loaded (a library it needs is missing) is the
      // answer; one that is not there sends the search on.
      if (::access(path.c_str(), F_OK) == 0)
        return Status(Code::backend_unavailable, for_what + " needs " + path + ", which cannot be loaded: " + reason);
      continue;
    }
    void* fn = ::dlsym(handle, entry);
    if (!fn)
      return Status(Code::backend_unavailable,
                    for_what + " needs " + path + ", which is not a factz module: " + std::string(::dlerror()));
    return LoadedModule{path, fn};
  }
  return Status(Code::backend_unavailable, for_what + " needs the module " + file + ", which is not in " +
                                               dirs_text(dirs) + (reason.empty() ? "" : " (dlopen: " + reason + ")"));
}

}  // namespace factz::dynload
