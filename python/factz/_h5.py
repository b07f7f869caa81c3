"""The HDF5 filter from Python, the way hdf5plugin does it: ``import factz`` loads the
plugin library the package carries (``libh5zfactz.so``) and registers its filter class with
the HDF5 library h5py uses (``h5py.h5z.register_filter``; with an h5py older than 3.8,
``H5Zregister`` of the HDF5 library h5py has loaded), so h5py, h5netcdf, xarray and
netCDF4 (the same HDF5 library in the process) read and write the filter without
``HDF5_PLUGIN_PATH``. ``h5filter`` builds the keyword arguments of ``create_dataset``."""

import ctypes as _ctypes
import importlib.util as _importlib_util
import os as _os

import numpy as _np

from . import _factz

HDF5_FILTER_ID = _factz.HDF5_FILTER_ID
_MODES = {"none": 0, "block": 1, "speculative": 2}
_BOUNDS = {"abs": 0, "rel": 1}
_CODERS = {"huffman": 0, "ans": 1}

_plugin = None  # the loaded plugin library, kept so that it is never unloaded
_status = "not tried"


def hdf5_plugin_path():
    """The directory holding the HDF5 filter plugin ``libh5zfactz.so`` shipped with this
    package (also in the build tree), or ``None``. Programs outside Python find it through
    ``HDF5_PLUGIN_PATH``."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    for d in (here, _os.path.join(here, "plugin")):
        if _os.path.exists(_os.path.join(d, "libh5zfactz.so")):
            return d
    return None


def _hdf5_libraries():
    """The HDF5 libraries mapped into this process (Linux; an empty set elsewhere)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/libhdf5" in line}
    except OSError:
        return set()
    return {_os.path.realpath(p) for p in paths if "_hl" not in _os.path.basename(p)}


def register_hdf5_filter():
    """Registers the FaCTz filter (id ``HDF5_FILTER_ID``) with h5py's HDF5 library; returns
    True when it is available afterwards. Called by ``import factz`` when h5py is importable;
    calling it again does nothing more. False (see ``hdf5_filter_status()``) when h5py is
    missing, the package has no plugin, or the plugin links another HDF5 library than h5py
    (a pip wheel of h5py bundles its own): then set ``HDF5_PLUGIN_PATH`` to
    ``hdf5_plugin_path()`` for a matching build."""
    global _plugin, _status
    if _plugin is not None:
        return True
    if _importlib_util.find_spec("h5py") is None:
        _status = "h5py is not installed"
        return False
    import h5py

    directory = hdf5_plugin_path()
    if directory is None:
        _status = "this factz package carries no libh5zfactz.so"
        return False
    before = _hdf5_libraries()
    lib = _ctypes.CDLL(_os.path.join(directory, "libh5zfactz.so"))
    after = _hdf5_libraries()
    if before and after - before:
        _status = (f"the plugin links {sorted(after - before)[0]}, h5py uses {sorted(before)[0]}: not registered "
                   "(filter class pointers do not cross HDF5 libraries)")
        return False
    lib.H5PLget_plugin_info.restype = _ctypes.c_void_p
    filter_class = lib.H5PLget_plugin_info()
    if hasattr(h5py.h5z, "register_filter"):  # h5py >= 3.8
        h5py.h5z.register_filter(filter_class)
    elif len(before) == 1:  # older h5py (Debian 12 has 3.7): H5Zregister of h5py's own HDF5 library
        hdf5 = _ctypes.CDLL(next(iter(before)))
        hdf5.H5Zregister.argtypes = [_ctypes.c_void_p]
        hdf5.H5Zregister.restype = _ctypes.c_int
        with h5py.h5z.phil:
            if hdf5.H5Zregister(filter_class) < 0:
                _status = "H5Zregister refused the filter class"
                return False
    else:
        _status = "this h5py has no h5z.register_filter and its HDF5 library could not be located"
        return False
    if not h5py.h5z.filter_avail(HDF5_FILTER_ID):
        _status = "the filter was registered but HDF5 does not report it available"
        return False
    _plugin = lib
    _status = "registered from " + _os.path.join(directory, "libh5zfactz.so")
    return True


def hdf5_filter_status():
    """What ``register_hdf5_filter`` did: ``"registered from <path>"``, or why not."""
    return _status


