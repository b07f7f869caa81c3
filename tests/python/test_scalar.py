"""Scalar fields from Python: compress_scalar / decompress_scalar (the bytes of `factz compress
--scalar`), contour_tree, verify_scalar, masked arrays in and out, float64 fields in and out
(computed in double, never through float32), and clear errors when a vector function gets a
scalar stream and back."""

import subprocess

import numpy as np
import pytest

import factz

if not hasattr(factz._factz, "compress_scalar"):
    pytest.skip("this build has no scalar module", allow_module_level=True)


def field(ny=45, nx=60):
    y, x = np.mgrid[0:ny, 0:nx]
    return (np.sin(x / 6.0) * np.cos(y / 5.0) + 0.01 * x).astype(np.float32)


def test_contour_tree_mode_keeps_the_simplified_tree():
    f = field()
    buf, stats = factz.compress_scalar(f, eb=1e-2, persistence=1e-2, stats=True)
    assert stats["tree_nodes"] > 4 and stats["eb_abs"] > 0
    g = factz.decompress_scalar(buf)
    assert g.shape == f.shape and g.dtype == np.float32
    assert np.abs(g - f).max() <= stats["eb_abs"]
    rep = factz.verify_scalar(f, g, persistence=1e-2)
    assert rep["same"] and rep["false_positive"] == rep["false_negative"] == rep["false_type"] == 0
    assert rep["nodes_original"] == rep["nodes_decompressed"] > 4


def test_scalar_bytes_are_those_of_the_cli(tmp_path, cli):
    f = field()
    f.tofile(tmp_path / "s.f32")
    subprocess.run([cli, "compress", "-2", "60", "45", "--scalar", "-i", tmp_path / "s.f32", "-z", tmp_path / "s.fz",
                    "-M", "REL", "1e-2", "--persistence", "1e-2"], check=True, capture_output=True)
    assert (tmp_path / "s.fz").read_bytes() == factz.compress_scalar(f, eb=1e-2, persistence=1e-2)
    assert factz.compress_scalar(f, mode="none", eb=0.1, bound="abs") != factz.compress_scalar(f)


def test_the_default_coder_keeps_the_smaller_stream():
    f = field()
    assert factz.scalar.SCALAR_DEFAULT_CODER == "smallest"
    for mode in ("none", "contour_tree"):
        buf, stats = factz.compress_scalar(f, mode=mode, stats=True)
        assert stats["coder"] in ("ans", "huffman", "context") and factz.info(buf)["coder"] == stats["coder"]
        assert buf == factz.compress_scalar(f, mode=mode, coder="smallest")
        if mode == "none":  # one quantization: every coder's stream of it
            assert buf == factz.compress_scalar(f, mode=mode, coder=stats["coder"])
            for other in ("ans", "huffman", "context"):
                assert len(buf) <= len(factz.compress_scalar(f, mode=mode, coder=other))
        g = factz.decompress_scalar(factz.compress_scalar(f, mode=mode, coder="context"))
        assert np.abs(g - f).max() <= 1e-2 * (f.max() - f.min())
    with pytest.raises(ValueError, match="smallest"):
        factz.compress_scalar(f, coder="zip")
    with pytest.raises(ValueError, match="huffman"):
        factz.compress(f, f, coder="smallest")
    with pytest.raises(ValueError, match="huffman"):
        factz.compress(f, f, coder="context")


