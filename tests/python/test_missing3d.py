"""Missing data in 3D vector fields from Python, as in 2D (test_missing.py): numpy.ma in and
out, ``mask=`` and ``fill_value`` for compress3d / critical_points3d / verify3d and
``decompress3d(buf, masked=True)``. Round trips bring the missing vertices back missing with
their bits, keep the bound on the valid ones and have zero violations; the critical points
are those of the C++ extractor (``factz cp -3``) and the bytes those of ``factz compress -3
--fill``; shapes that do not match are refused with a message that says so."""

import json
import subprocess
import warnings

import numpy as np
import pytest

import factz
from test_vector3d import abc_flow, write_planes


def land3d(shape):
    """A boolean mask: a ball, the plane x = 0 and scattered single vertices."""
    z, y, x = np.mgrid[0:shape[0], 0:shape[1], 0:shape[2]]
    return (((x - 14) ** 2 + (y - 11) ** 2 + (z - 9) ** 2 < 20) | (x == 0)
            | ((x * 7 + y * 13 + z * 5) % 41 == 0))


def bits(a):
    return np.ascontiguousarray(np.ma.getdata(a)).view(np.uint32)


@pytest.fixture(scope="module")
def field():
    """The ABC flow with 1e20 (a netCDF _FillValue) at the land vertices, and the land mask."""
    u, v, w = abc_flow()
    m = land3d(u.shape)
    for p in (u, v, w):
        p[m] = 1e20
    return u, v, w, m


def masked(field):
    u, v, w, m = field
    return tuple(np.ma.MaskedArray(p.copy(), mask=m.copy()) for p in (u, v, w)) + (m,)


@pytest.mark.parametrize("eb", [1e-2, 1e-3])
def test_masked_arrays_come_back_masked_with_the_bits_under_the_mask(field, eb):
    mu, mv, mw, m = masked(field)
    mw.data[0, 0, 0] = np.inf  # under the mask: stored as it is, no error
    mv.data[0, 1, 0] = np.float32(np.nan)
    buf, stats = factz.compress3d(mu, mv, mw, eb=eb, bound="abs", stats=True)
    assert factz.info(buf)["layout_version"] == 12 and stats["masked_vertices"] == m.sum() > 100
    u2, v2, w2 = factz.decompress3d(buf, masked=True)
    for a, b in ((mu, u2), (mv, v2), (mw, w2)):
        assert isinstance(b, np.ma.MaskedArray) and b.dtype == np.float32 and b.shape == m.shape
        assert np.array_equal(np.ma.getmaskarray(b), m)
        assert np.array_equal(bits(b)[m], bits(a)[m])  # missing vertices: their bits, inf and NaN included
        assert np.abs(np.ma.getdata(b)[~m] - np.ma.getdata(a)[~m]).max() <= eb  # valid vertices: the bound
    r = factz.verify3d(mu, mv, mw, u2, v2, w2)
    cps = factz.critical_points3d(mu, mv, mw)
    assert r["masked_vertices"] == m.sum() and r["mask_mismatch"] == 0
    assert r["violations"] == 0 and r["cp_original"] == r["cp_decompressed"] == len(cps) > 0
    assert max(r["max_abs_error"]) <= eb and 1 < r["value_range"] < 10  # the valid range, not 1e20's
    back = factz.critical_points3d(u2, v2, w2)  # the same tetrahedra and types on the masked mesh
    assert np.array_equal(back["tetrahedron"], cps["tetrahedron"]) and np.array_equal(back["type"], cps["type"])
    # the three masks are separate arrays: unmasking one leaves the others
    u2.mask[0, 0, 0] = False
    assert v2.mask[0, 0, 0] and w2.mask[0, 0, 0]


def test_plain_decompress_holds_the_stored_bits_and_an_unmasked_stream_has_an_empty_mask(field):
    u, v, w, m = field
    buf = factz.compress3d(u, v, w, mask=m)
    u2, v2, w2 = factz.decompress3d(buf)
    assert type(u2) is np.ndarray and (w2[m] == np.float32(1e20)).all()
    u, v, w = abc_flow()
    plain = factz.compress3d(u, v, w)
    backs = factz.decompress3d(plain, masked=True)
    assert all(isinstance(b, np.ma.MaskedArray) and not np.ma.getmaskarray(b).any() for b in backs)
    # an unmasked MaskedArray (nomask) and an all-False mask change nothing in the stream
    assert factz.compress3d(np.ma.MaskedArray(u), np.ma.MaskedArray(v), w) == plain
    assert factz.compress3d(u, v, w, mask=np.zeros(u.shape, bool)) == plain


