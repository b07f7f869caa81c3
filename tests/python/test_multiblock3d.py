"""3D multi-block files from Python: compress_multiblock3d (the bytes of `factz compress -3 ...
--blocks PX PY PZ`), decompress_multiblock3d and decompress_region3d, float32 (version 3) and
float64 (version 4) volumes in and out, shared planes exact, masks kept, bad input refused."""

import subprocess

import numpy as np
import pytest

import factz
from factz.multiblock import compress_multiblock3d, decompress_multiblock3d, decompress_region3d


def flow3d(nx=14, ny=12, nz=11, dtype=np.float32):
    z, y, x = np.meshgrid(np.linspace(0, 2 * np.pi, nz), np.linspace(0, 2 * np.pi, ny), np.linspace(0, 2 * np.pi, nx),
                          indexing="ij")
    u = np.sin(z) + np.cos(y) + 0.1 * np.sin(3 * x)
    v = np.sin(x) + np.cos(z) + 0.1 * np.cos(2 * y)
    w = np.sin(y) + np.cos(x) + 0.1 * np.sin(2 * z)
    if dtype == np.float64:  # detail below float32 precision: a float32 shortcut would lose it
        u = u + 2.0 ** -35 * np.cos(7 * x)
    return tuple(np.ascontiguousarray(c, dtype=dtype) for c in (u, v, w))


def bits(a):
    """The values' bit patterns (NaN payloads and signed zeros compared exactly)."""
    return np.ascontiguousarray(a).view(np.uint64 if a.dtype == np.float64 else np.uint32)


def shared_planes(n, p):
    """The vertex indices along one axis where blocks of make_block_layout3d meet."""
    cells, base, extra = n - 1, (n - 1) // p, (n - 1) % p
    at, out = 0, []
    for i in range(p - 1):
        at += base + (1 if i < extra else 0)
        out.append(at)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_trip_bound_shared_planes_and_version(dtype):
    u, v, w = flow3d(dtype=dtype)
    buf, st = compress_multiblock3d(u, v, w, blocks=(2, 2, 2), mode="block", eb=1e-2, stats=True)
    assert buf[:4] == b"FZMB" and buf[4] == (4 if dtype == np.float64 else 3)
    u2, v2, w2 = decompress_multiblock3d(buf)
    assert u2.dtype == dtype and u2.shape == u.shape
    for a, b in ((u, u2), (v, v2), (w, w2)):
        assert np.all(np.abs(a.astype(np.float64) - b.astype(np.float64)) <= st["eb_abs"])
        for x in shared_planes(14, 2):
            assert np.array_equal(bits(a[:, :, x]), bits(b[:, :, x]))
        for z in shared_planes(11, 2):
            assert np.array_equal(bits(a[z]), bits(b[z]))
    if dtype == np.float32:  # the exact 3D extractor over the whole reassembled field
        rep = factz.verify3d(u, v, w, u2, v2, w2)
        assert rep["cp_original"] > 0 and rep["violations"] == 0


