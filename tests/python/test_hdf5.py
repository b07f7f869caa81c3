"""The HDF5 filter plugin through h5py and h5repack: round trips, the bytes of the C++ API
per chunk, the per-chunk guarantee with chunk boundaries, float64 datasets (compressed as
doubles, read back by h5py and h5dump), and bad input."""

import itertools
import subprocess

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")

import factz  # noqa: E402
from conftest import load_vector  # noqa: E402


@pytest.fixture(autouse=True)
def _plugin(plugin_dir):
    return plugin_dir


def write(path, data, chunks, **opts):
    with h5py.File(path, "w") as f:
        f.create_dataset("wind", data=data, chunks=chunks, compression=factz.HDF5_FILTER_ID,
                         compression_opts=factz.hdf5_compression_opts(**opts))


@pytest.mark.parametrize("opts", [dict(), dict(mode="block"), dict(mode="none", coder="ans"),
                                  dict(mode="speculative", eb=0.2, bound="abs")])
def test_one_chunk_holds_the_bytes_of_compress(tmp_path, gfs, opts):
    u, v = gfs
    w = np.stack([u, v])
    write(tmp_path / "a.h5", w, w.shape, **opts)
    with h5py.File(tmp_path / "a.h5", "r") as f:
        d = f["wind"]
        assert str(factz.HDF5_FILTER_ID) in d._filters
        mask, raw = d.id.read_direct_chunk((0, 0, 0))
        assert mask == 0
        assert raw == factz.compress(u, v, **opts)
        r = d[...]
    assert r.dtype == np.float32 and r.shape == w.shape
    assert np.array_equal(r[0], factz.decompress(raw)[0]) and np.array_equal(r[1], factz.decompress(raw)[1])


@pytest.mark.parametrize("mode", ["speculative", "block"])
def test_whole_field_chunk_keeps_every_critical_point(tmp_path, gfs, mode):
    u, v = gfs
    write(tmp_path / "a.h5", np.stack([u, v]), (2, 181, 360), mode=mode)
    with h5py.File(tmp_path / "a.h5", "r") as f:
        r = f["wind"][...]
        stored = f["wind"].id.get_storage_size()
    rep = factz.verify(u, v, r[0], r[1])
    assert rep["cp_original"] > 100 and rep["violations"] == 0
    assert max(rep["max_abs_error"]) <= 1e-2 * rep["value_range"]
    assert stored < u.nbytes


@pytest.mark.parametrize("mode", ["speculative", "block"])
def test_every_chunk_keeps_its_critical_points(tmp_path, gfs, mode):
    """Chunks of 64 x 64 with partial edge chunks: inside each chunk (the part within the
    dataset) the critical points are those of the original; ABS bound everywhere."""
    u, v = gfs
    eb = 0.3
    write(tmp_path / "a.h5", np.stack([u, v]), (2, 64, 64), mode=mode, eb=eb, bound="abs")
    with h5py.File(tmp_path / "a.h5", "r") as f:
        r = f["wind"][...]
    assert np.abs(r[0] - u).max() <= eb and np.abs(r[1] - v).max() <= eb
    checked = 0
    for y0, x0 in itertools.product(range(0, 181, 64), range(0, 360, 64)):
        s = (slice(y0, y0 + 64), slice(x0, x0 + 64))
        a = [np.ascontiguousarray(p[s]) for p in (u, v, r[0], r[1])]
        rep = factz.verify(*a)
        assert rep["violations"] == 0, (y0, x0, rep)
        checked += rep["cp_original"]
    assert checked > 100


def test_time_series_of_vector_fields(tmp_path):
    u, v = load_vector("ncl_storm_t0", 36, 33)
    series = np.stack([np.stack([u * s, v * s]) for s in (1.0, 0.5, -1.0)])  # (3, 2, ny, nx)
    with h5py.File(tmp_path / "t.h5", "w") as f:
        f.create_dataset("wind", data=series, chunks=(1, 2, 33, 36), compression=factz.HDF5_FILTER_ID,
                         compression_opts=factz.hdf5_compression_opts("block"))
    with h5py.File(tmp_path / "t.h5", "r") as f:
        r = f["wind"][...]
    for t in range(3):
        assert factz.verify(series[t, 0], series[t, 1], r[t, 0], r[t, 1])["violations"] == 0


