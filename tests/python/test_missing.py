"""Missing data from Python: numpy.ma in and out, fill_value, mask=, NaN payloads, all-masked
fields, verify's mask_mismatch, critical points on the masked mesh, the codec, and the same
bytes as the command line tool's --fill."""

import subprocess
import warnings

import numpy as np
import pytest

import factz
from conftest import analytic

MODES = ["none", "block", "speculative"]


def land(shape=(61, 97)):
    """A boolean mask: a disc, the first two columns and scattered single vertices."""
    y, x = np.mgrid[0:shape[0], 0:shape[1]]
    return ((x - 60) ** 2 + (y - 30) ** 2 < 100) | (x < 2) | ((x * 7 + y * 13) % 37 == 0)


def bits(a):
    return np.ascontiguousarray(np.ma.getdata(a)).view(np.uint32)


def masked_field(under=1e20):
    u, v = analytic()
    m = land(u.shape)
    u[m] = under
    v[m] = under
    return np.ma.MaskedArray(u, mask=m), np.ma.MaskedArray(v, mask=m.copy()), m


@pytest.mark.parametrize("mode", MODES)
def test_masked_arrays_come_back_masked_with_the_bits_under_the_mask(mode):
    mu, mv, m = masked_field()
    assert m[0, 0]
    mu.data[0, 0] = np.inf  # under the mask: stored as it is, no error
    buf = factz.compress(mu, mv, mode=mode, eb=1e-2, bound="abs")
    u2, v2 = factz.decompress(buf, masked=True)
    assert isinstance(u2, np.ma.MaskedArray) and isinstance(v2, np.ma.MaskedArray)
    assert u2.dtype == np.float32 and u2.shape == m.shape
    assert np.array_equal(np.ma.getmaskarray(u2), m) and np.array_equal(np.ma.getmaskarray(v2), m)
    assert np.array_equal(bits(u2)[m], bits(mu)[m]) and np.array_equal(bits(v2)[m], bits(mv)[m])
    assert np.abs(u2 - mu).max() <= 1e-2 and np.abs(v2 - mv).max() <= 1e-2  # over valid vertices
    r = factz.verify(mu, mv, u2, v2)
    assert r["masked_vertices"] == m.sum() > 100
    assert r["mask_mismatch"] == 0 and r["cp_original"] > 0
    if mode != "none":
        assert r["violations"] == 0
    # the two masks are separate arrays: unmasking one leaves the other
    u2.mask[0, 0] = False
    assert v2.mask[0, 0]


def test_plain_decompress_holds_the_stored_bits():
    mu, mv, m = masked_field(under=-9999.0)
    buf = factz.compress(mu, mv)
    u2, v2 = factz.decompress(buf)
    assert type(u2) is np.ndarray and type(v2) is np.ndarray
    assert np.all(u2[m] == -9999.0) and np.all(v2[m] == -9999.0)
    u3, v3 = factz.decompress(buf, masked=True)
    assert np.array_equal(bits(u3), bits(u2)) and np.array_equal(bits(v3), bits(v2))


def test_a_stream_without_missing_vertices_decodes_with_an_empty_mask():
    u, v = analytic()
    buf = factz.compress(u, v)
    u2, v2 = factz.decompress(buf, masked=True)
    assert isinstance(u2, np.ma.MaskedArray) and not np.ma.getmaskarray(u2).any()
    assert np.array_equal(u2.data, factz.decompress(buf)[0])
    # an unmasked MaskedArray (nomask) and an all-False mask change nothing in the stream
    assert factz.compress(np.ma.MaskedArray(u), np.ma.MaskedArray(v)) == buf
    assert factz.compress(u, v, mask=np.zeros(u.shape, bool)) == buf


