// libfactz.so is made of the static libraries of the build, linked whole (cmake/install.cmake):
// this file only gives the shared library target a source of its own.
namespace factz::detail {
int shared_library_marker() { return 1; }
}  // namespace factz::detail
