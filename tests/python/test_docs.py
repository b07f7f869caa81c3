"""The examples of docs/python.md run as written: the Python blocks in order in one
interpreter (without HDF5_PLUGIN_PATH: `import factz` registers the filter), those marked
`python zarr` / `python xarray` too where zarr / xarray with h5netcdf are installed, and the C
example is tests/capi/example.c (built and run by ctest)."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(os.environ.get("FACTZ_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DOC = ROOT / "docs" / "python.md"
# What a block marked ```python <tag> needs: modules that must be importable.
NEEDS = {"zarr": ("zarr", "numcodecs"), "xarray": ("xarray", "h5netcdf", "netCDF4")}


def blocks(lang):
    return re.findall(r"^```" + lang + r"\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def tagged_python_blocks():
    """(tag or '', code) of every Python block, in the page's order."""
    return re.findall(r"^```python(?: (\w+))?\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def run_walkthrough(tmp_path, tags):
    code = "\n".join(text for tag, text in tagged_python_blocks() if tag in ("",) + tuple(tags))
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out


def test_python_walkthrough_runs(tmp_path):
    code = "\n".join(blocks("python"))
    assert "factz.compress" in code and "h5py" in code and "factz.h5filter" in code
    assert "HDF5_PLUGIN_PATH" not in code
    out = run_walkthrough(tmp_path, ())
    assert "critical points" in out.stdout and "contour tree nodes" in out.stdout
    assert (tmp_path / "wind.h5").exists() and (tmp_path / "wind.fzmb").exists()


@pytest.mark.parametrize("tag", sorted(NEEDS))
def test_tagged_walkthrough_runs_where_its_packages_are(tmp_path, tag):
    assert any(t == tag for t, _ in tagged_python_blocks()), f"docs/python.md has no ```python {tag} block"
    missing = [m for m in NEEDS[tag] if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the ```python {tag} block needs {', '.join(missing)} (Debian: scripts/deps.sh)")
    out = run_walkthrough(tmp_path, (tag,))
    if tag == "zarr":
        assert (tmp_path / "wind.zarr").exists() and "FactzCodec" in out.stdout
    if tag == "xarray":
        assert (tmp_path / "wind.nc").exists() and "netCDF-4 with the FaCTz filter" in out.stdout


def test_c_example_is_the_tested_program():
    (text,) = [b for b in blocks("c") if "int main" in b]
    assert text == (ROOT / "tests" / "capi" / "example.c").read_text()
    exe = os.environ.get("FACTZ_CAPI_EXAMPLE")
    if not exe:
        pytest.skip("FACTZ_CAPI_EXAMPLE not given")
    out = subprocess.run([exe], capture_output=True, text=True)
    assert out.returncode == 0 and ", 0 lost, 0 spurious, 0 changed type" in out.stdout


def test_h5repack_line_of_the_docs_matches_the_python_helper():
    import factz

    cd = factz.hdf5_compression_opts("speculative", 1e-2, "rel", "huffman")
    line = "UD=%d,0,%d,%s" % (factz.HDF5_FILTER_ID, len(cd), ",".join(map(str, cd)))
    assert line in DOC.read_text()
    assert f"**{factz.HDF5_FILTER_ID}**" in DOC.read_text()


def test_install_commands_of_the_docs_are_those_the_install_test_runs():
    text = DOC.read_text()
    for command in ("python3 -m venv --system-site-packages ~/venv",
                    "~/venv/bin/pip install --no-build-isolation ./python",
                    "pip install --break-system-packages --no-build-isolation ./python"):
        assert command in text
    install = (pathlib.Path(__file__).parent / "test_install.py").read_text()
    assert '"--system-site-packages"' in install and '"--no-build-isolation"' in install
    assert '"--break-system-packages"' in install
