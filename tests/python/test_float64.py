"""float64 vector fields from Python (issue 18): compress / decompress keep the dtype and the
doubles' detail (a bound below float32 precision holds, where a float32 round trip misses it
by far), the C++ API's bytes, masks / NaN / fill values with 64 bits, critical points decided
on the doubles, info's dtype, the numcodecs codec and an h5py dataset of doubles through the
filter (more HDF5 cases: test_hdf5.py)."""

import subprocess
import warnings

import numpy as np
import pytest

import factz
from conftest import analytic

MODES = ["none", "block", "speculative"]


def field64(nx=97, ny=61):
    """The analytic field in double with detail of 1e-9 that float32 (spacing about 6e-8
    near 1) cannot hold."""
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
    k = np.arange(nx * ny, dtype=np.float64).reshape(ny, nx)
    u = np.sin(0.21 * x) * np.cos(0.17 * y) + 1e-9 * np.sin(k)
    v = -np.cos(0.21 * x) * np.sin(0.17 * y) + 0.1 + 1e-9 * np.cos(1.7 * k)
    return u, v


def value_range(u, v):
    return max(u.max(), v.max()) - min(u.min(), v.min())


def float32_error(a):
    """What a float32 shortcut would cost at best: the float32 round trip's largest error."""
    return np.abs(a.astype(np.float32).astype(np.float64) - a).max()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bound,eb", [("rel", 1e-9), ("abs", 2e-9)])
def test_float64_fields_keep_a_bound_below_float32_precision(mode, bound, eb):
    u, v = field64()
    eb_abs = eb * value_range(u, v) if bound == "rel" else eb
    assert float32_error(u) > 10 * eb_abs and float32_error(v) > 10 * eb_abs
    buf, stats = factz.compress(u, v, mode=mode, eb=eb, bound=bound, stats=True)
    assert stats["eb_abs"] == pytest.approx(eb_abs, rel=1e-12)
    u2, v2 = factz.decompress(buf)
    assert u2.dtype == v2.dtype == np.float64 and u2.shape == u.shape
    assert np.abs(u2 - u).max() <= eb_abs and np.abs(v2 - v).max() <= eb_abs
    # the doubles' detail survives: most values are no float32
    assert (u2.astype(np.float32).astype(np.float64) != u2).mean() > 0.5
    rep = factz.verify(u, v, u2, v2)
    assert rep["cp_original"] > 4 and max(rep["max_abs_error"]) <= eb_abs
    if mode != "none":
        assert rep["violations"] == 0
    info = factz.info(buf)
    version = 9 if mode == "speculative" else 6  # 9: the cubic predictor byte, segmented codes
    assert (info["dtype"], info["layout_version"], info["mode"], info["kind"]) == ("float64", version, mode, "vector")
    assert factz.stream_shape(buf) == u.shape
    assert factz.decompress(buf, threads=1, policy="serial")[0].tobytes() == u2.tobytes()


def test_float32_fields_stay_float32():
    u, v = analytic()
    buf = factz.compress(u, v)
    u2, v2 = factz.decompress(buf)
    assert u2.dtype == v2.dtype == np.float32
    assert factz.info(buf)["dtype"] == "float32" and factz.info(buf)["layout_version"] == 9  # speculative, cubic, segmented codes
    # the same values as doubles make a float64 stream that decodes to the same doubles' bound
    b64 = factz.compress(u.astype(np.float64), v.astype(np.float64))
    assert factz.info(b64)["dtype"] == "float64" and factz.decompress(b64)[0].dtype == np.float64


@pytest.mark.parametrize("mode", MODES)
def test_float64_bytes_equal_the_cpp_api(tmp_path, cpp_compress, mode):
    u, v = field64()
    (tmp_path / "u.f64").write_bytes(u.tobytes())
    (tmp_path / "v.f64").write_bytes(v.tobytes())
    cmd = [cpp_compress, "97", "61", str(tmp_path / "u.f64"), str(tmp_path / "v.f64"), str(tmp_path / "s.fz"), mode,
           factz.DEFAULT_CODER, "rel", "1e-09", "1", "4096", "f64"]
    subprocess.run(cmd, check=True, capture_output=True)
    assert factz.compress(u, v, mode=mode, eb=1e-9) == (tmp_path / "s.fz").read_bytes()


