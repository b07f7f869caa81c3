"""`pip install ./python` as docs/python.md ("Install") gives it: into a venv made with
--system-site-packages and into the system interpreter (here under a temporary --prefix, so
that the machine's Python is left as it was), offline (--no-build-isolation --no-index:
setuptools, wheel and numpy come from Debian). The installed package runs the `factz`
console script (the bundled CLI), imports, registers the HDF5 filter with h5py and gives
numcodecs the codec through its entry point, in processes without PYTHONPATH or
HDF5_PLUGIN_PATH.

The quick tests package this build's files (FACTZ_PREBUILT_DIR=FACTZ_BUILD_DIR, set by
ctest), so they check the packaging, not the compilation, in well under a minute. The full
build from source (CMake inside pip, ten minutes and more on two cores; without the CUDA
backend unless FACTZ_CMAKE_ARGS says otherwise) runs with FACTZ_SLOW_TESTS=1."""

import glob
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(os.environ.get("FACTZ_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
PIP_FLAGS = ["--no-build-isolation", "--no-index", "--disable-pip-version-check", "--no-cache-dir"]

# What the installed package must do, run by the installed interpreter in a clean environment.
CHECK = r"""
import os, sys, tempfile
import numpy as np
import factz
assert "site-packages" in factz.__file__ or "dist-packages" in factz.__file__, factz.__file__
u, v = np.random.default_rng(1).random((2, 30, 40), dtype=np.float32)
u2, v2 = factz.decompress(factz.compress(u, v))
assert factz.verify(u, v, u2, v2)["violations"] == 0
print("plugin", factz.hdf5_plugin_path() is not None)
try:
    import h5py
except ImportError:
    h5py = None
if h5py is not None:
    assert factz.register_hdf5_filter(), factz.hdf5_filter_status()
    path = os.path.join(tempfile.mkdtemp(), "w.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("w", data=np.stack([u, v]), chunks=(2, 30, 40), **factz.h5filter(eb=1e-2))
    with h5py.File(path, "r") as f:
        assert np.abs(f["w"][...] - np.stack([u, v])).max() <= 1e-2
    print("h5py ok")
try:
    import numcodecs
except ImportError:
    numcodecs = None
if numcodecs is not None:
    print("entry point", "factz" in numcodecs.registry.entries)
print("import ok")
"""


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HDF5_PLUGIN_PATH", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def run(cmd, **kw):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert out.returncode == 0, f"{' '.join(map(str, cmd))}\nstdout:\n{out.stdout[-3000:]}\nstderr:\n{out.stderr[-3000:]}"
    return out


def prebuilt():
    build = os.environ.get("FACTZ_BUILD_DIR")
    if not build:
        pytest.skip("FACTZ_BUILD_DIR (the CMake build directory, set by ctest) not given")
    build = pathlib.Path(build)
    needed = [build / "factz", *glob.glob(str(build / "python" / "factz" / "_factz*.so"))]
    if len(needed) < 2 or not all(os.path.exists(p) for p in needed):
        pytest.skip(f"{build} lacks the built CLI (factz_cli) or extension (factz_python)")
    return build


def source_copy(tmp_path):
    """python/ copied with the repository's top-level files it refers to, so that pip's
    in-tree build leaves nothing in the repository."""
    dst = tmp_path / "src"
    shutil.copytree(ROOT / "python", dst / "python",
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    shutil.copy(ROOT / "CMakeLists.txt", dst / "CMakeLists.txt")  # setup.py checks it is in a FaCTz tree
    return dst


def make_venv(tmp_path):
    for module in ("venv", "ensurepip"):
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode != 0:
            pytest.skip(f"{module} is not available (Debian: apt-get install python3-venv)")
    for module in ("setuptools", "wheel"):
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode != 0:
            pytest.skip(f"{module} is not installed (Debian: apt-get install python3-{module})")
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    return venv


def check_installed(python, script, cwd):
    env = clean_env()
    out = run([script, "--version"], cwd=cwd, env=env)
    assert out.stdout.startswith("factz 0.1.0"), out.stdout
    if "netCDF-C" in out.stdout or "HDF5" in out.stdout:  # its netCDF/HDF5 module, found beside it
        assert os.path.join("factz", "bin", "libfactz-io.so") in out.stdout, out.stdout
    out = run([python, "-m", "factz", "--version"], cwd=cwd, env=env)
    assert out.stdout.startswith("factz 0.1.0"), out.stdout
    out = run([python, "-c", "import factz"], cwd=cwd, env=env)
    out = run([python, "-c", CHECK], cwd=cwd, env=env)
    assert "import ok" in out.stdout
    assert "plugin True" in out.stdout
    if "entry point" in out.stdout:
        assert "entry point True" in out.stdout
    return out


def test_pip_install_into_a_venv_with_system_site_packages(tmp_path):
    build = prebuilt()
    venv = make_venv(tmp_path)
    src = source_copy(tmp_path)
    run([venv / "bin" / "pip", "install", *PIP_FLAGS, "./python"], cwd=src,
        env=clean_env(FACTZ_PREBUILT_DIR=str(build)))
    check_installed(venv / "bin" / "python", venv / "bin" / "factz", tmp_path)
    # The zarr store of another process opens with `import zarr` alone (the entry point).
    zarr_ok = subprocess.run([sys.executable, "-c", "import zarr"], capture_output=True).returncode == 0
    if zarr_ok:
        store = tmp_path / "s.zarr"
        write = ("import zarr, numpy as np, factz\n"
                 f"z = zarr.open({str(store)!r}, mode='w', shape=(2, 2, 20, 30), chunks=(1, 2, 20, 30), dtype='f4',"
                 " compressor=factz.FactzCodec(eb=0.05, bound='abs'))\n"
                 "z[...] = np.random.default_rng(2).random((2, 2, 20, 30), dtype=np.float32)\n")
        read = ("import sys, zarr\n"
                f"z = zarr.open({str(store)!r}, mode='r')\n"
                "assert z[...].shape == (2, 2, 20, 30) and type(z.compressor).__name__ == 'FactzCodec'\n"
                "print('read', 'factz' in sys.modules)\n")
        run([venv / "bin" / "python", "-c", write], cwd=tmp_path, env=clean_env())
        out = run([venv / "bin" / "python", "-c", read], cwd=tmp_path, env=clean_env())
        assert "read True" in out.stdout


def test_pip_install_into_the_system_interpreter_under_a_prefix(tmp_path):
    build = prebuilt()
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        pytest.skip("pip is not available for the system interpreter (Debian: apt-get install python3-pip)")
    src = source_copy(tmp_path)
    prefix = tmp_path / "prefix"
    run([sys.executable, "-m", "pip", "install", "--break-system-packages", *PIP_FLAGS, "--prefix", prefix,
         "./python"], cwd=src, env=clean_env(FACTZ_PREBUILT_DIR=str(build)))
    (init,) = glob.glob(str(prefix / "**" / "factz" / "__init__.py"), recursive=True)
    (script,) = [p for p in glob.glob(str(prefix / "**" / "bin" / "factz"), recursive=True) if "factz/bin" not in p]
    site = pathlib.Path(init).parents[1]
    env = clean_env(PYTHONPATH=str(site))
    out = run([script, "--version"], cwd=tmp_path, env=env)
    assert out.stdout.startswith("factz 0.1.0")
    out = run([sys.executable, "-c", CHECK], cwd=tmp_path, env=env)
    assert "import ok" in out.stdout and "plugin True" in out.stdout


@pytest.mark.skipif(os.environ.get("FACTZ_SLOW_TESTS") != "1",
                    reason="builds FaCTz from source inside pip (minutes); set FACTZ_SLOW_TESTS=1")
def test_pip_install_builds_from_source_in_a_venv(tmp_path):
    if not shutil.which("cmake"):
        pytest.skip("cmake is not installed")
    venv = make_venv(tmp_path)
    # The CUDA backend (built when nvcc is found) would add a long device compilation.
    args = os.environ.get("FACTZ_CMAKE_ARGS", "-DFACTZ_CUDA=OFF")
    run([venv / "bin" / "pip", "install", *PIP_FLAGS, "./python"], cwd=ROOT,
        env=clean_env(FACTZ_BUILD_JOBS="2", FACTZ_CMAKE_ARGS=args), timeout=3600)
    check_installed(venv / "bin" / "python", venv / "bin" / "factz", tmp_path)
