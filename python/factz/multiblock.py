"""Multi-block files (docs/multiblock.md; the C++ API ``factz/multiblock.hpp``; ``factz
compress --blocks PX PY``): a field split into px x py blocks that share their boundary rows
and columns (stored exactly by both), each block an ordinary stream, behind an index
("FZMB") through which any block, or any window of the field, is read alone. The critical
point guarantee of the whole field holds, as for one stream.

float64 planes (both u and v) make a float64 file: every block is a float64 stream, the shared
rows and columns keep all 64 bits, and ``decompress_multiblock`` / ``decompress_region`` return
float64 planes for it (float32 planes for a float32 file); nothing is rounded to float32.

3D fields (``factz compress -3 NX NY NZ --blocks PX PY PZ``; the C++ API
``factz/multiblock3d.hpp``): ``compress_multiblock3d``, ``decompress_multiblock3d`` and
``decompress_region3d`` take and give three ``(nz, ny, nx)`` volumes, float32 (a version 3 file)
or float64 (version 4), in px x py x pz blocks that share their boundary planes.
"""

import os as _os

import numpy as _np

from . import _factz
from ._missing import field3d_args as _field3d_args
from ._missing import field_args as _field_args


def _blocks(blocks):
    try:
        px, py = (int(b) for b in blocks)
    except (TypeError, ValueError):
        raise ValueError(f"blocks must be a pair (px, py) of block counts along x and y, got {blocks!r}") from None
    return px, py


def _planes(result, masked):
    if not masked:
        return result[0], result[1]
    m = result[2].view(_np.bool_)
    return _np.ma.MaskedArray(result[0], mask=m), _np.ma.MaskedArray(result[1], mask=m.copy())


def compress_multiblock(u, v, blocks=(2, 2), mode="speculative", eb=1e-2, bound="rel", coder=None, threads=0,
                        zstd=True, anchor_stride=4096, policy=None, device=0, fill_value=None, mask=None, stats=False):
    """Compresses (u, v) into a multi-block file held in memory (``bytes``), the bytes of
    ``factz compress --blocks PX PY`` for the same options. blocks: ``(px, py)``, the number
    of blocks along x and y (each block needs at least one cell along a split axis). A REL
    bound is resolved over the whole field. u and v are float32 or float64 arrays (the same
    for both): float64 ones give a float64 file, compressed and checked in double. The other
    arguments as for ``factz.compress``; stats=True returns ``(bytes, dict)``."""
    px, py = _blocks(blocks)
    u, v, m, fu, fv = _field_args(u, v, mask, fill_value)
    buf, info = _factz.compress_multiblock(u, v, px, py, mode, float(eb), bound, coder or "", int(threads),
                                           bool(zstd), int(anchor_stride), policy or "", int(device), m, fu, fv)
    return (buf, info) if stats else buf


def decompress_multiblock(buf, threads=0, policy=None, device=0, masked=False):
    """Decodes a whole multi-block file (any bytes-like object) into ``(u, v)``, two arrays of
    the global shape ``(ny, nx)``: float32, or float64 for a file of a float64 field; masked=True
    as for ``factz.decompress``."""
    return _planes(_factz.decompress_multiblock(buf, int(threads), policy or "", int(device), bool(masked)), masked)


def decompress_region(path, region, threads=0, policy=None, device=0, masked=False, stats=False):
    """Reads the window ``region = (x0, y0, x1, y1)`` (half-open: columns x0..x1-1, rows
    y0..y1-1 of the global grid) of the multi-block file at ``path``, reading from the file
    only its header, its index and the blocks that intersect the window. Returns ``(u, v)`` of
    shape ``(y1 - y0, x1 - x0)`` (float32, or float64 for a float64 file), or ``(u, v, stats)``
    for stats=True (``blocks_decoded``, ``bytes_read``); masked=True as for
    ``factz.decompress``."""
    try:
        x0, y0, x1, y1 = (int(c) for c in region)
    except (TypeError, ValueError):
        raise ValueError(f"region must be (x0, y0, x1, y1), got {region!r}") from None
    result = _factz.decompress_region(_os.fspath(path), x0, y0, x1, y1, int(threads), policy or "", int(device),
                                      bool(masked))
    u, v = _planes(result, masked)
    return (u, v, result[-1]) if stats else (u, v)