def test_h5repack_round_trip(tmp_path, gfs, plugin_dir):
    u, v = gfs
    w = np.stack([u, v])
    with h5py.File(tmp_path / "plain.h5", "w") as f:
        f.create_dataset("wind", data=w, chunks=w.shape)
    cd = factz.hdf5_compression_opts("speculative", 1e-2, "rel", "huffman")
    ud = "UD=%d,0,%d,%s" % (factz.HDF5_FILTER_ID, len(cd), ",".join(map(str, cd)))
    env = {"HDF5_PLUGIN_PATH": plugin_dir, "PATH": "/usr/bin:/bin"}
    subprocess.run(["h5repack", "-f", ud, str(tmp_path / "plain.h5"), str(tmp_path / "packed.h5")],
                   check=True, env=env, capture_output=True)
    with h5py.File(tmp_path / "packed.h5", "r") as f:
        d = f["wind"]
        assert str(factz.HDF5_FILTER_ID) in d._filters
        assert d.id.read_direct_chunk((0, 0, 0))[1] == factz.compress(u, v, coder="huffman")
        assert d.id.get_storage_size() * 5 < w.nbytes
        r = d[...]
    assert factz.verify(u, v, r[0], r[1])["violations"] == 0
    # and back to an unfiltered file through the plugin's decoder
    subprocess.run(["h5repack", "-f", "NONE", str(tmp_path / "packed.h5"), str(tmp_path / "back.h5")],
                   check=True, env=env, capture_output=True)
    with h5py.File(tmp_path / "back.h5", "r") as f:
        assert not f["wind"]._filters.get(str(factz.HDF5_FILTER_ID))
        assert np.array_equal(f["wind"][...], r)


def mandatory(cd):
    plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    plist.set_filter(factz.HDF5_FILTER_ID, h5py.h5z.FLAG_MANDATORY, cd)
    return plist


@pytest.mark.parametrize("dtype,shape,chunks,message", [
    (">f8", (2, 20, 30), (2, 20, 30), "32-bit or 64-bit little-endian IEEE float"),
    (">f4", (2, 20, 30), (2, 20, 30), "32-bit or 64-bit little-endian IEEE float"),
    ("i4", (2, 20, 30), (2, 20, 30), "32-bit or 64-bit little-endian IEEE float"),
    ("f2", (2, 20, 30), (2, 20, 30), "32-bit or 64-bit little-endian IEEE float"),
    ("f8", (20, 30), (20, 30), "float64 scalar datasets are not supported yet"),
    ("f4", (30,), (30,), "rank 1"),
    ("f4", (3, 20, 30), (3, 20, 30), "chunk every axis before"),
    ("f4", (4, 2, 20, 30), (2, 2, 20, 30), "chunk every axis before"),
])
def test_unsupported_datasets_are_refused_with_a_message(tmp_path, dtype, shape, chunks, message):
    with h5py.File(tmp_path / "bad.h5", "w") as f:
        with pytest.raises(ValueError, match=message):
            f.create_dataset("x", shape=shape, dtype=dtype, chunks=chunks, dcpl=factz.hdf5_dcpl())


def test_an_optional_filter_that_cannot_apply_stores_the_data_unfiltered(tmp_path):
    """h5py's compression=ID makes the filter optional: HDF5 skips it instead of failing."""
    w = np.arange(2 * 20 * 30, dtype="i4").reshape(2, 20, 30)
    with h5py.File(tmp_path / "opt.h5", "w") as f:
        f.create_dataset("x", data=w, chunks=w.shape, compression=factz.HDF5_FILTER_ID)
    with h5py.File(tmp_path / "opt.h5", "r") as f:
        assert np.array_equal(f["x"][...], w)


