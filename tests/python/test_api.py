"""factz.compress / decompress / critical_points / verify: round trips, the guarantees on
real data, the same bytes as the command line tool, degenerate fields and bad input."""

import json
import subprocess
import threading
import time

import numpy as np
import pytest

import factz
from conftest import analytic, load_vector

MODES = ["none", "block", "speculative"]
CODERS = ["huffman", "ans"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("coder", CODERS)
def test_round_trip_keeps_the_bound_and_the_critical_points(mode, coder):
    u, v = analytic()
    buf = factz.compress(u, v, mode=mode, eb=1e-2, bound="abs", coder=coder)
    assert isinstance(buf, bytes) and 0 < len(buf) < u.nbytes * 2
    u2, v2 = factz.decompress(buf)
    assert u2.shape == u.shape and v2.shape == v.shape
    assert u2.dtype == np.float32 and u2.flags.c_contiguous
    assert np.abs(u2 - u).max() <= 1e-2 and np.abs(v2 - v).max() <= 1e-2
    r = factz.verify(u, v, u2, v2)
    assert r["cp_original"] == len(factz.critical_points(u, v)) > 4
    if mode != "none":
        assert r["lost"] == r["spurious"] == r["type_changed"] == r["violations"] == 0


@pytest.mark.parametrize("mode", ["block", "speculative"])
@pytest.mark.parametrize("name,nx,ny", [("gfs10m_wind_2014", 360, 181),
                                        ("cmems_glob1deg_cur", 360, 171),
                                        ("ncl_storm_t0", 36, 33)])
def test_real_fields_keep_every_critical_point(mode, name, nx, ny):
    u, v = load_vector(name, nx, ny)
    buf = factz.compress(u, v, mode=mode, eb=1e-2, bound="rel")
    u2, v2 = factz.decompress(buf)
    r = factz.verify(u, v, u2, v2)
    assert r["cp_original"] > 0
    assert (r["lost"], r["spurious"], r["type_changed"]) == (0, 0, 0)
    eb = 1e-2 * r["value_range"]
    assert max(r["max_abs_error"]) <= eb
    assert len(buf) < u.nbytes + v.nbytes


SAME_BYTES_CASES = [
    dict(mode="speculative"),
    dict(mode="block"),
    dict(mode="none"),
    dict(mode="speculative", coder="ans", eb=1e-3),
    dict(mode="block", bound="abs", eb=0.25, zstd=False),
    dict(mode="speculative", anchor_stride=8, bound="abs", eb=0.1),
]


def write_planes(tmp_path, u, v):
    (tmp_path / "u.f32").write_bytes(u.tobytes())
    (tmp_path / "v.f32").write_bytes(v.tobytes())
    return str(tmp_path / "u.f32"), str(tmp_path / "v.f32")


@pytest.mark.parametrize("args", SAME_BYTES_CASES)
def test_python_bytes_equal_the_cpp_api(tmp_path, gfs, cpp_compress, args):
    u, v = gfs
    up, vp = write_planes(tmp_path, u, v)
    cmd = [cpp_compress, "360", "181", up, vp, str(tmp_path / "s.fz"), args["mode"], args.get("coder", factz.DEFAULT_CODER),
           args.get("bound", "rel"), repr(args.get("eb", 1e-2)), "1" if args.get("zstd", True) else "0",
           str(args.get("anchor_stride", 4096))]
    subprocess.run(cmd, check=True, capture_output=True)
    assert factz.compress(u, v, **args) == (tmp_path / "s.fz").read_bytes()


@pytest.mark.parametrize("args", SAME_BYTES_CASES)
def test_python_bytes_equal_the_command_line_tool(tmp_path, gfs, cli, args):
    u, v = gfs
    up, vp = write_planes(tmp_path, u, v)
    cmd = [cli, "compress", "-2", "360", "181", "-i", up, "-i", vp,
           "-z", str(tmp_path / "s.fz"), "-M", args.get("bound", "rel").upper(), repr(args.get("eb", 1e-2)),
           "--mode", args["mode"], "--coder", args.get("coder", factz.DEFAULT_CODER),
           "--zstd" if args.get("zstd", True) else "--no-zstd"]
    if "anchor_stride" in args:
        cmd += ["--anchor-stride", str(args["anchor_stride"])]
    subprocess.run(cmd, check=True, capture_output=True)
    assert factz.compress(u, v, **args) == (tmp_path / "s.fz").read_bytes()


def test_bytes_do_not_depend_on_the_thread_count(gfs):
    u, v = gfs
    streams = {factz.compress(u, v, threads=t) for t in (0, 1, 2, 3)}
    assert len(streams) == 1
    one = factz.decompress(next(iter(streams)), threads=1)
    two = factz.decompress(next(iter(streams)), threads=2)
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])


