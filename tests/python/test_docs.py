"""The examples of docs/python.md run as written: the Python blocks in order in one
interpreter, and the C example is tests/capi/example.c (built and run by ctest)."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(os.environ.get("FACTZ_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DOC = ROOT / "docs" / "python.md"


def blocks(lang):
    return re.findall(r"^```" + lang + r"\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def test_python_walkthrough_runs(tmp_path, plugin_dir):
    code = "\n".join(blocks("python"))
    assert "factz.compress" in code and "h5py" in code
    env = dict(os.environ, HDF5_PLUGIN_PATH=plugin_dir)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "critical points" in out.stdout
    assert (tmp_path / "wind.h5").exists()


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