def test_fill_value_mask_and_masked_arrays_give_one_stream(field):
    u, v, w, m = field
    mu, mv, mw, _ = masked(field)
    ref = factz.compress3d(u, v, w, fill_value=1e20)
    assert factz.compress3d(u, v, w, mask=m) == ref
    assert factz.compress3d(u, v, w, mask=m.astype(np.uint8) * 7) == ref  # nonzero = missing
    assert factz.compress3d(mu, mv, mw) == ref
    assert factz.compress3d(mu, v, w) == ref  # one masked plane masks the vertex
    assert factz.compress3d(u, v, w, fill_value=(None, None, 1e20)) == ref  # in any component
    assert factz.compress3d(u, v, w, fill_value=np.float32(1e20)) == ref
    assert factz.compress3d(u, v, w, fill_value=(1e20, 1e20, 1e20), mask=m) == ref
    # the union of the masks of the planes and mask=
    u0, v0, w0 = abc_flow()
    a, b, c = np.zeros(m.shape, bool), np.zeros(m.shape, bool), np.zeros(m.shape, bool)
    a[1, 2, 3], b[4, 5, 6], c[7, 8, 9] = True, True, True
    buf = factz.compress3d(np.ma.MaskedArray(u0, mask=a), np.ma.MaskedArray(v0, mask=b), w0, mask=c)
    assert np.array_equal(np.ma.getmaskarray(factz.decompress3d(buf, masked=True)[2]), a | b | c)


