"""factz.info describes every stream and file factz writes (vector, scalar, multi-block,
flow streams and bases: test_flow.py), from bytes or a path, as `factz info` does."""

import numpy as np
import pytest

import factz
from conftest import analytic


def test_vector_stream_info():
    u, v = analytic(97, 61)
    buf = factz.compress(u, v, mode="block", eb=0.05, bound="abs", coder="huffman", zstd=False)
    info = factz.info(buf)
    assert info["kind"] == "vector" and info["bytes"] == len(buf)
    assert (info["shape"], info["nx"], info["ny"], info["components"]) == ((61, 97), 97, 61, 2)
    assert (info["mode"], info["coder"], info["bound"], info["eb"]) == ("block", "huffman", "abs", 0.05)
    assert info["eb_abs"] == pytest.approx(0.05) and not info["zstd"] and not info["masked"]
    assert info["version"] == factz.info(buf)["version"] == 18 and info["source"] is None
    assert info["container"] == "compact" and info["layout_version"] == 2  # block mode, no mask, no source
    assert sum(s["stored_bytes"] for s in info["sections"]) < len(buf)
    assert {"meta", "codes_u", "codes_v"} <= {s["name"] for s in info["sections"]}
    assert all(s["shuffle"] == 0 for s in info["sections"])  # no zstd stage, nothing shuffled
    land = np.zeros(u.shape, bool)
    land[:5] = True
    assert factz.info(factz.compress(u, v, mask=land))["masked"]


def test_info_of_a_path_and_of_scalar_streams(tmp_path):
    u, v = analytic(40, 30)
    (tmp_path / "a.fz").write_bytes(factz.compress(u, v))
    assert factz.info(tmp_path / "a.fz")["kind"] == "vector"
    assert factz.info(str(tmp_path / "a.fz"))["mode"] == "speculative"
    if hasattr(factz._factz, "compress_scalar"):
        s = factz.info(factz.compress_scalar(u))
        assert (s["kind"], s["mode"], s["shape"], s["components"]) == ("scalar", "contour_tree", (30, 40), 1)


def test_info_refuses_what_factz_does_not_write():
    u, v = analytic(40, 30)
    buf = bytearray(factz.compress(u, v))
    with pytest.raises(ValueError, match="not a file factz writes"):
        factz.info(b"hello world")
    buf[70] ^= 1
    with pytest.raises(ValueError, match="corrupt_stream"):
        factz.info(bytes(buf))


def _volume(nx=11, ny=10, nz=9, dtype=np.float32):
    z, y, x = np.mgrid[0:nz, 0:ny, 0:nx].astype(np.float64)
    u, v, w = np.sin(0.3 * x + 0.1 * y), np.cos(0.2 * y - 0.3 * z), np.sin(0.4 * z) * np.cos(0.2 * x)
    return tuple(np.ascontiguousarray(c, dtype=dtype) for c in (u, v, w))


def _check_block_ranges(info, buf):
    """The block streams tile the file after the index, in block order, each whole."""
    at = info["header_bytes"]
    for b in info["block_streams"]:
        assert b["offset"] == at and b["bytes"] >= 64
        assert factz.info(buf[at:at + b["bytes"]])["nx"] == b["nx"]
        at += b["bytes"]
    assert at == len(buf) == info["bytes"]


def test_info_of_a_2d_multiblock_file():
    from factz.multiblock import compress_multiblock
    u, v = analytic(41, 33)
    buf = compress_multiblock(u, v, blocks=(3, 2), eb=0.02, bound="abs")
    info = factz.info(buf)
    assert (info["kind"], info["ndims"], info["dtype"], info["shape"]) == ("multiblock", 2, "float32", (33, 41))
    assert (info["nx"], info["ny"], info["blocks"], info["bound"], info["eb"]) == (41, 33, (3, 2), "abs", 0.02)
    assert "nz" not in info and len(info["block_streams"]) == 6
    first, last = info["block_streams"][0], info["block_streams"][-1]
    assert (first["x0"], first["y0"], last["x0"] + last["nx"], last["y0"] + last["ny"]) == (0, 0, 41, 33)
    assert all(b["kind"] == "vector" and b["ndims"] == 2 and b["dtype"] == "float32" for b in info["block_streams"])
    _check_block_ranges(info, buf)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_info_of_a_3d_multiblock_file(dtype):
    from factz.multiblock import compress_multiblock3d
    buf = compress_multiblock3d(*_volume(dtype=dtype), blocks=(2, 1, 3), mode="block", eb=0.01, bound="rel")
    info = factz.info(buf)
    name = np.dtype(dtype).name
    assert (info["kind"], info["ndims"], info["dtype"], info["bytes"]) == ("multiblock", 3, name, len(buf))
    assert (info["nx"], info["ny"], info["nz"], info["shape"]) == (11, 10, 9, (9, 10, 11))
    assert (info["blocks"], info["bound"], info["eb"]) == ((2, 1, 3), "rel", 0.01)
    blocks = info["block_streams"]
    assert len(blocks) == 6
    for b in blocks:
        assert (b["kind"], b["ndims"], b["components"], b["dtype"], b["mode"]) == ("vector", 3, 3, name, "block")
        assert (b["layout_version"] == 13) == (dtype == np.float64)  # version 13: every float64 3D stream
    # block b = (bz * py + by) * px + bx; neighbours share one vertex plane
    assert [(b["x0"], b["y0"], b["z0"]) for b in blocks] == [(0, 0, 0), (5, 0, 0), (0, 0, 3), (5, 0, 3), (0, 0, 6),
                                                             (5, 0, 6)]
    assert [(b["nx"], b["ny"], b["nz"]) for b in blocks[:3]] == [(6, 10, 4), (6, 10, 4), (6, 10, 4)]
    assert (blocks[-1]["x0"] + blocks[-1]["nx"], blocks[-1]["z0"] + blocks[-1]["nz"]) == (11, 9)
    _check_block_ranges(info, buf)