@pytest.mark.parametrize("mode", MODES)
def test_fill_value_mask_and_masked_arrays_give_one_stream(mode):
    mu, mv, m = masked_field()
    u, v = mu.data, mv.data
    by_fill = factz.compress(u, v, mode=mode, fill_value=1e20)
    assert factz.compress(u, v, mode=mode, fill_value=(1e20, 1e20)) == by_fill
    assert factz.compress(u, v, mode=mode, fill_value=np.float32(1e20)) == by_fill
    assert factz.compress(u, v, mode=mode, mask=m) == by_fill
    assert factz.compress(u, v, mode=mode, mask=m.astype(np.uint8) * 7) == by_fill  # nonzero = missing
    assert factz.compress(mu, mv, mode=mode) == by_fill
    u2, v2 = factz.decompress(by_fill, masked=True)
    assert np.array_equal(np.ma.getmaskarray(u2), m) and np.all(u2.data[m] == np.float32(1e20))
    # undeclared, 1e20 is data (with a warning): another stream, no mask
    with pytest.warns(factz.SuspectedFillValueWarning):
        as_data = factz.compress(u, v, mode=mode)
    assert as_data != by_fill
    assert not np.ma.getmaskarray(factz.decompress(as_data, masked=True)[0]).any()


def test_fill_value_per_component_and_mask_union():
    u, v = analytic()
    u[3, 4] = -9999.0
    v[10, 20] = -1e30
    v[12, 12] = -9999.0  # u's fill value, in v: data
    r = factz.decompress(factz.compress(u, v, fill_value=(-9999.0, -1e30)), masked=True)[0]
    mask = np.ma.getmaskarray(r)
    assert mask.sum() == 2 and mask[3, 4] and mask[10, 20] and not mask[12, 12]
    # masked arrays in u and v and mask= are united
    a = np.zeros(u.shape, bool)
    b = np.zeros(u.shape, bool)
    c = np.zeros(u.shape, bool)
    a[1, 1] = b[2, 2] = c[3, 3] = True
    u, v = analytic()
    buf = factz.compress(np.ma.MaskedArray(u, mask=a), np.ma.MaskedArray(v, mask=b), mask=c)
    assert np.array_equal(np.ma.getmaskarray(factz.decompress(buf, masked=True)[1]), a | b | c)


def test_fill_value_matches_the_command_line_tool(tmp_path, cli):
    mu, mv, m = masked_field()
    u, v = mu.data, mv.data
    v[0, 50] = -5.0  # -5 is v's fill value only
    (tmp_path / "u.f32").write_bytes(u.tobytes())
    (tmp_path / "v.f32").write_bytes(v.tobytes())
    ny, nx = u.shape
    for args, fill in ((["--fill", "1e20"], 1e20), (["--fill-u", "1e20", "--fill-v", "-5"], (1e20, -5.0))):
        out = tmp_path / "s.fz"
        subprocess.run([cli, "compress", "-2", str(nx), str(ny), "-i", str(tmp_path / "u.f32"), "-i",
                        str(tmp_path / "v.f32"), "-z", str(out)] + args, check=True, capture_output=True)
        assert factz.compress(u, v, fill_value=fill) == out.read_bytes()


def test_nan_payloads_survive_and_mark_vertices_missing():
    u, v = analytic()
    u.view(np.uint32)[3, 4] = 0x7FC12345
    v.view(np.uint32)[30, 40] = 0xFFC00001
    u.view(np.uint32)[50, 60] = 0x7FA00000  # signalling NaN payload
    for mode in MODES:
        buf = factz.compress(u, v, mode=mode)
        u2, v2 = factz.decompress(buf, masked=True)
        assert np.array_equal(np.argwhere(np.ma.getmaskarray(u2)), [[3, 4], [30, 40], [50, 60]])
        assert bits(u2)[3, 4] == 0x7FC12345 and bits(v2)[30, 40] == 0xFFC00001 and bits(u2)[50, 60] == 0x7FA00000
        assert factz.verify(u, v, u2, v2)["mask_mismatch"] == 0
        # plain arrays: NaN marks the vertices on its own
        p, q = factz.decompress(buf)
        r = factz.verify(u, v, p, q)
        assert r["masked_vertices"] == 3 and r["mask_mismatch"] == 0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("valid", [0, 1])
