"""FaCTz at home in the Python ecosystem: a zarr store and an HDF5 file written in this
process read in a fresh one with nothing but `import factz` (or, for zarr, `import zarr`
alone: the numcodecs entry point) and no HDF5_PLUGIN_PATH; factz.h5filter; FactzCodec with
leading dimensions before (2, ny, nx), as the HDF5 filter takes them."""

import os
import subprocess
import sys

import numpy as np
import pytest

import factz
from conftest import analytic


def fresh(code, cwd):
    """Runs code in a new interpreter that finds the package as the tests do (PYTHONPATH)
    but has no HDF5_PLUGIN_PATH; returns its stdout."""
    env = {k: v for k, v in os.environ.items() if k != "HDF5_PLUGIN_PATH"}
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def series(t=3, nx=50, ny=40):
    u, v = analytic(nx, ny)
    return np.stack([np.stack([u * s, v * s]) for s in np.linspace(1.0, -1.0, t)]).astype(np.float32)


# ---- FactzCodec with leading dimensions ---------------------------------------------------

def test_codec_takes_leading_dimensions_one_stream_per_slab():
    codec = factz.FactzCodec(mode="block", eb=0.05, bound="abs")
    a = series(3)
    one = a[:1]  # (1, 2, ny, nx): exactly the stream of compress, as an HDF5 chunk
    assert codec.encode(one) == factz.compress(a[0, 0], a[0, 1], mode="block", eb=0.05, bound="abs")
    enc = codec.encode(a)
    assert enc == b"".join(factz.compress(s[0], s[1], mode="block", eb=0.05, bound="abs") for s in a)
    dec = codec.decode(enc)
    assert dec.shape == a.shape and np.abs(dec - a).max() <= 0.05
    out = np.empty((3, 1, 2) + a.shape[2:], np.float32)  # any shape holding the values
    assert codec.decode(enc, out=out) is out and np.array_equal(out.reshape(a.shape), dec)
    four = np.stack([a, a])  # (2, 3, 2, ny, nx)
    assert np.array_equal(codec.decode(codec.encode(four)).reshape(four.shape), np.stack([dec, dec]))


def test_codec_masked_chunk_with_leading_dimensions():
    a = series(2)
    mask = np.zeros(a.shape, bool)
    mask[1, 0, 5:9, 7:12] = True
    codec = factz.FactzCodec()
    enc = codec.encode(np.ma.MaskedArray(a, mask=mask))
    assert enc == codec.encode(a[:1]) + factz.compress(a[1, 0], a[1, 1], mask=mask[1, 0])


def test_codec_rejects_what_is_not_a_chunk_of_vector_fields():
    codec = factz.FactzCodec()
    a = series(2)
    with pytest.raises(ValueError, match=r"\(\.\.\., 2, ny, nx\)"):
        codec.encode(a[:, :1])
    with pytest.raises(ValueError, match=r"\(\.\.\., 2, ny, nx\)"):
        codec.encode(a[0, 0])
    enc = codec.encode(a)
    with pytest.raises(ValueError, match="corrupt_stream: stream 1 of the chunk"):
        codec.decode(enc[:-5])
    with pytest.raises(ValueError, match="corrupt_stream"):
        codec.decode(b"")
    with pytest.raises(ValueError, match="holds"):
        codec.decode(enc, out=np.empty(10, np.float32))


# ---- h5filter and the filter registered by `import factz` -------------------------------

def test_h5filter_gives_the_create_dataset_arguments():
    kw = factz.h5filter(bound="rel", eb=1e-3, mode="speculative")
    assert kw == {"compression": factz.HDF5_FILTER_ID,
                  "compression_opts": factz.hdf5_compression_opts("speculative", 1e-3, "rel")}
    assert factz.h5filter(bound="abs", eb=0.5, mode="block", coder="huffman", exact_edges=15,
                          fill_value=1e20)["compression_opts"][5:] == (15, 1621981420)
    with pytest.raises(ValueError, match="bound"):
        factz.h5filter(bound="relative")


def test_import_factz_registers_the_filter_with_h5py(tmp_path):
    pytest.importorskip("h5py")
    code = ("import factz, h5py\n"
            "assert h5py.h5z.filter_avail(factz.HDF5_FILTER_ID), factz.hdf5_filter_status()\n"
            "print(factz.hdf5_filter_status())\n")
    assert fresh(code, tmp_path).startswith("registered from ")


def test_hdf5_file_reads_in_a_fresh_process_with_only_import_factz(tmp_path):
    h5py = pytest.importorskip("h5py")
    a = series(3)
    with h5py.File(tmp_path / "w.h5", "w") as f:
        f.create_dataset("wind", data=a, chunks=(1,) + a.shape[1:], **factz.h5filter(bound="abs", eb=0.05))
        expect = f["wind"][...]
    np.save(tmp_path / "expect.npy", expect)
    assert np.abs(expect - a).max() <= 0.05
    code = ("import factz, h5py, numpy as np\n"
            "with h5py.File('w.h5', 'r') as f:\n"
            "    d = f['wind']\n"
            "    assert str(factz.HDF5_FILTER_ID) in d._filters\n"
            "    assert np.array_equal(d[...], np.load('expect.npy'))\n"
            "print('ok')\n")
    assert fresh(code, tmp_path).strip() == "ok"


# ---- zarr --------------------------------------------------------------------------------

def write_store(path, a, chunks):
    zarr = pytest.importorskip("zarr")
    z = zarr.open(str(path), mode="w", shape=a.shape, chunks=chunks, dtype="f4",
                  compressor=factz.FactzCodec(mode="speculative", eb=0.05, bound="abs"))
    z[...] = a
    return z[...]


@pytest.mark.parametrize("chunks", [(1, 2, 40, 50), (2, 2, 20, 25)])
def test_zarr_store_reads_in_a_fresh_process_with_only_import_factz(tmp_path, chunks):
    a = series(3)
    expect = write_store(tmp_path / "s.zarr", a, chunks)
    assert np.abs(expect - a).max() <= 0.05
    np.save(tmp_path / "expect.npy", expect)
    code = ("import factz, zarr, numpy as np\n"
            "z = zarr.open('s.zarr', mode='r')\n"
            "assert np.array_equal(z[...], np.load('expect.npy'))\n"
            "print(type(z.compressor).__name__)\n")
    assert fresh(code, tmp_path).strip() == "FactzCodec"


def test_zarr_store_opens_with_import_zarr_alone_through_the_entry_point(tmp_path):
    pytest.importorskip("numcodecs")
    if "factz" not in __import__("numcodecs").registry.entries:
        pytest.skip("numcodecs sees no 'factz' entry point (needs python3-entrypoints and an installed factz "
                    "or the build tree's factz-*.dist-info)")
    a = series(2)
    expect = write_store(tmp_path / "s.zarr", a, (1, 2, 40, 50))
    np.save(tmp_path / "expect.npy", expect)
    code = ("import sys, zarr, numpy as np\n"
            "assert 'factz' not in sys.modules\n"
            "z = zarr.open('s.zarr', mode='r')\n"
            "assert np.array_equal(z[...], np.load('expect.npy'))\n"
            "print('factz' in sys.modules)\n")
    assert fresh(code, tmp_path).strip() == "True"