def test_decompress_takes_any_bytes_like_object(gfs):
    u, v = gfs
    buf = factz.compress(u, v, mode="block")
    ref = factz.decompress(buf)
    for obj in (bytearray(buf), memoryview(buf), np.frombuffer(buf, dtype=np.uint8)):
        got = factz.decompress(obj)
        assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])
    assert factz.stream_shape(buf) == (181, 360)


def test_critical_points_is_a_structured_array_matching_the_command_line(tmp_path, gfs, cli):
    u, v = gfs
    cps = factz.critical_points(u, v)
    assert cps.dtype == factz.CP_DTYPE
    assert set(cps.dtype.names) == {"triangle", "row", "column", "mu", "type"}
    assert len(cps) > 100
    assert np.all(np.diff(cps["triangle"]) > 0)
    nx = u.shape[1]
    assert np.array_equal(cps["triangle"] // 2, cps["row"] * (nx - 1) + cps["column"])
    assert np.allclose(cps["mu"].sum(axis=1), 1.0)
    assert set(cps["type"]) <= set(factz.CP_TYPE_NAMES)
    (tmp_path / "u.f32").write_bytes(u.tobytes())
    (tmp_path / "v.f32").write_bytes(v.tobytes())
    out = subprocess.run([cli, "cp", "-2", "360", "181", "-i", str(tmp_path / "u.f32"), "-i",
                          str(tmp_path / "v.f32"), "--json"], check=True, capture_output=True, text=True)
    ref = json.loads(out.stdout)
    assert ref["critical_points"] == len(cps)
    names, counts = np.unique(cps["type"], return_counts=True)
    for name, count in zip(names, counts):
        assert ref["types"][name] == count


def test_verify_reports_what_changed(gfs):
    u, v = gfs
    same = factz.verify(u, v, u, v)
    assert same["violations"] == 0 and same["psnr"] == float("inf") and same["rmse"] == 0
    assert same["cp_original"] == same["cp_decompressed"] == len(factz.critical_points(u, v))
    # Reversing the field turns every source into a sink: the types change, the places do not.
    flipped = factz.verify(u, v, -u, -v)
    assert flipped["lost"] == 0 and flipped["spurious"] == 0 and flipped["type_changed"] > 0
    shifted = factz.verify(u, v, u + 100.0, v)
    assert shifted["lost"] == shifted["cp_original"]
    assert shifted["max_abs_error"][0] == pytest.approx(100.0, rel=1e-3) and shifted["max_abs_error"][1] == 0
    assert set(same) == {"cp_original", "cp_decompressed", "lost", "spurious", "type_changed", "mask_mismatch",
                         "violations", "masked_vertices", "max_abs_error", "rmse", "nrmse", "psnr", "value_range"}
    assert same["mask_mismatch"] == same["masked_vertices"] == 0


@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (2, 1), (2, 2), (3, 3), (33, 40)])
@pytest.mark.parametrize("kind", ["zeros", "constant", "ties"])
@pytest.mark.parametrize("mode", MODES)
def test_degenerate_fields_round_trip(shape, kind, mode):
    n = shape[0] * shape[1]
    if kind == "zeros":
        u = np.zeros(shape, np.float32)
        v = np.zeros(shape, np.float32)
    elif kind == "constant":
        u = np.full(shape, 3.5, np.float32)
        v = np.full(shape, -2.0, np.float32)
    else:
        u = ((np.arange(n) * 7) % 3 - 1).astype(np.float32).reshape(shape)
        v = ((np.arange(n) * 5) % 3 - 1).astype(np.float32).reshape(shape)
    u2, v2 = factz.decompress(factz.compress(u, v, mode=mode))
    r = factz.verify(u, v, u2, v2)
    assert max(r["max_abs_error"]) <= 1e-2 * r["value_range"]
    if kind == "zeros":
        assert np.array_equal(u2, u) and np.array_equal(v2, v)
    if mode != "none":
        assert r["violations"] == 0