# ---- 3D fields ------------------------------------------------------------------------------


def _blocks3d(blocks):
    try:
        px, py, pz = (int(b) for b in blocks)
    except (TypeError, ValueError):
        raise ValueError(f"blocks must be a triple (px, py, pz) of block counts along x, y and z, got {blocks!r}") \
            from None
    return px, py, pz


def _volumes(result, masked):
    if not masked:
        return result[0], result[1], result[2]
    m = result[3].view(_np.bool_)
    return tuple(_np.ma.MaskedArray(result[k], mask=m.copy()) for k in range(3))


def compress_multiblock3d(u, v, w, blocks=(2, 2, 2), mode="speculative", eb=1e-2, bound="rel", coder=None, threads=0,
                          zstd=True, anchor_stride=4096, policy=None, device=0, fill_value=None, mask=None,
                          stats=False):
    """Compresses the 3D field (u, v, w), arrays of shape ``(nz, ny, nx)``, into a multi-block
    file held in memory (``bytes``): the bytes of ``factz compress -3 NX NY NZ --blocks PX PY
    PZ`` for the same options. blocks: ``(px, py, pz)``, the number of blocks along x, y and z
    (blocks share their boundary planes, stored exactly). float32 arrays give a version 3 file,
    float64 arrays (all three) a version 4 file, compressed and checked in double. fill_value:
    one number for the three components or a triple; mask: ``(nz, ny, nx)`` (masked arrays are
    folded in). The other arguments as for ``factz.compress3d``; stats=True returns ``(bytes,
    dict)``."""
    px, py, pz = _blocks3d(blocks)
    u, v, w, m, (fu, fv, fw) = _field3d_args(u, v, w, mask, fill_value)
    buf, info = _factz.compress_multiblock3d(u, v, w, px, py, pz, mode, float(eb), bound, coder or "", int(threads),
                                             bool(zstd), int(anchor_stride), policy or "", int(device), m, fu, fv,
                                             fw)
    return (buf, info) if stats else buf


def decompress_multiblock3d(buf, threads=0, policy=None, device=0, masked=False):
    """Decodes a whole 3D multi-block file (any bytes-like object) into ``(u, v, w)``, arrays of
    the global shape ``(nz, ny, nx)``: float32, or float64 for a file of a float64 field
    (version 4); masked=True returns masked arrays."""
    return _volumes(_factz.decompress_multiblock3d(buf, int(threads), policy or "", int(device), bool(masked)),
                    masked)


def decompress_region3d(path, region, threads=0, policy=None, device=0, masked=False, stats=False):
    """Reads the window ``region = (x0, y0, z0, x1, y1, z1)`` (half-open) of the 3D multi-block
    file at ``path``, reading only its header, its index and the blocks owning a vertex of the
    window. Returns ``(u, v, w)`` of shape ``(z1 - z0, y1 - y0, x1 - x0)`` (float32, or float64
    for a version 4 file), or ``(u, v, w, stats)`` for stats=True (``blocks_decoded``,
    ``bytes_read``); masked=True returns masked arrays."""
    try:
        x0, y0, z0, x1, y1, z1 = (int(c) for c in region)
    except (TypeError, ValueError):
        raise ValueError(f"region must be (x0, y0, z0, x1, y1, z1), got {region!r}") from None
    result = _factz.decompress_region3d(_os.fspath(path), x0, y0, z0, x1, y1, z1, int(threads), policy or "",
                                        int(device), bool(masked))
    u, v, w = _volumes(result, masked)
    return (u, v, w, result[-1]) if stats else (u, v, w)