def test_predictors_and_their_bytes_at_the_cli(tmp_path, cli):
    f = field()
    f.tofile(tmp_path / "s.f32")
    sizes = {}
    for predictor in ("lorenzo", "interpolation", "best"):
        buf, stats = factz.compress_scalar(f, mode="none", eb=1e-3, predictor=predictor, stats=True)
        assert stats["predictor"] == (predictor if predictor != "best" else stats["predictor"])
        assert np.abs(factz.decompress_scalar(buf) - f).max() <= stats["eb_abs"]
        subprocess.run([cli, "compress", "-2", "60", "45", "--scalar", "-i", tmp_path / "s.f32", "-z", tmp_path / "p.fz",
                        "-M", "REL", "1e-3", "--mode", "none", "--predictor", predictor], check=True, capture_output=True)
        assert (tmp_path / "p.fz").read_bytes() == buf
        sizes[predictor] = len(buf)
    assert sizes["best"] == min(sizes["lorenzo"], sizes["interpolation"])
    assert factz.compress_scalar(f, mode="none") == factz.compress_scalar(f, mode="none", predictor="best")
    buf, stats = factz.compress_scalar(f, predictor="interpolation", stats=True)
    assert stats["predictor"] == "interpolation"
    assert factz.verify_scalar(f, factz.decompress_scalar(buf), persistence=1e-2)["same"]
    with pytest.raises(ValueError, match="interpolation"):
        factz.compress_scalar(f, predictor="spline")


def test_three_dimensional_field_and_mode_none():
    f = np.stack([field(20, 24) * s for s in (1.0, 0.5, -0.3, 2.0)])  # (nz, ny, nx)
    buf = factz.compress_scalar(f, mode="none", eb=0.01, bound="abs")
    g = factz.decompress_scalar(buf)
    assert g.shape == (4, 20, 24) and np.abs(g - f).max() <= 0.01
    assert factz.info(buf)["shape"] == (4, 20, 24) and factz.info(buf)["mode"] == "none"


def test_contour_tree_structure():
    f = field()
    t = factz.contour_tree(f, persistence=0.0, segmentation=True)
    nodes = t["nodes"]
    assert nodes.dtype == factz.CT_NODE_DTYPE and len(nodes) == t["full_nodes"] > 10
    assert np.all(np.diff(nodes["vertex"]) > 0)
    assert set(nodes["type"]) <= set(factz.CT_NODE_TYPE_NAMES)
    assert np.array_equal(nodes["value"], f.reshape(-1)[nodes["vertex"]])
    assert t["contour_arcs"] and t["arcs"].shape == (len(nodes) - 1, 2)  # a tree: nodes - 1 arcs
    assert t["components"] == 1 and t["pruned_pairs"] == 0
    assert t["segmentation_lower"].shape == f.shape
    simplified = factz.contour_tree(f, persistence=0.2)
    assert len(simplified["nodes"]) < len(nodes) and simplified["pruned_pairs"] > 0
    assert np.all(simplified["pairs"]["persistence"] >= simplified["persistence_abs"] - 1e-12)


def test_masked_scalar_fields_in_and_out():
    f = field()
    land = np.zeros(f.shape, bool)
    land[10:20, 15:30] = True
    g = f.copy()
    g[land] = 1e20
    stream = factz.compress_scalar(g, fill_value=1e20)
    assert factz.compress_scalar(np.ma.MaskedArray(g, mask=land)) == stream
    assert factz.compress_scalar(g, mask=land) == stream
    back = factz.decompress_scalar(stream, masked=True)
    assert isinstance(back, np.ma.MaskedArray) and np.array_equal(back.mask, land)
    assert np.all(back.data[land] == np.float32(1e20))
    rep = factz.verify_scalar(np.ma.MaskedArray(g, mask=land), back)
    assert rep["same"] and rep["masked_vertices"] == land.sum() and rep["mask_mismatch"] == 0
    forest = factz.contour_tree(g, fill_value=1e20)
    assert forest["components"] == 1
    cut = np.zeros(f.shape, bool)
    cut[:, 30] = True
    assert factz.contour_tree(f, mask=cut)["components"] == 2


def test_vector_and_scalar_functions_point_to_each_other():
    f = field()
    s = factz.compress_scalar(f)
    with pytest.raises(ValueError, match="scalar stream.*decompress_scalar"):
        factz.decompress(s)
    with pytest.raises(ValueError, match="scalar stream.*decompress_scalar"):
        factz.stream_shape(s)
    vec = factz.compress(f, f)
    with pytest.raises(ValueError, match="vector stream.*factz.decompress"):
        factz.decompress_scalar(vec)
    with pytest.raises(ValueError, match="float32 or float64"):
        factz.compress_scalar(f.astype(np.int32))
    with pytest.raises(ValueError, match="dimensional"):
        factz.compress_scalar(f[0])
    with pytest.raises(ValueError, match="mode"):
        factz.compress_scalar(f, mode="speculative")
    with pytest.raises(ValueError, match="corrupt_stream"):
        factz.decompress_scalar(s[:-4])