def test_the_gil_is_released_while_compressing():
    u, v = load_vector("foam_shearlayer_t0.75", 512, 512)
    u, v = np.tile(u, (2, 2)), np.tile(v, (2, 2))
    done = threading.Event()
    span = {}

    def work():
        t0 = time.perf_counter()
        factz.compress(u, v, threads=1)
        span["t"] = (t0, time.perf_counter())
        done.set()

    worker = threading.Thread(target=work)
    ticks = []
    worker.start()
    while not done.is_set():
        ticks.append(time.perf_counter())
    worker.join()
    t0, t1 = span["t"]
    inside = [t for t in ticks if t0 <= t <= t1]
    assert t1 - t0 > 0.05
    # With the GIL held the main thread could not tick during the call: one long gap.
    gaps = np.diff([t0] + inside + [t1])
    assert gaps.max() < 0.5 * (t1 - t0)


def bad_planes():
    u, v = analytic(20, 16)
    return [
        ("float64 beside float32", u.astype(np.float64), "same dtype"),
        ("int32", u.astype(np.int32), "dtype float32 or float64"),
        ("big endian", u.astype(">f4"), "dtype float32 or float64"),
        ("list", u.tolist(), "numpy.ndarray"),
        ("1-D", u.ravel(), "2-dimensional"),
        ("3-D", u[None], "2-dimensional"),
        ("empty", np.zeros((0, 5), np.float32), "empty"),
        ("strided", np.ascontiguousarray(np.repeat(u, 2, axis=1))[:, ::2], "C-contiguous"),
        ("fortran", np.asfortranarray(u), "C-contiguous"),
    ]


@pytest.mark.parametrize("what,bad,message", bad_planes(), ids=[b[0] for b in bad_planes()])
def test_bad_arrays_are_clear_value_errors(what, bad, message):
    u, v = analytic(20, 16)
    for call in (lambda: factz.compress(bad, v), lambda: factz.critical_points(u, bad),
                 lambda: factz.verify(u, v, bad, v)):
        with pytest.raises(ValueError, match=message):
            call()


def test_bad_values_and_options_are_clear_value_errors():
    u, v = analytic(20, 16)
    with pytest.raises(ValueError, match="same shape"):
        factz.compress(u, v[:, :-1].copy())
    with pytest.raises(ValueError, match="differs"):
        factz.verify(u, v, u[:-1].copy(), v[:-1].copy())
    for value in (np.inf, -np.inf):  # infinity at a valid vertex is an error
        w = u.copy()
        w[3, 4] = value
        with pytest.raises(ValueError, match="invalid_argument.*infinite"):
            factz.compress(w, v)
    # NaN marks a missing vertex (issue 17): stored losslessly, payload and all.
    w = u.copy()
    w[3, 4] = np.float32(np.nan)
    w.view(np.uint32)[5, 6] = 0x7FC12345
    du, dv = factz.decompress(factz.compress(w, v))
    assert du.view(np.uint32)[3, 4] == w.view(np.uint32)[3, 4]
    assert du.view(np.uint32)[5, 6] == 0x7FC12345
    with pytest.raises(ValueError, match="mode"):
        factz.compress(u, v, mode="fast")
    with pytest.raises(ValueError, match="coder"):
        factz.compress(u, v, coder="lzma")
    with pytest.raises(ValueError, match="bound"):
        factz.compress(u, v, bound="pct")
    with pytest.raises(ValueError, match="error bound"):
        factz.compress(u, v, eb=-1.0)
    with pytest.raises(ValueError, match="error bound"):
        factz.compress(u, v, eb=float("nan"))
    with pytest.raises(ValueError, match="anchor stride"):
        factz.compress(u, v, anchor_stride=12)
    with pytest.raises(ValueError, match="threads"):
        factz.compress(u, v, threads=-1)


def test_corrupted_streams_are_value_errors_never_crashes():
    u, v = analytic(20, 16)
    buf = bytearray(factz.compress(u, v))
    for k in range(len(buf)):
        buf[k] ^= 0x5A
        with pytest.raises(ValueError, match="corrupt_stream|unsupported_version"):
            factz.decompress(buf)
        buf[k] ^= 0x5A
    for k in range(len(buf)):
        with pytest.raises(ValueError):
            factz.decompress(bytes(buf[:k]))
    rng = np.random.default_rng(7)
    for _ in range(200):
        with pytest.raises(ValueError):
            factz.decompress(rng.integers(0, 256, rng.integers(0, 400), dtype=np.uint8).tobytes())
    for obj in ("a string", 5, None, [1, 2]):
        with pytest.raises(ValueError, match="bytes-like"):
            factz.decompress(obj)
    u2, v2 = factz.decompress(bytes(buf))
    assert factz.verify(u, v, u2, v2)["violations"] == 0


