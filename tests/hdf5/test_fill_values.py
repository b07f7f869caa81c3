"""The HDF5 filter's fill values (issue 17): a dataset's user-defined fill value and a
declared one (cd_values[6]) mark vertices missing; HDF5's default fill value (0) does not.
Missing vertices come back bit for bit, the valid ones within the bound over the valid
range, with their critical points (factz verify --fill). The cd_values layouts of
hdf5/h5z_factz.cpp (comment at the top): 8 and 9 values as before, 10 and 11 with fills.

ctest sets HDF5_PLUGIN_PATH (the built plugin), FACTZ_CLI (the factz binary) and
FACTZ_DATA_DIR (tests/data). Needs h5py and numpy only, not the factz Python module."""

import json
import os
import pathlib
import struct
import subprocess

import numpy as np
import pytest

h5py = pytest.importorskip("h5py")

FILTER_ID = 40410
REL_1E_2 = (1202590843, 1065646817)  # the IEEE float64 1e-2 as two 32-bit words (low, high)
NO_FILL = 0x7FC00000  # the quiet NaN set_local writes in [9] when only a declared fill exists
DATA = pathlib.Path(os.environ.get("FACTZ_DATA_DIR", pathlib.Path(__file__).resolve().parents[1] / "data"))


def bits(value):
    return struct.unpack("<I", struct.pack("<f", value))[0]


def cd_values(mode=2, bound_mode=1, coder=1, edges=None, fill=None):
    """User cd_values: mode, bound type, REL 1e-2, coder[, exact edges[, declared fill]]."""
    cd = (mode, bound_mode) + REL_1E_2 + (coder,)
    if edges is not None or fill is not None:
        cd += (edges or 0,)
    if fill is not None:
        cd += (bits(fill),)
    return cd


def dcpl(cd, fill=None):
    """A mandatory filter (failures are errors, never silently unfiltered chunks)."""
    plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    plist.set_filter(FILTER_ID, h5py.h5z.FLAG_MANDATORY, cd)
    if fill is not None:
        plist.set_fill_value(np.array(fill, dtype="<f4"))
    return plist


@pytest.fixture(autouse=True)
def _plugin():
    path = os.environ.get("HDF5_PLUGIN_PATH")
    if not path or not os.path.exists(os.path.join(path, "libh5zfactz.so")):
        pytest.skip("HDF5_PLUGIN_PATH does not hold libh5zfactz.so")


@pytest.fixture(scope="module")
def ocean():
    """The 41 x 41 Arctic ocean current (tests/data): (u, v) with land as zero vectors, and
    the land mask (465 vertices)."""
    paths = [DATA / f"metno_arctic20_cur_{c}_41x41.f32" for c in "uv"]
    if not all(p.exists() for p in paths):
        pytest.skip(f"metno_arctic20_cur not in {DATA}")
    u, v = (np.fromfile(p, dtype="<f4").reshape(41, 41) for p in paths)
    land = (u == 0) & (v == 0)
    assert land.sum() == 465
    return u, v, land


def with_land(ocean, value):
    u, v, land = ocean
    w = np.stack([u, v]).copy()
    w[:, land] = value
    return w


def write(path, data, plist, chunks=None, fillvalue=None):
    with h5py.File(path, "w") as f:
        # h5py takes the fill value from fillvalue=, not from the property list's.
        f.create_dataset("uv", data=data, chunks=chunks or data.shape, dcpl=plist, fillvalue=fillvalue)
    with h5py.File(path, "r") as f:
        d = f["uv"]
        cd = d.id.get_create_plist().get_filter_by_id(FILTER_ID)[1]
        chunk = d.id.read_direct_chunk((0,) * d.ndim)[1]
        return d[...], tuple(cd), chunk


def stream_version(chunk):
    """The version of the chunk's sections (docs/format.md): header byte 6 of the compact
    container (version 18 in bytes 4-5, 23 where the exact values are stored byte-shuffled),
    which factz writes: 9 in mode speculative (its meta
    section names the cubic predictor); in modes none and block 2 without missing vertices, 5
    with them (whose codes then leave the missing vertices out)."""
    assert struct.unpack("<H", chunk[4:6])[0] in (18, 23), "factz writes the compact container"
    return chunk[6]


