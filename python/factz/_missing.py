"""Missing data in the Python API: ``numpy.ma`` inputs, ``mask=`` and ``fill_value`` turned
into what the extension takes (the planes' data, one boolean mask or None, the fill values of
u and v), and the warning for a fill value nobody declared (docs/usage.md, "Missing data")."""

import warnings as _warnings

import numpy as _np


class SuspectedFillValueWarning(UserWarning):
    """Valid vertices hold a value that looks like an undeclared fill value (magnitude 1e15 or
    more, or exactly a common one such as 1e20 or -9999). It is compressed as data; declare it
    with ``fill_value=`` if it marks missing data."""


def _fill_number(x, what):
    if isinstance(x, (bool, _np.bool_)) or not isinstance(x, (int, float, _np.integer, _np.floating)):
        raise ValueError(f"{what} must be a number, None, or a pair (fill_u, fill_v), got {x!r}")
    return float(x)


def fill_pair(fill_value):
    """(fill_u, fill_v) as floats or None: from None, one number for both components, or a
    pair (either may be None)."""
    if fill_value is None:
        return None, None
    if isinstance(fill_value, (tuple, list)) or (isinstance(fill_value, _np.ndarray) and fill_value.ndim == 1):
        if len(fill_value) != 2:
            raise ValueError(f"fill_value as a sequence must be a pair (fill_u, fill_v), got {len(fill_value)} values")
        return tuple(None if x is None else _fill_number(x, "fill_value") for x in fill_value)
    if isinstance(fill_value, _np.ndarray) and fill_value.ndim == 0:
        fill_value = fill_value[()]
    f = _fill_number(fill_value, "fill_value")
    return f, f


def as_mask(mask, name):
    """A boolean array of ``mask`` (bool, or integers with nonzero = missing); a ValueError
    for anything else."""
    m = _np.asarray(mask)
    if m.dtype == _np.bool_:
        return m
    if m.dtype.kind in "iu":
        return m != 0
    raise ValueError(f"{name} must be a boolean array (True where a vertex is missing), got dtype {m.dtype}")


def field_args(u, v, mask, fill_value, names=("u", "v", "mask")):
    """(u data, v data, mask or None, fill_u, fill_v) for the extension: the masks of
    MaskedArray planes and ``mask`` folded into one C-contiguous boolean array (None when no
    vertex is masked); the data under a mask is passed on as it is (float32 or float64, the
    extension checks). The fill values are Python floats (doubles): the extension compares
    them as float32 with a float32 field and as they are with a float64 one."""
    fill_u, fill_v = fill_pair(fill_value)
    masks = []
    if isinstance(u, _np.ma.MaskedArray):
        masks.append((names[0], _np.ma.getmaskarray(u)))
        u = _np.ma.getdata(u)
    if isinstance(v, _np.ma.MaskedArray):
        masks.append((names[1], _np.ma.getmaskarray(v)))
        v = _np.ma.getdata(v)
    if mask is not None:
        masks.append((names[2], as_mask(mask, names[2])))
    if not masks:
        return u, v, None, fill_u, fill_v
    if isinstance(u, _np.ndarray) and isinstance(v, _np.ndarray):  # else the extension says what is wrong
        if u.shape != v.shape:
            raise ValueError(f"{names[0]} and {names[1]} must have the same shape, got {u.shape} and {v.shape}")
        if mask is not None and masks[-1][1].shape != u.shape:
            raise ValueError(f"{names[2]} must have the field's shape {u.shape}, got shape {masks[-1][1].shape}")
    m = masks[0][1] if len(masks) == 1 else _np.logical_or.reduce([m for _, m in masks])
    if not m.any():
        return u, v, None, fill_u, fill_v
    return u, v, _np.ascontiguousarray(m), fill_u, fill_v


def warn_suspected(suspect, how, stacklevel):
    """A SuspectedFillValueWarning for the extension's (value, count) or (value, count, dtype
    name), if any: the value is written as the field's dtype spells it (a float64 field's as
    the double to declare); stacklevel as warnings.warn's in the function that calls this one."""
    if suspect is None:
        return
    value, count = suspect[0], suspect[1]
    text = repr(float(value)) if suspect[2:] == ("float64",) else str(_np.float32(value))
    _warnings.warn(f"{count} value(s) equal {text}, which looks like a fill value for missing data; if it is one, "
                   f"declare it with {how}={text}, else it is compressed as data", SuspectedFillValueWarning,
                   stacklevel=stacklevel + 1)
