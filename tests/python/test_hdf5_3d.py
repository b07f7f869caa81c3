"""3D vector datasets through the HDF5 filter plugin (h5py and h5repack): a component axis of
length 3, fourth to last and chunked whole, makes each (3, cz, cy, cx) chunk the stream
factz.compress3d writes (layout 4 in the cd_values set_local stores; float64 datasets: layout
5, the float64 stream compress3d writes for float64 arrays); round trips keep every critical
point inside each chunk; chunks the 3D compressor refuses fail with its message; the 2D
layouts are unchanged."""

import itertools
import subprocess

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")

import factz  # noqa: E402
from test_vector3d import abc_flow  # noqa: E402
from test_vector3d64 import abc_flow64  # noqa: E402


@pytest.fixture(autouse=True)
def _plugin(plugin_dir):
    return plugin_dir


def filter_values(path, name="wind"):
    with h5py.File(path, "r") as f:
        return f[name].id.get_create_plist().get_filter_by_id(factz.HDF5_FILTER_ID)[1]


def mandatory(cd):
    plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    plist.set_filter(factz.HDF5_FILTER_ID, h5py.h5z.FLAG_MANDATORY, cd)
    return plist


@pytest.mark.parametrize("opts", [dict(), dict(coder="huffman", eb=1e-3), dict(eb=0.05, bound="abs", coder="ans")])
def test_one_chunk_holds_the_bytes_of_compress3d(tmp_path, opts):
    u, v, w = abc_flow()
    data = np.stack([u, v, w])  # (3, nz, ny, nx)
    with h5py.File(tmp_path / "a.h5", "w") as f:
        f.create_dataset("wind", data=data, chunks=data.shape, **factz.h5filter(**dict(dict(eb=1e-2), **opts)))
    nz, ny, nx = u.shape
    cd = filter_values(tmp_path / "a.h5")
    assert len(cd) == 9 and cd[5:9] == (4, ny, nx, nz)
    with h5py.File(tmp_path / "a.h5", "r") as f:
        d = f["wind"]
        raw = d.id.read_direct_chunk((0, 0, 0, 0))[1]
        r = d[...]
        stored = d.id.get_storage_size()
    assert raw == factz.compress3d(u, v, w, **dict(dict(eb=1e-2), **opts))
    assert factz.info(raw)["layout_version"] == 10 and factz.info(raw)["ndims"] == 3  # speculative: segmented codes
    assert r.dtype == np.float32 and r.shape == data.shape and stored < data.nbytes
    assert all(np.array_equal(r[k], p) for k, p in enumerate(factz.decompress3d(raw)))
    rep = factz.verify3d(u, v, w, r[0], r[1], r[2])
    assert rep["cp_original"] >= 4 and rep["violations"] == 0


def test_time_series_with_partial_chunks_keeps_the_bound_and_each_chunk_s_critical_points(tmp_path):
    """(nt, 3, nz, ny, nx) in chunks of (1, 3, 8, 16, 16) with partial edge chunks, one ABS
    bound: every value within it, and inside each chunk the critical points are the
    original's (the tetrahedra that straddle chunks belong to no chunk)."""
    u, v, w = abc_flow(26, 22, 18)
    series = np.stack([np.stack([u, v, w]), np.stack([-v, w, u])])
    eb = 0.02
    with h5py.File(tmp_path / "t.h5", "w") as f:
        f.create_dataset("wind", data=series, chunks=(1, 3, 8, 16, 16), dcpl=factz.hdf5_dcpl("speculative", eb, "abs"))
    assert filter_values(tmp_path / "t.h5")[5:9] == (4, 16, 16, 8)
    with h5py.File(tmp_path / "t.h5", "r") as f:
        r = f["wind"][...]
    assert np.abs(r - series).max() <= eb
    checked = 0
    for t, z0, y0, x0 in itertools.product(range(2), range(0, 18, 8), range(0, 22, 16), range(0, 26, 16)):
        s = (slice(z0, z0 + 8), slice(y0, y0 + 16), slice(x0, x0 + 16))
        a = [np.ascontiguousarray(series[t, c][s]) for c in range(3)]
        b = [np.ascontiguousarray(r[t, c][s]) for c in range(3)]
        if min(a[0].shape) < 2:
            continue
        rep = factz.verify3d(*a, *b)
        assert rep["violations"] == 0, (t, z0, y0, x0, rep)
        checked += rep["cp_original"]
    assert checked > 0


