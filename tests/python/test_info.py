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
    assert info["version"] == factz.info(buf)["version"] >= 2 and info["source"] is None
    assert sum(s["stored_bytes"] for s in info["sections"]) < len(buf)
    assert {"meta", "codes_u", "codes_v"} <= {s["name"] for s in info["sections"]}
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
