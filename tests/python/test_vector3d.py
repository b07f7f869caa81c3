"""3D vector fields from Python (issue 22): factz.compress3d / decompress3d / stream_shape3d /
critical_points3d / verify3d. Round trips with zero violations and the bound held, the C++
API's and the command line tool's bytes, the modes and policies as the library decides
them, bad input, streams of the other dimensionality and damaged streams. Masks, masked
arrays and fill values: test_missing3d.py."""

import subprocess

import numpy as np
import pytest

import factz


def abc_flow(nx=26, ny=22, nz=18):
    """An ABC flow over two periods plus a slow shear in w: critical points of several types
    inside the grid, as the C API test (tests/capi/test_capi3d.c) builds it."""
    k = 4.0 * 3.14159265358979 / 24.0
    z, y, x = np.mgrid[0:nz, 0:ny, 0:nx].astype(np.float64)
    fx, fy, fz = k * x, k * y + 0.3, k * z + 0.7
    u = np.sin(fz) + np.cos(fy)
    v = np.sin(fx) + np.cos(fz)
    w = np.sin(fy) + np.cos(fx) + 0.05 * z
    return u.astype(np.float32), v.astype(np.float32), w.astype(np.float32)


@pytest.fixture(scope="module")
def abc():
    return abc_flow()


@pytest.mark.parametrize("eb", [1e-2, 1e-3])
@pytest.mark.parametrize("coder", ["huffman", "ans"])
def test_round_trip_keeps_the_bound_and_every_critical_point(abc, eb, coder):
    u, v, w = abc
    buf = factz.compress3d(u, v, w, eb=eb, coder=coder)
    assert isinstance(buf, bytes) and 0 < len(buf) < 3 * u.nbytes
    u2, v2, w2 = factz.decompress3d(buf)
    for a, b in ((u, u2), (v, v2), (w, w2)):
        assert b.shape == a.shape and b.dtype == np.float32 and b.flags.c_contiguous
    r = factz.verify3d(u, v, w, u2, v2, w2)
    cps = factz.critical_points3d(u, v, w)
    assert r["cp_original"] == r["cp_decompressed"] == len(cps) >= 4
    assert r["violations"] == 0 and r["lost"] == r["spurious"] == r["type_changed"] == 0
    bound = eb * r["value_range"]
    assert len(r["max_abs_error"]) == 3 and max(r["max_abs_error"]) <= bound
    assert max(np.abs(b - a).max() for a, b in ((u, u2), (v, v2), (w, w2))) <= bound
    back = factz.critical_points3d(u2, v2, w2)  # the same tetrahedra and types (mu is for display)
    assert np.array_equal(back["tetrahedron"], cps["tetrahedron"]) and np.array_equal(back["type"], cps["type"])


def test_critical_points3d_columns_follow_the_tetrahedron_ids(abc):
    u, v, w = abc
    nz, ny, nx = u.shape
    cps = factz.critical_points3d(u, v, w)
    assert cps.dtype == factz.CP3_DTYPE and len(cps) > 0
    assert np.all(np.diff(cps["tetrahedron"]) > 0)
    ids = 6 * ((cps["z"] * (ny - 1) + cps["y"]) * (nx - 1) + cps["x"]) + cps["t"]
    assert np.array_equal(ids, cps["tetrahedron"])
    assert set(cps["type"]) <= set(factz.CP3_TYPE_NAMES)
    assert np.allclose(cps["mu"].sum(axis=1), 1.0) and (cps["mu"] >= -1e-9).all()
    assert len(factz.CP3_TYPE_NAMES) == 10 and "saddle_2_stable" in factz.CP3_TYPE_NAMES
    # a flat field has none; the count does not depend on the threads
    zero = np.zeros((4, 5, 6), np.float32)
    assert len(factz.critical_points3d(zero, zero, zero)) == 0
    assert np.array_equal(factz.critical_points3d(u, v, w, threads=1), factz.critical_points3d(u, v, w, threads=2))


def write_planes(tmp_path, *planes):
    paths = []
    for name, p in zip("uvw", planes):
        path = tmp_path / f"{name}.f32"
        p.astype("<f4").tofile(path)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("args", [dict(), dict(coder="ans", eb=0.05, bound="abs"), dict(zstd=False, anchor_stride=8)])