def test_critical_points_are_decided_on_the_doubles():
    """Scaled by 2^-170 the doubles keep every sign (the scaling is exact) while float32
    rounds them all to 0: the float64 critical points are those of the unscaled field."""
    u, v = field64()
    scale = 2.0 ** -170
    a, b = factz.critical_points(u, v), factz.critical_points(u * scale, v * scale)
    assert len(a) > 4
    assert np.array_equal(a["triangle"], b["triangle"]) and np.array_equal(a["type"], b["type"])
    assert not (u * scale).astype(np.float32).any()  # the float32 copy holds nothing
    buf = factz.compress(u * scale, v * scale, mode="speculative", eb=1e-3)
    u2, v2 = factz.decompress(buf)
    assert factz.verify(u * scale, v * scale, u2, v2)["violations"] == 0
    c = factz.critical_points(u2, v2)
    assert np.array_equal(a["triangle"], c["triangle"]) and np.array_equal(a["type"], c["type"])


def test_missing_values_keep_64_bits():
    u, v = field64()
    land = np.zeros(u.shape, bool)
    land[20:30, 40:55] = True
    uf, vf = u.copy(), v.copy()
    uf[land] = vf[land] = 1e20                  # a double fill value: no float32 equals it
    uf.view(np.uint64)[3, 4] = 0x7FF8000000012345  # a NaN with a payload
    vf[5, 6] = np.float64(np.float32(1e20))     # 1e20f widened is not 1e20: data
    missing = land.copy()
    missing[3, 4] = True
    for mode in MODES:
        buf = factz.compress(uf, vf, mode=mode, eb=1e-9, bound="abs", fill_value=1e20)
        su, sv = factz.decompress(buf, masked=True)
        assert su.dtype == np.float64 and np.array_equal(su.mask, missing) and np.array_equal(sv.mask, missing)
        assert np.array_equal(su.data.view(np.uint64)[missing], uf.view(np.uint64)[missing])
        assert np.array_equal(sv.data.view(np.uint64)[missing], vf.view(np.uint64)[missing])
        assert sv.data[5, 6] == vf[5, 6]  # data, far beyond the range: stored exactly
        ok = ~missing
        assert np.abs(su.data[ok] - uf[ok]).max() <= 1e-9 and np.abs(sv.data[ok] - vf[ok]).max() <= 1e-9
        rep = factz.verify(uf, vf, su, sv, fill_value=1e20)
        assert rep["mask_mismatch"] == 0 and rep["masked_vertices"] == missing.sum()
        if mode != "none":
            assert rep["violations"] == 0
        # masked arrays and mask= mark the same vertices: the same stream (without fill_value
        # the huge datum 1e20f is suspected of being one, and named as the double it is)
        mu = np.ma.MaskedArray(uf, mask=land)
        with pytest.warns(factz.SuspectedFillValueWarning, match=r"1\.0000000200408773e\+20"):
            assert factz.compress(mu, vf, mode=mode, eb=1e-9, bound="abs") == buf
        with pytest.warns(factz.SuspectedFillValueWarning):
            assert factz.compress(uf, vf, mode=mode, eb=1e-9, bound="abs", mask=land) == buf
    assert factz.info(buf)["masked"]


def test_a_suspected_double_fill_value_is_named_as_the_double_to_declare():
    u, v = field64()
    u[7, 8] = 9.969209968386869e36  # netCDF's NC_FILL_DOUBLE, undeclared
    with pytest.warns(factz.SuspectedFillValueWarning, match=r"9\.969209968386869e\+36"):
        factz.compress(u, v)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        factz.compress(u, v, fill_value=9.969209968386869e36)


def test_types_never_mix():
    u, v = field64(20, 16)
    with pytest.raises(ValueError, match="same dtype, got float64 and float32"):
        factz.compress(u, v.astype(np.float32))
    with pytest.raises(ValueError, match="float32 or float64"):
        factz.compress(u.astype(np.float16), v.astype(np.float16))
    with pytest.raises(ValueError, match="float32 or float64"):
        factz.critical_points(u.astype(">f8"), v.astype(">f8"))
    u2, v2 = factz.decompress(factz.compress(u, v))
    with pytest.raises(ValueError, match="reconstruction .* float32, the original .* float64"):
        factz.verify(u, v, u2.astype(np.float32), v2.astype(np.float32))
    # policy "cuda": the CPU's bytes on a GPU, else unavailable; never run elsewhere silently
    try:
        on_gpu = factz.compress(u, v, policy="cuda")
    except factz.BackendUnavailableError:
        on_gpu = None
    if on_gpu is not None:
        assert on_gpu == factz.compress(u, v)


