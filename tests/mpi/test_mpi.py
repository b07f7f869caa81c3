"""The MPI driver of factz --blocks (docs/multiblock.md), run with mpirun -np 1..4.

Every claim is checked against an independent reference: the file written by N ranks
against the one-process file (the library's compress_multiblock), the decompressed
GLOBAL field against the original with `factz verify` without --blocks (the exact
extractor on the whole grid), regions against the same window of the full decode, and
per-rank outputs against the blocks of the global decode. Bad inputs must end with one
clear line from rank 0, exit code 1 or 2, and no hang (every run has a timeout).
"""
import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

FACTZ = os.environ["FACTZ_CLI"]
# The bundled real fields (tests/data): the suite needs nothing outside the repository.
DATA = pathlib.Path(os.environ.get("FACTZ_DATA_DIR", pathlib.Path(__file__).resolve().parents[1] / "data"))
MPIRUN = os.environ.get("FACTZ_MPIRUN", "mpirun")
TIMEOUT = 60  # seconds: a run that takes longer is a hang
if not MPIRUN or shutil.which(MPIRUN) is None:
    pytest.skip(f"mpirun is unavailable (FACTZ_MPIRUN={MPIRUN!r}): the MPI driver tests need it",
                allow_module_level=True)


def run(args, np_=None, expect=0):
    """Runs factz (under mpirun -np np_ when given); returns (stdout, stderr)."""
    cmd = ([MPIRUN, "--oversubscribe", "-np", str(np_)] if np_ else []) + [FACTZ] + [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    if expect is not None:
        assert p.returncode == expect, f"{cmd} -> {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def stats(stderr):
    """The key=value line of a run's stderr."""
    line = [l for l in stderr.splitlines() if "=" in l][-1]
    return dict(kv.split("=", 1) for kv in line.split())


def bands(n, p):
    """(first vertex, vertices) of the p bands of make_block_layout (multiblock.hpp)."""
    cells, base, extra = n - 1, (n - 1) // p, (n - 1) % p
    out, at = [], 0
    for i in range(p):
        c = base + (1 if i < extra else 0)
        out.append((at, c + 1))
        at += c
    return out


def layout(nx, ny, px, py):
    return [(x0, y0, bnx, bny) for (y0, bny) in bands(ny, py) for (x0, bnx) in bands(nx, px)]


def synthetic(nx, ny, seed):
    """A smooth field with many critical points, plus ties (a constant patch)."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
    u = np.zeros((ny, nx))
    v = np.zeros((ny, nx))
    for _ in range(6):
        kx, ky = rng.uniform(0.05, 0.4, 2)
        px, py = rng.uniform(0, 6.3, 2)
        u += rng.normal() * np.sin(kx * x + px) * np.cos(ky * y + py)
        v += rng.normal() * np.cos(kx * x + py) * np.sin(ky * y + px)
    u[: ny // 4, : nx // 4] = 0.25  # ties: a constant corner
    v[: ny // 4, : nx // 4] = -0.5
    return u.astype(np.float32), v.astype(np.float32)


def write_field(tmp, name, u, v):
    pu, pv = tmp / f"{name}_u.f32", tmp / f"{name}_v.f32"
    u.tofile(pu)
    v.tofile(pv)
    return pu, pv


def read_plane(path, nx, ny):
    return np.fromfile(path, dtype="<f4").reshape(ny, nx)


FOAM = ("foam_shearlayer_t0.75_u_512x512.f32", "foam_shearlayer_t0.75_v_512x512.f32", 512, 512)


def global_verify(nx, ny, orig, dec):
    """The exact extractor on the whole decompressed field (no --blocks)."""
    out = run(["verify", "-2", nx, ny, "-i", orig[0], "-i", orig[1], "-d", dec[0], "-d", dec[1]]).stdout
    return dict(kv.split("=", 1) for kv in out.split())


def test_real_field_same_bytes_for_every_rank_count(tmp_path):
    """Real data: 1-4 ranks write the one-process file byte for byte; decoding with 2 and 4
    ranks gives the one-process decode; the global field keeps every critical point."""
    u, v = DATA / FOAM[0], DATA / FOAM[1]
    nx, ny = FOAM[2], FOAM[3]
    common = ["compress", "-2", nx, ny, "-i", u, "-i", v, "--blocks", 3, 2, "-M", "REL", "1e-2"]
    single = stats(run(common + ["-z", tmp_path / "one.fzmb"]).stderr)
    ref = (tmp_path / "one.fzmb").read_bytes()
    for n in (1, 2, 3, 4):
        threads = ["-x", "omp=2"] if n == 2 else []  # nor on the threads inside a rank
        s = stats(run(common + threads + ["-z", tmp_path / f"n{n}.fzmb"], np_=n).stderr)
        assert (tmp_path / f"n{n}.fzmb").read_bytes() == ref, f"{n} ranks wrote a different file"
        assert s["ranks"] == str(n) and s["compressed_bytes"] == single["compressed_bytes"]
    run(["decompress", "-z", tmp_path / "one.fzmb", "-o", tmp_path / "u.f32", "-o", tmp_path / "v.f32"])
    for n in (2, 4):
        run(["decompress", "-z", tmp_path / "one.fzmb", "-o", tmp_path / f"u{n}.f32", "-o", tmp_path / f"v{n}.f32"], np_=n)
        assert (tmp_path / f"u{n}.f32").read_bytes() == (tmp_path / "u.f32").read_bytes()
        assert (tmp_path / f"v{n}.f32").read_bytes() == (tmp_path / "v.f32").read_bytes()
    g = global_verify(nx, ny, (u, v), (tmp_path / "u.f32", tmp_path / "v.f32"))
    eb = float(single["eb_abs"])
    assert int(g["cp_original"]) > 0
    assert g["violations"] == "0"
    assert float(g["max_abs_error_u"]) <= eb and float(g["max_abs_error_v"]) <= eb
    # Shared boundary vertices are stored exactly.
    du, dv = read_plane(tmp_path / "u.f32", nx, ny), read_plane(tmp_path / "v.f32", nx, ny)
    ou, ov = read_plane(u, nx, ny), read_plane(v, nx, ny)
    (x0a, _, nxa, _), (_, y0b, _, nyb) = layout(nx, ny, 3, 2)[0], layout(nx, ny, 3, 2)[0]
    assert np.array_equal(du[:, x0a + nxa - 1], ou[:, x0a + nxa - 1])
    assert np.array_equal(dv[y0b + nyb - 1, :], ov[y0b + nyb - 1, :])
    # verify --blocks under 3 ranks sums to the global comparison (the partition argument).
    b = run(["verify", "-2", nx, ny, "-i", u, "-i", v, "-d", tmp_path / "u.f32", "-d", tmp_path / "v.f32",
             "--blocks", 3, 2], np_=3).stdout
    b = dict(kv.split("=", 1) for kv in b.split())
    for k in ("cp_original", "cp_decompressed", "lost", "spurious", "type_changed", "max_abs_error_u", "max_abs_error_v"):
        assert b[k] == g[k], k
    assert abs(float(b["rmse"]) - float(g["rmse"])) <= 1e-9 * max(1.0, float(g["rmse"]))


# (grid, blocks, mode, coder, ranks): uneven bands, blocks thinner than a tile (32) and than
# an anchor stride of 16, 1-cell blocks, more ranks than blocks.
CASES = [
    ((97, 61), (5, 4), "speculative", "ans", 3),
    ((97, 61), (10, 6), "speculative", "huffman", 4),
    ((61, 45), (6, 3), "block", "ans", 2),
    ((9, 7), (8, 6), "block", "huffman", 4),
    ((9, 7), (8, 6), "speculative", "ans", 3),
    ((33, 17), (2, 2), "none", "huffman", 3),
    ((40, 30), (1, 1), "speculative", "ans", 3),
]


@pytest.mark.parametrize("grid,blocks,mode,coder,ranks", CASES)
def test_modes_coders_and_thin_blocks(tmp_path, grid, blocks, mode, coder, ranks):
    nx, ny = grid
    u, v = write_field(tmp_path, "f", *synthetic(nx, ny, seed=nx * 1000 + ny))
    common = ["compress", "-2", nx, ny, "-i", u, "-i", v, "--blocks", *blocks, "--mode", mode, "--coder", coder,
              "-M", "ABS", "0.05"]
    run(common + ["-z", tmp_path / "one.fzmb"])
    run(common + ["-z", tmp_path / "mpi.fzmb"], np_=ranks)
    assert (tmp_path / "mpi.fzmb").read_bytes() == (tmp_path / "one.fzmb").read_bytes()
    dec = (tmp_path / "du.f32", tmp_path / "dv.f32")
    # Decoding under mpirun is covered by the other tests; here only for 3 ranks (uneven ranges).
    run(["decompress", "-z", tmp_path / "mpi.fzmb", "-o", dec[0], "-o", dec[1]], np_=ranks if ranks == 3 else None)
    g = global_verify(nx, ny, (u, v), dec)
    assert float(g["max_abs_error_u"]) <= 0.05 and float(g["max_abs_error_v"]) <= 0.05
    if mode != "none":
        assert g["violations"] == "0", g
    # Every shared row and column is exact.
    ou, ov, du, dv = (read_plane(p, nx, ny) for p in (u, v, *dec))
    for (x0, y0, bnx, bny) in layout(nx, ny, *blocks):
        if x0 > 0:
            assert np.array_equal(du[:, x0], ou[:, x0]) and np.array_equal(dv[:, x0], ov[:, x0])
        if y0 > 0:
            assert np.array_equal(du[y0, :], ou[y0, :]) and np.array_equal(dv[y0, :], ov[y0, :])


def test_per_rank_files(tmp_path):
    """Each of 4 ranks reads its own block file: the same file as from the global field;
    decompress --per-rank writes each rank's block; verify --per-rank finds no violation."""
    nx, ny, px, py = 70, 50, 2, 2
    gu, gv = synthetic(nx, ny, seed=7)
    u, v = write_field(tmp_path, "g", gu, gv)
    for b, (x0, y0, bnx, bny) in enumerate(layout(nx, ny, px, py)):
        gu[y0:y0 + bny, x0:x0 + bnx].tofile(tmp_path / f"u_{b}.f32")
        gv[y0:y0 + bny, x0:x0 + bnx].tofile(tmp_path / f"v_{b}.f32")
    common = ["compress", "-2", nx, ny, "--blocks", px, py, "-M", "REL", "1e-2"]
    run(common + ["-i", u, "-i", v, "-z", tmp_path / "one.fzmb"])
    run(common + ["--per-rank", "-i", tmp_path / "u_%r.f32", "-i", tmp_path / "v_%r.f32", "-z", tmp_path / "pr.fzmb"],
        np_=4)
    assert (tmp_path / "pr.fzmb").read_bytes() == (tmp_path / "one.fzmb").read_bytes()
    # One process without mpirun reads every block's file the same way.
    run(common + ["--per-rank", "-i", tmp_path / "u_%r.f32", "-i", tmp_path / "v_%r.f32", "-z", tmp_path / "p1.fzmb"])
    assert (tmp_path / "p1.fzmb").read_bytes() == (tmp_path / "one.fzmb").read_bytes()
    # Neighbouring files that disagree on their shared column are refused (by every rank).
    bad = np.fromfile(tmp_path / "u_1.f32", dtype="<f4")
    bad[0] += 1.0  # block 1's first column is block 0's last
    bad.tofile(tmp_path / "w_1.f32")
    for b in (0, 2, 3):
        (tmp_path / f"w_{b}.f32").write_bytes((tmp_path / f"u_{b}.f32").read_bytes())
    p = run(common + ["--per-rank", "-i", tmp_path / "w_%r.f32", "-i", tmp_path / "v_%r.f32", "-z", tmp_path / "x"],
            np_=4, expect=None)
    one_error_line(p, 1, ["blocks 0 and 1", "shared column"])
    run(["decompress", "-z", tmp_path / "pr.fzmb", "-o", tmp_path / "du.f32", "-o", tmp_path / "dv.f32"])
    run(["decompress", "-z", tmp_path / "pr.fzmb", "--per-rank", "-o", tmp_path / "du_%r.f32",
         "-o", tmp_path / "dv_%r.f32"], np_=4)
    du, dv = read_plane(tmp_path / "du.f32", nx, ny), read_plane(tmp_path / "dv.f32", nx, ny)
    for b, (x0, y0, bnx, bny) in enumerate(layout(nx, ny, px, py)):
        assert np.array_equal(read_plane(tmp_path / f"du_{b}.f32", bnx, bny), du[y0:y0 + bny, x0:x0 + bnx])
        assert np.array_equal(read_plane(tmp_path / f"dv_{b}.f32", bnx, bny), dv[y0:y0 + bny, x0:x0 + bnx])
    out = run(["verify", "-2", nx, ny, "--blocks", px, py, "--per-rank", "-i", tmp_path / "u_%r.f32",
               "-i", tmp_path / "v_%r.f32", "-d", tmp_path / "du_%r.f32", "-d", tmp_path / "dv_%r.f32"], np_=4).stdout
    b = dict(kv.split("=", 1) for kv in out.split())
    g = global_verify(nx, ny, (u, v), (tmp_path / "du.f32", tmp_path / "dv.f32"))
    assert b["violations"] == "0" and int(b["cp_original"]) > 0
    assert b["cp_original"] == g["cp_original"] and b["cp_decompressed"] == g["cp_decompressed"]


def test_region_equals_window_of_full_decode(tmp_path):
    nx, ny = 150, 110
    u, v = write_field(tmp_path, "f", *synthetic(nx, ny, seed=3))
    z = tmp_path / "f.fzmb"
    run(["compress", "-2", nx, ny, "-i", u, "-i", v, "--blocks", 4, 3, "-z", z])
    run(["decompress", "-z", z, "-o", tmp_path / "du.f32", "-o", tmp_path / "dv.f32"])
    du, dv = read_plane(tmp_path / "du.f32", nx, ny), read_plane(tmp_path / "dv.f32", nx, ny)
    L = layout(nx, ny, 4, 3)
    size = z.stat().st_size
    # Windows: inside one block, on a shared column, one vertex, a shared corner, everything.
    x1b = L[0][0] + L[0][2] - 1  # block 0's last (shared) column
    y1b = L[0][1] + L[0][3] - 1
    for (x0, y0, x1, y1, blocks) in [(3, 4, 20, 15, 1), (x1b - 2, 5, x1b + 3, 9, 2), (x1b, y1b, x1b + 1, y1b + 1, 1),
                                     (x1b - 1, y1b - 1, x1b + 1, y1b + 1, 4), (0, 0, nx, ny, 12)]:
        p = run(["decompress", "-z", z, "--region", x0, y0, x1, y1, "-o", tmp_path / "ru.f32",
                 "-o", tmp_path / "rv.f32", "--json"])
        s = json.loads(p.stdout)
        assert np.array_equal(read_plane(tmp_path / "ru.f32", x1 - x0, y1 - y0), du[y0:y1, x0:x1])
        assert np.array_equal(read_plane(tmp_path / "rv.f32", x1 - x0, y1 - y0), dv[y0:y1, x0:x1])
        assert s["blocks_decoded"] == blocks, (x0, y0, x1, y1, s)
        if blocks < 12:
            assert s["bytes_read"] < size
    bad = run(["decompress", "-z", z, "--region", 10, 10, 10, 20, "-o", tmp_path / "a", "-o", tmp_path / "b"], expect=1)
    assert "region" in bad.stderr


def one_error_line(p, code, words):
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.startswith(("factz compress:", "factz decompress:", "factz verify:"))]
    assert len(lines) == 1, p.stderr  # rank 0 alone prints
    for w in words:
        assert w in lines[0], lines[0]


