"""Multi-block files from Python: compress_multiblock (the bytes of `factz compress --blocks`),
decompress_multiblock, decompress_region (only the blocks it needs), masks in and out."""

import subprocess

import numpy as np
import pytest

import factz
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
