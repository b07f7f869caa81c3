"""Shared fixtures: real fields (tests/data, ../shared/data), the CLI, a smooth analytic field.

ctest sets PYTHONPATH (the built package), HDF5_PLUGIN_PATH (the built plugin),
FACTZ_CPP_COMPRESS (factz::compress of the C++ API, tests/capi/cpp_compress.cpp),
FACTZ_CLI (the factz binary) and FACTZ_DATA_DIR (the real fields)."""

import os
import pathlib

import numpy as np
import pytest

# Folders searched for real fields, in order: the bundled tests/data, then ../shared/data
# (FACTZ_DATA_DIR, ':'-separated, overrides both).
_ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA_DIRS = [pathlib.Path(d) for d in os.environ.get(
    "FACTZ_DATA_DIR", f"{_ROOT / 'tests' / 'data'}:{_ROOT.parent / 'shared' / 'data'}").split(":") if d]


def load_vector(name, nx, ny):
    """The real field NAME_u_NXxNY.f32 / NAME_v_NXxNY.f32 as two (ny, nx) float32 arrays,
    from the first folder of DATA_DIRS that holds it (skips the test when none does)."""
    for d in DATA_DIRS:
        paths = [d / f"{name}_{comp}_{nx}x{ny}.f32" for comp in "uv"]
        if all(p.exists() for p in paths):
            return [np.fromfile(p, dtype="<f4").reshape(ny, nx) for p in paths]
    pytest.skip(f"real field {name} ({nx}x{ny}) not in " + ", ".join(str(d) for d in DATA_DIRS))


def analytic(nx=97, ny=61):
    """A smooth field with saddles and centers (many critical points, no ties)."""
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
    u = np.sin(0.21 * x) * np.cos(0.17 * y)
    v = -np.cos(0.21 * x) * np.sin(0.17 * y) + 0.1
    return u.astype(np.float32), v.astype(np.float32)


@pytest.fixture(scope="session")
def gfs():
    return load_vector("gfs10m_wind_2014", 360, 181)


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("FACTZ_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("FACTZ_CLI (the factz binary) not given")
    return path


@pytest.fixture(scope="session")
def plugin_dir():
    path = os.environ.get("HDF5_PLUGIN_PATH")
    if not path or not os.path.exists(os.path.join(path, "libh5zfactz.so")):
        pytest.skip("HDF5_PLUGIN_PATH does not hold libh5zfactz.so")
    return path


@pytest.fixture(scope="session")
def cpp_compress():
    path = os.environ.get("FACTZ_CPP_COMPRESS")
    if not path or not os.path.exists(path):
        pytest.skip("FACTZ_CPP_COMPRESS (tests/capi/cpp_compress.cpp) not given")
    return path