def verify(tmp_path, original, decoded, fill=None):
    """factz verify [--fill] on raw float32 dumps of both fields: its JSON report."""
    cli = os.environ.get("FACTZ_CLI")
    if not cli or not os.path.exists(cli):
        pytest.skip("FACTZ_CLI (the factz binary) not given")
    names = []
    for k, a in enumerate((original[0], original[1], decoded[0], decoded[1])):
        names.append(tmp_path / f"c{k}.f32")
        np.ascontiguousarray(a, dtype="<f4").tofile(names[-1])
    ny, nx = original.shape[-2:]
    fill_args = [] if fill is None else ["--fill", repr(float(fill))]
    out = subprocess.run([cli, "verify", "-2", str(nx), str(ny), "-i", names[0], "-i", names[1], "-d", names[2],
                          "-d", names[3], *fill_args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def assert_land_exact_and_ocean_bounded(original, decoded, land, rel=1e-2):
    """Land holds the original bits; every ocean value is within rel times the ocean's range."""
    assert np.array_equal(decoded[:, land].view("<u4"), original[:, land].view("<u4"))
    sea = original[:, ~land].astype(np.float64)
    eb = rel * (sea.max() - sea.min())
    err = np.abs(decoded[:, ~land].astype(np.float64) - sea).max()
    assert 0 < err <= eb, (err, eb)


def test_a_user_defined_fill_value_masks_the_land(tmp_path, ocean):
    """The issue's story: land at 1e20 used to stretch REL 1e-2 to an absolute bound of 1e18."""
    w = with_land(ocean, 1e20)
    r, cd, chunk = write(tmp_path / "a.h5", w, dcpl(cd_values()), fillvalue=np.float32(1e20))
    assert cd == cd_values() + (1, 41, 41, 0, bits(1e20))  # 10 values: the dataset's fill in [9]
    assert stream_version(chunk) == 9  # mode speculative
    assert_land_exact_and_ocean_bounded(w, r, ocean[2])
    rep = verify(tmp_path, w, r, 1e20)
    assert rep["masked_vertices"] == 465 and rep["mask_mismatch"] == 0
    assert rep["cp_original"] > 0 and rep["violations"] == 0
    assert max(rep["max_abs_error"]) <= 1e-2 * rep["value_range"]


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_every_mode_keeps_the_land_bits_and_the_bound(tmp_path, ocean, mode):
    w = with_land(ocean, np.float32(-9999))
    r, _, chunk = write(tmp_path / "m.h5", w, dcpl(cd_values(mode=mode)), fillvalue=np.float32(-9999))
    assert stream_version(chunk) == (9 if mode == 2 else 5)  # 5: tiled codes without the land
    assert_land_exact_and_ocean_bounded(w, r, ocean[2])
    if mode:
        assert verify(tmp_path, w, r, -9999)["violations"] == 0


def test_hdf5s_default_fill_value_leaves_zeros_as_data(tmp_path, ocean):
    """No fillvalue= means H5D_FILL_VALUE_DEFAULT (0): the land's zeros are data, the
    cd_values are the eight the plugin always wrote and the stream has no mask."""
    w = with_land(ocean, 0.0)
    r, cd, chunk = write(tmp_path / "z.h5", w, dcpl(cd_values()))
    assert cd == cd_values() + (1, 41, 41)
    assert stream_version(chunk) == 9  # mode speculative
    rep = verify(tmp_path, w, r)
    assert rep["masked_vertices"] == 0 and rep["violations"] == 0


def test_a_user_defined_fill_value_of_zero_masks_zeros(tmp_path, ocean):
    """fillvalue=0 is USER_DEFINED, unlike HDF5's default 0: zeros are then missing."""
    w = with_land(ocean, 0.0)
    r, cd, chunk = write(tmp_path / "z0.h5", w, dcpl(cd_values()), fillvalue=np.float32(0))
    assert cd == cd_values() + (1, 41, 41, 0, 0)
    assert stream_version(chunk) == 9  # mode speculative
    assert_land_exact_and_ocean_bounded(w, r, ocean[2])
    assert verify(tmp_path, w, r, 0.0)["masked_vertices"] >= 465


def test_a_declared_fill_value_masks_without_a_fill_value_property(tmp_path, ocean):
    """cd_values[6] declares the fill value of data whose dataset has none (a netCDF copy
    made in no-fill mode, as nccopy makes them): 11 values, [9] a NaN, [10] the declared."""
    w = with_land(ocean, 1e20)
    r, cd, chunk = write(tmp_path / "d.h5", w, dcpl(cd_values(fill=1e20)))
    assert cd == cd_values() + (1, 41, 41, 0, NO_FILL, bits(1e20))
    assert stream_version(chunk) == 9  # mode speculative
    assert_land_exact_and_ocean_bounded(w, r, ocean[2])


def test_edge_chunks_padded_with_the_fill_value_keep_each_chunks_bound(tmp_path, ocean):
    """HDF5 pads the partial chunks (32 x 32 of a 41 x 41 field) with the fill value: the
    padding is missing too, so the REL bound of each chunk is over its valid vertices.
    The land is a declared -9999 and the padding the dataset's 1e20: both masked."""
    w = with_land(ocean, np.float32(-9999))
    r, cd, _ = write(tmp_path / "e.h5", w, dcpl(cd_values(edges=0, fill=-9999)), chunks=(2, 32, 32),
                     fillvalue=np.float32(1e20))
    assert cd == cd_values() + (1, 32, 32, 0, bits(1e20), bits(-9999))
    land = ocean[2]
    for y0 in (0, 32):
        for x0 in (0, 32):
            s = (slice(None), slice(y0, y0 + 32), slice(x0, x0 + 32))
            assert_land_exact_and_ocean_bounded(w[s], r[s], land[s[1:]])


def test_a_nan_fill_value_pads_edge_chunks_with_missing_vertices(tmp_path, ocean):
    u, v, land = ocean
    w = np.stack([u, v])
    r, _, _ = write(tmp_path / "n.h5", w, dcpl(cd_values()), chunks=(2, 32, 32), fillvalue=np.float32(np.nan))
    assert np.abs(r - w).max() <= 1e-2 * (w.max() - w.min())


def test_an_infinite_fill_value_masks_infinity(tmp_path, ocean):
    w = with_land(ocean, np.inf)
    r, _, _ = write(tmp_path / "i.h5", w, dcpl(cd_values()), fillvalue=np.float32(np.inf))
    assert_land_exact_and_ocean_bounded(w, r, ocean[2])


@pytest.mark.parametrize("user_fill,dataset_fill", [(None, None), (None, 1e20), (1e20, None), (-9999.0, 1e20)])
def test_property_lists_copied_from_datasets_are_accepted_back(tmp_path, ocean, user_fill, dataset_fill):
    """A dataset's creation property list holds set_local's values (8 to 11). Given back to
    set_local for a new dataset, the declared fill value stays and the dataset's fill value
    is read again from the new list."""
    w = with_land(ocean, 1e20)
    edges = 15 if user_fill is None else None  # 9 values (edges, no fill) among the cases
    fill = None if dataset_fill is None else np.float32(dataset_fill)
    with h5py.File(tmp_path / "c.h5", "w") as f:
        f.create_dataset("a", data=w, chunks=w.shape, dcpl=dcpl(cd_values(edges=edges, fill=user_fill)),
                         fillvalue=fill)
        copied = f["a"].id.get_create_plist()
        before = copied.get_filter_by_id(FILTER_ID)[1]
        copied.set_fill_value(np.array(-1.5, dtype="<f4"))  # the new dataset's own fill value
        f.create_dataset("b", data=w, chunks=w.shape, dcpl=copied, fillvalue=np.float32(-1.5))
        after = f["b"].id.get_create_plist().get_filter_by_id(FILTER_ID)[1]
        back = f["b"][...]
    assert len(before) == {(None, None): 9, (None, 1e20): 10, (1e20, None): 11, (-9999.0, 1e20): 11}[
        (user_fill, dataset_fill)]
    declared = () if user_fill is None else (bits(user_fill),)
    assert after == before[:8] + (before[8] if len(before) > 8 else 0, bits(-1.5)) + declared
    if user_fill == 1e20:  # the declared fill value still marks the land of the copy
        assert np.array_equal(back[:, ocean[2]], w[:, ocean[2]])


@pytest.mark.parametrize("cd,message", [
    (cd_values(edges=16), "exact edges"),
    (cd_values() + (1, 8, 8, 0, 0, 0, 0), "at most 7 cd_values .* got 12"),
])
def test_bad_cd_values_are_refused_with_a_message(tmp_path, cd, message):
    with h5py.File(tmp_path / "bad.h5", "w") as f:
        with pytest.raises(ValueError, match=message):
            f.create_dataset("x", shape=(2, 8, 8), dtype="f4", chunks=(2, 8, 8), dcpl=dcpl(cd))


def scalar_with_land():
    z = np.fromfunction(lambda y, x: np.sin(0.1 * x) + np.cos(0.07 * y), (40, 50)).astype(np.float32)
    z[:5, :7] = 1e20
    return z


def test_scalar_chunks_holding_the_fill_value_fail_instead_of_losing_their_data(tmp_path):
    """Scalar streams have no mask yet: a mandatory filter fails the write with a message;
    an optional one stores the chunk unfiltered (lossless)."""
    z = scalar_with_land()
    none = cd_values(mode=0)
    try:
        with h5py.File(tmp_path / "probe.h5", "w") as f:
            f.create_dataset("z", data=np.ones_like(z), chunks=z.shape, dcpl=dcpl(none))
    except ValueError as e:
        assert "scalar datasets need the scalar module" in str(e)
        pytest.skip("plugin built without the scalar module")
    f = h5py.File(tmp_path / "s.h5", "w")
    d = f.create_dataset("z", shape=z.shape, dtype="f4", chunks=z.shape, dcpl=dcpl(none),
                         fillvalue=np.float32(1e20))
    with pytest.raises(RuntimeError, match="scalar datasets cannot mask"):
        d[...] = z
        f.flush()
    d[...] = np.where(z == np.float32(1e20), np.float32(0), z)  # no fill value left: compressed
    f.close()
    with h5py.File(tmp_path / "o.h5", "w") as f:
        f.create_dataset("z", data=z, chunks=z.shape, compression=FILTER_ID, compression_opts=none,
                         fillvalue=np.float32(1e20))
    with h5py.File(tmp_path / "o.h5", "r") as f:
        assert np.array_equal(f["z"][...], z)
        assert f["z"].id.get_storage_size() == z.nbytes  # stored unfiltered
