"""A numcodecs-style codec (``codec_id = "factz"``) for zarr and other chunked stores.

A chunk is a float32 or float64 array of shape ``(..., 2, ny, nx)``: the u and v components
stacked on the third axis from the end (chunk the store over the whole component axis), after any
leading dimensions (time, level). Each ``(2, ny, nx)`` slab is one stream, as each chunk of
the HDF5 filter; a chunk of several slabs holds their streams back to back, in C order of
the leading indices (each stream says where it ends), so a chunk of one slab, ``(2, ny, nx)``
or ``(1, 2, ny, nx)``, is exactly ``factz.compress(chunk[..., 0, :, :], chunk[..., 1, :, :])``. The codec follows the numcodecs
``Codec`` interface (``encode``, ``decode``, ``get_config``, ``from_config``) without
depending on numcodecs; it registers itself with numcodecs only when numcodecs is installed.
The guarantees hold per chunk (critical points of cells that straddle two chunks are not
covered). The codec keeps the chunk's dtype: a float64 chunk becomes float64 streams (format
version 6, 7 in mode speculative, compressed as doubles) and decodes to float64, a float32 chunk to float32; the
dtype is in the streams, not in the config.

``policy`` and ``device`` say where this process does the work, not what the data is: they
are not part of ``get_config`` (a store written on a GPU reads anywhere). A codec without a
policy (as zarr builds them from a store's config) takes the ``FACTZ_POLICY`` environment
variable (``serial``, ``omp``, ``cuda`` or ``cuda:N``), as the HDF5 filter does.

Missing data: NaN, ``fill_value`` (in the config, only when set, so that stores written
without one read with codecs that do not know it) and the mask of a ``numpy.ma`` chunk (a
vertex is missing when either component is masked) mark vertices missing; ``decode`` returns
a plain array holding the bits they had (NaN, the fill value), as a store expects.
"""

import os as _os

import numpy as _np

from . import _factz
from ._missing import fill_pair as _fill_pair, warn_suspected as _warn_suspected


def _policy_from_environment():
    """(policy, device) of FACTZ_POLICY: "" / "serial" / "omp" / "cuda" / "cuda:N"."""
    spec = _os.environ.get("FACTZ_POLICY", "").strip()
    if spec in ("", "serial", "omp"):
        return spec, 0
    if spec == "cuda":
        return "cuda", _factz.DEVICE_AUTO
    if spec.startswith("cuda:") and spec[5:].isdigit():
        return "cuda", int(spec[5:])
    raise ValueError(f"FACTZ_POLICY must be serial, omp, cuda or cuda:N, got {spec!r}")