def test_all_masked_and_one_valid_vertex(mode, valid):
    u, v = analytic(20, 16)
    m = np.ones(u.shape, bool)
    if valid:
        m[8, 9] = False
    u[m] = 1e20
    buf = factz.compress(np.ma.MaskedArray(u, mask=m), v, mode=mode)
    u2, v2 = factz.decompress(buf, masked=True)
    assert np.array_equal(np.ma.getmaskarray(u2), m)
    assert np.array_equal(bits(u2)[m], bits(u)[m]) and np.array_equal(bits(v2)[m], bits(v)[m])
    if valid:
        eb = 1e-2 * abs(float(u[8, 9]) - float(v[8, 9]))
        assert abs(u2[8, 9] - u[8, 9]) <= eb and abs(v2[8, 9] - v[8, 9]) <= eb
    assert len(factz.critical_points(u2, v2)) == 0
    r = factz.verify(np.ma.MaskedArray(u, mask=m), v, u2, v2)
    assert r["masked_vertices"] == m.sum() and r["violations"] == 0 and r["cp_original"] == 0


def test_verify_reports_a_mask_mismatch():
    u, v = analytic()
    m = land(u.shape)
    buf = factz.compress(u, v, mask=m)  # valid-looking data under the mask
    p, q = factz.decompress(buf)
    # the plain reconstruction says nothing about the mask: every masked vertex mismatches
    r = factz.verify(u, v, p, q, mask=m)
    assert r["mask_mismatch"] == m.sum() and r["violations"] >= m.sum()
    assert r["masked_vertices"] == m.sum()
    assert factz.verify(u, v, p, q, mask=m, mask2=m)["mask_mismatch"] == 0
    mp, mq = factz.decompress(buf, masked=True)
    assert factz.verify(u, v, mp, mq, mask=m)["violations"] == 0
    # a vertex missing in the reconstruction only
    r = factz.verify(u, v, mp, mq)
    assert r["mask_mismatch"] == m.sum() and r["masked_vertices"] == 0
    # a fill value applies to both fields
    uf, vf = u.copy(), v.copy()
    uf[m] = vf[m] = -9999.0
    p, q = factz.decompress(factz.compress(uf, vf, fill_value=-9999.0))
    assert factz.verify(uf, vf, p, q, fill_value=-9999.0)["mask_mismatch"] == 0


