"""Scalar fields: TopoSZ compression that keeps the simplified contour tree, the contour tree
itself, and the scalar comparison (docs/toposz.md; the C++ API ``factz/scalar.hpp`` and
``factz/contour_tree.hpp``; ``factz compress -s``, ``factz ct``, ``factz verify -s``).

A field is a float32 or float64 array of shape ``(ny, nx)`` or ``(nz, ny, nx)``, C-contiguous
(x fastest). A float64 field is compressed as doubles (its contour tree ordered, its bound kept
and its exact values stored in double: a float64 stream) and decodes to float64; nothing is
rounded to float32 on the way. Missing vertices: NaN, a ``numpy.ma.MaskedArray`` input's mask, ``mask=`` (bool,
the field's shape) and ``fill_value=`` (one number), as for vector fields; they are stored
bit for bit, outside the bound, and outside the mesh (the contour tree of what is left is a
forest, one tree per connected component of valid vertices). Vertices are numbered
``(z * ny + y) * nx + x`` (``numpy.unravel_index(vertex, shape)`` gives the position).
"""

import numpy as _np

from . import _factz
from ._missing import as_mask as _as_mask

#: dtype of ``contour_tree(...)["nodes"]`` for a float32 field: the vertex index, its value,
#: the node type (one of ``CT_NODE_TYPE_NAMES``) and its degrees in the contour tree.
CT_NODE_DTYPE = _np.dtype([("vertex", "<i8"), ("value", "<f4"), ("type", "<U16"), ("up_degree", "<i4"),
                           ("down_degree", "<i4")])
#: The same for a float64 field (``value`` float64).
CT_NODE_DTYPE64 = _np.dtype([("vertex", "<i8"), ("value", "<f8"), ("type", "<U16"), ("up_degree", "<i4"),
                             ("down_degree", "<i4")])
#: dtype of ``contour_tree(...)["pairs"]``: an extremum, the saddle where it dies (elder
#: rule), and the pair's persistence.
CT_PAIR_DTYPE = _np.dtype([("extremum", "<i8"), ("saddle", "<i8"), ("persistence", "<f8")])
CT_NODE_TYPE_NAMES = getattr(_factz, "CT_NODE_TYPE_NAMES", ())
SCALAR_DEFAULT_CODER = getattr(_factz, "SCALAR_DEFAULT_CODER", "ans")


def _require():
    if not hasattr(_factz, "compress_scalar"):
        raise RuntimeError("this build of factz has no scalar module (src/scalar)")


def _field(values, mask, name="values", mask_name="mask"):
    """(data, mask or None) for the extension: a MaskedArray's mask and ``mask`` united."""
    masks = []
    if isinstance(values, _np.ma.MaskedArray):
        masks.append(_np.ma.getmaskarray(values))
        values = _np.ma.getdata(values)
    if mask is not None:
        m = _as_mask(mask, mask_name)
        if isinstance(values, _np.ndarray) and m.shape != values.shape:
            raise ValueError(f"{mask_name} must have the field's shape {values.shape}, got shape {m.shape}")
        masks.append(m)
    if not masks:
        return values, None
    m = masks[0] if len(masks) == 1 else masks[0] | masks[1]
    return values, (_np.ascontiguousarray(m) if m.any() else None)


def _fill(fill_value):
    if fill_value is None:
        return None
    if isinstance(fill_value, (bool, _np.bool_)) or not isinstance(fill_value, (int, float, _np.integer, _np.floating)):
        raise ValueError(f"fill_value of a scalar field must be one number or None, got {fill_value!r}")
    return float(fill_value)


def compress_scalar(values, mode="contour_tree", eb=1e-2, bound="rel", persistence=1e-2, coder=None, threads=0,
                    zstd=True, policy=None, fill_value=None, mask=None, stats=False, predictor=None):
    """Compresses a scalar field and returns the stream as ``bytes``.

    mode: ``"contour_tree"`` (TopoSZ, default: the contour tree simplified at ``persistence``
    is kept exactly) or ``"none"`` (pointwise bound only). eb, bound: the pointwise bound,
    ``"rel"`` (a fraction of the valid values' range) or ``"abs"``. persistence: the
    simplification threshold as a fraction of the value range (>= 0). coder: ``"smallest"``
    (each coder, the smallest stream kept), ``"ans"``, ``"huffman"`` or ``"context"``
    (adaptive binary coding with the neighbours' codes as contexts); None is
    ``SCALAR_DEFAULT_CODER`` (``"smallest"``). threads, zstd, policy as for
    ``factz.compress`` (scalar fields have no GPU path). stats=True returns ``(bytes, dict)``
    with ``eb_abs``, ``exact_vertices``, ``iterations``, ``race_rounds``, ``rounds_ahead``,
    ``persistence_abs``, ``tree_nodes``,
    ``masked_vertices``, ``coder`` (the one the stream holds) and ``predictor``. predictor:
    ``"best"`` (None: both predictors, the smaller stream kept; contour_tree races both),
    ``"lorenzo"`` (the streams builds before format version 22 read) or ``"interpolation"``
    (multilevel cubic interpolation, format version 22). A float64 array gives a float64 stream (bound, tree and exact
    values in double; ``fill_value`` compared as a double)."""
    _require()
    data, m = _field(values, mask)
    buf, info = _factz.compress_scalar(data, mode, float(eb), bound, float(persistence), coder or "", int(threads),
                                       bool(zstd), policy or "", m, _fill(fill_value), predictor or "")
    return (buf, info) if stats else buf


