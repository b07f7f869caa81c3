"""float64 3D vector fields from Python: factz.compress3d / decompress3d / critical_points3d /
verify3d on float64 arrays keep them float64 (a float64 stream, format version 13, decoded to
float64; nothing is rounded to float32), in modes speculative, block and none with zero
violations and the bound held in double; the C++ API's and the command line tool's bytes;
missing vertices (NaN payloads, masks, numpy.ma, fill values compared as doubles) back bit for
bit; planes of two dtypes refused with a message that says so. float32 3D fields:
test_vector3d.py and test_missing3d.py."""

import json
import subprocess

import numpy as np
import pytest

import factz


def abc_flow64(nx=21, ny=17, nz=13):
    """The ABC flow of test_vector3d.py in double, plus 1e-9 x: values no float32 holds, so a
    field that went through float32 would show it."""
    k = 4.0 * 3.14159265358979 / 24.0
    z, y, x = np.mgrid[0:nz, 0:ny, 0:nx].astype(np.float64)
    fx, fy, fz = k * x, k * y + 0.3, k * z + 0.7
    u = np.sin(fz) + np.cos(fy) + 1e-9 * x
    v = np.sin(fx) + np.cos(fz) + 1e-9 * y
    w = np.sin(fy) + np.cos(fx) + 0.05 * z + 1e-9 * z
    return u, v, w


@pytest.fixture(scope="module")
def abc64():
    return abc_flow64()


def bits64(a):
    return np.ascontiguousarray(np.ma.getdata(a)).view(np.uint64)


@pytest.mark.parametrize("mode", ["speculative", "block", "none"])
@pytest.mark.parametrize("eb,bound", [(1e-3, "rel"), (1e-9, "abs")])
def test_round_trip_stays_float64_and_keeps_every_critical_point(abc64, mode, eb, bound):
    u, v, w = abc64
    buf = factz.compress3d(u, v, w, mode=mode, eb=eb, bound=bound)
    meta = factz.info(buf)
    assert meta["layout_version"] == 13 and meta["dtype"] == "float64"
    assert factz.stream_shape3d(buf) == u.shape
    u2, v2, w2 = factz.decompress3d(buf)
    for a, b in ((u, u2), (v, v2), (w, w2)):
        assert b.dtype == np.float64 and b.shape == a.shape and b.flags.c_contiguous
    r = factz.verify3d(u, v, w, u2, v2, w2)
    limit = eb * r["value_range"] if bound == "rel" else eb
    assert max(float(np.abs(b - a).max()) for a, b in ((u, u2), (v, v2), (w, w2))) <= limit
    assert max(r["max_abs_error"]) <= limit and r["mask_mismatch"] == 0
    cps = factz.critical_points3d(u, v, w)
    assert r["cp_original"] == len(cps) >= 4
    if mode != "none":
        assert r["violations"] == 0 and r["cp_decompressed"] == len(cps)
        back = factz.critical_points3d(u2, v2, w2)
        assert np.array_equal(back["tetrahedron"], cps["tetrahedron"]) and np.array_equal(back["type"], cps["type"])
    if eb == 1e-9:
        # below float32 precision: the reconstruction is no float32 field
        assert not np.array_equal(u2.astype(np.float32).astype(np.float64), u2)


def test_critical_points3d_are_those_of_the_float64_extractor(tmp_path, abc64, cli):
    """The count and the types per kind are those of ``factz cp -3 --dtype f64`` (the C++
    extractor on the doubles), with and without missing vertices."""
    u, v, w = abc64
    nz, ny, nx = u.shape
    paths = write_planes64(tmp_path, u, v, w)
    for fill in (None, float(u[4, 5, 6])):
        cmd = [cli, "cp", "-3", str(nx), str(ny), str(nz), "--dtype", "f64", "--json"]
        for p in paths:
            cmd += ["-i", p]
        if fill is not None:
            cmd += ["--fill", repr(fill)]
        ref = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        assert ref["dtype"] == "float64"
        cps = factz.critical_points3d(u, v, w, fill_value=fill)
        assert len(cps) == ref["critical_points"] > 0
        assert {t: int((cps["type"] == t).sum()) for t in factz.CP3_TYPE_NAMES} == ref["types"]
        assert ref["masked_vertices"] == (0 if fill is None else int(((u == fill) | (v == fill) | (w == fill)).sum()))


