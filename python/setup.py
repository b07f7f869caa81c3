"""Builds factz._factz, the HDF5 plugin libh5zfactz.so and the command line tool factz with
the project's CMake, and puts them in the `factz` package (factz/_factz*.so,
factz/libh5zfactz.so, factz/bin/factz and its loadable modules factz/bin/libfactz-*.so; the
`factz` console script runs factz/bin/factz).

Settings (environment): FACTZ_CMAKE (default "cmake"), FACTZ_BUILD_JOBS (default 2),
FACTZ_CMAKE_ARGS (extra configure arguments), FACTZ_PREBUILT_DIR (a CMake build directory of
this repository whose targets factz_python, factz_cli and h5zfactz are built: their files are
packaged as they are and CMake is not run; the tests use it to install in seconds)."""

import os
import pathlib
import shlex
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent  # the repository root holds the top-level CMakeLists.txt


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


def cmake_build(build_temp):
    """Configures (tests off) and builds the three targets in build_temp/cmake; returns it."""
    if not (ROOT / "CMakeLists.txt").exists():
        raise RuntimeError(f"{ROOT} has no CMakeLists.txt: install from the FaCTz repository "
                           "(pip install --no-build-isolation ./python from its root)")
    cmake = os.environ.get("FACTZ_CMAKE", "cmake")
    build = pathlib.Path(build_temp).resolve() / "cmake"
    build.mkdir(parents=True, exist_ok=True)
    configure = [cmake, "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 "-DFACTZ_BUILD_TESTS=OFF", f"-DPython_EXECUTABLE={sys.executable}"]
    configure += shlex.split(os.environ.get("FACTZ_CMAKE_ARGS", ""))
    subprocess.run(configure, check=True)
    jobs = os.environ.get("FACTZ_BUILD_JOBS", "2")
    subprocess.run([cmake, "--build", str(build), "-j", jobs, "--target", "factz_python", "factz_cli"], check=True)
    # The plugin is optional (no HDF5 development files: no plugin, the rest still installs).
    subprocess.run([cmake, "--build", str(build), "-j", jobs, "--target", "h5zfactz"])
    return build


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        prebuilt = os.environ.get("FACTZ_PREBUILT_DIR")
        build = pathlib.Path(prebuilt).resolve() if prebuilt else cmake_build(self.build_temp)
        dest = pathlib.Path(self.get_ext_fullpath(ext.name)).resolve()
        package = dest.parent
        package.mkdir(parents=True, exist_ok=True)
        modules = sorted((build / "python" / "factz").glob("_factz*.so"))
        if not modules:
            raise RuntimeError(f"no factz/_factz*.so under {build / 'python'}: is the target factz_python built?")
        self.copy_file(str(modules[0]), str(dest))
        cli = build / "factz"
        if not cli.exists():
            raise RuntimeError(f"no command line tool {cli}: is the target factz_cli built?")
        (package / "bin").mkdir(exist_ok=True)
        self.copy_file(str(cli), str(package / "bin" / "factz"))  # keeps the executable bit
        # Its loadable modules (netCDF/HDF5, MPI: built with factz_cli when their libraries
        # are found) go beside it, where it looks for them.
        for module in sorted(build.glob("libfactz-*.so")):
            self.copy_file(str(module), str(package / "bin" / module.name))
        plugin = build / "hdf5" / "plugin" / "libh5zfactz.so"
        if plugin.exists():
            self.copy_file(str(plugin), str(package / "libh5zfactz.so"))


setup(ext_modules=[CMakeExtension("factz._factz")], cmdclass={"build_ext": CMakeBuild})
