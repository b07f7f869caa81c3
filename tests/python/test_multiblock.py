"""Multi-block files from Python: compress_multiblock (the bytes of `factz compress --blocks`),
decompress_multiblock, decompress_region (only the blocks it needs), masks in and out, and
float64 files (float64 planes in and out)."""

import json
import subprocess

import numpy as np
import pytest

import factz
from factz import _factz
from conftest import analytic


def test_multiblock_round_trip_keeps_every_critical_point():
    u, v = analytic(97, 61)
    buf = factz.compress_multiblock(u, v, blocks=(3, 2), mode="speculative", eb=1e-2)
    u2, v2 = factz.decompress_multiblock(buf)
    rep = factz.verify(u, v, u2, v2)
    assert rep["cp_original"] > 20 and rep["violations"] == 0
    assert max(rep["max_abs_error"]) <= 1e-2 * rep["value_range"]
    info = factz.info(buf)
    assert info["kind"] == "multiblock" and info["blocks"] == (3, 2) and info["shape"] == (61, 97)
    assert len(info["block_streams"]) == 6 and all(b["kind"] == "vector" for b in info["block_streams"])


def test_multiblock_bytes_are_those_of_the_cli(tmp_path, cli):
    u, v = analytic(97, 61)
    u.tofile(tmp_path / "u.f32")
    v.tofile(tmp_path / "v.f32")
    subprocess.run([cli, "compress", "-2", "97", "61", "-i", tmp_path / "u.f32", "-i", tmp_path / "v.f32",
                    "-z", tmp_path / "m.fzmb", "--blocks", "3", "2", "--mode", "block"], check=True,
                   capture_output=True)
    assert (tmp_path / "m.fzmb").read_bytes() == factz.compress_multiblock(u, v, blocks=(3, 2), mode="block")


def test_region_reads_only_the_blocks_it_needs(tmp_path):
    u, v = analytic(97, 61)
    buf = factz.compress_multiblock(u, v, blocks=(4, 3))
    (tmp_path / "m.fzmb").write_bytes(buf)
    whole_u, whole_v = factz.decompress_multiblock(buf)
    ru, rv, stats = factz.decompress_region(tmp_path / "m.fzmb", (3, 2, 20, 15), stats=True)
    assert ru.shape == (13, 17)
    assert np.array_equal(ru, whole_u[2:15, 3:20]) and np.array_equal(rv, whole_v[2:15, 3:20])
    assert stats["blocks_decoded"] == 1 and stats["bytes_read"] < len(buf) / 4
    ru, rv = factz.decompress_region(str(tmp_path / "m.fzmb"), (0, 0, 97, 61))
    assert np.array_equal(ru, whole_u)
    with pytest.raises(ValueError):
        factz.decompress_region(tmp_path / "m.fzmb", (0, 0, 98, 61))
    with pytest.raises(ValueError, match="region"):
        factz.decompress_region(tmp_path / "m.fzmb", (0, 0, 5))


def test_masks_come_back_from_files_and_regions(tmp_path):
    u, v = analytic(97, 61)
    land = np.zeros(u.shape, bool)
    land[20:40, 30:60] = True
    buf = factz.compress_multiblock(np.ma.MaskedArray(u, mask=land), v, blocks=(2, 2))
    assert buf == factz.compress_multiblock(u, v, blocks=(2, 2), mask=land)
    mu, mv = factz.decompress_multiblock(buf, masked=True)
    assert np.array_equal(mu.mask, land) and np.array_equal(mv.mask, land)
    (tmp_path / "m.fzmb").write_bytes(buf)
    ru, rv = factz.decompress_region(tmp_path / "m.fzmb", (25, 15, 70, 50), masked=True)
    assert np.array_equal(ru.mask, land[15:50, 25:70])
    assert factz.verify(np.ma.MaskedArray(u, mask=land), v, mu, mv)["violations"] == 0


def test_wrong_kinds_of_streams_are_named():
    u, v = analytic(40, 30)
    with pytest.raises(ValueError, match="multi-block file.*decompress_multiblock"):
        factz.decompress(factz.compress_multiblock(u, v, blocks=(2, 1)))
    with pytest.raises(ValueError, match="single vector stream.*factz.decompress"):
        factz.decompress_multiblock(factz.compress(u, v))
    with pytest.raises(ValueError, match="blocks"):
        factz.compress_multiblock(u, v, blocks=2)
    with pytest.raises(ValueError, match="corrupt_stream"):
        factz.decompress_multiblock(factz.compress_multiblock(u, v, blocks=(2, 1))[:-3])


def analytic64(nx=97, ny=61):
    """The analytic field in double plus detail of 1e-10, below float32's spacing of the
    values (6e-8 near 0.5): rounded to float32 it is another field."""
    y, x = np.mgrid[0:ny, 0:nx].astype(np.float64)
    u = np.sin(0.21 * x) * np.cos(0.17 * y) + 1e-10 * np.sin(7.1 * x + 3.3 * y)
    v = -np.cos(0.21 * x) * np.sin(0.17 * y) + 0.1 + 1e-10 * np.cos(5.3 * x - 2.9 * y)
    return u, v


