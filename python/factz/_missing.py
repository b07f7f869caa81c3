"""Missing data in the Python API: ``numpy.ma`` inputs, ``mask=`` and ``fill_value`` turned
into what the extension takes (the planes' data, one boolean mask or None, the fill value of
each component: u and v, or u, v and w for a 3D field), and the warning for a fill value
nobody declared (docs/usage.md, "Missing data")."""

import warnings as _warnings

import numpy as _np


class SuspectedFillValueWarning(UserWarning):
    """Valid vertices hold a value that looks like an undeclared fill value (magnitude 1e15 or
    more, or exactly a common one such as 1e20 or -9999). It is compressed as data; declare it
    with ``fill_value=`` if it marks missing data."""


#: What a sequence of fill values must be, by component count.
_SEQUENCE = {2: "a pair (fill_u, fill_v)", 3: "a triple (fill_u, fill_v, fill_w)"}


def _fill_number(x, what, components):
    if isinstance(x, (bool, _np.bool_)) or not isinstance(x, (int, float, _np.integer, _np.floating)):
        raise ValueError(f"{what} must be a number, None, or {_SEQUENCE[components]}, got {x!r}")
    return float(x)


def fill_values(fill_value, components=2):
    """The fill value of each of the ``components`` (2: u, v; 3: u, v, w) as a float or None:
    from None, one number for every component, or one per component (any may be None)."""
    if fill_value is None:
        return (None,) * components
    if isinstance(fill_value, (tuple, list)) or (isinstance(fill_value, _np.ndarray) and fill_value.ndim == 1):
        if len(fill_value) != components:
            raise ValueError(f"fill_value as a sequence must be {_SEQUENCE[components]}, got {len(fill_value)} values")
        return tuple(None if x is None else _fill_number(x, "fill_value", components) for x in fill_value)
    if isinstance(fill_value, _np.ndarray) and fill_value.ndim == 0:
        fill_value = fill_value[()]
    return (_fill_number(fill_value, "fill_value", components),) * components


def fill_pair(fill_value):
    """(fill_u, fill_v) as floats or None: from None, one number for both components, or a
    pair (either may be None)."""
    return fill_values(fill_value, 2)


def as_mask(mask, name):
    """A boolean array of ``mask`` (bool, or integers with nonzero = missing); a ValueError
    for anything else."""
    m = _np.asarray(mask)
    if m.dtype == _np.bool_:
        return m
    if m.dtype.kind in "iu":
        return m != 0
    raise ValueError(f"{name} must be a boolean array (True where a vertex is missing), got dtype {m.dtype}")


def planes_args(planes, mask, names):
    """(the planes' data, mask or None): the masks of MaskedArray planes and ``mask`` folded
    into one C-contiguous boolean array (None when no vertex is masked); the data under a mask
    is passed on as it is (the extension checks dtype, rank and order). names: the planes'
    then the mask's, for messages."""
    masks = []
    data = []
    for p in planes:
        if isinstance(p, _np.ma.MaskedArray):
            masks.append(_np.ma.getmaskarray(p))
            p = _np.ma.getdata(p)
        data.append(p)
    if mask is not None:
        masks.append(as_mask(mask, names[-1]))
    if not masks:
        return data, None
    if all(isinstance(p, _np.ndarray) for p in data):  # else the extension says what is wrong
        for p, name in zip(data[1:], names[1:]):
            if p.shape != data[0].shape:
                raise ValueError(f"{names[0]} and {name} must have the same shape, got {data[0].shape} and {p.shape}")
        if mask is not None and masks[-1].shape != data[0].shape:
            raise ValueError(f"{names[-1]} must have the field's shape {data[0].shape}, got shape {masks[-1].shape}")
    m = masks[0] if len(masks) == 1 else _np.logical_or.reduce(masks)
    if not m.any():
        return data, None
    return data, _np.ascontiguousarray(m)


def field_args(u, v, mask, fill_value, names=("u", "v", "mask")):
    """(u data, v data, mask or None, fill_u, fill_v) for the extension (planes_args): the
    fill values are Python floats (doubles): the extension compares them as float32 with a
    float32 field and as they are with a float64 one."""
    fill_u, fill_v = fill_pair(fill_value)
    (u, v), m = planes_args((u, v), mask, names)
    return u, v, m, fill_u, fill_v


def field3d_args(u, v, w, mask, fill_value, names=("u", "v", "w", "mask")):
    """(u, v, w data, mask or None, (fill_u, fill_v, fill_w)) for the 3D functions of the
    extension, as field_args: masked arrays and ``mask`` (shape (nz, ny, nx)) folded into one
    mask, ``fill_value`` one number for the three components or a triple (Python floats: the
    extension compares them as float32 with a float32 field and as they are with a float64
    one)."""
    fills = fill_values(fill_value, 3)
    (u, v, w), m = planes_args((u, v, w), mask, names)
    return u, v, w, m, fills


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
