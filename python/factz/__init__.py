"""FaCTz: error-bounded lossy compression of 2D and 3D vector fields that keeps every critical point.

Fields are two numpy arrays ``u`` and ``v`` of shape ``(ny, nx)``, both of dtype ``float32``
or both ``float64``, C-contiguous (x fastest, as the C and C++ APIs). Anything else is a
``ValueError`` that says what to change; nothing is converted silently: a float64 field is
compressed as doubles (format version 6 streams, 7 in mode speculative: the bound checked in double, the critical
points of the float64 mesh, missing values with all 64 bits), and ``decompress``
returns the dtype a stream was written with. The library's errors (bad options, infinite
values at valid vertices, corrupted streams) are ``ValueError`` carrying its message, e.g.
``"corrupt_stream: header checksum mismatch"``. The GIL is released while the library works,
so threads can compress different fields at the same time.

The bytes of ``compress`` are those of the C++ API and of ``factz compress`` for the same
options, and never depend on ``threads`` or ``policy``: ``policy="cuda"`` runs on a GPU
(``device``) and raises ``BackendUnavailableError`` (a ``RuntimeError`` whose message starts
with ``"backend_unavailable"``) where the build has no CUDA backend or the machine no device.

Missing data (land, gaps): a vertex is missing when u or v is NaN, when it is masked (a
``numpy.ma.MaskedArray`` input, or ``mask=``), or when it holds a declared ``fill_value``.
Missing vertices are stored bit for bit, outside the error bound and the mesh;
``decompress(buf, masked=True)`` returns ``numpy.ma.MaskedArray`` planes with their mask.

3D vector fields (float32 or float64, shape ``(nz, ny, nx)``, x fastest): ``compress3d``,
``decompress3d``, ``stream_shape3d``, ``critical_points3d`` (critical points of the
Freudenthal tetrahedra) and ``verify3d``, with the options of the 2D functions; which modes
and policies 3D fields take is the library's decision (its refusals are ValueError /
BackendUnavailableError with its message). Missing vertices as in 2D: NaN, masked arrays,
``mask=`` (shape ``(nz, ny, nx)``) and ``fill_value`` (one number, or a triple for u, v and
w); their bits come back exactly, and ``decompress3d(buf, masked=True)`` returns masked
arrays. As in 2D, float64 planes stay float64: a float64 stream (format version 13) that
``decompress3d`` returns as float64 arrays.

Beyond vector fields: scalar fields and contour trees (``compress_scalar``,
``decompress_scalar``, ``contour_tree``, ``verify_scalar``), multi-block files and windows of
them (``compress_multiblock``, ``decompress_multiblock``, ``decompress_region``),
divergence-free flows (``factz.flow``) and ``info`` for any stream factz writes. When h5py is
importable, importing this package registers the HDF5 filter it carries with h5py's HDF5
library (``hdf5_filter_status()``); ``h5filter(...)`` gives ``create_dataset``'s arguments.
"""

import os as _os
import warnings as _warnings

import numpy as _np

from . import _factz
from ._factz import (BackendUnavailableError, CP3_TYPE_NAMES, CP_TYPE_NAMES, DEFAULT_CODER, DEVICE_AUTO,
                     FORMAT_VERSION, HDF5_FILTER_ID)
from ._h5 import (h5filter, hdf5_compression_opts, hdf5_dcpl, hdf5_filter_status, hdf5_plugin_path,
                  register_hdf5_filter)
from ._missing import (SuspectedFillValueWarning, field3d_args as _field3d_args, field_args as _field_args,
                       warn_suspected as _warn_suspected)
from .codec import FactzCodec
from .multiblock import compress_multiblock, decompress_multiblock, decompress_region
from .multiblock import compress_multiblock3d, decompress_multiblock3d, decompress_region3d
from .scalar import (CT_NODE_DTYPE, CT_NODE_TYPE_NAMES, CT_PAIR_DTYPE, compress_scalar, contour_tree,
                     decompress_scalar, verify_scalar)
from . import flow