def test_bad_inputs_fail_cleanly(tmp_path):
    nx, ny = 40, 30
    u, v = write_field(tmp_path, "f", *synthetic(nx, ny, seed=11))
    base = ["compress", "-2", nx, ny, "-i", u, "-i", v]
    # --per-rank needs PX * PY = ranks.
    p = run(base[:4] + ["--per-rank", "--blocks", 2, 2, "-i", "u_%r", "-i", "v_%r", "-z", tmp_path / "x"], np_=3,
            expect=None)
    one_error_line(p, 2, ["PX * PY", "3 ranks"])
    # --per-rank names need %r.
    p = run(base + ["--per-rank", "--blocks", 1, 2, "-z", tmp_path / "x"], np_=2, expect=None)
    one_error_line(p, 2, ["%r"])
    # More blocks than cells.
    for n in (None,):
        p = run(base + ["--blocks", 40, 1, "-z", tmp_path / "x"], np_=n, expect=None)
        one_error_line(p, 1, ["PX = 40", "39"])
    # A FIFO as a global input: every rank would read it, and one rank's read empties it (a later
    # reader would wait for a writer for ever): refused by stat before it is opened, no writer needed.
    fifo = tmp_path / "u.fifo"
    os.mkfifo(fifo)
    for args in (base[:4] + ["-i", fifo, "-i", v, "--blocks", 2, 2, "-z", tmp_path / "x"],
                 ["verify", "-2", nx, ny, "-i", u, "-i", v, "-d", fifo, "-d", v, "--blocks", 2, 2],
                 ["compress", "-3", nx, ny, 1, "-i", fifo, "-i", v, "-i", v, "--blocks", 2, 2, 1, "-z", tmp_path / "x"]):
        one_error_line(run(args, np_=2, expect=None), 1, ["u.fifo", "not a regular file", "save it to a file"])
    # One rank's input is missing: the others must not wait for it.
    gu, gv = synthetic(nx, ny, seed=11)
    for b, (x0, y0, bnx, bny) in enumerate(layout(nx, ny, 1, 2)):
        gu[y0:y0 + bny, x0:x0 + bnx].tofile(tmp_path / f"u_{b}.f32")
        gv[y0:y0 + bny, x0:x0 + bnx].tofile(tmp_path / f"v_{b}.f32")
    os.remove(tmp_path / "v_1.f32")
    p = run(base[:4] + ["--per-rank", "--blocks", 1, 2, "-i", tmp_path / "u_%r.f32", "-i", tmp_path / "v_%r.f32",
                        "-z", tmp_path / "x"], np_=2, expect=None)
    one_error_line(p, 1, ["rank 1", "v_1.f32"])
    # An infinite value in one block (NaN would mark a missing vertex, which is no error).
    nan_u = np.fromfile(u, dtype="<f4")
    nan_u[nx * (ny - 3) + 5] = np.inf
    nan_u.tofile(tmp_path / "nan_u.f32")
    p = run(base[:4] + ["-i", tmp_path / "nan_u.f32", "-i", v, "--blocks", 2, 2, "-z", tmp_path / "x"], np_=4,
            expect=None)
    one_error_line(p, 1, ["infinite"])
    # Truncated and corrupted multi-block files, one process and several ranks.
    z = tmp_path / "ok.fzmb"
    run(base + ["--blocks", 2, 3, "-z", z])
    good = z.read_bytes()
    (tmp_path / "trunc.fzmb").write_bytes(good[:-10])
    (tmp_path / "short.fzmb").write_bytes(good[:30])
    flipped = bytearray(good)
    flipped[len(good) - 40] ^= 0x5A  # inside the last block's stream
    (tmp_path / "flip.fzmb").write_bytes(bytes(flipped))
    index = bytearray(good)
    index[60] ^= 1  # inside the index (its checksum catches it)
    (tmp_path / "index.fzmb").write_bytes(bytes(index))
    for name, words in [("trunc", ["bytes"]), ("short", ["truncated"]), ("flip", ["block 5"]), ("index", ["checksum"])]:
        for n in (None, 3) if name in ("trunc", "flip") else (None,):
            p = run(["decompress", "-z", tmp_path / f"{name}.fzmb", "-o", tmp_path / "a", "-o", tmp_path / "b"],
                    np_=n, expect=None)
            one_error_line(p, 1, words)
        # A region away from a corrupted block still decodes: the blocks are independent.
        p = run(["decompress", "-z", tmp_path / f"{name}.fzmb", "--region", 0, 0, 5, 5, "-o", tmp_path / "a",
                 "-o", tmp_path / "b"], expect=None)
        if name == "flip":
            assert p.returncode == 0, p.stderr
        else:
            assert p.returncode == 1 and p.stderr.count("\n") == 1, p.stderr
    # Usage errors.
    p = run(base + ["--blocks", 0, 2, "-z", tmp_path / "x"], expect=None)
    one_error_line(p, 2, ["--blocks"])
    p = run(base + ["--blocks", 2, 2, "-z", "-"], expect=None)
    one_error_line(p, 2, ["'-'"])
    p = run(["decompress", "-z", z, "--region", 0, 0, 5, 5, "-o", "a", "-o", "b"], np_=2, expect=None)
    one_error_line(p, 2, ["mpirun"])