def hdf5_compression_opts(mode="speculative", eb=1e-2, bound="rel", coder=None, exact_edges=0, fill_value=None):
    """The filter's ``cd_values`` for h5py's ``compression_opts``: (mode, bound type, the
    bound's float64 bits as low and high 32-bit words, coder), then, when given, the exact
    edges (bits 1, 2, 4, 8 of the chunk's outer columns and rows; 15: all) and a declared
    fill value (its float32 bits: float32 datasets only; a float64 dataset's fill value is
    its ``fillvalue``, which ``h5filter(..., dtype="float64")`` sets). Use with
    ``compression=factz.HDF5_FILTER_ID``, or take both from ``h5filter``. coder None is
    ``DEFAULT_CODER``."""
    coder = _factz.DEFAULT_CODER if coder is None else coder
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {sorted(_MODES)}, got {mode!r}")
    if bound not in _BOUNDS:
        raise ValueError(f"bound must be 'rel' or 'abs', got {bound!r}")
    if coder not in _CODERS:
        raise ValueError(f"coder must be 'huffman' or 'ans', got {coder!r}")
    if not 0 <= int(exact_edges) <= 15:
        raise ValueError(f"exact_edges must be bits 1, 2, 4, 8 (0 to 15), got {exact_edges!r}")
    bits = int(_np.array([eb], dtype="<f8").view("<u8")[0])
    opts = (_MODES[mode], _BOUNDS[bound], bits & 0xFFFFFFFF, bits >> 32, _CODERS[coder])
    if exact_edges or fill_value is not None:
        opts += (int(exact_edges),)
    if fill_value is not None:
        f32 = _np.array([fill_value], dtype="<f4")
        if _np.isinf(f32[0]) and not _np.isinf(float(fill_value)):
            raise ValueError(f"fill_value {fill_value!r} is outside the float32 range")
        opts += (int(f32.view("<u4")[0]),)
    return opts


def h5filter(bound="rel", eb=1e-3, mode="speculative", coder=None, exact_edges=0, fill_value=None, dtype=None):
    """The keyword arguments of h5py's ``create_dataset`` (and of xarray's h5netcdf
    encoding) for the FaCTz filter, as hdf5plugin's helpers give them:
    ``{"compression": HDF5_FILTER_ID, "compression_opts": hdf5_compression_opts(...)}``.
    A vector dataset has a component axis of length 2 third from last (``(..., 2, ny, nx)``),
    chunked ``(1, ..., 2, cy, cx)``; a 3D vector dataset one of length 3 fourth from last
    (``(..., 3, nz, ny, nx)``), chunked ``(1, ..., 3, cz, cy, cx)``, each chunk compressed as
    ``compress3d`` does (no ``exact_edges``; NaN and the fill value, in any component, mark
    missing vertices); other float32 datasets are scalar (mode "none" only).

    Float32 and float64 (little-endian) datasets both take the filter, float64 ones
    compressed as doubles (2D and 3D vector fields only). dtype: the dataset's, needed only with a
    ``fill_value`` for a float64 dataset (``"float64"`` / ``numpy.float64``): its fill value
    is then the dataset's own (``"fillvalue": fill_value`` among the arguments, compared with
    the doubles as they are), since the filter's declared fill value holds float32 bits."""
    if dtype is not None and _np.dtype(dtype) not in (_np.float32, _np.float64):
        raise ValueError(f"dtype must be float32 or float64 (the dataset's), got {_np.dtype(dtype)}")
    if fill_value is not None and dtype is not None and _np.dtype(dtype) == _np.float64:
        return {"compression": HDF5_FILTER_ID,
                "compression_opts": hdf5_compression_opts(mode, eb, bound, coder, exact_edges),
                "fillvalue": float(fill_value)}
    return {"compression": HDF5_FILTER_ID,
            "compression_opts": hdf5_compression_opts(mode, eb, bound, coder, exact_edges, fill_value)}


def hdf5_dcpl(mode="speculative", eb=1e-2, bound="rel", coder=None, mandatory=True):
    """An h5py dataset creation property list with the FaCTz filter, for
    ``create_dataset(..., chunks=..., dcpl=factz.hdf5_dcpl(...))``. h5py's
    ``compression=factz.HDF5_FILTER_ID`` makes the filter *optional*: HDF5 then silently
    stores a chunk uncompressed when the filter refuses it (an infinite value, a scalar dataset
    without the scalar module). A mandatory filter turns those cases into errors that carry
    the filter's message."""
    from h5py import h5p, h5z

    plist = h5p.create(h5p.DATASET_CREATE)
    flag = h5z.FLAG_MANDATORY if mandatory else h5z.FLAG_OPTIONAL
    plist.set_filter(HDF5_FILTER_ID, flag, hdf5_compression_opts(mode, eb, bound, coder))
    return plist