def tiny_waves(nz=1, ny=30, nx=40):
    """1 + 1e-12 * (waves): every value rounds to the float 1.0, so the field's tree and a
    bound of 1e-15 exist only in double."""
    z, y, x = np.mgrid[0:nz, 0:ny, 0:nx]
    f = 1.0 + 1e-12 * (np.sin(x / 4.0) * np.cos(y / 3.0) + 0.2 * z + 0.01 * ((7 * x + 13 * y + 3 * z) % 5))
    return f[0] if nz == 1 else f


@pytest.mark.parametrize("nz", [1, 5])
def test_float64_fields_round_trip_in_double(nz):
    f = tiny_waves(nz)
    assert f.dtype == np.float64 and np.all(f.astype(np.float32) == 1.0)
    for mode in ("contour_tree", "none"):
        buf, stats = factz.compress_scalar(f, mode=mode, eb=1e-15, bound="abs", persistence=1e-2, stats=True)
        assert stats["eb_abs"] == 1e-15 and factz.info(buf)["dtype"] == "float64"
        g = factz.decompress_scalar(buf)
        assert g.dtype == np.float64 and g.shape == f.shape
        assert np.abs(g - f).max() <= 1e-15  # exact here: the values are near 1
        rep = factz.verify_scalar(f, g, persistence=1e-2)
        if mode == "contour_tree":
            assert rep["same"] and rep["nodes_original"] > 2
        # threads never change the bytes
        assert factz.compress_scalar(f, mode=mode, eb=1e-15, bound="abs", threads=1) == \
            factz.compress_scalar(f, mode=mode, eb=1e-15, bound="abs", threads=2)
    tree = factz.contour_tree(f)
    assert tree["nodes"].dtype == factz.scalar.CT_NODE_DTYPE64
    assert np.array_equal(tree["nodes"]["value"], f.reshape(-1)[tree["nodes"]["vertex"]])
    assert len(tree["nodes"]) > 2 and len(factz.contour_tree(f.astype(np.float32))["nodes"]) == 2


def test_float64_streams_are_those_of_the_cli(tmp_path, cli):
    f = tiny_waves(3)
    f.tofile(tmp_path / "s.f64")
    subprocess.run([cli, "compress", "-3", "40", "30", "3", "--dtype", "f64", "-i", tmp_path / "s.f64", "-z",
                    tmp_path / "s.fz", "-M", "REL", "1e-2", "--persistence", "1e-2"], check=True, capture_output=True)
    assert (tmp_path / "s.fz").read_bytes() == factz.compress_scalar(f, eb=1e-2, persistence=1e-2)


def test_masked_float64_fields_and_type_errors():
    f = tiny_waves()
    land = np.zeros(f.shape, bool)
    land[5:15, 10:20] = True
    fill = -9999.000000000123  # only a double holds it
    g = f.copy()
    g[land] = fill
    stream = factz.compress_scalar(g, fill_value=fill, eb=1e-14, bound="abs")
    assert factz.compress_scalar(np.ma.MaskedArray(g, mask=land), eb=1e-14, bound="abs") == stream
    back = factz.decompress_scalar(stream, masked=True)
    assert back.dtype == np.float64 and np.array_equal(back.mask, land)
    assert np.all(back.data[land] == fill)
    assert factz.verify_scalar(np.ma.MaskedArray(g, mask=land), back)["same"]
    assert factz.contour_tree(g, fill_value=np.float32(fill))["components"] == 1  # rounded: marks nothing
    with pytest.raises(ValueError, match="same dtype"):
        factz.verify_scalar(f, f.astype(np.float32))
