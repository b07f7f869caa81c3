"""Builds factz._factz and the HDF5 plugin libh5zfactz.so with the project's CMake and puts
both in the `factz` package. Settings (environment): FACTZ_CMAKE (default "cmake"),
FACTZ_BUILD_JOBS (default 2), FACTZ_CMAKE_ARGS (extra configure arguments)."""

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


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not (ROOT / "CMakeLists.txt").exists():
            raise RuntimeError(f"{ROOT} has no CMakeLists.txt: install from the FaCTz repository "
                               "(pip install ./python from its root)")
        cmake = os.environ.get("FACTZ_CMAKE", "cmake")
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        build.mkdir(parents=True, exist_ok=True)
        configure = [cmake, "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     "-DFACTZ_BUILD_TESTS=OFF", f"-DPython_EXECUTABLE={sys.executable}"]
        configure += shlex.split(os.environ.get("FACTZ_CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
        jobs = os.environ.get("FACTZ_BUILD_JOBS", "2")
        targets = ["factz_python"]
        subprocess.run([cmake, "--build", str(build), "-j", jobs, "--target", *targets], check=True)
        plugin_ok = subprocess.run([cmake, "--build", str(build), "-j", jobs, "--target", "h5zfactz"]).returncode == 0
        dest = pathlib.Path(self.get_ext_fullpath(ext.name)).resolve()
        dest.parent.mkdir(parents=True, exist_ok=True)
        built = next((build / "python" / "factz").glob("_factz*.so"))
        self.copy_file(str(built), str(dest))
        plugin = build / "hdf5" / "plugin" / "libh5zfactz.so"
        if plugin_ok and plugin.exists():
            self.copy_file(str(plugin), str(dest.parent / "libh5zfactz.so"))


setup(ext_modules=[CMakeExtension("factz._factz")], cmdclass={"build_ext": CMakeBuild})
