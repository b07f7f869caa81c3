"""A numcodecs-style codec (``codec_id = "factz"``) for zarr and other chunked stores.

A chunk is a float32 array of shape ``(2, ny, nx)``: the u and v components stacked on the
first axis (chunk the store over the whole component axis). The codec follows the numcodecs
``Codec`` interface (``encode``, ``decode``, ``get_config``, ``from_config``) without
depending on numcodecs; it registers itself with numcodecs only when numcodecs is installed.
The guarantees hold per chunk (critical points of cells that straddle two chunks are not
covered).
"""

import numpy as _np

from . import _factz


class FactzCodec:
    """FaCTz codec for (2, ny, nx) float32 chunks; parameters as ``factz.compress``."""

    codec_id = "factz"

    def __init__(self, mode="speculative", eb=1e-2, bound="rel", coder=None, zstd=True,
                 anchor_stride=16, threads=0):
        self.mode = str(mode)
        self.eb = float(eb)
        self.bound = str(bound)
        self.coder = _factz.DEFAULT_CODER if coder is None else str(coder)
        self.zstd = bool(zstd)
        self.anchor_stride = int(anchor_stride)
        self.threads = int(threads)

    def encode(self, buf):
        """Compresses one chunk: an array of shape (2, ny, nx) and dtype float32 (a
        non-contiguous one is copied first; other dtypes and shapes are a ValueError)."""
        a = _np.asarray(buf)
        if a.dtype != _np.float32:
            raise ValueError(f"FactzCodec encodes float32 chunks, got dtype {a.dtype}")
        if a.ndim != 3 or a.shape[0] != 2:
            raise ValueError(f"FactzCodec encodes chunks of shape (2, ny, nx) (u and v stacked), "
                             f"got shape {a.shape}")
        a = _np.ascontiguousarray(a)
        return _factz.compress(a[0], a[1], self.mode, self.eb, self.bound, self.coder,
                               self.threads, self.zstd, self.anchor_stride)

    def decode(self, buf, out=None):
        """Decompresses one chunk into a new (2, ny, nx) float32 array, or into ``out``
        (any writable buffer of exactly 2 * ny * nx float32 values), which is returned."""
        u, v = _factz.decompress(buf, self.threads)
        if out is None:
            return _np.stack([u, v])
        dst = _np.frombuffer(out, dtype=_np.float32) if not isinstance(out, _np.ndarray) else out
        if dst.size != 2 * u.size:
            raise ValueError(f"out holds {dst.size} values, the chunk has {2 * u.size}")
        flat = dst.reshape(-1)
        if dst.dtype != _np.float32 or not _np.may_share_memory(flat, dst):
            raise ValueError("out must be a writable contiguous float32 buffer")
        flat[: u.size] = u.reshape(-1)
        flat[u.size:] = v.reshape(-1)
        return out

    def get_config(self):
        return {"id": self.codec_id, "mode": self.mode, "eb": self.eb, "bound": self.bound,
                "coder": self.coder, "zstd": self.zstd, "anchor_stride": self.anchor_stride,
                "threads": self.threads}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        codec_id = config.pop("id", cls.codec_id)
        if codec_id != cls.codec_id:
            raise ValueError(f"config is for codec {codec_id!r}, not {cls.codec_id!r}")
        return cls(**config)

    def __eq__(self, other):
        return isinstance(other, FactzCodec) and self.get_config() == other.get_config()

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items() if k != "id")
        return f"FactzCodec({params})"


try:  # register with numcodecs (and so zarr) only when it is installed
    import numcodecs as _numcodecs
except ImportError:
    _numcodecs = None
if _numcodecs is not None:
    _numcodecs.register_codec(FactzCodec)