def test_info_of_a_3d_multiblock_file_agrees_with_the_cli(cli, tmp_path):
    import json
    import subprocess
    from factz.multiblock import compress_multiblock3d
    (tmp_path / "m.fzmb").write_bytes(compress_multiblock3d(*_volume(), blocks=(1, 2, 2)))
    out = json.loads(subprocess.run([cli, "info", "-z", tmp_path / "m.fzmb", "--json"], check=True,
                                    capture_output=True, text=True).stdout)
    info = factz.info(tmp_path / "m.fzmb")
    assert (info["nx"], info["ny"], info["nz"], info["blocks"]) == (out["nx"], out["ny"], out["nz"],
                                                                     (out["px"], out["py"], out["pz"]))
    assert (info["bytes"], info["header_bytes"], info["dtype"]) == (out["file_bytes"], out["header_bytes"],
                                                                    out["dtype"])
    assert [(b["x0"], b["y0"], b["z0"], b["offset"], b["bytes"]) for b in info["block_streams"]] == [
        (b["x0"], b["y0"], b["z0"], b["offset"], b["bytes"]) for b in out["block_list"]]


def test_info_of_a_multiblock_file_with_a_source_record(cli, tmp_path):
    """A multi-block file compressed from netCDF variables keeps their record after its last
    block (version 5): info reports it as for a stream; a damaged record is refused."""
    import shutil
    import subprocess
    if shutil.which("ncgen") is None:
        pytest.skip("ncgen (netcdf-bin) is not installed")
    if "netCDF-C" not in subprocess.run([cli, "--version"], capture_output=True, text=True).stdout:
        pytest.skip("factz is built without netCDF")
    u, v = analytic(13, 11)
    nums = lambda a: ", ".join(repr(float(x)) for x in a.ravel())
    (tmp_path / "g.cdl").write_text(
        "netcdf g {\ndimensions:\n  y = 11 ;\n  x = 13 ;\nvariables:\n  float U(y, x) ;\n    U:coordinates = \"h\" ;\n"
        f"  float V(y, x) ;\n  float h ;\ndata:\n  U = {nums(u)} ;\n  V = {nums(v)} ;\n  h = 10 ;\n}}\n")
    subprocess.run(["ncgen", "-k", "nc4", "-o", tmp_path / "g.nc", tmp_path / "g.cdl"], check=True)
    subprocess.run([cli, "compress", "-i", f"{tmp_path}/g.nc:U", "-i", f"{tmp_path}/g.nc:V", "-z", tmp_path / "m.fzmb",
                    "--blocks", "2", "2"], check=True, capture_output=True)
    buf = (tmp_path / "m.fzmb").read_bytes()
    info = factz.info(buf)
    assert info["version"] == 5 and info["source"]["variables"] == ["U", "V"]
    assert info["source"]["auxiliaries"] == ["h"] and info["source"]["file"] == "g.nc"
    last = info["block_streams"][-1]
    assert last["offset"] + last["bytes"] < len(buf), "the record follows the last block"
    damaged = bytearray(buf)
    damaged[-6] ^= 1  # inside the record (its checksum)
    with pytest.raises(ValueError, match="corrupt_stream: multi-block source record"):
        factz.info(bytes(damaged))
    from factz.multiblock import compress_multiblock
    plain = factz.info(compress_multiblock(u, v, blocks=(2, 2)))
    assert plain["version"] == 1 and plain["source"] is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_info_refuses_a_damaged_3d_multiblock_file(dtype):
    from factz.multiblock import compress_multiblock3d
    buf = compress_multiblock3d(*_volume(dtype=dtype), blocks=(2, 2, 1))
    head = factz.info(buf)["header_bytes"]
    for cut in (len(buf) - 1, head + 10, head - 1, 63, 30, 5):  # a block, the index, the header cut short
        with pytest.raises(ValueError, match="corrupt_stream"):
            factz.info(buf[:cut])
    damaged = bytearray(buf)
    damaged[head + 100] ^= 1  # inside block 0's stream
    with pytest.raises(ValueError, match="corrupt_stream: block 0 of the multi-block file"):
        factz.info(bytes(damaged))
    damaged = bytearray(buf)
    damaged[70] ^= 1  # the index (its checksum)
    with pytest.raises(ValueError, match="corrupt_stream: multi-block index checksum"):
        factz.info(bytes(damaged))
