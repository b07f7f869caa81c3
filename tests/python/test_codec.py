"""factz.FactzCodec: the numcodecs Codec interface for (2, ny, nx) float32 chunks (float64
chunks: test_float64.py)."""

import numpy as np
import pytest

import factz
from conftest import analytic


def chunk():
    u, v = analytic(50, 40)
    return np.stack([u, v])


def test_codec_round_trip_gives_the_bytes_of_compress():
    codec = factz.FactzCodec(mode="block", eb=0.05, bound="abs", coder="ans")
    a = chunk()
    enc = codec.encode(a)
    assert enc == factz.compress(a[0], a[1], mode="block", eb=0.05, bound="abs", coder="ans")
    dec = codec.decode(enc)
    assert dec.shape == a.shape and dec.dtype == np.float32
    assert np.abs(dec - a).max() <= 0.05
    assert factz.verify(a[0], a[1], dec[0], dec[1])["violations"] == 0


def test_codec_decodes_into_out():
    codec = factz.FactzCodec()
    a = chunk()
    enc = codec.encode(a)
    out = np.empty_like(a)
    assert codec.decode(enc, out=out) is out
    assert np.array_equal(out, codec.decode(enc))
    raw = bytearray(a.nbytes)
    codec.decode(enc, out=raw)
    assert np.array_equal(np.frombuffer(raw, np.float32).reshape(a.shape), out)
    with pytest.raises(ValueError, match="holds"):
        codec.decode(enc, out=np.empty(10, np.float32))


def test_codec_config_round_trips():
    codec = factz.FactzCodec(mode="speculative", eb=1e-3, bound="rel", coder="huffman", zstd=False,
                             anchor_stride=32)
    config = codec.get_config()
    assert config["id"] == factz.FactzCodec.codec_id == "factz"
    again = factz.FactzCodec.from_config(config)
    assert again == codec and again.get_config() == config
    assert again.encode(chunk()) == codec.encode(chunk())
    assert "anchor_stride=32" in repr(codec)
    with pytest.raises(ValueError, match="codec"):
        factz.FactzCodec.from_config({"id": "zlib"})


def test_codec_copies_non_contiguous_chunks_and_rejects_others():
    codec = factz.FactzCodec()
    a = chunk()
    wide = np.ascontiguousarray(np.repeat(a, 2, axis=2))[:, :, ::2]
    assert not wide.flags.c_contiguous
    assert codec.encode(wide) == codec.encode(a)
    with pytest.raises(ValueError, match="float32 or float64"):
        codec.encode(a.astype(np.float16))
    with pytest.raises(ValueError, match="float32 or float64"):
        codec.encode(a.astype(">f4"))
    with pytest.raises(ValueError, match=r"\(\.\.\., 2, ny, nx\)"):
        codec.encode(a[0])
    with pytest.raises(ValueError, match=r"\(\.\.\., 2, ny, nx\)"):
        codec.encode(np.concatenate([a, a[:1]]))
    with pytest.raises(ValueError, match="corrupt_stream"):
        codec.decode(codec.encode(a)[:-3])


def test_codec_registers_with_numcodecs_when_installed():
    numcodecs = pytest.importorskip("numcodecs")
    assert isinstance(numcodecs.get_codec({"id": "factz"}), factz.FactzCodec)