__all__ = [
    "compress",
    "decompress",
    "stream_shape",
    "critical_points",
    "verify",
    "compress3d",
    "decompress3d",
    "stream_shape3d",
    "critical_points3d",
    "verify3d",
    "info",
    "compress_scalar",
    "decompress_scalar",
    "contour_tree",
    "verify_scalar",
    "compress_multiblock",
    "decompress_multiblock",
    "decompress_region",
    "flow",
    "h5filter",
    "hdf5_plugin_path",
    "hdf5_compression_opts",
    "hdf5_dcpl",
    "register_hdf5_filter",
    "hdf5_filter_status",
    "FactzCodec",
    "BackendUnavailableError",
    "SuspectedFillValueWarning",
    "DEVICE_AUTO",
    "HDF5_FILTER_ID",
    "CP_TYPE_NAMES",
    "CP_DTYPE",
    "CP3_TYPE_NAMES",
    "CP3_DTYPE",
    "CT_NODE_DTYPE",
    "CT_PAIR_DTYPE",
    "CT_NODE_TYPE_NAMES",
    "DEFAULT_CODER",
    "FORMAT_VERSION",
]

__version__ = "0.1.0"

#: dtype of the array ``critical_points`` returns (one row per critical point, ordered by
#: triangle id): ``triangle`` = 2 * (row * (nx - 1) + column) + t, the cell ``row`` and
#: ``column``, barycentric ``mu`` (display only) and the ``type`` name.
CP_DTYPE = _np.dtype(
    [("triangle", "<i8"), ("row", "<i8"), ("column", "<i8"), ("mu", "<f8", (3,)), ("type", "<U16")]
)

#: dtype of the array ``critical_points3d`` returns (one row per critical point, ordered by
#: tetrahedron id): ``tetrahedron`` = 6 * ((z * (ny - 1) + y) * (nx - 1) + x) + t, the corner
#: ``x``, ``y``, ``z`` of its cube, ``t`` (0..5: which of the cube's six tetrahedra),
#: barycentric ``mu`` (display only) and the ``type`` name (``CP3_TYPE_NAMES``).
CP3_DTYPE = _np.dtype(
    [("tetrahedron", "<i8"), ("x", "<i8"), ("y", "<i8"), ("z", "<i8"), ("t", "u1"), ("mu", "<f8", (4,)),
     ("type", "<U24")]
)


def compress(u, v, mode="speculative", eb=1e-2, bound="rel", coder=None, threads=0,
             zstd=True, anchor_stride=4096, policy=None, device=0, fill_value=None, mask=None,
             stats=False, progress=None):
    """Compresses the vector field (u, v) and returns the stream as ``bytes``.

    u and v: both float32 or both float64 (a float64 field is compressed as doubles, in a
    format version 6 stream, 7 in mode speculative, the CPU's bytes under policy "cuda" too).

    mode: "speculative" (FaCTz-S, best ratio, default), "block" (FaCTz-B, fastest) or "none"
    (pointwise bound only, no topological guarantee). eb and bound: the error bound,
    ``bound="rel"`` (default: eb is a fraction of max - min over both components' valid
    vertices) or ``"abs"``. coder: "huffman" or "ans"; None is the library's default
    (``DEFAULT_CODER``, the same as the C++ API and ``factz compress``). threads: 0 = OpenMP
    default, 1 = serial. zstd: the lossless zstd stage. anchor_stride: speculative mode,
    power of two in [2, 4096]. policy: where the work runs, "serial", "omp" or "cuda"; None:
    "serial" for threads=1, else "omp". device: policy "cuda": the CUDA device ordinal, or
    ``DEVICE_AUTO`` (the node-local MPI rank modulo the device count); a device that does not
    exist is a ValueError.

    Missing vertices: those with a NaN component, those masked in ``u`` or ``v`` when they are
    ``numpy.ma.MaskedArray``s (the data under the mask is stored as it is, bit for bit), those
    where ``mask`` (a boolean array of shape (ny, nx)) is True, and those holding
    ``fill_value``: a float for both components or a pair ``(fill_u, fill_v)`` (either may be
    None), e.g. a netCDF ``_FillValue`` such as 1e20, -9999 or ``numpy.inf``; compared as
    float32 with a float32 field and as a double with a float64 one. Without
    ``fill_value``, valid values that look like one (magnitude 1e15 or more, or a common fill
    value) raise a ``SuspectedFillValueWarning``.

    stats: True returns ``(bytes, dict)``, the dict holding ``eb_abs``, ``exact_vertices``,
    ``repair_rounds``, ``repaired_vertices`` and ``masked_vertices`` (as ``factz compress
    --json``).

    progress: a callable ``progress(stage, fraction)``, called after each stage of the run
    ("mask", "frontend", "encode", "entropy", "container") with the fraction done, increasing
    to 1.0 on the last call (the CUDA backend reports only that one). An exception it raises
    is raised by ``compress`` once the library returns; the stream never depends on it.
    """
    u, v, m, fu, fv = _field_args(u, v, mask, fill_value)
    buf, info = _factz.compress(u, v, mode, float(eb), bound, coder or "", int(threads), bool(zstd),
                                int(anchor_stride), policy or "", int(device), m, fu, fv, progress)
    _warn_suspected(info.pop("suspected_fill"), "fill_value", stacklevel=2)
    return (buf, info) if stats else buf