def test_critical_points_on_the_masked_mesh():
    u, v = analytic()
    m = np.zeros(u.shape, bool)
    m[:, : u.shape[1] // 2] = True
    every = factz.critical_points(u, v)
    masked = factz.critical_points(u, v, mask=m)
    assert 0 < len(masked) < len(every)
    # only triangles of cells right of the mask, and exactly those of the full field there
    assert np.all(masked["column"] >= u.shape[1] // 2)
    right = every[every["column"] >= u.shape[1] // 2]
    assert np.array_equal(masked["triangle"], right["triangle"])
    assert np.array_equal(masked["type"], right["type"])
    nan_u = u.copy()
    nan_u[m] = np.nan
    filled = u.copy()
    filled[m] = -7.0
    for other in (factz.critical_points(nan_u, v), factz.critical_points(np.ma.MaskedArray(u, mask=m), v),
                  factz.critical_points(filled, v, fill_value=(-7.0, None))):
        assert np.array_equal(other["triangle"], masked["triangle"])


def test_infinity_as_a_declared_fill_value():
    u, v = analytic()
    u[4, 4] = v[4, 4] = np.inf
    with pytest.raises(ValueError, match="infinite"):
        factz.compress(u, v)
    u2, v2 = factz.decompress(factz.compress(u, v, fill_value=np.inf), masked=True)
    assert u2.mask[4, 4] and u2.data[4, 4] == np.inf and np.ma.getmaskarray(u2).sum() == 1
    u[5, 5] = -np.inf  # not the fill value
    with pytest.raises(ValueError, match="infinite value.*x=5 y=5"):
        factz.compress(u, v, fill_value=np.inf)


def test_compress_stats_count_the_masked_vertices():
    mu, mv, m = masked_field()
    buf, stats = factz.compress(mu, mv, mode="block", stats=True)
    assert buf == factz.compress(mu, mv, mode="block")
    assert stats["masked_vertices"] == m.sum()
    assert set(stats) == {"eb_abs", "exact_vertices", "repair_rounds", "repaired_vertices", "masked_vertices"}
    assert 0 < stats["eb_abs"] < 1  # relative to the valid range, not to 1e20
    assert factz.compress(mu.data, mv.data, stats=True, fill_value=1e20)[1]["masked_vertices"] == m.sum()


def test_an_undeclared_fill_value_warns():
    u, v = analytic()
    u[2, 2] = v[2, 2] = 9.96921e36
    with pytest.warns(factz.SuspectedFillValueWarning, match=r"2 value\(s\) equal 9.96921e\+36.*fill_value="):
        factz.compress(u, v)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        factz.compress(u, v, fill_value=9.96921e36)
        m = np.zeros(u.shape, bool)
        m[2, 2] = True
        factz.compress(u, v, mask=m)
        factz.compress(*analytic())


def test_bad_masks_and_fill_values_are_value_errors():
    u, v = analytic(20, 16)
    with pytest.raises(ValueError, match="mask must be a boolean array.*float64"):
        factz.compress(u, v, mask=np.zeros(u.shape))
    with pytest.raises(ValueError, match=r"mask must have the field's shape \(16, 20\), got shape \(16, 19\)"):
        factz.compress(u, v, mask=np.zeros((16, 19), bool))
    with pytest.raises(ValueError, match=r"mask must have the field's shape \(16, 20\)"):
        factz.compress(u, np.ma.MaskedArray(v), mask=np.zeros((16, 19), bool))
    with pytest.raises(ValueError, match="mask2 must have the field's shape"):
        factz.verify(u, v, u, v, mask2=np.zeros((3, 3), bool))
    with pytest.raises(ValueError, match="same shape"):
        factz.compress(np.ma.MaskedArray(u), v[:, 1:].copy())
    with pytest.raises(ValueError, match="outside the float32 range"):
        factz.compress(u, v, fill_value=1e300)
    with pytest.raises(ValueError, match="pair"):
        factz.compress(u, v, fill_value=(1.0, 2.0, 3.0))
    for bad in ("1e20", True, [None, "x"]):
        with pytest.raises(ValueError, match="fill_value"):
            factz.compress(u, v, fill_value=bad)
    with pytest.raises(ValueError, match="float32"):  # the data of a masked array is checked as any array
        factz.compress(np.ma.MaskedArray(u.astype(np.float64)), v)
    # a list of booleans is a mask like any other
    m = np.zeros(u.shape, bool)
    m[0, 0] = True
    assert factz.compress(u, v, mask=m.tolist()) == factz.compress(u, v, mask=m)


def test_the_codec_takes_nan_a_fill_value_and_masked_chunks():
    u, v = analytic(50, 40)
    u[3, 3] = np.nan
    u[4, 4] = v[4, 4] = 1e20
    chunk = np.stack([u, v])
    codec = factz.FactzCodec(mode="block", fill_value=1e20)
    enc = codec.encode(chunk)
    assert enc == factz.compress(u, v, mode="block", fill_value=1e20)
    dec = codec.decode(enc)
    assert type(dec) is np.ndarray and dec.shape == chunk.shape
    assert np.isnan(dec[0, 3, 3]) and bits(dec)[0, 3, 3] == bits(chunk)[0, 3, 3]
    assert dec[0, 4, 4] == np.float32(1e20) and dec[1, 4, 4] == np.float32(1e20)
    config = codec.get_config()
    assert config["fill_value"] == 1e20
    again = factz.FactzCodec.from_config(config)
    assert again == codec and again.encode(chunk) == enc
    pair = factz.FactzCodec(fill_value=(1e20, None))
    assert pair.get_config()["fill_value"] == [1e20, None]
    assert factz.FactzCodec.from_config(pair.get_config()) == pair
    # without a fill value the config is what it was (stores written before read the same)
    assert "fill_value" not in factz.FactzCodec().get_config()
    # a masked chunk: a vertex masked in either component is missing
    m = np.zeros(chunk.shape, bool)
    m[0, 7, 7] = m[1, 8, 8] = True
    plain = factz.FactzCodec(mode="block")
    enc = plain.encode(np.ma.MaskedArray(np.stack(analytic(50, 40)), mask=m))
    assert enc == factz.compress(*analytic(50, 40), mode="block", mask=m[0] | m[1])
    with pytest.raises(ValueError, match="fill_value"):
        factz.FactzCodec(fill_value="none")