def write_planes64(tmp_path, *planes):
    paths = []
    for name, p in zip("uvw", planes):
        path = tmp_path / f"{name}.f64"
        p.astype("<f8").tofile(path)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("mode", ["speculative", "block"])
def test_bytes_are_those_of_the_cpp_api_and_the_command_line_tool(tmp_path, abc64, cpp_compress, cli, mode):
    u, v, w = abc64
    nz, ny, nx = u.shape
    paths = write_planes64(tmp_path, u, v, w)
    stride = 8 if mode == "speculative" else 4096  # the command line tool takes the stride in mode speculative only
    mine = factz.compress3d(u, v, w, mode=mode, eb=1e-6, bound="abs", anchor_stride=stride)
    subprocess.run([cpp_compress, "3d", str(nx), str(ny), str(nz), *paths, str(tmp_path / "cpp.fz"), mode,
                    factz.DEFAULT_CODER, "abs", "1e-06", "1", str(stride), "f64"], check=True, capture_output=True)
    assert mine == (tmp_path / "cpp.fz").read_bytes()
    cmd = [cli, "compress", "-3", str(nx), str(ny), str(nz), "--dtype", "f64"]
    for p in paths:
        cmd += ["-i", p]
    cmd += ["-z", str(tmp_path / "cli.fz"), "-M", "ABS", "1e-06", "--mode", mode]
    if mode == "speculative":
        cmd += ["--anchor-stride", str(stride)]
    subprocess.run(cmd, check=True, capture_output=True)
    assert mine == (tmp_path / "cli.fz").read_bytes()


@pytest.mark.filterwarnings("ignore::factz.SuspectedFillValueWarning")
def test_missing_vertices_come_back_with_all_64_bits(abc64):
    u, v, w = (p.copy() for p in abc64)
    nz, ny, nx = u.shape
    idx = np.arange(u.size).reshape(u.shape)
    fills = (1e20, -9999.0, 1e300)  # 1e20 is no float32; 1e300 is beyond float32's range
    expect = np.zeros(u.shape, bool)
    for p, f, r in zip((u, v, w), fills, (3, 5, 7)):
        sel = idx % 53 == r
        p[sel] = f
        expect |= sel
    payload = np.uint64(0x7FF8000000000000) | (idx[idx % 59 == 11].astype(np.uint64) + np.uint64(1))
    w.reshape(-1).view(np.uint64)[idx.reshape(-1) % 59 == 11] = payload
    expect |= idx % 59 == 11
    mask = idx % 61 == 13
    u[mask] = 123456.789
    expect |= mask
    u[0, 0, 1] = float(np.float32(1e20))  # the float32 rounding of a fill value is data
    assert u[0, 0, 1] != 1e20 and not expect[0, 0, 1]
    buf = factz.compress3d(u, v, w, eb=1e-6, bound="abs", fill_value=fills, mask=mask)
    assert factz.info(buf)["layout_version"] == 13
    u2, v2, w2 = factz.decompress3d(buf, masked=True)
    for a, b in ((u, u2), (v, v2), (w, w2)):
        assert b.dtype == np.float64 and isinstance(b, np.ma.MaskedArray)
        assert np.array_equal(np.ma.getmaskarray(b), expect)
        assert np.array_equal(bits64(b)[expect], bits64(a)[expect])
        assert float(np.abs(np.ma.getdata(b) - a)[~expect].max()) <= 1e-6
    r = factz.verify3d(u, v, w, u2, v2, w2, fill_value=fills, mask=mask)
    assert r["violations"] == 0 and r["masked_vertices"] == int(expect.sum())
    # the fill values declared are the mask they mark: the same stream and the same points
    assert buf == factz.compress3d(u, v, w, eb=1e-6, bound="abs", mask=expect)
    assert np.array_equal(factz.critical_points3d(u, v, w, fill_value=fills, mask=mask),
                          factz.critical_points3d(u, v, w, mask=expect))
    # numpy.ma planes of float64 mark their vertices as mask= does
    mu = np.ma.MaskedArray(u, mask=expect)
    assert factz.compress3d(mu, np.ma.MaskedArray(v), w, eb=1e-6, bound="abs") == buf
    # one number for the three components; a NaN fill value adds nothing
    one = factz.compress3d(u, v, w, eb=1e-6, bound="abs", fill_value=-9999.0, mask=mask)
    any_fill = (u == -9999) | (v == -9999) | (w == -9999)
    assert factz.compress3d(u, v, w, eb=1e-6, bound="abs", mask=mask | any_fill) == one
    assert factz.compress3d(*abc64, fill_value=np.nan) == factz.compress3d(*abc64)