def test_h5repack_round_trip(tmp_path, plugin_dir):
    u, v, w = abc_flow(20, 18, 14)
    data = np.stack([u, v, w])
    with h5py.File(tmp_path / "plain.h5", "w") as f:
        f.create_dataset("wind", data=data, chunks=data.shape)
    cd = factz.hdf5_compression_opts("speculative", 1e-2, "rel", "ans")
    ud = "UD=%d,0,%d,%s" % (factz.HDF5_FILTER_ID, len(cd), ",".join(map(str, cd)))
    env = {"HDF5_PLUGIN_PATH": plugin_dir, "PATH": "/usr/bin:/bin"}
    subprocess.run(["h5repack", "-f", ud, str(tmp_path / "plain.h5"), str(tmp_path / "packed.h5")],
                   check=True, env=env, capture_output=True)
    with h5py.File(tmp_path / "packed.h5", "r") as f:
        assert f["wind"].id.read_direct_chunk((0, 0, 0, 0))[1] == factz.compress3d(u, v, w, coder="ans")
        r = f["wind"][...]
    assert factz.verify3d(u, v, w, r[0], r[1], r[2])["violations"] == 0
    subprocess.run(["h5repack", "-f", "NONE", str(tmp_path / "packed.h5"), str(tmp_path / "back.h5")],
                   check=True, env=env, capture_output=True)
    with h5py.File(tmp_path / "back.h5", "r") as f:
        assert np.array_equal(f["wind"][...], r)


@pytest.mark.parametrize("dtype,shape,chunks,cd,message", [
    ("f8", (3, 6, 8, 10), (3, 6, 8, 10), factz.hdf5_compression_opts(exact_edges=15), "do not take them"),
    ("f8", (3, 6, 8, 10), (3, 6, 8, 10), factz.hdf5_compression_opts(fill_value=1e20), "float32 bits"),
    ("f8", (2, 3, 6, 8, 10), (2, 3, 6, 8, 10), None, "chunk every axis before"),
    ("f4", (3, 6, 8, 10), (3, 6, 8, 10), factz.hdf5_compression_opts(exact_edges=15), "do not take them"),
    ("f4", (2, 3, 6, 8, 10), (2, 3, 6, 8, 10), None, "chunk every axis before"),
    ("f4", (3, 6, 8, 10), (1, 6, 8, 10), None, "chunk every axis before"),
])
def test_unsupported_3d_datasets_are_refused_with_a_message(tmp_path, dtype, shape, chunks, cd, message):
    with h5py.File(tmp_path / "bad.h5", "w") as f:
        with pytest.raises(ValueError, match=message):
            f.create_dataset("x", shape=shape, dtype=dtype, chunks=chunks,
                             dcpl=mandatory(cd) if cd else factz.hdf5_dcpl())


def failed_write(tmp_path, data, dcpl):
    """Writes data through a mandatory filter; returns the error (None: it was written).
    Without a chunk cache the chunk goes through the filter at the write, and a refused
    one is not left behind in the cache (where it would fail the file's close)."""
    with h5py.File(tmp_path / "w.h5", "w", rdcc_nbytes=0) as f:
        d = f.create_dataset("x", shape=data.shape, dtype="f4", chunks=data.shape, dcpl=dcpl)
        try:
            d[...] = data
            f.flush()
        except (RuntimeError, OSError) as e:
            return e
    return None


