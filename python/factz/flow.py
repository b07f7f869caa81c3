"""Divergence-free compression of incompressible flows (docs/flow.md; the C++ API
``factz/flow.hpp``; ``factz flow``). Nodal velocities are fitted with divergence-free
matrix-valued kernels and the fit's coefficients coded within a relative l2 bound (the nodal
error theorem), so every decoded field is analytically divergence-free.

A ``Basis`` is built once per mesh (nodes: an ``(n, dim)`` float64 array, dim 2 or 3) and
stored apart (``Basis.to_bytes`` / ``Basis.from_bytes``, the bytes of ``factz flow basis``);
a field stream holds only one field's coefficients and is decoded with its basis.
"""

import numpy as _np

from . import _factz

if hasattr(_factz, "FlowBasis"):
    #: The per-mesh part: ``dim``, ``n``, ``nodes``, ``periods``, ``method``,
    #: ``coefficients`` (stored per field), ``blocks``, ``fingerprint``; ``to_bytes()``,
    #: ``Basis.from_bytes(buf)``.
    Basis = _factz.FlowBasis
else:  # a build without src/flow
    Basis = None

METHODS = ("global", "nystrom2", "hybrid", "multilevel", "frame")


def _require():
    if Basis is None:
        raise RuntimeError("this build of factz has no flow module (src/flow)")


def _rows(a, name):
    if not isinstance(a, _np.ndarray):
        raise ValueError(f"{name} must be a numpy.ndarray of float64, got {type(a).__name__}")
    return a


def build_basis(nodes, method="nystrom2", landmarks=32, periods=None, matern_lengths=None, wendland_beta=6.0,
                training=None):
    """A basis for ``nodes`` (``(n, dim)`` float64). method: one of ``METHODS`` (docs/flow.md,
    "Fitting schemes"). landmarks: per Nystrom level. periods: None or dim periods (0: not
    periodic). matern_lengths: the Matern mixture's lengths (None: a quarter of the extent).
    wendland_beta: Wendland support in node spacings. training: velocity arrays
    (``(n, dim)`` each) for residual-adaptive landmarks (nystrom2)."""
    _require()
    return _factz.flow_build_basis(_rows(nodes, "nodes"), method, int(landmarks), list(periods or []),
                                   list(matern_lengths or []), float(wendland_beta),
                                   [_rows(t, "training velocities") for t in (training or [])])


def compress(basis, u, rel_l2=1e-3, coder="factz", tolerance="apriori", stats=False):
    """Compresses nodal velocities ``u`` (``(n, dim)`` float64, n = ``basis.n``) so that the
    relative l2 nodal error is at most ``rel_l2`` (by the theorem; a ValueError when the fit
    alone exceeds it). coder: ``"factz"`` or ``"zfp"``. tolerance: ``"apriori"`` or
    ``"measured"`` (docs/flow.md). stats=True returns ``(bytes, dict)`` with ``tolerance``,
    ``bound``, ``rel_bound``, ``rel_l2_error``, ``max_abs_error``, ``ratio``, ..."""
    _require()
    buf, info = _factz.flow_compress(basis, _rows(u, "u"), float(rel_l2), coder, tolerance)
    return (buf, info) if stats else buf


def decompress(basis, buf):
    """The nodal velocities (``(n, dim)`` float64) of a field stream; a stream written with
    another basis is a ValueError (its fingerprint differs)."""
    _require()
    return _factz.flow_decompress(basis, buf)


def evaluate(basis, buf, points, gradient=False):
    """The decoded field's velocity at ``points`` (``(p, dim)`` float64): a ``(p, dim)``
    array, or with gradient=True ``(velocity, gradient, divergence)``: the analytic gradient
    ``(p, dim, dim)`` (``[point, i, k] = d u_i / d x_k``) and its trace (zero to roundoff)."""
    _require()
    velocity, grad, div = _factz.flow_evaluate(basis, buf, _rows(points, "points"), bool(gradient))
    return (velocity, grad, div) if gradient else velocity


def stream_tolerance(buf):
    """The coefficient tolerance recorded in a field stream (read from its header)."""
    _require()
    return _factz.flow_stream_tolerance(buf)