@pytest.mark.parametrize("mode", MODES)
def test_codec_keeps_the_chunk_dtype(mode):
    u, v = field64(50, 40)
    a = np.stack([u, v])
    codec = factz.FactzCodec(mode=mode, eb=1e-9, bound="abs")
    enc = codec.encode(a)
    assert enc == factz.compress(u, v, mode=mode, eb=1e-9, bound="abs")
    dec = codec.decode(enc)
    assert dec.dtype == np.float64 and dec.shape == a.shape and np.abs(dec - a).max() <= 1e-9
    out = np.empty_like(a)
    assert codec.decode(enc, out=out) is out and np.array_equal(out, dec)
    raw = bytearray(a.nbytes)
    codec.decode(enc, out=raw)
    assert np.array_equal(np.frombuffer(raw, np.float64).reshape(a.shape), dec)
    with pytest.raises(ValueError, match="float64"):
        codec.decode(enc, out=np.empty(a.shape, np.float32))
    series = np.stack([a, 2 * a])  # leading dimensions: streams back to back, still doubles
    dec = codec.decode(codec.encode(series))
    assert dec.dtype == np.float64 and np.abs(dec - series).max() <= 1e-9
    f32 = factz.FactzCodec(mode=mode).decode(factz.FactzCodec(mode=mode).encode(a.astype(np.float32)))
    assert f32.dtype == np.float32
    mixed = codec.encode(a) + factz.FactzCodec(mode=mode).encode(a.astype(np.float32))
    with pytest.raises(ValueError, match="different dtypes"):
        codec.decode(mixed)


def test_codec_masked_and_nan_chunks_of_doubles():
    u, v = field64(50, 40)
    a = np.stack([u, v])
    a[0, 3, 4] = np.nan
    m = np.zeros(a.shape, bool)
    m[1, 10:12, 20:25] = True
    codec = factz.FactzCodec(eb=1e-9, bound="abs", fill_value=-9999.0)
    a[1, 30, 30] = -9999.0
    dec = codec.decode(codec.encode(np.ma.MaskedArray(a, mask=m)))
    assert dec.dtype == np.float64 and np.isnan(dec[0, 3, 4]) and dec[1, 30, 30] == -9999.0
    assert np.array_equal(dec[m], a[m])
    valid = ~(m[0] | m[1] | np.isnan(a[0]) | (a[1] == -9999.0))
    assert np.abs(dec[:, valid] - a[:, valid]).max() <= 1e-9


def test_h5py_dataset_of_doubles(tmp_path, plugin_dir):
    h5py = pytest.importorskip("h5py")
    u, v = field64()
    w = np.stack([u, v])
    with h5py.File(tmp_path / "d.h5", "w") as f:
        f.create_dataset("wind", data=w, chunks=w.shape, **factz.h5filter(bound="rel", eb=1e-9))
    with h5py.File(tmp_path / "d.h5", "r") as f:
        d = f["wind"]
        assert d.dtype == np.float64 and str(factz.HDF5_FILTER_ID) in d._filters
        raw = d.id.read_direct_chunk((0, 0, 0))[1]
        assert raw == factz.compress(u, v, eb=1e-9, bound="rel")
        r = d[...]
    eb = 1e-9 * value_range(u, v)
    assert r.dtype == np.float64 and np.abs(r - w).max() <= eb < float32_error(u) / 10
    assert factz.verify(u, v, r[0], r[1])["violations"] == 0
    assert factz.info(raw)["dtype"] == "float64"


def test_zarr_store_of_doubles(tmp_path):
    zarr = pytest.importorskip("zarr")
    u, v = field64(50, 40)
    series = np.stack([np.stack([u, v]), np.stack([-v, u])])  # (time, 2, ny, nx)
    z = zarr.open(str(tmp_path / "w.zarr"), mode="w", shape=series.shape, chunks=(1, 2, 40, 50), dtype="f8",
                  compressor=factz.FactzCodec(mode="block", eb=1e-9, bound="abs"))
    z[...] = series
    back = zarr.open(str(tmp_path / "w.zarr"), mode="r")[...]
    assert back.dtype == np.float64 and np.abs(back - series).max() <= 1e-9
    assert (back.astype(np.float32).astype(np.float64) != back).mean() > 0.5