def test_chunks_the_3d_compressor_refuses_fail_with_its_message(tmp_path):
    u, v, w = abc_flow(12, 10, 8)
    data = np.stack([u, v, w])
    inf = data.copy()
    inf[0, 1, 2, 3] = np.inf
    assert "infinite" in str(failed_write(tmp_path, inf, factz.hdf5_dcpl()))
    for mode in ("none", "block"):  # the library's decision: a stream that keeps its promises, or its message
        error = failed_write(tmp_path, data, factz.hdf5_dcpl(mode))
        if error is not None:
            assert "invalid_argument" in str(error), error


def test_3d_chunks_with_nan_and_fill_values_keep_them_bit_for_bit(tmp_path):
    """Missing vertices (NaN, the declared fill value in any component) as for 2D datasets:
    they come back exactly, the other values within the bound (format version 12)."""
    u, v, w = abc_flow(12, 10, 8)
    data = np.stack([u, v, w])
    data[2, 3, 4, 5] = np.nan
    data[1, 2, 3, 4] = 1e20
    dcpl = mandatory(factz.hdf5_compression_opts(fill_value=1e20))
    with h5py.File(tmp_path / "m.h5", "w") as f:
        f.create_dataset("x", shape=data.shape, dtype="f4", chunks=data.shape, dcpl=dcpl)
        f["x"][...] = data
    with h5py.File(tmp_path / "m.h5", "r") as f:
        back = f["x"][...]
    missing = np.isnan(data) | (data == np.float32(1e20))
    missing = np.broadcast_to(missing.any(axis=0), data.shape)
    assert np.array_equal(back[missing], data[missing], equal_nan=True)
    eb = 1e-2 * float(np.nanmax(np.where(missing, np.nan, data)) - np.nanmin(np.where(missing, np.nan, data)))
    assert np.all(np.abs(back[~missing] - data[~missing]) <= eb * 1.0001)


def test_an_optional_filter_stores_a_refused_3d_chunk_unfiltered(tmp_path):
    u, v, w = abc_flow(12, 10, 8)
    data = np.stack([u, v, w])
    data[0, 0, 0, 0] = np.inf  # refused by the compressor (NaN is a missing vertex now)
    with h5py.File(tmp_path / "opt.h5", "w") as f:
        f.create_dataset("x", data=data, chunks=data.shape, compression=factz.HDF5_FILTER_ID)
    with h5py.File(tmp_path / "opt.h5", "r") as f:
        assert np.array_equal(f["x"][...], data)


def test_a_stream_of_the_other_dimensionality_is_refused(tmp_path):
    """The layout records whether the dataset is 2D or 3D: a 2D stream in a 3D dataset (or the
    reverse) fails the read with a message, never reinterpreted bytes."""
    u, v, w = abc_flow(12, 10, 8)
    data3 = np.stack([u, v, w])
    data2 = np.stack([u[0], v[0]])
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f.create_dataset("d3", data=data3, chunks=data3.shape, dcpl=factz.hdf5_dcpl())
        f.create_dataset("d2", data=data2, chunks=data2.shape, dcpl=factz.hdf5_dcpl())
    with h5py.File(tmp_path / "f.h5", "a") as f:
        f["d3"].id.write_direct_chunk((0, 0, 0, 0), factz.compress(u[0], v[0]))
        f["d2"].id.write_direct_chunk((0, 0, 0), factz.compress3d(u, v, w))
    with h5py.File(tmp_path / "f.h5", "r") as f:
        for name in ("d3", "d2"):
            with pytest.raises(OSError):
                f[name][...]


def test_2d_datasets_keep_their_cd_values(tmp_path):
    """The 2D layouts are what they were: 8 values, layout 1, (cy, cx)."""
    u, v, _ = abc_flow(30, 20, 2)
    data = np.stack([u[0], v[0]])
    with h5py.File(tmp_path / "a.h5", "w") as f:
        f.create_dataset("wind", data=data, chunks=data.shape, dcpl=factz.hdf5_dcpl())
    assert filter_values(tmp_path / "a.h5")[5:] == (1, 20, 30)