@pytest.mark.parametrize("cd,message", [
    ((7,), "mode"),
    ((2, 3), "bound type"),
    ((2, 1, 0), "two 32-bit words"),
    ((2, 1, 0, 0, 9), "coder"),
    ((2, 1, 0, 0x7FF80000, 0), "finite"),
    ((2, 1, 0, 0xBFF00000, 0), "finite and >= 0"),
])
def test_bad_cd_values_are_refused(tmp_path, cd, message):
    with h5py.File(tmp_path / "bad.h5", "w") as f:
        with pytest.raises(ValueError, match=message):
            f.create_dataset("x", shape=(2, 8, 8), dtype="f4", chunks=(2, 8, 8), dcpl=mandatory(cd))


def test_bad_python_options_for_hdf5_are_value_errors():
    for kw in (dict(mode="fast"), dict(bound="pct"), dict(coder="lzma")):
        with pytest.raises(ValueError):
            factz.hdf5_compression_opts(**kw)


def test_nan_values_come_back_and_infinity_fails_a_mandatory_write(tmp_path):
    w = np.ones((2, 8, 8), np.float32)
    w[1, 2, 3] = np.nan  # a missing vertex (issue 17): stored losslessly
    with h5py.File(tmp_path / "ok.h5", "w") as f:
        f.create_dataset("x", data=w, chunks=w.shape, dcpl=factz.hdf5_dcpl())
    with h5py.File(tmp_path / "ok.h5", "r") as f:
        back = f["x"][...]
    assert np.isnan(back[1, 2, 3]) and np.isnan(back).sum() == 1
    w[1, 2, 3] = np.inf  # infinity at a valid vertex is an error with the library's message
    f = h5py.File(tmp_path / "nan.h5", "w")
    d = f.create_dataset("x", shape=w.shape, dtype="f4", chunks=w.shape, dcpl=factz.hdf5_dcpl())
    with pytest.raises(RuntimeError, match="infinite"):
        d[...] = w
        f.flush()
    d[...] = np.ones_like(w)  # the cached chunk is replaced by valid data and can be written
    f.close()
    with h5py.File(tmp_path / "nan.h5", "r") as f:
        assert np.array_equal(f["x"][...], np.ones_like(w))