def test_bytes_are_those_of_the_cli_for_float64(tmp_path, cli):
    u, v, w = flow3d(dtype=np.float64)
    for name, c in zip("uvw", (u, v, w)):
        c.tofile(tmp_path / f"{name}.f64")
    subprocess.run([cli, "compress", "-3", "14", "12", "11", "-i", tmp_path / "u.f64", "-i", tmp_path / "v.f64",
                    "-i", tmp_path / "w.f64", "--dtype", "f64", "-z", tmp_path / "m.fzmb", "--blocks", "2", "1", "3",
                    "--mode", "block"], check=True, capture_output=True)
    buf = compress_multiblock3d(u, v, w, blocks=(2, 1, 3), mode="block")
    assert (tmp_path / "m.fzmb").read_bytes() == buf
    assert compress_multiblock3d(u, v, w, blocks=(2, 1, 3), mode="block", threads=1) == buf


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_region_is_the_window_of_the_whole_decode(tmp_path, dtype):
    u, v, w = flow3d(dtype=dtype)
    path = tmp_path / "m.fzmb"
    path.write_bytes(compress_multiblock3d(u, v, w, blocks=(3, 2, 2), mode="speculative"))
    whole = decompress_multiblock3d(path.read_bytes())
    ru, rv, rw, st = decompress_region3d(path, (2, 3, 1, 9, 7, 5), stats=True)
    assert ru.shape == (4, 4, 7) and ru.dtype == dtype
    for part, full in zip((ru, rv, rw), whole):
        assert np.array_equal(bits(part), bits(full[1:5, 3:7, 2:9]))
    assert st["blocks_decoded"] >= 1 and st["bytes_read"] <= path.stat().st_size
    one = decompress_region3d(path, (0, 0, 0, 2, 2, 2), stats=True)[3]
    assert one["blocks_decoded"] == 1 and one["bytes_read"] < path.stat().st_size
    with pytest.raises(ValueError, match="outside"):
        decompress_region3d(path, (0, 0, 0, 15, 1, 1))
    with pytest.raises(ValueError, match="region must be"):
        decompress_region3d(path, (0, 0, 1, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_masked_and_nan_vertices_come_back_bit_for_bit(dtype):
    u, v, w = flow3d(dtype=dtype)
    mask = np.zeros(u.shape, dtype=bool)
    mask[5, 6, 7] = True  # on the shared planes z = 5, y = ... of a 2 x 2 x 2 layout
    u[5, 6, 7] = -999.0
    v[2, 3, 4] = np.nan
    buf = compress_multiblock3d(u, v, w, blocks=(2, 2, 2), mask=mask)
    u2, v2, w2 = decompress_multiblock3d(buf, masked=True)
    assert isinstance(u2, np.ma.MaskedArray)
    assert u2.mask[5, 6, 7] and u2.mask[2, 3, 4] and int(u2.mask.sum()) == 2
    assert np.ma.getdata(u2)[5, 6, 7] == -999.0
    assert np.isnan(np.ma.getdata(v2)[2, 3, 4])
    # fill_value declares missing values as in 2D.
    u3, _, _ = decompress_multiblock3d(compress_multiblock3d(u, v, w, blocks=(1, 2, 1), fill_value=-999.0),
                                       masked=True)
    assert u3.mask[5, 6, 7] and np.ma.getdata(u3)[5, 6, 7] == -999.0


def test_bad_input_is_refused():
    u, v, w = flow3d()
    with pytest.raises(ValueError, match="PX = 14"):
        compress_multiblock3d(u, v, w, blocks=(14, 1, 1))
    with pytest.raises(ValueError, match="triple"):
        compress_multiblock3d(u, v, w, blocks=(2, 2))
    with pytest.raises(ValueError, match="same dtype|float64|float32"):
        compress_multiblock3d(u, v, w.astype(np.float64), blocks=(2, 2, 2))
    with pytest.raises(ValueError):
        compress_multiblock3d(u[0], v[0], w[0], blocks=(1, 1, 1))
    two_d = factz.compress_multiblock(u[0], v[0], blocks=(2, 2))
    with pytest.raises(ValueError, match="2D multi-block file"):
        decompress_multiblock3d(two_d)
    with pytest.raises(ValueError):
        decompress_multiblock3d(b"FZMB" + bytes(100))
    # A 3D file to the 2D decoder names the 3D one.
    with pytest.raises(ValueError, match="decompress_multiblock3d"):
        factz.decompress_multiblock(compress_multiblock3d(u, v, w, blocks=(1, 1, 2)))
    u64, v64, w64 = flow3d(dtype=np.float64)
    with pytest.raises(ValueError, match="decompress_multiblock3d64"):
        factz.decompress_multiblock(compress_multiblock3d(u64, v64, w64, blocks=(1, 1, 2)))


def test_volumes_are_read_as_compress3d_reads_them():
    """compress_multiblock3d and compress3d share one reader of (u, v, w) (bindings.hpp:
    field3d_of): the same input is refused with the same message by both."""
    u, v, w = flow3d()
    bad = [((u, v, w[:, :, :-1]), {}),                       # shapes differ
           ((u, v.astype(np.float64), w), {}),               # dtypes differ
           ((u, v, np.asfortranarray(w)), {}),               # not C-contiguous
           ((u, v, w), {"mask": np.zeros((2, 2, 2), bool)}),  # mask of another shape
           ((u, v, w), {"fill_value": 1e300})]               # beyond the float32 range
    for planes, kw in bad:
        with pytest.raises(ValueError) as one:
            factz.compress3d(*planes, **kw)
        with pytest.raises(ValueError) as blocks:
            compress_multiblock3d(*planes, blocks=(2, 1, 1), **kw)
        assert str(blocks.value) == str(one.value)
    # A float64 volume with NaN declared as its fill value: NaN is always missing, nothing more.
    u64, v64, w64 = flow3d(dtype=np.float64)
    assert compress_multiblock3d(u64, v64, w64, blocks=(1, 2, 1), fill_value=np.nan) == \
        compress_multiblock3d(u64, v64, w64, blocks=(1, 2, 1))