# float64 3D vector datasets: layout 5, to layout 4 what layout 3 is to layout 1.

@pytest.mark.parametrize("opts", [dict(), dict(mode="block", eb=1e-9, bound="abs")])
def test_a_float64_chunk_holds_the_float64_bytes_of_compress3d(tmp_path, opts):
    u, v, w = abc_flow64()
    data = np.stack([u, v, w])  # (3, nz, ny, nx) float64
    with h5py.File(tmp_path / "a.h5", "w") as f:
        f.create_dataset("wind", data=data, chunks=data.shape, **factz.h5filter(**dict(dict(eb=1e-3), **opts)))
    nz, ny, nx = u.shape
    cd = filter_values(tmp_path / "a.h5")
    assert len(cd) == 9 and cd[5:9] == (5, ny, nx, nz)
    with h5py.File(tmp_path / "a.h5", "r") as f:
        d = f["wind"]
        raw = d.id.read_direct_chunk((0, 0, 0, 0))[1]
        r = d[...]
        stored = d.id.get_storage_size()
    assert raw == factz.compress3d(u, v, w, **dict(dict(eb=1e-3), **opts))
    assert factz.info(raw)["layout_version"] == 13 and factz.info(raw)["dtype"] == "float64"
    assert r.dtype == np.float64 and r.shape == data.shape and stored < data.nbytes
    assert all(np.array_equal(r[k], p) for k, p in enumerate(factz.decompress3d(raw)))
    rep = factz.verify3d(u, v, w, r[0], r[1], r[2])
    assert rep["cp_original"] >= 4 and rep["violations"] == 0
    eb = opts.get("eb", 1e-3) * (rep["value_range"] if opts.get("bound", "rel") == "rel" else 1.0)
    assert float(np.abs(r - data).max()) <= eb


def test_a_float64_time_series_with_partial_chunks_keeps_the_bound_and_each_chunk_s_critical_points(tmp_path):
    u, v, w = abc_flow64(26, 22, 18)
    series = np.stack([np.stack([u, v, w]), np.stack([-v, w, u])])
    eb = 1e-7  # below float32 precision at these magnitudes
    with h5py.File(tmp_path / "t.h5", "w") as f:
        f.create_dataset("wind", data=series, chunks=(1, 3, 8, 16, 16), dcpl=factz.hdf5_dcpl("speculative", eb, "abs"))
    assert filter_values(tmp_path / "t.h5")[5:9] == (5, 16, 16, 8)
    with h5py.File(tmp_path / "t.h5", "r") as f:
        r = f["wind"][...]
    assert r.dtype == np.float64 and float(np.abs(r - series).max()) <= eb
    checked = 0
    for t, z0, y0, x0 in itertools.product(range(2), range(0, 18, 8), range(0, 22, 16), range(0, 26, 16)):
        s = (slice(z0, z0 + 8), slice(y0, y0 + 16), slice(x0, x0 + 16))
        a = [np.ascontiguousarray(series[t, c][s]) for c in range(3)]
        b = [np.ascontiguousarray(r[t, c][s]) for c in range(3)]
        if min(a[0].shape) < 2:
            continue
        rep = factz.verify3d(*a, *b)
        assert rep["violations"] == 0, (t, z0, y0, x0, rep)
        checked += rep["cp_original"]
    assert checked > 0