def gpu_or_unavailable(call):
    """The result of call(), or None when it raised BackendUnavailableError (no CUDA backend
    in this build or no device): then the message must say so."""
    try:
        return call()
    except factz.BackendUnavailableError as e:
        assert isinstance(e, RuntimeError)
        assert str(e).startswith("backend_unavailable: policy cuda")
        return None


@pytest.mark.parametrize("mode", MODES)
def test_cuda_policy_gives_the_cpu_bytes_or_backend_unavailable(mode):
    u, v = analytic(40, 30)
    cpu = factz.compress(u, v, mode=mode)
    assert factz.compress(u, v, mode=mode, policy="serial") == cpu
    assert factz.compress(u, v, mode=mode, policy="omp", threads=2) == cpu
    gpu = gpu_or_unavailable(lambda: factz.compress(u, v, mode=mode, policy="cuda"))
    decoded = gpu_or_unavailable(lambda: factz.decompress(cpu, policy="cuda", device=0))
    assert (gpu is None) == (decoded is None), "compress and decompress disagree on the GPU"
    if gpu is None:
        with pytest.raises(factz.BackendUnavailableError):
            factz.compress(u, v, mode=mode, policy="cuda", device=factz.DEVICE_AUTO)
        return
    assert gpu == cpu
    for a, b in zip(decoded, factz.decompress(cpu)):
        assert np.array_equal(a, b)


def test_bad_policies_and_devices_are_value_errors():
    u, v = analytic(20, 16)
    with pytest.raises(ValueError, match="policy"):
        factz.compress(u, v, policy="gpu")
    with pytest.raises(ValueError, match="policy"):
        factz.decompress(factz.compress(u, v), policy="opencl")
    with pytest.raises(ValueError, match="device"):  # below DEVICE_AUTO on every machine
        factz.compress(u, v, policy="cuda", device=-2)
    # A device number beyond the machine's: ValueError naming the count (or no GPU at all, or a
    # build without the CUDA backend: BackendUnavailableError).
    with pytest.raises((ValueError, factz.BackendUnavailableError)) as e:
        factz.compress(u, v, policy="cuda", device=4096)
    if e.type is ValueError:
        assert "device 4096 does not exist" in str(e.value)
    else:
        assert str(e.value).startswith("backend_unavailable: policy cuda: ")
        assert "no CUDA device" in str(e.value) or "no CUDA backend" in str(e.value)


def test_the_codec_takes_a_policy_that_is_not_part_of_its_config(monkeypatch):
    u, v = analytic(24, 18)
    chunk = np.stack([u, v])
    cpu = factz.FactzCodec().encode(chunk)
    codec = factz.FactzCodec(policy="cuda", device=0)
    assert "policy" not in codec.get_config() and codec == factz.FactzCodec()
    gpu = gpu_or_unavailable(lambda: codec.encode(chunk))
    assert gpu is None or gpu == cpu
    assert factz.FactzCodec(policy="serial").encode(chunk) == cpu
    # Without a policy of its own (zarr builds codecs from the config) it takes FACTZ_POLICY.
    monkeypatch.setenv("FACTZ_POLICY", "cuda:0")
    gpu = gpu_or_unavailable(lambda: factz.FactzCodec().decode(cpu))
    assert gpu is None or np.array_equal(gpu, chunk_decoded(cpu))
    monkeypatch.setenv("FACTZ_POLICY", "serial")
    assert np.array_equal(factz.FactzCodec().decode(cpu), chunk_decoded(cpu))
    monkeypatch.setenv("FACTZ_POLICY", "tpu")
    with pytest.raises(ValueError, match="FACTZ_POLICY"):
        factz.FactzCodec().encode(chunk)


def chunk_decoded(stream):
    return np.stack(factz.decompress(stream))


@pytest.mark.parametrize("mode", ["none", "block", "speculative"])
def test_progress_reports_every_stage_and_leaves_the_stream_alone(mode):
    u, v = analytic()
    calls = []
    buf = factz.compress(u, v, mode=mode, progress=lambda stage, fraction: calls.append((stage, fraction)))
    assert buf == factz.compress(u, v, mode=mode)
    stages = [s for s, _ in calls]
    assert stages == (["frontend", "entropy", "container"] if mode == "speculative"
                      else ["frontend", "encode", "entropy", "container"])
    fractions = [f for _, f in calls]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and fractions[0] > 0


def test_an_exception_in_progress_is_raised_by_compress():
    u, v = analytic()

    def boom(stage, fraction):
        raise KeyError("stop at " + stage)

    with pytest.raises(KeyError, match="stop at frontend"):
        factz.compress(u, v, progress=boom)