def test_collective_writes_replace_whole_or_not_at_all(tmp_path):
    """The ranks write one file together into a temporary renamed over the output when whole:
    an existing file is replaced with its mode kept, nothing hidden is left behind, and a write
    that cannot be done names the file as given and leaves nothing."""
    nx, ny = 48, 36
    u, v = write_field(tmp_path, "f", *synthetic(nx, ny, seed=13))
    base = ["compress", "-2", nx, ny, "-i", u, "-i", v, "--blocks", 2, 2]
    one = tmp_path / "one.fzmb"
    run(base + ["-z", one])
    z = tmp_path / "z.fzmb"
    z.write_bytes(b"old bytes")
    os.chmod(z, 0o600)
    run(base + ["-z", z], np_=2)
    assert z.read_bytes() == one.read_bytes()
    assert os.stat(z).st_mode & 0o777 == 0o600
    a, b = tmp_path / "a.f32", tmp_path / "b.f32"
    a.write_bytes(b"old bytes")
    os.chmod(a, 0o640)
    run(["decompress", "-z", z, "-o", a, "-o", b], np_=2)
    assert a.stat().st_size == nx * ny * 4 and b.stat().st_size == nx * ny * 4
    assert os.stat(a).st_mode & 0o777 == 0o640
    hidden = [p.name for p in tmp_path.iterdir() if ".factz-" in p.name]
    assert not hidden, hidden
    # A device is written in place (MPI-IO cannot size /dev/null: it is not sized).
    c = tmp_path / "c.f32"
    run(["decompress", "-z", z, "-o", "/dev/null", "-o", c], np_=2)
    assert c.read_bytes() == b.read_bytes()
    run(base + ["-z", "/dev/null"], np_=2)
    p = run(base + ["-z", tmp_path / "missing" / "z.fzmb"], np_=2, expect=None)
    one_error_line(p, 1, [str(tmp_path / "missing" / "z.fzmb")])
    assert not (tmp_path / "missing").exists()
    assert not [p.name for p in tmp_path.iterdir() if ".factz-" in p.name]