def test_a_float64_fill_value_beyond_float32_is_no_error(abc64):
    """float32 fields refuse 1e300 (no float32 holds it); a float64 field compares it as a double."""
    u, v, w = (p.copy() for p in abc64)
    w[1, 2, 3] = 1e300
    u2, v2, w2 = factz.decompress3d(factz.compress3d(u, v, w, fill_value=(None, None, 1e300)), masked=True)
    assert w2.mask[1, 2, 3] and w2.mask.sum() == 1 and np.ma.getdata(w2)[1, 2, 3] == 1e300


def test_a_suspected_fill_value_is_named_as_the_double_to_declare(abc64):
    u, v, w = (p.copy() for p in abc64)
    u[2, 3, 4] = v[2, 3, 5] = 9.969209968386869e36
    with pytest.warns(factz.SuspectedFillValueWarning, match=r"9\.969209968386869e\+36"):
        factz.compress3d(u, v, w)


def test_planes_of_two_dtypes_are_refused_never_converted(abc64):
    u, v, w = abc64
    f = w.astype(np.float32)
    for planes, message in (((u, v, f), "u and w must have the same dtype, got float64 and float32"),
                            ((f, v, w), "u and v must have the same dtype, got float32 and float64"),
                            ((u, v, w.astype(np.float16)), "float32 or float64")):
        with pytest.raises(ValueError, match=message):
            factz.compress3d(*planes)
        with pytest.raises(ValueError, match=message):
            factz.critical_points3d(*planes)
    u2, v2, w2 = factz.decompress3d(factz.compress3d(u, v, w))
    with pytest.raises(ValueError, match="the reconstruction .* is float32, the original .* float64"):
        factz.verify3d(u, v, w, u2.astype(np.float32), v2.astype(np.float32), w2.astype(np.float32))
    with pytest.raises(ValueError, match="u2 and w2 must have the same dtype"):
        factz.verify3d(u, v, w, u2, v2, w2.astype(np.float32))
    # a float32 3D stream still decodes to float32, a float64 one to float64
    f32 = factz.decompress3d(factz.compress3d(u.astype(np.float32), v.astype(np.float32), f))
    assert all(p.dtype == np.float32 for p in f32)
    assert factz.info(factz.compress3d(u.astype(np.float32), v.astype(np.float32), f))["dtype"] == "float32"


def test_streams_of_the_other_dimensionality_are_named(abc64):
    u, v, w = abc64
    buf3 = factz.compress3d(u, v, w)
    with pytest.raises(ValueError, match="decompress3d"):
        factz.decompress(buf3)
    buf2 = factz.compress(u[0], v[0])
    with pytest.raises(ValueError, match="2D vector stream"):
        factz.decompress3d(buf2)
    with pytest.raises(ValueError):
        factz.decompress3d(buf3[: len(buf3) // 2])
