"""Divergence-free flows from Python (factz.flow): a basis, a field stream within its relative
l2 bound, the analytic divergence of the decoded field, the basis's bytes."""

import numpy as np
import pytest

import factz

if factz.flow.Basis is None:
    pytest.skip("this build has no flow module", allow_module_level=True)


@pytest.fixture(scope="module")
def taylor_green():
    g = np.linspace(0, 2 * np.pi, 12, endpoint=False)
    x, y = np.meshgrid(g, g)
    nodes = np.stack([x.ravel(), y.ravel()], 1)
    u = np.stack([np.sin(x) * np.cos(y), -np.cos(x) * np.sin(y)], -1).reshape(-1, 2)
    basis = factz.flow.build_basis(nodes, method="nystrom2", landmarks=32, periods=[2 * np.pi, 2 * np.pi])
    return basis, nodes, u


def test_flow_round_trip_within_the_bound_and_divergence_free(taylor_green):
    basis, nodes, u = taylor_green
    assert (basis.n, basis.dim, basis.method) == (144, 2, "nystrom2")
    buf, stats = factz.flow.compress(basis, u, rel_l2=1e-2, stats=True)
    assert stats["rel_bound"] <= 1e-2 + 1e-15 and stats["stream_bytes"] == len(buf)
    r = factz.flow.decompress(basis, buf)
    assert r.shape == u.shape and np.linalg.norm(r - u) / np.linalg.norm(u) <= 1e-2
    vel, grad, div = factz.flow.evaluate(basis, buf, nodes[:7] + 0.05, gradient=True)
    assert vel.shape == (7, 2) and grad.shape == (7, 2, 2)
    assert np.abs(div).max() <= 1e-10 * np.abs(grad).max()
    assert np.allclose(factz.flow.evaluate(basis, buf, nodes), r, atol=1e-9)
    assert factz.flow.stream_tolerance(buf) == pytest.approx(stats["tolerance"])
    assert factz.info(buf) == {"kind": "flow", "bytes": len(buf), "tolerance": stats["tolerance"]}


def test_basis_bytes_round_trip_and_guard_their_streams(taylor_green):
    basis, nodes, u = taylor_green
    again = factz.flow.Basis.from_bytes(basis.to_bytes())
    assert again.fingerprint == basis.fingerprint and np.array_equal(again.nodes, nodes)
    buf = factz.flow.compress(basis, u, rel_l2=1e-2)
    assert np.array_equal(factz.flow.decompress(again, buf), factz.flow.decompress(basis, buf))
    info = factz.info(basis.to_bytes())
    assert info["kind"] == "flow_basis" and info["n"] == 144 and info["fingerprint"] == basis.fingerprint
    other = factz.flow.build_basis(nodes * 1.01, method="global")
    with pytest.raises(ValueError):
        factz.flow.decompress(other, buf)
    with pytest.raises(ValueError, match="float64"):
        factz.flow.compress(basis, u.astype(np.float32))
    with pytest.raises(ValueError, match="rows"):
        factz.flow.compress(basis, u[:-1])
    with pytest.raises(ValueError, match="corrupt_stream"):
        factz.flow.Basis.from_bytes(basis.to_bytes()[:-1])