def test_collective_write_ended_by_a_signal(tmp_path):
    """Ranks ended by SIGTERM while they write their parts (the run stopped with SIGSTOP exactly
    while the temporary exists) leave no temporary, and the output they were to replace keeps
    its bytes or is the whole new file. Writing in place (before) left a partial file."""
    import signal
    import time
    n = 2048
    u, v = write_field(tmp_path, "f", *synthetic(n, n, seed=17))
    z = tmp_path / "z.fzmb"
    run(["compress", "-2", n, n, "-i", u, "-i", v, "-z", z, "--blocks", 2, 2, "--mode", "none"])
    a, b = tmp_path / "a.f32", tmp_path / "b.f32"

    def temporaries():  # factz's own; OpenMPI's lock-test files beside them are counted apart
        return [p.name for p in tmp_path.iterdir() if ".factz-" in p.name and ".locktest." not in p.name]

    def lock_tests():
        return [p.name for p in tmp_path.iterdir() if ".locktest." in p.name]

    def ranks():  # the factz processes of this run: their command lines name a.f32
        pids = []
        for d in pathlib.Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    argv = (d / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if argv and argv[0] == FACTZ.encode() and str(a).encode() in argv:
                    pids.append(int(d.name))
        return pids

    caught = 0
    for _ in range(10):
        if caught >= 2:
            break
        a.write_bytes(b"old bytes")
        b.unlink(missing_ok=True)
        proc = subprocess.Popen([MPIRUN, "--oversubscribe", "-np", "2", FACTZ, "decompress", "-z", str(z),
                                 "-o", str(a), "-o", str(b)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + TIMEOUT
        while proc.poll() is None and time.monotonic() < deadline:
            if temporaries():
                pids = ranks()
                for pid in pids:
                    os.kill(pid, signal.SIGSTOP)
                if temporaries() and pids:
                    caught += 1
                    for pid in pids:
                        os.kill(pid, signal.SIGTERM)
                for pid in pids:
                    os.kill(pid, signal.SIGCONT)
                break
        proc.wait(timeout=TIMEOUT)
        assert not temporaries(), temporaries()
        # MPI_File_open creates NAME.locktest.RANK and removes it at once; each rank's handler
        # removes it too, but a thread still inside that open when another thread handles the
        # signal may create it after (rare): a stray lock-test file, never a partial output.
        for name in lock_tests():
            (tmp_path / name).unlink()
        assert a.read_bytes() == b"old bytes" or a.stat().st_size == n * n * 4
        assert not b.exists() or b.stat().st_size == n * n * 4
    assert caught >= 1, "no try stopped the ranks while they wrote"


def write_field64(tmp, name, u, v):
    pu, pv = tmp / f"{name}_u.f64", tmp / f"{name}_v.f64"
    u.astype("<f8").tofile(pu)
    v.astype("<f8").tofile(pv)
    return pu, pv


def synthetic64(nx, ny, seed):
    """synthetic in double, plus detail of 1e-10 that float32 cannot hold near 1."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
    u = np.zeros((ny, nx))
    v = np.zeros((ny, nx))
    for _ in range(6):
        kx, ky = rng.uniform(0.05, 0.4, 2)
        px, py = rng.uniform(0, 6.3, 2)
        u += rng.normal() * np.sin(kx * x + px) * np.cos(ky * y + py)
        v += rng.normal() * np.cos(kx * x + py) * np.sin(ky * y + px)
    return u + 1e-10 * np.sin(7.1 * x + 3.3 * y), v + 1e-10 * np.cos(5.3 * x - 2.9 * y)


def test_float64_fields(tmp_path):
    """float64 inputs (raw with --dtype f64, and per-rank '<f8' .npy files): 1-4 ranks write
    the one-process file byte for byte, a version 2 file of float64 blocks; decoding under
    mpirun writes raw float64 planes equal to the one-process decode; the bound 1e-9 (below
    float32's spacing of the values) holds in double, shared lines keep all 64 bits, and the
    global float64 field keeps every critical point (`factz verify` on the whole grid)."""
    nx, ny, px, py = 97, 61, 3, 2
    ou, ov = synthetic64(nx, ny, seed=5)
    u, v = write_field64(tmp_path, "f", ou, ov)
    common = ["compress", "-2", nx, ny, "--dtype", "f64", "-i", u, "-i", v, "--blocks", px, py, "-M", "ABS", "1e-9"]
    run(common + ["-z", tmp_path / "one.fzmb"])
    ref = (tmp_path / "one.fzmb").read_bytes()
    assert ref[4] == 2 and ref[7] == 2
    for n in (2, 4):
        run(common + ["-z", tmp_path / f"n{n}.fzmb"], np_=n)
        assert (tmp_path / f"n{n}.fzmb").read_bytes() == ref, f"{n} ranks wrote a different file"
    # Per-rank '<f8' .npy files, one block per rank.
    for b, (x0, y0, bnx, bny) in enumerate(layout(nx, ny, px, py)):
        np.save(tmp_path / f"u_{b}.npy", ou[y0:y0 + bny, x0:x0 + bnx])
        np.save(tmp_path / f"v_{b}.npy", ov[y0:y0 + bny, x0:x0 + bnx])
    run(["compress", "-2", nx, ny, "--blocks", px, py, "-M", "ABS", "1e-9", "--per-rank", "-i", tmp_path / "u_%r.npy",
         "-i", tmp_path / "v_%r.npy", "-z", tmp_path / "pr.fzmb"], np_=px * py)
    assert (tmp_path / "pr.fzmb").read_bytes() == ref
    dec = (tmp_path / "du.f64", tmp_path / "dv.f64")
    run(["decompress", "-z", tmp_path / "one.fzmb", "-o", dec[0], "-o", dec[1]])
    run(["decompress", "-z", tmp_path / "one.fzmb", "-o", tmp_path / "mu.f64", "-o", tmp_path / "mv.f64"], np_=4)
    assert (tmp_path / "mu.f64").read_bytes() == dec[0].read_bytes()
    assert (tmp_path / "mv.f64").read_bytes() == dec[1].read_bytes()
    run(["decompress", "-z", tmp_path / "one.fzmb", "--per-rank", "-o", tmp_path / "qu_%r.npy", "-o",
         tmp_path / "qv_%r.npy"], np_=px * py)
    du = np.fromfile(dec[0], dtype="<f8").reshape(ny, nx)
    dv = np.fromfile(dec[1], dtype="<f8").reshape(ny, nx)
    assert np.abs(du - ou).max() <= 1e-9 and np.abs(dv - ov).max() <= 1e-9
    assert np.count_nonzero(du != du.astype(np.float32)) > du.size // 2, "not float32 roundings"
    for b, (x0, y0, bnx, bny) in enumerate(layout(nx, ny, px, py)):
        q = np.load(tmp_path / f"qu_{b}.npy")
        assert q.dtype == np.float64 and np.array_equal(q, du[y0:y0 + bny, x0:x0 + bnx])
        if x0 > 0:
            assert np.array_equal(du[:, x0].view(np.uint64), ou[:, x0].view(np.uint64))
        if y0 > 0:
            assert np.array_equal(dv[y0, :].view(np.uint64), ov[y0, :].view(np.uint64))
    g = run(["verify", "-2", nx, ny, "--dtype", "f64", "-i", u, "-i", v, "-d", dec[0], "-d", dec[1]]).stdout
    g = dict(kv.split("=", 1) for kv in g.split())
    assert int(g["cp_original"]) > 10 and g["violations"] == "0", g
    b = run(["verify", "-2", nx, ny, "--dtype", "f64", "-i", u, "-i", v, "-d", dec[0], "-d", dec[1], "--blocks", px,
             py], np_=3).stdout
    b = dict(kv.split("=", 1) for kv in b.split())
    for k in ("cp_original", "cp_decompressed", "lost", "spurious", "type_changed", "max_abs_error_u", "max_abs_error_v"):
        assert b[k] == g[k], k
    # Ranks whose per-rank files mix float32 and float64 fail together with one line.
    np.save(tmp_path / "w_1.npy", ou[0:31, 32:65].astype(np.float32))
    for k in (0, 2, 3, 4, 5):
        (tmp_path / f"w_{k}.npy").write_bytes((tmp_path / f"u_{k}.npy").read_bytes())
    p = run(["compress", "-2", nx, ny, "--blocks", px, py, "--per-rank", "-i", tmp_path / "w_%r.npy", "-i",
             tmp_path / "v_%r.npy", "-z", tmp_path / "x"], np_=px * py, expect=None)
    one_error_line(p, 1, ["float32", "float64"])

def layout3d(nx, ny, nz, px, py, pz):
    """(x0, y0, z0, nx, ny, nz) of the blocks of make_block_layout3d, in block order."""
    return [(x0, y0, z0, bnx, bny, bnz) for (z0, bnz) in bands(nz, pz) for (y0, bny) in bands(ny, py)
            for (x0, bnx) in bands(nx, px)]


def synthetic3d(nx, ny, nz, seed):
    """A smooth 3D flow with many critical points, plus ties (a constant corner box)."""
    rng = np.random.default_rng(seed)
    z, y, x = np.mgrid[0:nz, 0:ny, 0:nx].astype(np.float64)
    comps = [np.zeros((nz, ny, nx)) for _ in range(3)]
    for _ in range(5):
        k = rng.uniform(0.1, 0.6, 3)
        ph = rng.uniform(0, 6.3, 3)
        for c in range(3):
            comps[c] += rng.normal() * np.sin(k[c] * x + ph[0]) * np.cos(k[(c + 1) % 3] * y + ph[1]) * \
                np.sin(k[(c + 2) % 3] * z + ph[2])
    for c, value in enumerate((0.25, -0.5, 0.0)):
        comps[c][: nz // 4, : ny // 4, : nx // 4] = value
    return [c.astype(np.float32) for c in comps]


def global_verify3d(dims, orig, dec):
    """The exact 3D extractor on the whole decompressed field (no --blocks)."""
    out = run(["verify", "-3", *dims, "-i", orig[0], "-i", orig[1], "-i", orig[2], "-d", dec[0], "-d", dec[1],
               "-d", dec[2]]).stdout
    return dict(kv.split("=", 1) for kv in out.split())


# (grid, blocks, mode, ranks): uneven bands, 1-cell-thick blocks, more ranks than blocks.
CASES3D = [
    ((21, 18, 15), (2, 2, 2), "speculative", (1, 2, 3, 4)),
    ((21, 18, 15), (3, 2, 1), "block", (3,)),
    ((9, 6, 5), (8, 1, 4), "speculative", (4,)),
    ((12, 10, 9), (1, 1, 1), "block", (2,)),
]


@pytest.mark.parametrize("grid,blocks,mode,ranks", CASES3D)
def test_fields_3d(tmp_path, grid, blocks, mode, ranks):
    """3D vector fields (--blocks PX PY PZ, a version 3 file): every rank count writes the
    one-process file byte for byte; decoding under mpirun writes the one-process planes; the
    whole decoded field keeps every critical point (`factz verify -3` without --blocks), the
    bound holds, shared planes are exact, and verify --blocks under mpirun sums to the global
    comparison."""
    nx, ny, nz = grid
    comps = synthetic3d(nx, ny, nz, seed=nx * 100 + nz)
    orig = []
    for name, c in zip("uvw", comps):
        c.tofile(tmp_path / f"{name}.f32")
        orig.append(tmp_path / f"{name}.f32")
    common = ["compress", "-3", nx, ny, nz, "-i", orig[0], "-i", orig[1], "-i", orig[2], "--blocks", *blocks,
              "--mode", mode, "-M", "REL", "1e-2"]
    single = stats(run(common + ["-z", tmp_path / "one.fzmb"]).stderr)
    ref = (tmp_path / "one.fzmb").read_bytes()
    assert ref[:4] == b"FZMB" and ref[4] == 3
    for n in ranks:
        s = stats(run(common + ["-z", tmp_path / f"n{n}.fzmb"], np_=n).stderr)
        assert (tmp_path / f"n{n}.fzmb").read_bytes() == ref, f"{n} ranks wrote a different file"
        assert s["ranks"] == str(n) and s["eb_abs"] == single["eb_abs"]
    dec = [tmp_path / f"d{name}.f32" for name in "uvw"]
    run(["decompress", "-z", tmp_path / "one.fzmb", "-o", dec[0], "-o", dec[1], "-o", dec[2]])
    n = ranks[-1]
    mdec = [tmp_path / f"m{name}.f32" for name in "uvw"]
    run(["decompress", "-z", tmp_path / "one.fzmb", "-o", mdec[0], "-o", mdec[1], "-o", mdec[2]], np_=n)
    for a, b in zip(dec, mdec):
        assert a.read_bytes() == b.read_bytes(), "mpirun decoded other values"
    g = global_verify3d(grid, orig, dec)
    eb = float(single["eb_abs"])
    assert g["violations"] == "0", g
    for k in ("max_abs_error_u", "max_abs_error_v", "max_abs_error_w"):
        assert float(g[k]) <= eb, (k, g[k], eb)
    d = [np.fromfile(p, dtype="<f4").reshape(nz, ny, nx) for p in dec]
    for (x0, y0, z0, bnx, bny, bnz) in layout3d(nx, ny, nz, *blocks):
        for c in range(3):
            if x0 > 0:
                assert np.array_equal(d[c][:, :, x0].view(np.uint32), comps[c][:, :, x0].view(np.uint32))
            if y0 > 0:
                assert np.array_equal(d[c][:, y0, :].view(np.uint32), comps[c][:, y0, :].view(np.uint32))
            if z0 > 0:
                assert np.array_equal(d[c][z0].view(np.uint32), comps[c][z0].view(np.uint32))
    b = run(["verify", "-3", nx, ny, nz, "-i", orig[0], "-i", orig[1], "-i", orig[2], "-d", dec[0], "-d", dec[1],
             "-d", dec[2], "--blocks", *blocks], np_=3).stdout
    b = dict(kv.split("=", 1) for kv in b.split())
    for k in ("cp_original", "cp_decompressed", "lost", "spurious", "type_changed", "max_abs_error_u",
              "max_abs_error_v", "max_abs_error_w", "violations"):
        assert b[k] == g[k], (k, b[k], g[k])
    info = json.loads(run(["info", "-z", tmp_path / "one.fzmb", "--json"]).stdout)
    assert (info["field"], info["nz"], info["pz"], info["blocks"]) == ("vector3d", nz, blocks[2],
                                                                      blocks[0] * blocks[1] * blocks[2])


def test_real_crop_3d_and_bad_inputs(tmp_path):
    """The bundled cavity crop under 4 ranks (2x2x2 blocks, both modes) writes the
    one-process file and keeps every critical point; bad requests end with one line."""
    crop = [DATA / f"cavity3d_crop_{c}_24x24x24.f32" for c in "uvw"]
    for mode in ("speculative", "block"):
        common = ["compress", "-3", 24, 24, 24, "-i", crop[0], "-i", crop[1], "-i", crop[2], "--blocks", 2, 2, 2,
                  "--mode", mode, "-M", "REL", "1e-2"]
        run(common + ["-z", tmp_path / "one.fzmb"])
        run(common + ["-z", tmp_path / "mpi.fzmb"], np_=4)
        assert (tmp_path / "mpi.fzmb").read_bytes() == (tmp_path / "one.fzmb").read_bytes()
        dec = [tmp_path / f"d{c}.f32" for c in "uvw"]
        run(["decompress", "-z", tmp_path / "mpi.fzmb", "-o", dec[0], "-o", dec[1], "-o", dec[2]], np_=4)
        g = global_verify3d((24, 24, 24), crop, dec)
        assert g["violations"] == "0" and int(g["cp_original"]) > 0, g
    p = run(["compress", "-3", 24, 24, 24, "-i", crop[0], "-i", crop[1], "-i", crop[2], "--blocks", 30, 1, 1,
             "-z", tmp_path / "x"], np_=2, expect=None)
    one_error_line(p, 1, ["PX = 30"])
    p = run(["compress", "-3", 24, 24, 24, "-i", crop[0], "-i", crop[1], "-i", crop[2], "--blocks", 2, 2,
             "-z", tmp_path / "x"], np_=2, expect=None)
    one_error_line(p, 2, ["PX PY PZ"])
    (tmp_path / "short.f32").write_bytes(crop[2].read_bytes()[:-4])
    p = run(["compress", "-3", 24, 24, 24, "-i", crop[0], "-i", crop[1], "-i", tmp_path / "short.f32", "--blocks",
             2, 2, 2, "-z", tmp_path / "x"], np_=3, expect=None)
    one_error_line(p, 1, ["short.f32"])
    # A damaged file: every rank refuses it, rank 0 says why.
    bad = bytearray((tmp_path / "one.fzmb").read_bytes())
    bad[70] ^= 0x40
    (tmp_path / "bad.fzmb").write_bytes(bytes(bad))
    p = run(["decompress", "-z", tmp_path / "bad.fzmb", "-o", tmp_path / "a", "-o", tmp_path / "b", "-o",
             tmp_path / "c"], np_=2, expect=None)
    one_error_line(p, 1, ["checksum"])


def test_float64_and_per_rank_3d(tmp_path):
    """float64 3D fields (--dtype f64, a version 4 file) and --per-rank with three components:
    every rank count writes the one-process file byte for byte, decoding under mpirun writes
    the one-process float64 planes, each rank's per-rank files hold its block, verify --blocks
    --per-rank under mpirun sums to the global comparison, and per-rank files that disagree on
    a shared plane are refused by every rank with one line."""
    nx, ny, nz, px, py, pz = 15, 13, 12, 2, 1, 2
    comps = [c.astype(np.float64) + 2.0 ** -34 * np.cos(np.arange(c.size)).reshape(c.shape)
             for c in synthetic3d(nx, ny, nz, seed=5)]
    orig = []
    for name, c in zip("uvw", comps):
        c.tofile(tmp_path / f"{name}.f64")
        orig.append(tmp_path / f"{name}.f64")
    grid = ["-3", nx, ny, nz, "--dtype", "f64", "--blocks", px, py, pz]
    common = ["compress", *grid, "-i", orig[0], "-i", orig[1], "-i", orig[2], "--mode", "block", "-M", "REL", "1e-2"]
    run(common + ["-z", tmp_path / "one.fzmb"])
    ref = (tmp_path / "one.fzmb").read_bytes()
    assert ref[:4] == b"FZMB" and ref[4] == 4 and ref[7] == 2
    for n in (2, 4):
        run(common + ["-z", tmp_path / f"n{n}.fzmb"], np_=n)
        assert (tmp_path / f"n{n}.fzmb").read_bytes() == ref, f"{n} ranks wrote a different file"
    dec = [tmp_path / f"d{c}.f64" for c in "uvw"]
    run(["decompress", "-z", tmp_path / "one.fzmb", "-o", dec[0], "-o", dec[1], "-o", dec[2]])
    mdec = [tmp_path / f"m{c}.f64" for c in "uvw"]
    run(["decompress", "-z", tmp_path / "one.fzmb", "-o", mdec[0], "-o", mdec[1], "-o", mdec[2]], np_=3)
    for a, b in zip(dec, mdec):
        assert a.read_bytes() == b.read_bytes(), "mpirun decoded other values"
    d = [np.fromfile(p, dtype="<f8").reshape(nz, ny, nx) for p in dec]
    # Per-rank originals: each block's extent; compressed by 4 ranks into the same file.
    blocks = layout3d(nx, ny, nz, px, py, pz)
    for b, (x0, y0, z0, bnx, bny, bnz) in enumerate(blocks):
        for name, c in zip("uvw", comps):
            c[z0:z0 + bnz, y0:y0 + bny, x0:x0 + bnx].tofile(tmp_path / f"{name}_{b}.f64")
    per = ["--per-rank", "-i", tmp_path / "u_%r.f64", "-i", tmp_path / "v_%r.f64", "-i", tmp_path / "w_%r.f64"]
    run(["compress", *grid, *per, "--mode", "block", "-M", "REL", "1e-2", "-z", tmp_path / "pr.fzmb"], np_=4)
    assert (tmp_path / "pr.fzmb").read_bytes() == ref
    run(["decompress", "-z", tmp_path / "pr.fzmb", "--per-rank", "-o", tmp_path / "du_%r.f64", "-o",
         tmp_path / "dv_%r.f64", "-o", tmp_path / "dw_%r.f64"], np_=4)
    for b, (x0, y0, z0, bnx, bny, bnz) in enumerate(blocks):
        for name, c in zip("uvw", d):
            got = np.fromfile(tmp_path / f"d{name}_{b}.f64", dtype="<f8").reshape(bnz, bny, bnx)
            assert np.array_equal(got.view(np.uint64), c[z0:z0 + bnz, y0:y0 + bny, x0:x0 + bnx].view(np.uint64))
    out = run(["verify", *grid, *per, "-d", tmp_path / "du_%r.f64", "-d", tmp_path / "dv_%r.f64", "-d",
               tmp_path / "dw_%r.f64"], np_=4).stdout
    b = dict(kv.split("=", 1) for kv in out.split())
    g = run(["verify", "-3", nx, ny, nz, "--dtype", "f64", "-i", orig[0], "-i", orig[1], "-i", orig[2], "-d", dec[0],
             "-d", dec[1], "-d", dec[2]]).stdout
    g = dict(kv.split("=", 1) for kv in g.split())
    assert g["violations"] == "0" and int(g["cp_original"]) > 0, g
    for k in ("cp_original", "cp_decompressed", "violations", "max_abs_error_u", "max_abs_error_w"):
        assert b[k] == g[k], (k, b[k], g[k])
    # Block 1's first x plane is block 0's last: a changed value there is refused.
    bad = np.fromfile(tmp_path / "w_1.f64", dtype="<f8")
    bad[0] += 1.0
    bad.tofile(tmp_path / "x_1.f64")
    for k in (0, 2, 3):
        (tmp_path / f"x_{k}.f64").write_bytes((tmp_path / f"w_{k}.f64").read_bytes())
    p = run(["compress", *grid, "--per-rank", "-i", tmp_path / "u_%r.f64", "-i", tmp_path / "v_%r.f64", "-i",
             tmp_path / "x_%r.f64", "-z", tmp_path / "x.fzmb"], np_=4, expect=None)
    one_error_line(p, 1, ["blocks 0 and 1", "shared plane x="])
    # --per-rank needs one block per rank; --region decodes in one process.
    p = run(["compress", *grid, *per, "-z", tmp_path / "x.fzmb"], np_=3, expect=None)
    one_error_line(p, 2, ["PX * PY * PZ"])
    p = run(["decompress", "-z", tmp_path / "one.fzmb", "-o", tmp_path / "a", "-o", tmp_path / "b", "-o",
             tmp_path / "c", "--region", 0, 0, 0, 2, 2, 2], np_=2, expect=None)
    one_error_line(p, 2, ["--region"])

H5MPI = os.environ.get("FACTZ_H5MPI")


@pytest.mark.skipif(not H5MPI, reason="factz_h5mpi not built")
@pytest.mark.parametrize("grid,blocks,mode,ranks", [((512, 512), (2, 2), "speculative", (1, 4)),
                                                    ((97, 61), (4, 3), "block", (2, 3))])
def test_parallel_hdf5(tmp_path, grid, blocks, mode, ranks):
    """One chunk per block through parallel HDF5 with collective writes, 1-4 ranks: the
    global field keeps every critical point (chunks keep their outer rows/columns exact),
    every rank count decodes the same values, and serial h5py with the plugin reads it."""
    nx, ny = grid
    if grid == (512, 512):
        u, v = DATA / FOAM[0], DATA / FOAM[1]
    else:
        u, v = write_field(tmp_path, "f", *synthetic(nx, ny, seed=5))  # partial edge chunks
    decoded = None
    for n in ranks:
        h5 = tmp_path / f"f{n}.h5"
        cmd = [MPIRUN, "--oversubscribe", "-np", str(n), H5MPI]
        strs = lambda xs: [str(x) for x in xs]
        w = subprocess.run(cmd + strs(["write", nx, ny, u, v, h5, *blocks, mode, "REL", "1e-2"]), capture_output=True,
                           text=True, timeout=TIMEOUT)
        assert w.returncode == 0, w.stderr
        s = dict(kv.split("=", 1) for kv in w.stdout.split())
        du, dv = tmp_path / f"u{n}.f32", tmp_path / f"v{n}.f32"
        rd = [MPIRUN, "--oversubscribe", "-np", str(5 - n), H5MPI]  # read with another rank count
        r = subprocess.run(rd + strs(["read", h5, du, dv]), capture_output=True, text=True, timeout=TIMEOUT)
        assert r.returncode == 0, r.stderr
        if n in (ranks[0], ranks[-1]):  # the exact extractor on the whole field
            g = global_verify(nx, ny, (u, v), (du, dv))
            assert g["violations"] == "0", g
            eb = float(s["eb_abs"])
            assert float(g["max_abs_error_u"]) <= eb and float(g["max_abs_error_v"]) <= eb
        this = (du.read_bytes(), dv.read_bytes())
        if decoded is None:
            decoded = this
        assert this == decoded, f"{n} ranks decode differently"
    try:
        import h5py
    except ImportError:
        return
    if not os.environ.get("HDF5_PLUGIN_PATH"):
        return
    with h5py.File(tmp_path / f"f{ranks[-1]}.h5", "r") as f:
        a = f["uv"][...]
        assert list(f["uv"]._filters.values())[0][-1] == 15  # the exact-edge cd_value
    assert np.array_equal(a[0], read_plane(tmp_path / f"u{ranks[0]}.f32", nx, ny))
    assert np.array_equal(a[1], read_plane(tmp_path / f"v{ranks[0]}.f32", nx, ny))


@pytest.mark.skipif(not H5MPI or not os.environ.get("HDF5_PLUGIN_PATH"), reason="needs factz_h5mpi and the plugin")
def test_exact_edges_cd_value_in_serial_plugin(tmp_path):
    """cd_values[5] (exact edges) in the serial plugin: honoured, validated; five values
    still write what the plugin always wrote (eight stored values)."""
    h5py = pytest.importorskip("h5py")
    import struct
    lo, hi = struct.unpack("<II", struct.pack("<d", 0.05))
    rng = np.random.default_rng(1)
    data = rng.standard_normal((2, 40, 50)).astype(np.float32)
    fid = 40410

    def write(cd):
        with h5py.File(tmp_path / "s.h5", "w") as f:
            plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            plist.set_chunk((2, 20, 25))
            plist.set_filter(fid, h5py.h5z.FLAG_MANDATORY, cd)
            sid = h5py.h5s.create_simple(data.shape)
            ds = h5py.h5d.create(f.id, b"uv", h5py.h5t.IEEE_F32LE, sid, plist)
            ds.write(h5py.h5s.ALL, h5py.h5s.ALL, data)
        with h5py.File(tmp_path / "s.h5", "r") as f:
            return f["uv"][...], list(f["uv"]._filters.values())[0]

    back, stored = write((2, 0, lo, hi, 1, 15))
    assert len(stored) == 9 and stored[8] == 15
    for c in range(2):
        for y0 in (0, 20):
            for x0 in (0, 25):
                ch, got = data[c, y0:y0 + 20, x0:x0 + 25], back[c, y0:y0 + 20, x0:x0 + 25]
                for edge in (np.s_[0, :], np.s_[-1, :], np.s_[:, 0], np.s_[:, -1]):
                    assert np.array_equal(got[edge], ch[edge])
    assert np.abs(back - data).max() <= 0.05
    back, stored = write((2, 0, lo, hi, 1))
    assert len(stored) == 8
    assert not np.array_equal(back[0, 0, :], data[0, 0, :])  # the old behaviour: edges not exact
    # Seven values declare a fill value besides (cd_values[6], float32 bits: here 0.0), which
    # set_local records after the exact edges; twelve are too many.
    back, stored = write((2, 0, lo, hi, 1, 15, 0))
    assert len(stored) == 11 and stored[8] == 15 and stored[10] == 0
    for bad in ((2, 0, lo, hi, 1, 16), (2, 0, lo, hi, 1, 15, 0, 0, 0, 0, 0, 0)):
        with pytest.raises(Exception):
            write(bad)


def skip_without_netcdf():
    """The netCDF cases need ncgen (netcdf-bin) to write their files and a factz built with netCDF-C."""
    if shutil.which("ncgen") is None:
        pytest.skip("ncgen (netcdf-bin) is not installed")
    if "netCDF-C" not in subprocess.run([FACTZ, "--version"], capture_output=True, text=True).stdout:
        pytest.skip("factz is built without netCDF")


def test_netcdf_variables_keep_their_record(tmp_path):
    """netCDF variables under mpirun: every rank count (more ranks than blocks too) writes the
    one-process file byte for byte, with the variables' source record after the last block
    (version 5); decoded in one process, the variables and their curvilinear grid come back."""
    skip_without_netcdf()
    import h5py
    nx, ny = 41, 30
    u, v = synthetic(nx, ny, seed=21)
    yy, xx = np.mgrid[0:ny, 0:nx]
    lat = 60.0 + 0.1 * yy + 0.001 * xx * yy
    lon = -10.0 + 0.2 * xx - 0.003 * yy
    nums = lambda a: ", ".join(repr(float(x)) for x in np.asarray(a).ravel())
    top = float(np.sort(u.ravel())[-5])  # U's 4 largest values lie above its valid_max: missing data
    cdl = (f"netcdf g {{\ndimensions:\n  y = {ny} ;\n  x = {nx} ;\nvariables:\n"
           "  float U(y, x) ;\n    U:coordinates = \"lat lon\" ;\n    U:units = \"m s-1\" ;\n"
           f"    U:valid_max = {top!r}f ;\n"
           "  float V(y, x) ;\n    V:coordinates = \"lat lon\" ;\n"
           "  double lat(y, x) ;\n  double lon(y, x) ;\n"
           f"data:\n  U = {nums(u)} ;\n  V = {nums(v)} ;\n  lat = {nums(lat)} ;\n  lon = {nums(lon)} ;\n}}\n")
    (tmp_path / "g.cdl").write_text(cdl)
    subprocess.run(["ncgen", "-k", "nc4", "-o", tmp_path / "g.nc", tmp_path / "g.cdl"], check=True)
    common = ["compress", "-i", f"{tmp_path}/g.nc:U", "-i", f"{tmp_path}/g.nc:V", "--blocks", 3, 2,
              "-M", "REL", "1e-2", "--keep-coordinates"]
    # The reader's notes (the valid range's) come once, however many blocks and ranks read U.
    note = "g.nc:U: 4 value(s) outside its valid_max"
    p = run(common + ["-z", tmp_path / "one.fzmb"])
    assert p.stderr.count(note) == 1, p.stderr
    ref = (tmp_path / "one.fzmb").read_bytes()
    assert ref[4] == 5, "a file with a source record is version 5"
    for n in (2, 3, 7):
        p = run(common + ["-z", tmp_path / f"n{n}.fzmb"], np_=n)
        assert (tmp_path / f"n{n}.fzmb").read_bytes() == ref, f"{n} ranks wrote a different file"
        assert p.stderr.count(note) == 1, p.stderr
    run(["decompress", "-z", tmp_path / "one.fzmb", "-o", f"{tmp_path}/d.nc:U", "-o", f"{tmp_path}/d.nc:V"])
    with h5py.File(tmp_path / "d.nc") as d:
        assert np.array_equal(d["lat"][()], lat) and np.array_equal(d["lon"][()], lon)
        assert d["U"].attrs["units"] == b"m s-1"
    # verify of variables block by block (each rank reads each variable once for its blocks):
    # the counts of the one-process comparison, for every rank count.
    vargs = ["verify", "-i", f"{tmp_path}/g.nc:U", "-i", f"{tmp_path}/g.nc:V", "-d", f"{tmp_path}/d.nc:U", "-d",
             f"{tmp_path}/d.nc:V", "--blocks", 3, 2]
    counts = ("cp_original", "cp_decompressed", "violations", "masked_vertices", "max_abs_error_u")
    one = stats(run(vargs).stdout)
    assert one["violations"] == "0" and one["masked_vertices"] == "4", one
    for n in (2, 3):
        got = stats(run(vargs, np_=n).stdout)
        assert all(got[k] == one[k] for k in counts), (n, got, one)
    # Under mpirun the outputs are raw planes, and --repack (netCDF outputs) is refused.
    run(["decompress", "-z", tmp_path / "one.fzmb", "-o", tmp_path / "u.f32", "-o", tmp_path / "v.f32"], np_=2)
    one_error_line(run(["decompress", "-z", tmp_path / "one.fzmb", "-o", tmp_path / "u.f32", "-o",
                        tmp_path / "v.f32", "--repack"], np_=2, expect=None), 2, ["--repack writes netCDF"])
    # A 3D field's variables under mpirun: each rank reads the planes of its blocks; the file is
    # the one-process file (source record included) for every rank count, more ranks than blocks
    # too; a _FillValue, a valid range's values outside it (counted once) and verify's counts.
    z, y, x = np.mgrid[0:9, 0:14, 0:17].astype(np.float32)
    w3 = [np.sin(0.4 * x + 0.1 * z) * np.cos(0.3 * y), np.cos(0.35 * y - 0.2 * z) * np.sin(0.25 * x),
          np.sin(0.3 * z + 0.05 * x * y / 10)]
    w3[0][0, 0, 0] = w3[0][8, 13, 16] = -999
    w3[1][4, 5, 6] = 7
    w3[2][8, 0, 0] = 9
    (tmp_path / "w.cdl").write_text(
        "netcdf w {\ndimensions:\n  lev = 9 ;\n  lat = 14 ;\n  lon = 17 ;\nvariables:\n  double lev(lev) ;\n"
        "  float U(lev, lat, lon) ;\n    U:_FillValue = -999.f ;\n    U:units = \"m s-1\" ;\n"
        "  float V(lev, lat, lon) ;\n    V:valid_max = 2.f ;\n  float W(lev, lat, lon) ;\n    W:valid_range = -2.f, 2.f ;\n"
        f"data:\n  lev = {nums(np.arange(9) * 100.0)} ;\n  U = {nums(w3[0])} ;\n  V = {nums(w3[1])} ;\n"
        f"  W = {nums(w3[2])} ;\n}}\n")
    subprocess.run(["ncgen", "-k", "nc4", "-o", tmp_path / "w.nc", tmp_path / "w.cdl"], check=True)
    args3 = ["-3", 17, 14, 9] + [a for c in "UVW" for a in ("-i", f"{tmp_path}/w.nc:{c}")] + ["--blocks", 2, 2, 3]
    p = run(["compress"] + args3 + ["-z", tmp_path / "w1.fzmb"])
    ref = (tmp_path / "w1.fzmb").read_bytes()
    assert ref[4] == 7, "a 3D file with a source record is version 7"
    for n in (2, 3, 13):  # 13 ranks, 12 blocks: rank 0 reads no block and still gives the notes
        q = run(["compress"] + args3 + ["-z", tmp_path / f"w{n}.fzmb"], np_=n)
        assert (tmp_path / f"w{n}.fzmb").read_bytes() == ref, f"{n} ranks wrote a different 3D file"
        for c, what in (("V", "1 value(s) outside its valid_max"), ("W", "1 value(s) outside its valid_range")):
            assert q.stderr.count(f"w.nc:{c}: {what}") == 1, q.stderr
    run(["decompress", "-z", tmp_path / "w2.fzmb"] + [a for c in "UVW" for a in ("-o", f"{tmp_path}/wd.nc:{c}")])
    with h5py.File(tmp_path / "wd.nc") as d:
        assert d["U"].attrs["units"] == b"m s-1" and np.array_equal(d["lev"][()], np.arange(9) * 100.0)
    vargs3 = ["verify"] + args3 + [a for c in "UVW" for a in ("-d", f"{tmp_path}/wd.nc:{c}")]
    one = stats(run(vargs3).stdout)
    assert one["masked_vertices"] == "4" and one["violations"] == "0", one
    for n in (2, 3):
        got = stats(run(vargs3, np_=n).stdout)
        assert all(got[k] == one[k] for k in ("masked_vertices", "violations", "max_abs_error_w")), (n, got, one)
    # --per-rank takes raw or .npy files per block, not variables: said as such (the per-rank
    # pattern itself, w%r.nc, is no file).
    for r in (0, 1):
        shutil.copyfile(tmp_path / "w.nc", tmp_path / f"w{r}.nc")
    one_error_line(run(["compress", "-3", 17, 14, 9] + [a for c in "UVW" for a in ("-i", f"{tmp_path}/w%r.nc:{c}")] +
                       ["-z", tmp_path / "w.fzmb", "--blocks", 2, 1, 1, "--per-rank"], np_=2, expect=None), 2,
                   ["with --per-rank a 3D field's components are raw or .npy files"])
def test_ranks_read_only_their_rows(tmp_path):
    """Under mpirun each rank reads only the rows of its blocks of a netCDF / HDF5 variable or a
    .npy file, its dtype spelled '<f4' or '=f4' (input_values_max, the largest rank's values in memory, about half the field's
    for two ranks of four row bands, where every rank read the whole field before) and writes
    the one-process file byte for byte. What the readers found is merged over the ranks: the
    note counts every rank's values outside the valid range once, more than 64 distinct ones
    fail as in one process although no rank alone holds as many, a packed variable's note on
    the bound is the one-process note, and verify --blocks counts the one-process masks."""
    skip_without_netcdf()
    import h5py
    nx, ny = 64, 48
    u, v = synthetic(nx, ny, seed=33)
    # Values above U's valid_max in the first and the last rows: ranks of different rows find them.
    top = float(u.max()) + 1
    for k, (y, x) in enumerate([(1, 5), (2, 9), (45, 7), (47, 30), (46, 60)]):
        u[y, x] = top + 1 + k
    nums = lambda a: ", ".join(repr(float(x)) for x in np.asarray(a).ravel())
    packed = np.round((v + 3) / 0.001).astype(np.int16)  # V packed: int16 of step 0.001, offset -3

    def cdl(uu, name):
        return (f"netcdf {name} {{\ndimensions:\n  y = {ny} ;\n  x = {nx} ;\nvariables:\n"
                f"  float U(y, x) ;\n    U:valid_max = {top!r}f ;\n    U:_Storage = \"chunked\" ;\n"
                "    U:_ChunkSizes = 8, 16 ;\n    U:_DeflateLevel = 4 ;\n"
                "  short V(y, x) ;\n    V:scale_factor = 0.001f ;\n    V:add_offset = -3.f ;\n"
                f"data:\n  U = {nums(uu)} ;\n  V = {', '.join(str(int(x)) for x in packed.ravel())} ;\n}}\n")

    (tmp_path / "f.cdl").write_text(cdl(u, "f"))
    subprocess.run(["ncgen", "-k", "nc4", "-o", tmp_path / "f.nc", tmp_path / "f.cdl"], check=True)
    with h5py.File(tmp_path / "f.h5", "w") as h:  # HDF5 datasets, chunked and deflated, with a fill value
        uh = u.copy()
        uh[20, 20] = -999.0
        h.create_dataset("u", data=uh, chunks=(8, 16), compression="gzip", fillvalue=np.float32(-999.0))
        h.create_dataset("v", data=v, chunks=(8, 16), compression="gzip")
    np.save(tmp_path / "u.npy", u)
    np.save(tmp_path / "v.npy", v)
    np.save(tmp_path / "u64.npy", u.astype("<f8") / 3)
    np.save(tmp_path / "v64.npy", v.astype("<f8") / 3)
    # The same planes with the header's dtype spelled '=f4' (native order, little-endian here), which
    # NumPy never writes but other writers do: read by rows as '<f4' is.
    for c in "uv":
        data = (tmp_path / f"{c}.npy").read_bytes()
        assert data.count(b"'<f4'") == 1
        (tmp_path / f"{c}_native.npy").write_bytes(data.replace(b"'<f4'", b"'=f4'"))
    # Packed variables taller than one slab of unpacking (2^20 values: 16384 rows of 64), read
    # through netCDF-C (.nc) and the HDF5 library (.h5); and float64 variables.
    tall = 16500
    yy, xx = np.mgrid[0:tall, 0:nx]
    with h5py.File(tmp_path / "tall.h5", "w") as h:
        for name, a in (("p", np.sin(xx / 9.0) * np.cos(yy / 700.0)), ("q", np.cos(xx / 7.0 + yy / 900.0))):
            d = h.create_dataset(name, data=np.round(a / 1e-4).astype(np.int16), chunks=(512, 64), compression="gzip")
            d.attrs["scale_factor"] = np.float32(1e-4)
    shutil.copyfile(tmp_path / "tall.h5", tmp_path / "tall.nc")
    (tmp_path / "f64.cdl").write_text(
        f"netcdf f64 {{\ndimensions:\n  y = {ny} ;\n  x = {nx} ;\nvariables:\n  double U(y, x) ;\n  double V(y, x) ;\n"
        f"data:\n  U = {nums(u.astype(np.float64) / 3)} ;\n  V = {nums(v.astype(np.float64) / 3)} ;\n}}\n")
    subprocess.run(["ncgen", "-k", "nc4", "-o", tmp_path / "f64.nc", tmp_path / "f64.cdl"], check=True)
    blocks = ["--blocks", 2, 4]  # four row bands: two ranks read about half of the rows each
    inputs = {"netcdf": [f"{tmp_path}/f.nc:U", f"{tmp_path}/f.nc:V"],
              "hdf5": [f"{tmp_path}/f.h5:/u", f"{tmp_path}/f.h5:/v"],
              "npy": [tmp_path / "u.npy", tmp_path / "v.npy"],
              "npy64": [tmp_path / "u64.npy", tmp_path / "v64.npy"],
              "npy-native": [tmp_path / "u_native.npy", tmp_path / "v_native.npy"],
              "float64": [f"{tmp_path}/f64.nc:U", f"{tmp_path}/f64.nc:V"],
              "tall-netcdf": [f"{tmp_path}/tall.nc:p", f"{tmp_path}/tall.nc:q"],
              "tall-hdf5": [f"{tmp_path}/tall.h5:/p", f"{tmp_path}/tall.h5:/q"]}
    note = "f.nc:U: 5 value(s) outside its valid_max"
    for kind, (iu, iv) in inputs.items():
        rows = tall if kind.startswith("tall") else ny
        common = ["compress", "-i", iu, "-i", iv, "-M", "ABS", "2e-4", "--json"] + blocks
        one = run(common + ["-z", tmp_path / f"{kind}1.fzmb"], np_=1)  # one rank reads every row
        ref = (tmp_path / f"{kind}1.fzmb").read_bytes()
        if kind == "npy-native":  # the same values as the '<f4' pair, so the same file
            assert ref == (tmp_path / "npy1.fzmb").read_bytes()
        whole = json.loads(one.stdout)["input_values_max"]
        # A variable's rows are read once; a .npy file's as a raw file's, block by block (shared lines twice).
        assert whole == 2 * nx * rows if "npy" not in kind else 2 * nx * ny < whole < 2.3 * nx * ny, (kind, whole)
        packed_notes = [l for l in one.stderr.splitlines() if "is packed with a step" in l]
        assert len(packed_notes) == (1 if kind == "netcdf" else 0), one.stderr  # (the tall ones: a bound above the step)
        for n in (2, 3):
            p = run(common + ["-z", tmp_path / f"{kind}{n}.fzmb"], np_=n)
            assert (tmp_path / f"{kind}{n}.fzmb").read_bytes() == ref, f"{kind}: {n} ranks wrote a different file"
            got = json.loads(p.stdout)["input_values_max"]
            # Two ranks: two of the four bands each (24 or 25 rows of 48, the shared row read by both blocks
            # of a .npy file's rows); three ranks: at most three bands.
            assert got <= (0.6 if n == 2 else 0.8) * whole, (kind, n, got, whole)
            if kind == "netcdf":
                assert p.stderr.count(note) == 1, p.stderr
                assert [l for l in p.stderr.splitlines() if "is packed with a step" in l] == packed_notes, p.stderr
    assert one.stderr.count(note) == 0  # the last one read was the .npy pair
    # Column strips (one band of rows): each rank reads the columns of its blocks, not the rows' width.
    for kind in ("netcdf", "hdf5", "tall-netcdf"):
        iu, iv = inputs[kind]
        strips = ["compress", "-i", iu, "-i", iv, "-M", "ABS", "2e-4", "--json", "--blocks", 4, 1]
        one = run(strips + ["-z", tmp_path / "s1.fzmb"], np_=1)
        p = run(strips + ["-z", tmp_path / "s2.fzmb"], np_=2)
        assert (tmp_path / "s2.fzmb").read_bytes() == (tmp_path / "s1.fzmb").read_bytes(), kind
        whole, got = (json.loads(x.stdout)["input_values_max"] for x in (one, p))
        assert got <= 0.6 * whole, (kind, got, whole)
    # verify --blocks: the one-process masks and counts with every rank count.
    run(["decompress", "-z", tmp_path / "netcdf1.fzmb", "-o", f"{tmp_path}/d.nc:U", "-o", f"{tmp_path}/d.nc:V"])
    vargs = ["verify", "-i", f"{tmp_path}/f.nc:U", "-i", f"{tmp_path}/f.nc:V", "-d", f"{tmp_path}/d.nc:U", "-d",
             f"{tmp_path}/d.nc:V"] + blocks
    counts = ("cp_original", "cp_decompressed", "violations", "mask_mismatch", "masked_vertices", "max_abs_error_u")
    ref_counts = stats(run(vargs).stdout)
    assert ref_counts["masked_vertices"] == "5" and ref_counts["violations"] == "0", ref_counts
    for n in (2, 3):
        p = run(vargs, np_=n)
        got = stats(p.stdout)
        assert all(got[k] == ref_counts[k] for k in counts), (n, got, ref_counts)
        assert p.stderr.count("factz verify: note: ") == 2 and "factz compress" not in p.stderr, p.stderr  # f.nc, d.nc
    # 3D .npy components are read by rows too (the one-rank file, byte for byte); a big-endian one is
    # read whole, as before, and refused by the 3D reader in one line.
    z, y, x = np.mgrid[0:12, 0:16, 0:20].astype(np.float32)
    comps = [np.sin(0.4 * x + 0.1 * z) * np.cos(0.3 * y), np.cos(0.35 * y - 0.2 * z) * np.sin(0.25 * x),
             np.sin(0.3 * z + 0.05 * x * y / 10)]
    for c, a in zip("uvw", comps):
        np.save(tmp_path / f"{c}3.npy", a.astype("<f4"))
    args3 = ["compress", "-3", 20, 16, 12] + [a for c in "uvw" for a in ("-i", tmp_path / f"{c}3.npy")] + \
        ["--blocks", 2, 2, 2, "-M", "REL", "1e-2"]
    run(args3 + ["-z", tmp_path / "t1.fzmb"], np_=1)
    for n in (2, 3):
        run(args3 + ["-z", tmp_path / f"t{n}.fzmb"], np_=n)
        assert (tmp_path / f"t{n}.fzmb").read_bytes() == (tmp_path / "t1.fzmb").read_bytes(), n
    np.save(tmp_path / "w3.npy", comps[2].astype(">f4"))
    one_error_line(run(args3 + ["-z", tmp_path / "tb.fzmb"], np_=2, expect=None), 1, ["w3.npy", "'<f4'"])
    # 70 distinct values outside the valid range, 35 in the first rows and 35 in the last: no rank of
    # two holds more than 64, but the field does, and every run fails as one process does.
    many = u.copy()
    for k in range(35):
        many[0, k] = top + 10 + k
        many[47, k] = top + 50 + k
    (tmp_path / "m.cdl").write_text(cdl(many, "m"))
    subprocess.run(["ncgen", "-k", "nc4", "-o", tmp_path / "m.nc", tmp_path / "m.cdl"], check=True)
    margs = ["compress", "-i", f"{tmp_path}/m.nc:U", "-i", f"{tmp_path}/m.nc:V", "-z", tmp_path / "m.fzmb"] + blocks
    words = ["74 values lie outside its valid_max", "more than 64 distinct values"]  # (47, 30) was one already
    one_error_line(run(margs, expect=None), 1, words)
    for n in (2, 3):
        one_error_line(run(margs, np_=n, expect=None), 1, words)


def test_a_full_disk_is_an_error(tmp_path):
    """A write that the disk refuses is an error that leaves no file, not a success that leaves a
    file with holes. OpenMPI's MPI-IO reports ENOSPC on stderr only: a contiguous collective
    write returns fewer bytes (checked on /dev/full, which refuses every byte), and an
    aggregated write of non-contiguous rows counts every byte as written, which only a read
    back of a file with unallocated blocks shows. The holes are checked on a 64 KiB tmpfs,
    when this machine lets the test mount one (root), with factz_h5mpi (whose failed close
    crashed in MPI_Finalize) and the one-process netCDF writer's message there too."""
    nx, ny = 200, 150
    u, v = write_field(tmp_path, "f", *synthetic(nx, ny, seed=9))
    args = ["compress", "-2", nx, ny, "-i", u, "-i", v, "--blocks", 2, 2, "-M", "ABS", "1e-6"]
    one_error_line(run(args + ["-z", "/dev/full"], np_=2, expect=None), 1,
                   ["cannot write /dev/full", "bytes written", "is the disk full?"])
    run(args + ["-z", tmp_path / "m.fzmb"])
    assert (tmp_path / "m.fzmb").stat().st_size > 65536, "more than the small disk holds"
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", small], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (not root?): the holes are not checked "
                    f"({mounted.stderr.decode().strip()})")
    try:
        p = run(args + ["-z", small / "m.fzmb"], np_=2, expect=None)
        one_error_line(p, 1, ["m.fzmb", "is the disk full?"])
        p = run(["decompress", "-z", tmp_path / "m.fzmb", "-o", small / "u.f32", "-o", small / "v.f32"], np_=2,
                expect=None)
        one_error_line(p, 1, ["u.f32", "does not hold what was written", "is the disk full?"])
        p = run(["decompress", "-z", tmp_path / "m.fzmb", "-o", f"{small}/d.nc:u", "-o", f"{small}/d.nc:v"],
                expect=None)
        assert p.returncode == 1 and "d.nc" in p.stderr and "bytes free" in p.stderr, p.stderr
        if H5MPI:
            p = subprocess.run([MPIRUN, "--oversubscribe", "-np", "2", H5MPI, "write", str(nx), str(ny), str(u), str(v),
                                str(small / "o.h5"), "2", "2", "speculative", "ABS", "1e-6"],
                               capture_output=True, text=True, timeout=TIMEOUT)
            assert p.returncode == 1 and "cannot write" in p.stderr and "is the disk full?" in p.stderr, p.stderr
            assert "Segmentation fault" not in p.stderr, p.stderr
        assert sorted(x.name for x in small.iterdir()) == [], "no partial file, no temporary"
    finally:
        subprocess.run(["umount", small], capture_output=True)