def decompress_scalar(buf, threads=0, policy=None, masked=False):
    """Decompresses a scalar stream into a new array of shape ``(ny, nx)`` or ``(nz, ny, nx)``,
    float32 or float64 as the stream holds it; missing vertices hold the bits they had. masked=True returns a
    ``numpy.ma.MaskedArray`` whose mask is the stream's (all False without missing vertices).
    A vector stream is a ValueError that names ``factz.decompress``."""
    _require()
    values, m = _factz.decompress_scalar(buf, int(threads), policy or "")
    return _np.ma.MaskedArray(values, mask=m.view(_np.bool_)) if masked else values


def contour_tree(values, persistence=0.0, bound="rel", segmentation=False, contour_arcs=True, threads=0,
                 policy=None, fill_value=None, mask=None):
    """The contour tree of a scalar field (a forest when its valid vertices fall apart),
    simplified at ``persistence`` (``bound="rel"``: a fraction of the valid values' range;
    ``"abs"``: the value itself; 0 keeps every pair). Returns a dict:

    ``nodes`` (structured, ``CT_NODE_DTYPE``, or ``CT_NODE_DTYPE64`` for a float64 field, whose
    tree is computed on the doubles; by increasing vertex), ``join_arcs``,
    ``split_arcs`` (the simplified merge trees' arcs) and ``arcs`` (the contour tree's, empty
    when ``contour_arcs`` is False in the dict: no tree has both merge trees) as ``(k, 2)``
    int64 arrays of vertex indices (lower, upper); ``pairs`` (``CT_PAIR_DTYPE``);
    ``persistence_abs``, ``pruned_pairs``, ``full_nodes`` (unsimplified), ``components``
    (trees in the forest), ``shape``; with segmentation=True ``segmentation_lower`` and
    ``segmentation_upper`` (uint32 arrays of the field's shape: the nodes just below and above
    each vertex, 0xFFFFFFFF at missing vertices)."""
    _require()
    data, m = _field(values, mask)
    d = _factz.contour_tree(data, float(persistence), bound, bool(segmentation), bool(contour_arcs), int(threads),
                            policy or "", m, _fill(fill_value))
    node_dtype = CT_NODE_DTYPE64 if d["node_value"].dtype == _np.float64 else CT_NODE_DTYPE
    nodes = _np.empty(len(d["node_vertex"]), dtype=node_dtype)
    nodes["vertex"] = d.pop("node_vertex")
    nodes["value"] = d.pop("node_value")
    codes = d.pop("node_type")
    nodes["type"] = _np.asarray(CT_NODE_TYPE_NAMES, dtype="<U16")[codes] if len(codes) else []
    nodes["up_degree"] = d.pop("node_up_degree")
    nodes["down_degree"] = d.pop("node_down_degree")
    pairs = _np.empty(len(d["pair_extremum"]), dtype=CT_PAIR_DTYPE)
    pairs["extremum"] = d.pop("pair_extremum")
    pairs["saddle"] = d.pop("pair_saddle")
    pairs["persistence"] = d.pop("pair_persistence")
    d["nodes"], d["pairs"] = nodes, pairs
    return d


def verify_scalar(values, values2, persistence=1e-2, bound="rel", threads=0, policy=None, fill_value=None, mask=None,
                  mask2=None):
    """Compares an original scalar field with a reconstruction as ``factz verify -s`` does:
    both contour trees simplified at the same absolute threshold (``persistence`` times the
    original's value range for ``bound="rel"``), nodes matched by vertex, merge-tree arcs and
    pairs as sets. Returns a dict: ``nodes_original``, ``nodes_decompressed``,
    ``false_positive``, ``false_negative``, ``false_type``, ``arcs_missing``, ``arcs_extra``,
    ``pairs_missing``, ``pairs_extra``, ``mask_mismatch``, ``masked_vertices``, ``same`` (no
    difference at all), ``offending`` (vertices involved in a difference),
    ``persistence_abs``, ``max_abs_error``, ``rmse``, ``psnr``, ``value_range``. Missing
    vertices as for ``compress_scalar``: masked arrays and ``mask`` mark the original's,
    masked arrays and ``mask2`` the reconstruction's, ``fill_value`` both. Both fields are
    float32 or both float64 (compared in double), else a ValueError."""
    _require()
    a, m = _field(values, mask)
    b, m2 = _field(values2, mask2, "values2", "mask2")
    return _factz.verify_scalar(a, b, float(persistence), bound, int(threads), policy or "", m, m2, _fill(fill_value))