def test_corrupted_chunks_fail_the_read_never_crash(tmp_path, gfs):
    u, v = gfs
    w = np.stack([u, v])
    write(tmp_path / "a.h5", w, w.shape)
    good = factz.compress(u, v)
    rng = np.random.default_rng(3)
    for k in list(range(0, 80)) + list(rng.integers(80, len(good), 40)):
        bad = bytearray(good)
        bad[k] ^= 0x24
        with h5py.File(tmp_path / "a.h5", "a") as f:
            f["wind"].id.write_direct_chunk((0, 0, 0), bytes(bad))
        with h5py.File(tmp_path / "a.h5", "r") as f:
            with pytest.raises(OSError):
                f["wind"][...]
    for cut in (0, 10, 64, len(good) // 2, len(good) - 1):
        with h5py.File(tmp_path / "a.h5", "a") as f:
            f["wind"].id.write_direct_chunk((0, 0, 0), good[:cut] if cut else b"\x00")
        with h5py.File(tmp_path / "a.h5", "r") as f:
            with pytest.raises(OSError):
                f["wind"][...]


def scalar_field():
    return np.fromfunction(lambda y, x: np.sin(0.1 * x) + np.cos(0.07 * y), (40, 50)).astype(np.float32)


def test_scalar_datasets_use_mode_none_or_are_refused_clearly(tmp_path):
    z = scalar_field()
    try:
        with h5py.File(tmp_path / "s.h5", "w") as f:
            f.create_dataset("z", data=z, chunks=(40, 50), dcpl=factz.hdf5_dcpl("none", 1e-3, "abs"))
            f.create_dataset("t", data=np.stack([z, 2 * z]), chunks=(1, 20, 50),
                             dcpl=factz.hdf5_dcpl("none", 1e-3, "abs"))
            f.create_dataset("default", data=z, chunks=(40, 50), compression=factz.HDF5_FILTER_ID)
    except ValueError as e:  # plugin built without the scalar module
        assert "scalar datasets need the scalar module" in str(e)
        return
    with h5py.File(tmp_path / "s.h5", "r") as f:
        r = f["z"][...]
        t = f["t"][...]
        assert str(factz.HDF5_FILTER_ID) in f["default"]._filters
        assert f["default"].id.get_storage_size() < z.nbytes
        d = f["default"][...]
    assert r.shape == z.shape and np.abs(r - z).max() <= 1e-3
    assert np.abs(t[1] - 2 * z).max() <= 1e-3
    assert np.abs(d - z).max() <= 1e-2 * (z.max() - z.min())


def test_scalar_datasets_refuse_the_vector_modes(tmp_path):
    with h5py.File(tmp_path / "s.h5", "w") as f:
        with pytest.raises(ValueError, match="scalar"):
            f.create_dataset("z", data=scalar_field(), chunks=(40, 50), dcpl=factz.hdf5_dcpl("speculative"))


def test_the_policy_comes_from_the_environment_and_cuda_fails_cleanly_without_a_gpu(tmp_path, gfs, monkeypatch):
    """FACTZ_POLICY=cuda[:N] sends the filter's chunks to the GPU: the CPU's bytes where a
    device runs them, else a failed write or read that carries backend_unavailable (never a
    crash, never a silent CPU run). The file records no policy: it reads anywhere."""
    u, v = gfs
    w = np.stack([u, v])
    write(tmp_path / "cpu.h5", w, w.shape)
    with h5py.File(tmp_path / "cpu.h5", "r") as f:
        cpu = f["wind"][...]
        _, raw = f["wind"].id.read_direct_chunk((0, 0, 0))
        cd = f["wind"].id.get_create_plist().get_filter_by_id(factz.HDF5_FILTER_ID)[2]
    monkeypatch.setenv("FACTZ_POLICY", "serial")
    write(tmp_path / "serial.h5", w, w.shape)
    with h5py.File(tmp_path / "serial.h5", "r") as f:
        assert f["wind"].id.read_direct_chunk((0, 0, 0))[1] == raw
        assert f["wind"].id.get_create_plist().get_filter_by_id(factz.HDF5_FILTER_ID)[2] == cd
    for spec in ("cuda", "cuda:0"):
        monkeypatch.setenv("FACTZ_POLICY", spec)
        f = h5py.File(tmp_path / "gpu.h5", "w")
        d = f.create_dataset("wind", shape=w.shape, dtype="f4", chunks=w.shape, dcpl=factz.hdf5_dcpl())
        try:
            d[...] = w
            f.flush()
            refused = None
        except RuntimeError as e:
            refused = e
        # HDF5 keeps a chunk it could not write and cannot close the file (nor exit cleanly)
        # until the filter takes it: the CPU does.
        monkeypatch.setenv("FACTZ_POLICY", "omp")
        f.close()
        monkeypatch.setenv("FACTZ_POLICY", spec)
        if refused is not None:
            assert "backend_unavailable: policy cuda" in str(refused), refused
            with h5py.File(tmp_path / "cpu.h5", "r") as f:
                with pytest.raises(OSError, match="backend_unavailable"):
                    f["wind"][...]
            continue
        with h5py.File(tmp_path / "gpu.h5", "r") as f:
            assert f["wind"].id.read_direct_chunk((0, 0, 0))[1] == raw
            assert np.array_equal(f["wind"][...], cpu)
    monkeypatch.setenv("FACTZ_POLICY", "quantum")
    with h5py.File(tmp_path / "cpu.h5", "r") as f:
        with pytest.raises(OSError, match="FACTZ_POLICY"):
            f["wind"][...]


def field64(nx=97, ny=61):
    """A smooth float64 field with detail of 1e-9, below float32 precision."""
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
    k = np.arange(nx * ny, dtype=np.float64).reshape(ny, nx)
    return (np.sin(0.21 * x) * np.cos(0.17 * y) + 1e-9 * np.sin(k),
            -np.cos(0.21 * x) * np.sin(0.17 * y) + 0.1 + 1e-9 * np.cos(1.7 * k))


def filter_values(path, name="wind"):
    with h5py.File(path, "r") as f:
        return f[name].id.get_create_plist().get_filter_by_id(factz.HDF5_FILTER_ID)[1]


@pytest.mark.parametrize("opts", [dict(), dict(mode="block", coder="huffman"), dict(mode="none"),
                                  dict(mode="speculative", eb=2e-9, bound="abs")])
def test_double_datasets_are_compressed_as_doubles(tmp_path, opts):
    """A float64 dataset's chunk is the float64 stream factz.compress writes for the doubles
    (format version 6), recorded as layout 3, and reads back as doubles within a bound that a
    float32 round trip would miss."""
    u, v = field64()
    w = np.stack([u, v])
    opts = dict(dict(eb=1e-9, bound="rel"), **opts)
    write(tmp_path / "d.h5", w, w.shape, **opts)
    with h5py.File(tmp_path / "d.h5", "r") as f:
        d = f["wind"]
        raw = d.id.read_direct_chunk((0, 0, 0))[1]
        r = d[...]
    assert raw == factz.compress(u, v, **opts)
    version = 9 if opts.get("mode", "speculative") == "speculative" else 6  # 9: the predictor byte, segmented codes
    assert factz.info(raw)["dtype"] == "float64" and factz.info(raw)["layout_version"] == version
    assert filter_values(tmp_path / "d.h5")[5:8] == (3, 61, 97)
    eb = opts["eb"] * (max(u.max(), v.max()) - min(u.min(), v.min())) if opts["bound"] == "rel" else opts["eb"]
    assert r.dtype == np.float64 and np.abs(r - w).max() <= eb
    assert np.abs(w.astype(np.float32) - w).max() > 10 * eb  # a float32 shortcut would fail the bound
    if opts.get("mode", "speculative") != "none":
        assert factz.verify(u, v, r[0], r[1])["violations"] == 0


def test_double_datasets_with_a_fill_value_and_partial_chunks(tmp_path):
    """The dataset's fill value (h5py fillvalue=, all 64 bits: 1e20, which no float32 equals)
    marks missing vertices and pads the partial edge chunks; ABS bound on the rest, and every
    chunk keeps its critical points."""
    u, v = field64(150, 100)
    land = np.zeros(u.shape, bool)
    land[40:60, 70:90] = True
    w = np.stack([u, v])
    w[:, land] = 1e20
    kw = factz.h5filter(mode="speculative", eb=1e-9, bound="abs", fill_value=1e20, dtype="float64")
    assert kw["fillvalue"] == 1e20 and len(kw["compression_opts"]) == 5
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f.create_dataset("wind", data=w, chunks=(2, 64, 64), **kw)
    cd = filter_values(tmp_path / "f.h5")
    assert len(cd) == 11 and cd[5] == 3
    assert cd[9] | cd[10] << 32 == int(np.array(1e20).view(np.uint64))
    with h5py.File(tmp_path / "f.h5", "r") as f:
        r = f["wind"][...]
        raw = f["wind"].id.read_direct_chunk((0, 0, 64))[1]
    assert factz.info(raw)["masked"]
    assert np.array_equal(r[:, land], w[:, land])
    assert np.abs(r[:, ~land] - w[:, ~land]).max() <= 1e-9
    for y0, x0 in itertools.product(range(0, 100, 64), range(0, 150, 64)):
        s = (slice(y0, y0 + 64), slice(x0, x0 + 64))
        a = [np.ascontiguousarray(p[s]) for p in (w[0], w[1], r[0], r[1])]
        assert factz.verify(*a, fill_value=1e20)["violations"] == 0, (y0, x0)


def test_a_declared_float32_fill_value_is_refused_for_doubles(tmp_path):
    """cd_values[6] holds float32 bits: a float64 dataset is refused with the way out."""
    u, v = field64(20, 16)
    w = np.stack([u, v])
    with h5py.File(tmp_path / "bad.h5", "w") as f:
        with pytest.raises(ValueError, match="fillvalue="):
            f.create_dataset("x", data=w, chunks=w.shape, dcpl=mandatory(
                factz.hdf5_compression_opts(fill_value=1e20)))


def test_a_stream_of_the_other_type_is_refused(tmp_path):
    """The layout records the dataset's type: a float32 stream in a float64 dataset (or the
    reverse) fails the read with a message, never reinterpreted bytes."""
    u, v = field64(40, 30)
    w = np.stack([u, v])
    write(tmp_path / "d.h5", w, w.shape)
    write(tmp_path / "s.h5", w.astype(np.float32), w.shape)
    for path, other in (("d.h5", factz.compress(u.astype(np.float32), v.astype(np.float32))),
                        ("s.h5", factz.compress(u, v))):
        with h5py.File(tmp_path / path, "a") as f:
            f["wind"].id.write_direct_chunk((0, 0, 0), other)
        with h5py.File(tmp_path / path, "r") as f:
            with pytest.raises(OSError):
                f["wind"][...]


def test_h5repack_and_h5dump_read_doubles_within_the_bound(tmp_path, plugin_dir):
    """A plain float64 file packed by h5repack through the filter, read back by h5dump (binary
    output) and h5py: every value within REL 1e-9, a bound below float32 precision; a time
    series of fields, one chunk per field; repacked back to plain doubles."""
    u, v = field64()
    series = np.stack([np.stack([u * s, v * s]) for s in (1.0, -0.5)])  # (2, 2, ny, nx)
    with h5py.File(tmp_path / "plain.h5", "w") as f:
        f.create_dataset("wind", data=series, chunks=(1,) + series.shape[1:])
    cd = factz.hdf5_compression_opts("speculative", 1e-9, "rel", "ans")
    ud = "UD=%d,0,%d,%s" % (factz.HDF5_FILTER_ID, len(cd), ",".join(map(str, cd)))
    env = {"HDF5_PLUGIN_PATH": plugin_dir, "PATH": "/usr/bin:/bin"}
    subprocess.run(["h5repack", "-f", ud, str(tmp_path / "plain.h5"), str(tmp_path / "packed.h5")],
                   check=True, env=env, capture_output=True)
    subprocess.run(["h5dump", "-d", "wind", "-b", "LE", "-o", str(tmp_path / "dump.bin"), str(tmp_path / "packed.h5")],
                   check=True, env=env, capture_output=True)
    dumped = np.fromfile(tmp_path / "dump.bin", dtype="<f8").reshape(series.shape)
    with h5py.File(tmp_path / "packed.h5", "r") as f:
        d = f["wind"]
        assert d.dtype == np.float64 and d.id.get_storage_size() < series.nbytes
        assert d.id.read_direct_chunk((1, 0, 0, 0))[1] == factz.compress(series[1, 0], series[1, 1], eb=1e-9,
                                                                          coder="ans")
        r = d[...]
    assert np.array_equal(dumped, r)
    for t in range(2):
        eb = 1e-9 * (series[t].max() - series[t].min())
        assert np.abs(r[t] - series[t]).max() <= eb
        assert factz.verify(series[t, 0], series[t, 1], r[t, 0], r[t, 1])["violations"] == 0
    subprocess.run(["h5repack", "-f", "NONE", str(tmp_path / "packed.h5"), str(tmp_path / "back.h5")],
                   check=True, env=env, capture_output=True)
    with h5py.File(tmp_path / "back.h5", "r") as f:
        assert f["wind"].dtype == np.float64 and np.array_equal(f["wind"][...], r)