def decompress(buf, threads=0, policy=None, device=0, masked=False):
    """Decompresses a stream (any contiguous bytes-like object) into ``(u, v)``, two new
    arrays of shape ``(ny, nx)``: float32 for a stream of a float32 field, float64 for one of
    a float64 field (``info(buf)["dtype"]``). threads, policy and device as for ``compress``.

    Missing vertices hold the bits they held when compressed (the NaN with its payload, the
    fill value, whatever a mask covered). masked=True returns two ``numpy.ma.MaskedArray``s
    whose mask (the same in both) is True at the missing vertices (all False for a stream
    without any). A stream does not record whether ``compress`` was given masked arrays:
    ask for them with masked=True."""
    if not masked:
        return _factz.decompress(buf, int(threads), policy or "", int(device))
    u, v, m = _factz.decompress(buf, int(threads), policy or "", int(device), True)
    m = m.view(_np.bool_)
    return _np.ma.MaskedArray(u, mask=m), _np.ma.MaskedArray(v, mask=m.copy())


def stream_shape(buf):
    """``(ny, nx)`` of a stream, validated without decoding it."""
    return _factz.stream_shape(buf)


def critical_points(u, v, threads=0, fill_value=None, mask=None):
    """All critical points of (u, v) (exact, Simulation of Simplicity semantics) as a
    structured array of dtype ``CP_DTYPE``, ordered by triangle id; a float64 field's are
    decided exactly on the doubles. Missing vertices (NaN,
    masked arrays, ``mask``, ``fill_value``, as for ``compress``) are outside the mesh: a
    triangle touching one holds no critical point."""
    u, v, m, fu, fv = _field_args(u, v, mask, fill_value)
    tri, row, col, mu, code = _factz.critical_points(u, v, int(threads), m, fu, fv)
    out = _np.empty(tri.shape[0], dtype=CP_DTYPE)
    out["triangle"] = tri
    out["row"] = row
    out["column"] = col
    out["mu"] = mu
    out["type"] = _np.asarray(CP_TYPE_NAMES, dtype="<U16")[code] if len(code) else []
    return out


def verify(u, v, u2, v2, threads=0, fill_value=None, mask=None, mask2=None):
    """Compares an original (u, v) with a reconstruction (u2, v2) and returns a dict:
    ``cp_original``, ``cp_decompressed``, ``lost`` (P1), ``spurious`` (P2), ``type_changed``
    (P3), ``mask_mismatch`` (vertices missing in one field only), ``violations`` (the sum of
    those four), ``masked_vertices`` (missing in the original), ``max_abs_error`` (u, v),
    ``rmse``, ``nrmse``, ``psnr`` (inf when identical) and ``value_range``, as ``factz
    verify`` prints them; the pointwise numbers are over the vertices valid in both. Both
    fields are float32, or both float64 (errors computed in double).

    Missing vertices as for ``compress``: masked arrays and ``mask`` mark the original's,
    masked arrays and ``mask2`` the reconstruction's; ``fill_value`` applies to both. Compare
    with what ``decompress(buf, masked=True)`` returns, or declare the fill value."""
    u, v, m, fu, fv = _field_args(u, v, mask, fill_value)
    u2, v2, m2, _, _ = _field_args(u2, v2, mask2, fill_value, names=("u2", "v2", "mask2"))
    return _factz.verify(u, v, u2, v2, int(threads), m, m2, fu, fv)