def test_float64_planes_give_a_float64_file_and_come_back_as_float64(tmp_path, cli):
    """float64 in, float64 out, never through float32: a bound of 1e-9 (below float32's
    spacing of the values) is met in double, the shared rows and columns keep all 64 bits, the
    critical points of the float64 mesh are kept (`factz verify` on '<f8' .npy), regions are
    windows of the whole decode, the bytes do not depend on the threads, and the CLI writes
    the same file from raw float64 input."""
    u, v = analytic64()
    ny, nx = u.shape
    eb = 1e-9
    for mode in ("none", "block", "speculative"):
        buf = factz.compress_multiblock(u, v, blocks=(3, 2), mode=mode, eb=eb, bound="abs")
        assert buf[4] == 2 and buf[7] == 2, "a float64 file: version 2, data type 2"
        assert _factz.multiblock_index(buf)["dtype"] == "float64"
        assert factz.compress_multiblock(u, v, blocks=(3, 2), mode=mode, eb=eb, bound="abs", threads=1) == buf
        assert factz.compress_multiblock(u, v, blocks=(3, 2), mode=mode, eb=eb, bound="abs", threads=2) == buf
        u2, v2 = factz.decompress_multiblock(buf)
        assert u2.dtype == np.float64 and v2.dtype == np.float64 and u2.shape == (ny, nx)
        assert np.abs(u2 - u).max() <= eb and np.abs(v2 - v).max() <= eb
        assert np.count_nonzero(u2 != u2.astype(np.float32)) > u2.size // 2, "not float32 roundings"
        for x0 in (32, 64):  # the shared columns of 3 x 2 blocks of 97 x 61
            assert np.array_equal(u2[:, x0].view(np.uint64), u[:, x0].view(np.uint64))
        assert np.array_equal(v2[30, :].view(np.uint64), v[30, :].view(np.uint64))
        (tmp_path / "m.fzmb").write_bytes(buf)
        ru, rv, stats = factz.decompress_region(tmp_path / "m.fzmb", (10, 5, 50, 40), stats=True)
        assert ru.dtype == np.float64 and np.array_equal(ru, u2[5:40, 10:50]) and np.array_equal(rv, v2[5:40, 10:50])
        assert stats["blocks_decoded"] == 4
        if mode != "none":
            for name, a in (("u", u), ("v", v), ("u2", u2), ("v2", v2)):
                np.save(tmp_path / f"{name}.npy", a)
            p = subprocess.run([cli, "verify", "-i", tmp_path / "u.npy", "-i", tmp_path / "v.npy", "-d",
                                tmp_path / "u2.npy", "-d", tmp_path / "v2.npy", "--json"], check=True,
                               capture_output=True, text=True)
            rep = json.loads(p.stdout)
            assert rep["cp_original"] > 20 and rep["violations"] == 0, rep
    u.tofile(tmp_path / "u.f64")
    v.tofile(tmp_path / "v.f64")
    subprocess.run([cli, "compress", "-2", str(nx), str(ny), "--dtype", "f64", "-i", tmp_path / "u.f64", "-i",
                    tmp_path / "v.f64", "-z", tmp_path / "c.fzmb", "--blocks", "3", "2", "--mode", "block", "-M", "ABS",
                    "1e-9"], check=True, capture_output=True)
    assert (tmp_path / "c.fzmb").read_bytes() == factz.compress_multiblock(u, v, blocks=(3, 2), mode="block", eb=eb,
                                                                           bound="abs")


def test_float64_masks_and_dtype_rules():
    u, v = analytic64(60, 40)
    land = np.zeros(u.shape, bool)
    land[10:20, 15:40] = True
    u = u.copy()
    u[land] = 9.969209968386869e36  # a double fill value under the mask keeps its 64 bits
    buf = factz.compress_multiblock(np.ma.MaskedArray(u, mask=land), v, blocks=(2, 2), eb=1e-9, bound="abs")
    mu, mv = factz.decompress_multiblock(buf, masked=True)
    assert mu.dtype == np.float64 and np.array_equal(mu.mask, land) and np.array_equal(mv.mask, land)
    assert np.array_equal(mu.data[land], u[land])
    assert buf == factz.compress_multiblock(u, v, blocks=(2, 2), eb=1e-9, bound="abs", fill_value=(9.969209968386869e36, None))
    with pytest.raises(ValueError, match="dtype"):
        factz.compress_multiblock(u.astype(np.float32), v, blocks=(2, 2))
    # A float32 file stays float32.
    u32, v32 = analytic(40, 30)
    buf32 = factz.compress_multiblock(u32, v32, blocks=(2, 1))
    assert buf32[4] == 1 and buf32[7] == 0
    assert factz.decompress_multiblock(buf32)[0].dtype == np.float32