def test_float64_3d_chunks_keep_nan_and_the_dataset_fill_value_with_all_64_bits(tmp_path):
    """The dataset's fill value (h5filter(..., dtype="float64") sets it), compared as a double
    in any component, and NaN with its payload mark missing vertices; they come back bit for
    bit (format version 13), the other values within the bound."""
    u, v, w = abc_flow64(12, 10, 8)
    data = np.stack([u, v, w])
    fill = 1e20  # no float32 equals it
    data[1, 2, 3, 4] = fill
    data[0, 5, 5, 5] = fill
    data.reshape(-1).view(np.uint64)[data.size - 7] = np.uint64(0x7FF8000000000123)
    data[2, 1, 1, 1] = float(np.float32(fill))  # data: not the fill value
    kw = factz.h5filter(eb=1e-9, bound="abs", fill_value=fill, dtype="float64")
    with h5py.File(tmp_path / "m.h5", "w") as f:
        f.create_dataset("x", data=data, chunks=data.shape, **kw)
    cd = filter_values(tmp_path / "m.h5", "x")
    assert len(cd) == 11 and cd[5] == 5
    assert (cd[9] | cd[10] << 32) == int(np.array([fill]).view(np.uint64)[0])
    with h5py.File(tmp_path / "m.h5", "r") as f:
        back = f["x"][...]
        raw = f["x"].id.read_direct_chunk((0, 0, 0, 0))[1]
    assert factz.info(raw)["layout_version"] == 13
    missing = np.broadcast_to((np.isnan(data) | (data == fill)).any(axis=0), data.shape)
    assert missing.any(axis=0).sum() == 3
    assert np.array_equal(back[missing].view(np.uint64), data[missing].view(np.uint64))
    assert float(np.abs(back[~missing] - data[~missing]).max()) <= 1e-9
    _, _, w2 = factz.decompress3d(raw, masked=True)
    assert int(w2.mask.sum()) == 3 and not w2.mask[1, 1, 1]


def test_a_3d_stream_of_the_other_value_type_is_refused(tmp_path):
    """Layout 5 records float64: a float32 3D stream in a float64 3D dataset (or the reverse)
    fails the read with a message, never reinterpreted bytes."""
    u, v, w = abc_flow64(12, 10, 8)
    d64 = np.stack([u, v, w])
    d32 = d64.astype(np.float32)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f.create_dataset("d64", data=d64, chunks=d64.shape, dcpl=factz.hdf5_dcpl())
        f.create_dataset("d32", data=d32, chunks=d32.shape, dcpl=factz.hdf5_dcpl())
    assert filter_values(tmp_path / "f.h5", "d64")[5] == 5 and filter_values(tmp_path / "f.h5", "d32")[5] == 4
    with h5py.File(tmp_path / "f.h5", "a") as f:
        f["d64"].id.write_direct_chunk((0, 0, 0, 0), factz.compress3d(*d32))
        f["d32"].id.write_direct_chunk((0, 0, 0, 0), factz.compress3d(*d64))
    with h5py.File(tmp_path / "f.h5", "r") as f:
        for name in ("d64", "d32"):
            with pytest.raises(OSError):
                f[name][...]


def test_float64_3d_h5repack_round_trip(tmp_path, plugin_dir):
    u, v, w = abc_flow64(14, 12, 10)
    data = np.stack([u, v, w])
    with h5py.File(tmp_path / "plain.h5", "w") as f:
        f.create_dataset("wind", data=data, chunks=data.shape)
    cd = factz.hdf5_compression_opts("speculative", 1e-3, "rel", "ans")
    ud = "UD=%d,0,%d,%s" % (factz.HDF5_FILTER_ID, len(cd), ",".join(map(str, cd)))
    env = {"HDF5_PLUGIN_PATH": plugin_dir, "PATH": "/usr/bin:/bin"}
    subprocess.run(["h5repack", "-f", ud, str(tmp_path / "plain.h5"), str(tmp_path / "packed.h5")],
                   check=True, env=env, capture_output=True)
    with h5py.File(tmp_path / "packed.h5", "r") as f:
        assert f["wind"].id.read_direct_chunk((0, 0, 0, 0))[1] == factz.compress3d(u, v, w, eb=1e-3, coder="ans")
        r = f["wind"][...]
    assert r.dtype == np.float64 and factz.verify3d(u, v, w, r[0], r[1], r[2])["violations"] == 0