def compress3d(u, v, w, mode="speculative", eb=1e-2, bound="rel", coder=None, threads=0, zstd=True,
               anchor_stride=4096, policy=None, device=0, fill_value=None, mask=None, stats=False, progress=None):
    """Compresses the 3D vector field (u, v, w) and returns the stream as ``bytes`` (format
    version 10; 8 in modes none and block; 12 with missing vertices; 13 for a float64 field):
    every value within the bound, and every tetrahedron of the Freudenthal mesh keeps its
    critical point or its absence, and its type.

    u, v, w: arrays of one shape ``(nz, ny, nx)``, C-contiguous (x fastest), all float32 or all
    float64 (a float64 field is compressed as doubles: the bound checked in double, the
    critical points of the float64 mesh, missing values with all 64 bits). Planes of two
    dtypes are a ValueError: nothing is rounded or widened silently. The
    options are those of ``compress``; eb with ``bound="rel"`` is a fraction of max - min over
    the three components' valid vertices. The library decides which modes and policies 3D
    fields take and refuses the others with its message (a ValueError, or
    ``BackendUnavailableError`` for policy "cuda" where there is no 3D GPU path). The bytes are
    those of the C++ API and of ``factz compress -3`` for the same options, and never depend on
    ``threads``.

    Missing vertices, as for ``compress``: those with a NaN component, those masked in ``u``,
    ``v`` or ``w`` when they are ``numpy.ma.MaskedArray``s (the data under the mask is stored as
    it is, bit for bit), those where ``mask`` (a boolean array of shape (nz, ny, nx)) is True,
    and those holding ``fill_value`` in any component: a float for the three components (as
    ``factz compress -3 --fill``) or a triple ``(fill_u, fill_v, fill_w)`` (any may be None),
    compared as float32 with a float32 field and as a double with a float64 one. Tetrahedra
    touching a missing vertex are off the mesh, and the vertex decodes to the bits it held.
    Without ``fill_value``, valid values that look like one (magnitude 1e15 or more, or a
    common fill value) raise a ``SuspectedFillValueWarning``.

    stats: True returns ``(bytes, dict)`` (``eb_abs``, ``exact_vertices``, ...,
    ``masked_vertices``). progress: as for ``compress``."""
    u, v, w, m, (fu, fv, fw) = _field3d_args(u, v, w, mask, fill_value)
    buf, info = _factz.compress3d(u, v, w, mode, float(eb), bound, coder or "", int(threads), bool(zstd),
                                  int(anchor_stride), policy or "", int(device), progress, m, fu, fv, fw)
    _warn_suspected(info.pop("suspected_fill"), "fill_value", stacklevel=2)
    return (buf, info) if stats else buf


def decompress3d(buf, threads=0, policy=None, device=0, masked=False):
    """Decompresses a 3D vector stream (any contiguous bytes-like object) into ``(u, v, w)``,
    three new arrays of shape ``(nz, ny, nx)``: float32 for a stream of a float32 field,
    float64 for one of a float64 field (``info(buf)["dtype"]``). A 2D vector stream is a ValueError
    naming ``factz.decompress`` (and ``factz.decompress`` names this function for a 3D
    stream); damaged bytes are a ValueError (``corrupt_stream: ...``).

    Missing vertices hold the bits they held when compressed (the NaN with its payload, the
    fill value, whatever a mask covered). masked=True returns three ``numpy.ma.MaskedArray``s
    whose mask (the same in all three) is True at the missing vertices (all False for a stream
    without any). A stream does not record whether ``compress3d`` was given masked arrays: ask
    for them with masked=True."""
    if not masked:
        return _factz.decompress3d(buf, int(threads), policy or "", int(device))
    u, v, w, m = _factz.decompress3d(buf, int(threads), policy or "", int(device), True)
    m = m.view(_np.bool_)
    return _np.ma.MaskedArray(u, mask=m), _np.ma.MaskedArray(v, mask=m.copy()), _np.ma.MaskedArray(w, mask=m.copy())


def stream_shape3d(buf):
    """``(nz, ny, nx)`` of a 3D vector stream, validated without decoding it."""
    return _factz.stream_shape3d(buf)