class FactzCodec:
    """FaCTz codec for (..., 2, ny, nx) float32 or float64 chunks (decoded to the dtype they
    were encoded from); parameters as ``factz.compress``
    (policy None: the ``FACTZ_POLICY`` environment variable, else the CPU; fill_value: a
    number for both components or a pair [fill_u, fill_v])."""

    codec_id = "factz"

    def __init__(self, mode="speculative", eb=1e-2, bound="rel", coder=None, zstd=True,
                 anchor_stride=4096, threads=0, policy=None, device=0, fill_value=None):
        self.mode = str(mode)
        self.eb = float(eb)
        self.bound = str(bound)
        self.coder = _factz.DEFAULT_CODER if coder is None else str(coder)
        self.zstd = bool(zstd)
        self.anchor_stride = int(anchor_stride)
        self.threads = int(threads)
        self.policy = policy
        self.device = int(device)
        fill_u, fill_v = _fill_pair(fill_value)  # checked here, not at the first chunk
        # As the config keeps it (JSON): None, one number, or a list [fill_u, fill_v].
        self.fill_value = fill_u if fill_u == fill_v or fill_value is None else [fill_u, fill_v]

    def _execution(self):
        if self.policy is not None:
            return str(self.policy), self.device
        return _policy_from_environment()

    def encode(self, buf):
        """Compresses one chunk: an array of shape (..., 2, ny, nx) and dtype float32 or
        float64 (a non-contiguous one is copied first; other dtypes, byte orders and shapes
        are a ValueError), one stream per (2, ny, nx) slab, back to back. A
        ``numpy.ma.MaskedArray`` chunk's mask marks vertices missing (either component)."""
        mask = None
        if isinstance(buf, _np.ma.MaskedArray):
            mask = _np.ma.getmaskarray(buf)
            buf = _np.ma.getdata(buf)
        a = _np.asarray(buf)
        if a.dtype not in (_np.float32, _np.float64):
            raise ValueError(f"FactzCodec encodes float32 or float64 chunks, got dtype {a.dtype}")
        if a.ndim < 3 or a.shape[-3] != 2 or a.size == 0:
            raise ValueError(f"FactzCodec encodes chunks of shape (..., 2, ny, nx) (u and v stacked on the third axis "
                             f"from the end), got shape {a.shape}")
        slabs = _np.ascontiguousarray(a).reshape((-1,) + a.shape[-3:])
        masks = None if mask is None else mask.reshape(slabs.shape)
        fill_u, fill_v = _fill_pair(self.fill_value)
        policy, device = self._execution()
        streams = []
        for k, slab in enumerate(slabs):
            m = None
            if masks is not None and masks[k].any():
                m = _np.ascontiguousarray(masks[k][0] | masks[k][1])
            buf, info = _factz.compress(slab[0], slab[1], self.mode, self.eb, self.bound, self.coder, self.threads,
                                        self.zstd, self.anchor_stride, policy, device, m, fill_u, fill_v)
            _warn_suspected(info["suspected_fill"], "fill_value", stacklevel=2)
            streams.append(buf)
        return streams[0] if len(streams) == 1 else b"".join(streams)

    def decode(self, buf, out=None):
        """Decompresses one chunk: a new array of shape (2, ny, nx) for one stream, (k, 2,
        ny, nx) for k streams (zarr and HDF5 reshape it to the chunk's shape), float32 or
        float64 as the chunk was (all its streams hold one dtype), or into ``out`` (any
        writable buffer of exactly that many values of that dtype, e.g. the chunk's array),
        which is returned. Missing vertices hold the bits they had (NaN, the fill value)."""
        policy, device = self._execution()
        view = memoryview(buf).cast("B") if not isinstance(buf, (bytes, bytearray)) else buf
        lengths = _factz.stream_lengths(view)
        if not lengths:
            raise ValueError("corrupt_stream: an empty chunk holds no stream")
        planes, start = [], 0
        for n in lengths:
            planes.append(_np.stack(_factz.decompress(view[start:start + n], self.threads, policy, device)))
            start += n
        if len(planes) != 1 and len({p.shape for p in planes}) != 1:
            raise ValueError("corrupt_stream: the streams of the chunk have different grids "
                             f"{sorted({p.shape[1:] for p in planes})}")
        if len({p.dtype for p in planes}) != 1:
            raise ValueError("corrupt_stream: the streams of the chunk hold different dtypes "
                             f"{sorted({str(p.dtype) for p in planes})}")
        dec = planes[0] if len(planes) == 1 else _np.stack(planes)
        if out is None:
            return dec
        dst = _np.frombuffer(out, dtype=dec.dtype) if not isinstance(out, _np.ndarray) else out
        if dst.size != dec.size:
            raise ValueError(f"out holds {dst.size} values, the chunk has {dec.size}")
        flat = dst.reshape(-1)
        if dst.dtype != dec.dtype or not _np.may_share_memory(flat, dst):
            raise ValueError(f"out must be a writable contiguous {dec.dtype} buffer (the chunk's streams hold "
                             f"{dec.dtype} values)")
        flat[:] = dec.reshape(-1)
        return out

    def get_config(self):
        config = {"id": self.codec_id, "mode": self.mode, "eb": self.eb, "bound": self.bound,
                  "coder": self.coder, "zstd": self.zstd, "anchor_stride": self.anchor_stride,
                  "threads": self.threads}
        if self.fill_value is not None:
            config["fill_value"] = self.fill_value
        return config

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