def test_bytes_are_those_of_the_cpp_api_and_the_command_line_tool(tmp_path, abc, cpp_compress, cli, args):
    u, v, w = abc
    nz, ny, nx = u.shape
    paths = write_planes(tmp_path, u, v, w)
    mine = factz.compress3d(u, v, w, **args)
    subprocess.run([cpp_compress, "3d", str(nx), str(ny), str(nz), *paths, str(tmp_path / "cpp.fz"), "speculative",
                    args.get("coder", factz.DEFAULT_CODER), args.get("bound", "rel"), repr(args.get("eb", 1e-2)),
                    "1" if args.get("zstd", True) else "0", str(args.get("anchor_stride", 4096))],
                   check=True, capture_output=True)
    assert mine == (tmp_path / "cpp.fz").read_bytes()
    cmd = [cli, "compress", "-3", str(nx), str(ny), str(nz)]
    for p in paths:
        cmd += ["-i", p]
    cmd += ["-z", str(tmp_path / "cli.fz"), "-M", args.get("bound", "rel").upper(), repr(args.get("eb", 1e-2)),
            "--coder", args.get("coder", factz.DEFAULT_CODER), "--zstd" if args.get("zstd", True) else "--no-zstd"]
    if "anchor_stride" in args:
        cmd += ["--anchor-stride", str(args["anchor_stride"])]
    subprocess.run(cmd, check=True, capture_output=True)
    assert mine == (tmp_path / "cli.fz").read_bytes()


def test_bytes_do_not_depend_on_threads_or_policy(abc):
    u, v, w = abc
    ref = factz.compress3d(u, v, w, threads=1)
    assert factz.compress3d(u, v, w, threads=2) == ref
    assert factz.compress3d(u, v, w, policy="serial") == ref
    assert factz.compress3d(u, v, w, policy="omp", threads=3) == ref
    a = factz.decompress3d(ref, threads=1)
    b = factz.decompress3d(ref, threads=2, policy="omp")
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_stats_progress_shape_and_info(abc):
    u, v, w = abc
    seen = []
    buf, stats = factz.compress3d(u, v, w, eb=1e-3, stats=True, progress=lambda s, f: seen.append((s, f)))
    assert stats["eb_abs"] > 0 and stats["exact_vertices"] >= 1
    assert seen and seen[-1][1] == 1.0 and all(a[1] <= b[1] for a, b in zip(seen, seen[1:]))
    assert factz.stream_shape3d(buf) == u.shape
    info = factz.info(buf)
    assert info["kind"] == "vector" and info["ndims"] == 3 and info["components"] == 3
    assert info["shape"] == u.shape and info["layout_version"] == 10 and info["dtype"] == "float32"  # speculative: segmented codes
    # any contiguous bytes-like object holds a stream
    for obj in (bytearray(buf), memoryview(buf), np.frombuffer(buf, np.uint8)):
        assert factz.stream_shape3d(obj) == u.shape
        assert np.array_equal(factz.decompress3d(obj)[2], factz.decompress3d(buf)[2])

    def boom(stage, fraction):
        raise KeyError("from progress")

    with pytest.raises(KeyError, match="from progress"):
        factz.compress3d(u, v, w, progress=boom)


@pytest.mark.parametrize("mode", ["none", "block"])
def test_other_modes_are_the_library_s_decision(abc, mode):
    """Not hard-coded here: a mode the 3D compressor takes must keep its promises, one it
    refuses is a ValueError with the library's message."""
    u, v, w = abc
    try:
        buf = factz.compress3d(u, v, w, mode=mode, eb=1e-2)
    except ValueError as e:
        assert str(e).startswith("invalid_argument: "), e
        return
    r = factz.verify3d(u, v, w, *factz.decompress3d(buf))
    assert max(r["max_abs_error"]) <= 1e-2 * r["value_range"]
    if mode == "block":
        assert r["violations"] == 0


def test_policy_cuda_runs_or_says_why(abc):
    u, v, w = abc
    try:
        buf = factz.compress3d(u, v, w, policy="cuda")
    except factz.BackendUnavailableError as e:
        assert str(e).startswith("backend_unavailable"), e
        buf = factz.compress3d(u, v, w)
        with pytest.raises(factz.BackendUnavailableError):
            factz.decompress3d(buf, policy="cuda")
        return
    assert buf == factz.compress3d(u, v, w)