def test_critical_points_and_bytes_are_those_of_the_command_line_tool(tmp_path, field, cli):
    """The C++ extractor (``factz cp -3 --fill``) counts the critical points critical_points3d
    finds with the mask, and ``factz compress -3 --fill`` writes compress3d's bytes."""
    u, v, w, m = field
    nz, ny, nx = u.shape
    paths = write_planes(tmp_path, u, v, w)
    inputs = [x for p in paths for x in ("-i", p)]
    out = subprocess.run([cli, "cp", "-3", str(nx), str(ny), str(nz), *inputs, "--fill", "1e20", "--json"],
                         check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    cps = factz.critical_points3d(u, v, w, mask=m)
    assert report["critical_points"] == len(cps) > 0 and report["masked_vertices"] == m.sum()
    assert len(factz.critical_points3d(u, v, w, fill_value=1e20)) == len(cps)
    u0, v0, w0 = abc_flow()
    assert len(factz.critical_points3d(u0, v0, w0)) > len(cps)  # the mask takes tetrahedra off the mesh
    subprocess.run([cli, "compress", "-3", str(nx), str(ny), str(nz), *inputs, "-z", str(tmp_path / "cli.fz"),
                    "-M", "REL", "0.01", "--coder", factz.DEFAULT_CODER, "--zstd", "--fill", "1e20"],
                   check=True, capture_output=True)
    assert factz.compress3d(u, v, w, mask=m) == (tmp_path / "cli.fz").read_bytes()


def test_a_mask_is_the_same_missing_vertex_as_nan(field):
    u, v, w, m = field
    nan_w = w.copy()
    nan_w[m] = np.nan
    by_mask = factz.critical_points3d(u, v, w, mask=m)
    by_nan = factz.critical_points3d(u, v, nan_w)
    assert np.array_equal(by_mask["tetrahedron"], by_nan["tetrahedron"])
    assert np.array_equal(by_mask["type"], by_nan["type"])


def test_verify3d_reports_a_mask_mismatch(field):
    u, v, w, m = field
    buf = factz.compress3d(u, v, w, mask=m)
    u2, v2, w2 = factz.decompress3d(buf)
    # the reconstruction's missing vertices hold 1e20, valid there without mask2 or the fill value
    r = factz.verify3d(u, v, w, u2, v2, w2, mask=m)
    assert r["mask_mismatch"] == m.sum() and r["violations"] >= m.sum()
    for kw in (dict(mask=m, mask2=m), dict(fill_value=1e20)):
        r = factz.verify3d(u, v, w, u2, v2, w2, **kw)
        assert r["mask_mismatch"] == 0 and r["violations"] == 0 and r["masked_vertices"] == m.sum()
    m2 = m.copy()
    m2[5, 5, 5] = not m2[5, 5, 5]
    assert factz.verify3d(u, v, w, u2, v2, w2, mask=m, mask2=m2)["mask_mismatch"] == 1


def test_an_undeclared_fill_value_warns():
    u, v, w = abc_flow()
    w[2, 2, 2] = u[3, 3, 3] = 9.96921e36
    with pytest.warns(factz.SuspectedFillValueWarning, match=r"2 value\(s\) equal 9.96921e\+36.*fill_value="):
        factz.compress3d(u, v, w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        factz.compress3d(u, v, w, fill_value=9.96921e36)
        m = np.zeros(u.shape, bool)
        m[2, 2, 2] = m[3, 3, 3] = True
        factz.compress3d(u, v, w, mask=m)
        factz.compress3d(*abc_flow())


def test_shape_mismatches_and_bad_masks_are_refused_with_a_clear_message():
    u, v, w = (p[:6, :7, :8].copy() for p in abc_flow())
    good = np.zeros(u.shape, bool)
    with pytest.raises(ValueError, match=r"mask must have the field's shape \(6, 7, 8\), got shape \(6, 7, 7\)"):
        factz.compress3d(u, v, w, mask=np.zeros((6, 7, 7), bool))
    with pytest.raises(ValueError, match=r"mask must have the field's shape \(6, 7, 8\), got shape \(7, 8\)"):
        factz.compress3d(u, v, w, mask=np.zeros((7, 8), bool))  # a 2D mask for a 3D field
    with pytest.raises(ValueError, match=r"mask must have the field's shape \(6, 7, 8\)"):
        factz.compress3d(np.ma.MaskedArray(u), v, w, mask=np.zeros((6, 7, 9), bool))
    with pytest.raises(ValueError, match=r"mask must have the field's shape \(6, 7, 8\)"):
        factz.critical_points3d(u, v, w, mask=np.zeros((1, 7, 8), bool))
    with pytest.raises(ValueError, match=r"mask2 must have the field's shape \(6, 7, 8\)"):
        factz.verify3d(u, v, w, u, v, w, mask=good, mask2=np.zeros((6, 7), bool))
    with pytest.raises(ValueError, match=r"u and w must have the same shape, got \(6, 7, 8\) and \(6, 7, 7\)"):
        factz.compress3d(np.ma.MaskedArray(u), v, w[:, :, 1:].copy())
    with pytest.raises(ValueError, match=r"u2 and v2 must have the same shape"):
        factz.verify3d(u, v, w, np.ma.MaskedArray(u), v[1:].copy(), w)
    with pytest.raises(ValueError, match="shape"):
        factz.verify3d(u, v, w, u[1:], v[1:], w[1:], mask=good)
    with pytest.raises(ValueError, match="mask must be a boolean array.*float64"):
        factz.compress3d(u, v, w, mask=np.zeros(u.shape))
    with pytest.raises(ValueError, match="triple"):
        factz.compress3d(u, v, w, fill_value=(1.0, 2.0))
    with pytest.raises(ValueError, match="outside the float32 range"):
        factz.compress3d(u, v, w, fill_value=1e300)
    for bad in ("1e20", True, [None, "x", 1.0]):
        with pytest.raises(ValueError, match="fill_value"):
            factz.critical_points3d(u, v, w, fill_value=bad)
    with pytest.raises(ValueError, match="same dtype"):  # a masked array's data is checked as any array
        factz.compress3d(np.ma.MaskedArray(u.astype(np.float64)), v, w)
    # a list of booleans is a mask like any other; an infinity outside the mask is an error
    good[0, 0, 0] = True
    assert factz.compress3d(u, v, w, mask=good.tolist()) == factz.compress3d(u, v, w, mask=good)
    w[0, 0, 1] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        factz.compress3d(u, v, w, mask=good)