def critical_points3d(u, v, w, threads=0, fill_value=None, mask=None):
    """All critical points of the 3D field (u, v, w) (exact, Simulation of Simplicity on the
    Freudenthal tetrahedra) as a structured array of dtype ``CP3_DTYPE``, ordered by
    tetrahedron id; a float64 field's are decided exactly on the doubles. Missing vertices
    (NaN, masked arrays, ``mask``, ``fill_value``, as for ``compress3d``) are off the mesh: a
    tetrahedron touching one holds no critical point."""
    u, v, w, m, (fu, fv, fw) = _field3d_args(u, v, w, mask, fill_value)
    tet, x, y, z, t, mu, code = _factz.critical_points3d(u, v, w, int(threads), m, fu, fv, fw)
    out = _np.empty(tet.shape[0], dtype=CP3_DTYPE)
    out["tetrahedron"] = tet
    out["x"] = x
    out["y"] = y
    out["z"] = z
    out["t"] = t
    out["mu"] = mu
    out["type"] = _np.asarray(CP3_TYPE_NAMES, dtype="<U24")[code] if len(code) else []
    return out


def verify3d(u, v, w, u2, v2, w2, threads=0, fill_value=None, mask=None, mask2=None):
    """Compares an original 3D field (u, v, w) with a reconstruction (u2, v2, w2) and returns
    the dict of ``verify`` with ``max_abs_error`` per component (u, v, w): critical points
    per tetrahedron (``lost``, ``spurious``, ``type_changed``, ``mask_mismatch`` for a vertex
    missing in one field only; ``violations`` their sum), ``masked_vertices`` (missing in the
    original) and pointwise errors over the vertices valid in both, as ``factz verify -3``
    prints them. Both fields are float32, or both float64 (errors computed in double).

    Missing vertices as for ``compress3d``: masked arrays and ``mask`` mark the original's,
    masked arrays and ``mask2`` the reconstruction's; ``fill_value`` applies to both. Compare
    with what ``decompress3d(buf, masked=True)`` returns, or declare the fill value."""
    u, v, w, m, (fu, fv, fw) = _field3d_args(u, v, w, mask, fill_value)
    u2, v2, w2, m2, _ = _field3d_args(u2, v2, w2, mask2, fill_value, names=("u2", "v2", "w2", "mask2"))
    return _factz.verify3d(u, v, w, u2, v2, w2, int(threads), m, m2, fu, fv, fw)


def info(stream):
    """A dict describing any stream or file factz writes, as ``factz info`` does: ``stream``
    is a bytes-like object or a path (``str`` / ``os.PathLike``). Every dict has ``kind``
    (``"vector"``, ``"scalar"``, ``"multiblock"``, ``"flow"`` or ``"flow_basis"``) and
    ``bytes``. Vector and scalar streams: ``version``, ``dtype`` (``"float32"`` or
    ``"float64"``: what decompress returns), ``shape``, ``nx``, ``ny``, ``nz``,
    ``ndims``, ``components``, ``mode``, ``coder``, ``zstd``, ``bound``, ``eb`` (as given),
    ``eb_abs`` (used), ``tile``, ``anchor_stride``, ``masked``, ``sections`` (``id``,
    ``name``, ``stored_bytes``, ``raw_bytes``, ``zstd``, ``shuffle``: the byte-shuffle width
    under the zstd stage, 4 or 8, else 0) and ``source`` (None, or the
    netCDF/HDF5 variable it came from: ``format``, ``file``, ``variables``,
    ``description``). Multi-block files (2D, or 3D from ``compress_multiblock3d``): ``ndims``
    (2 or 3), ``dtype``, ``nx``, ``ny`` (3D: ``nz``), ``shape``, ``blocks`` (px, py; 3D px,
    py, pz), ``bound``, ``eb``, ``header_bytes`` and ``block_streams`` (each block stream's
    dict, its ``bytes`` the block's size, plus ``x0``, ``y0`` (3D: ``z0``), ``offset``). Flow streams: ``tolerance``; flow bases: ``dim``, ``n``, ``method``,
    ``coefficients``, ``blocks``, ``periods``, ``fingerprint``. Damaged bytes are a
    ValueError (``corrupt_stream: ...``)."""
    if isinstance(stream, (str, _os.PathLike)):
        with open(stream, "rb") as f:
            stream = f.read()
    return _factz.info(stream)


# Make the HDF5 filter available to h5py (and so h5netcdf, xarray, netCDF4) without
# HDF5_PLUGIN_PATH, as hdf5plugin does. Never fails the import: hdf5_filter_status() says why
# when it could not.
try:
    register_hdf5_filter()
except Exception as _e:  # noqa: BLE001 -- an HDF5 problem must not make numpy users' import fail
    _warnings.warn(f"factz: the HDF5 filter was not registered with h5py: {_e}", RuntimeWarning, stacklevel=2)