def test_bad_input_is_a_value_error_that_says_what_to_change(abc):
    u, v, w = abc
    cases = [
        ((u.astype(np.float64), v, w), "same dtype, got float64 and float32"),  # float64: test_vector3d64.py
        ((u, v, w.astype(np.float16)), "dtype float32"),
        ((u[0], v[0], w[0]), "3-dimensional"),
        ((u, v, w[:, :, :-1].copy()), "same shape"),
        ((u, v[:, :, ::2], w), "C-contiguous|same shape"),
        ((u.tolist(), v, w), "numpy.ndarray"),
        ((np.zeros((0, 3, 3), np.float32),) * 3, "empty"),
    ]
    for planes, message in cases:
        with pytest.raises(ValueError, match=message):
            factz.compress3d(*planes)
    with pytest.raises(ValueError, match="C-contiguous"):
        factz.compress3d(np.asfortranarray(u), v, w)
    nan = w.copy()
    nan[3, 4, 5] = np.nan
    inf = w.copy()
    inf[3, 4, 5] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        factz.compress3d(u, v, inf)
    for kw, message in ((dict(mode="fast"), "mode"), (dict(coder="lzma"), "coder"), (dict(bound="pct"), "bound"),
                        (dict(threads=-1), "threads"), (dict(policy="gpu"), "policy"), (dict(eb=-1.0), "bound"),
                        (dict(anchor_stride=3), "anchor")):
        with pytest.raises(ValueError, match=message):
            factz.compress3d(u, v, w, **kw)
    with pytest.raises(ValueError, match="shape"):
        factz.verify3d(u, v, w, u[:-1], v[:-1], w[:-1])
    # NaN is a missing vertex in the analysis, as in 2D
    r = factz.verify3d(u, v, w, u, v, nan)
    assert r["mask_mismatch"] == 1 and r["violations"] >= 1


def test_nan_marks_a_missing_vertex_that_comes_back_bit_for_bit(abc):
    u, v, w = abc
    nan = w.copy()
    nan[3, 4, 5] = np.float32(np.nan)
    buf = factz.compress3d(u, v, nan, eb=1e-2)
    assert factz.info(buf)["layout_version"] == 12
    u2, v2, w2 = factz.decompress3d(buf)
    assert np.isnan(w2[3, 4, 5]) and w2.view(np.uint32)[3, 4, 5] == nan.view(np.uint32)[3, 4, 5]
    r = factz.verify3d(u, v, nan, u2, v2, w2)
    assert r["violations"] == 0 and r["masked_vertices"] == 1 and r["mask_mismatch"] == 0


def test_streams_of_the_other_dimensionality_name_the_function_to_use(abc):
    u, v, w = abc
    s3 = factz.compress3d(u, v, w)
    s2 = factz.compress(np.ascontiguousarray(u[0]), np.ascontiguousarray(v[0]))
    with pytest.raises(ValueError, match=r"3D vector stream .*factz\.decompress3d"):
        factz.decompress(s3)
    with pytest.raises(ValueError, match=r"3D vector stream .*factz\.decompress3d"):
        factz.stream_shape(s3)
    with pytest.raises(ValueError, match=r"2D vector stream .*factz\.decompress\b"):
        factz.decompress3d(s2)
    with pytest.raises(ValueError, match=r"2D vector stream .*factz\.decompress\b"):
        factz.stream_shape3d(s2)
    with pytest.raises(ValueError):
        factz.decompress3d(b"not a stream at all")


def test_damaged_streams_are_value_errors_never_crashes(abc):
    u, v, w = (p[:10, :12, :14].copy() for p in abc)
    good = factz.compress3d(u, v, w)
    rng = np.random.default_rng(22)
    for k in list(range(0, 96)) + list(rng.integers(96, len(good), 64)):
        bad = bytearray(good)
        bad[k] ^= 1 << (k % 8)
        with pytest.raises(ValueError):
            factz.decompress3d(bytes(bad))
    for cut in (0, 1, 8, 64, len(good) // 2, len(good) - 1):
        with pytest.raises(ValueError):
            factz.decompress3d(good[:cut])
