"""Independent check of `factz ct` against GUDHI (issue 19).

The Freudenthal triangulation of the grid (docs/toposz.md: the 2D cells cut by their
(i, j)-(i+1, j+1) diagonal, each cube cut into the 6 tetrahedra along its main diagonal) goes
into a gudhi.SimplexTree with the lower-star filtration of the vertex ranks in (value, index)
order (Simulation of Simplicity): a simplex enters at the largest rank of its vertices. The
0-dimensional persistence pairs of that filtration are the minima with the vertices where
their sublevel-set components die (elder rule); the same with reversed ranks (upper star)
gives the maxima with the vertices where their superlevel-set components die. The tree
`factz ct --json` prints at a threshold must have exactly: as minima / maxima the extrema of
the pairs of persistence >= the threshold plus each component's lowest / highest vertex;
as vertices of down-degree (up-degree) >= 2 the vertices where those lower (upper) pairs
die, with one more arc per pair; no other node; and exactly those pairs, with the root pair
(lowest vertex, highest vertex) of each component.

Fields: random fields with small integer values (many ties), plateaus and sea-level pits,
masked fields (missing vertices, NaN or a declared fill value, and every simplex touching
them removed from the complex), and the real fields of tests/data and ../shared/data that
are present (others are skipped), two ocean fields among them with their land masked.

The same pairs decide the compressor's guarantee independently of factz's own tree: the
fields a contour-tree stream decodes to (random ones with ties, terraces, tiny and flat grids,
and real fields) must have, by GUDHI, exactly the original's pairs of persistence at least
the threshold compress used: no significant extremum or saddle moved, appeared or vanished,
and the same pairing.

Run by ctest (tests/scalar/CMakeLists.txt) as `python3 test_gudhi_contour_tree.py`, which
exits 77 (skipped) when GUDHI is not installed; pytest runs it too.
"""

import json
import os
import subprocess
import sys
import tempfile

MISSING = []
try:
    import numpy as np
    import scipy.sparse
    import scipy.sparse.csgraph
except ImportError:  # pragma: no cover - the skip path
    MISSING.append("numpy and scipy")
try:
    import gudhi
except ImportError:  # pragma: no cover - the skip path
    MISSING.append("GUDHI (python3-gudhi)")

if __name__ == "__main__" and MISSING:
    print("skipped: " + " and ".join(MISSING) + " not installed")
    sys.exit(77)

import pytest

if MISSING:
    pytestmark = pytest.mark.skip(reason=" and ".join(MISSING) + " not installed")

CLI = os.environ.get("FACTZ_CLI", "factz")
DATA_DIRS = [d for d in os.environ.get("FACTZ_DATA_DIR", "").split(":") if d]


def freudenthal_simplices(nx, ny, nz):
    """Top simplices of the triangulation, as an (m, k+1) array of vertex indices."""
    idx = np.arange(nx * ny * nz).reshape(nz, ny, nx)
    if nz == 1:
        if nx == 1 or ny == 1:  # a path: its edges
            flat = idx.ravel()
            return np.stack([flat[:-1], flat[1:]], 1)
        a = idx[0, :-1, :-1].ravel()
        right, up, diag = idx[0, :-1, 1:].ravel(), idx[0, 1:, :-1].ravel(), idx[0, 1:, 1:].ravel()
        return np.concatenate([np.stack([a, up, diag], 1), np.stack([a, right, diag], 1)])
    tets = []
    corner = idx[:-1, :-1, :-1]
    for perm in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):  # monotone paths
        step = [0, 0, 0]  # offsets in (x, y, z)
        verts = [corner.ravel()]
        for axis in perm:
            step[axis] += 1
            dx, dy, dz = step
            verts.append(idx[dz:nz - 1 + dz, dy:ny - 1 + dy, dx:nx - 1 + dx].ravel())
        tets.append(np.stack(verts, 1))
    return np.concatenate(tets)


def freudenthal_edges(nx, ny, nz):
    """The edges of the triangulation: (dz, dy, dx) offsets (0,0,1), (0,1,0), (0,1,1) in 2D, the
    seven +-(1,0,0) ... (1,1,1) in 3D (the diagonals of the cells and of the cubes)."""
    idx = np.arange(nx * ny * nz).reshape(nz, ny, nx)
    offsets = [(0, 0, 1), (0, 1, 0), (0, 1, 1)] if nz == 1 else \
        [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, 0, 1), (0, 1, 1), (1, 1, 1)]
    out = [np.stack([idx[:nz - dz, :ny - dy, :nx - dx].ravel(), idx[dz:, dy:, dx:].ravel()], 1)
           for dz, dy, dx in offsets]
    return np.concatenate(out)


def faces(simplices, k):
    """All k-vertex faces of the simplices (rows sorted, unique)."""
    from itertools import combinations
    cols = simplices.shape[1]
    out = np.concatenate([simplices[:, list(c)] for c in combinations(range(cols), k)])
    return np.unique(np.sort(out, axis=1), axis=0)


def sos_ranks(f, valid):
    """Rank of each valid vertex in (value, index) order; -1 for missing ones."""
    verts = np.flatnonzero(valid)
    order = verts[np.lexsort((verts, f[verts].astype(np.float64)))]
    rank = np.full(f.size, -1, np.int64)
    rank[order] = np.arange(order.size)
    return rank


class Complex:
    """The triangulation minus every simplex touching a missing vertex: vertices, edges and,
    unless skeleton_only, triangles and tetrahedra (the 0-dimensional pairs depend on the
    1-skeleton alone; the largest fields use it only)."""

    def __init__(self, nx, ny, nz, valid, skeleton_only):
        self.valid = valid
        self.vertices = np.flatnonzero(valid)
        edges = freudenthal_edges(nx, ny, nz)
        self.simplices = [edges[np.all(valid[edges], axis=1)]]
        if not skeleton_only and nx * ny * nz > 1:
            top = freudenthal_simplices(nx, ny, nz)
            if top.shape[1] == 4:
                tris = faces(top, 3)
                self.simplices.append(tris[np.all(valid[tris], axis=1)])
            if top.shape[1] > 2:
                self.simplices.append(top[np.all(valid[top], axis=1)])
        e = self.simplices[0]
        graph = scipy.sparse.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(valid.size, valid.size))
        self.component = scipy.sparse.csgraph.connected_components(graph, directed=False)[1]

    def pairs(self, f, upper):
        """0-dimensional pairs (extremum, dying vertex) of the lower-star filtration of the
        ranks (upper=True: of the reversed ranks), and the extrema that never die."""
        rank = sos_ranks(f, self.valid)
        if upper:
            rank = np.where(rank >= 0, rank.max() - rank, -1)
        st = gudhi.SimplexTree()
        st.insert_batch(self.vertices.reshape(1, -1), rank[self.vertices].astype(np.float64))
        for simp in self.simplices:  # in increasing dimension, each at its largest vertex rank
            if simp.size:
                st.insert_batch(simp.T.copy(), rank[simp].max(axis=1).astype(np.float64))
        assert not st.make_filtration_non_decreasing(), "the lower-star filtration was not monotone"
        st.compute_persistence(homology_coeff_field=2, persistence_dim_max=False)
        pairs, essential = [], []
        for birth, death in st.persistence_pairs():
            if len(birth) != 1:
                continue
            v = birth[0]
            if not death:
                essential.append(v)
                continue
            s = death[0] if rank[death[0]] > rank[death[1]] else death[1]
            if s != v:  # a regular vertex is born and dies at once
                pairs.append((v, s))
        return pairs, essential


def factz_tree(f, nx, ny, nz, persistence, fill=None):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "f.f32")
        f.astype("<f4").tofile(path)
        dims = ["-2", str(nx), str(ny)] if nz == 1 else ["-3", str(nx), str(ny), str(nz)]
        cmd = [CLI, "ct", *dims, "-i", path, "--persistence", repr(float(persistence)), "--json"]
        if fill is not None:
            cmd += ["--fill", repr(float(fill))]
        out = subprocess.run(cmd, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)


def check_against_gudhi(f, nx, ny, nz, thresholds, valid=None, fill=None, skeleton_only=False):
    """Asserts that factz's simplified trees at each threshold have GUDHI's extrema, saddles
    and pairs. Returns the number of pairs the thresholds removed."""
    f = np.asarray(f, np.float32).ravel()
    if valid is None:
        valid = np.ones(f.size, bool)
    cx = Complex(nx, ny, nz, valid, skeleton_only)
    fd = f.astype(np.float64)
    lower, lower_roots = cx.pairs(f, False)
    upper, upper_roots = cx.pairs(f, True)
    roots = []
    for lo in lower_roots:
        hi = [h for h in upper_roots if cx.component[h] == cx.component[lo]]
        assert len(hi) == 1
        if hi[0] != lo:
            roots.append((lo, hi[0]))
    removed = 0
    for persistence in thresholds:
        tree = factz_tree(f, nx, ny, nz, persistence, fill=fill)
        p_abs = tree["persistence_abs"]
        kept_lower = sorted((m, s) for m, s in lower if fd[s] - fd[m] >= p_abs)
        kept_upper = sorted((m, s) for m, s in upper if fd[m] - fd[s] >= p_abs)
        removed += len(lower) + len(upper) - len(kept_lower) - len(kept_upper)
        assert len(lower_roots) == len(upper_roots) == tree["components"]
        nodes = {n["vertex"]: n for n in tree["nodes"]}
        minima = sorted(v for v, n in nodes.items() if n["type"] in ("minimum", "isolated"))
        maxima = sorted(v for v, n in nodes.items() if n["type"] in ("maximum", "isolated"))
        assert minima == sorted({m for m, _ in kept_lower} | set(lower_roots)), persistence
        assert maxima == sorted({m for m, _ in kept_upper} | set(upper_roots)), persistence
        # Saddles: one more arc below (above) per lower (upper) pair dying there.
        for kept, key in ((kept_lower, "down"), (kept_upper, "up")):
            dying = {}
            for _, s in kept:
                dying[s] = dying.get(s, 0) + 1
            assert sorted(v for v, n in nodes.items() if n[key] >= 2) == sorted(dying), (persistence, key)
            assert all(nodes[s][key] == count + 1 for s, count in dying.items()), (persistence, key)
        assert set(nodes) == set(minima) | set(maxima) | {s for _, s in kept_lower + kept_upper}
        # Pairs: the kept ones of both filtrations and each component's root pair.
        got = sorted((p["extremum"], p["saddle"]) for p in tree["pairs"])
        assert got == sorted(kept_lower + kept_upper + roots), persistence
    return removed


THRESHOLDS = (0.0, 0.01, 0.1, 0.3, 0.6)


def test_issue19_reproducer_keeps_vertex_6():
    f = np.array([5, 5, 5, 5, 5, 5, 0, 10, 0, 5, 5, 5, 5, 5, 5], np.float32)
    tree = factz_tree(f, 5, 3, 1, 0.6)
    assert [(n["vertex"], n["type"]) for n in tree["nodes"]] == [(6, "minimum"), (7, "maximum")]
    check_against_gudhi(f, 5, 3, 1, THRESHOLDS)


def test_random_fields_with_many_ties():
    rng = np.random.default_rng(19)
    removed = 0
    for trial in range(40):
        three = trial % 4 == 0
        nx, ny, nz = (rng.integers(2, 6), rng.integers(2, 6), rng.integers(2, 5)) if three else \
            (rng.integers(1, 25), rng.integers(1, 20), 1)
        levels = (2, 3, 5, 1000)[trial % 4]
        f = rng.integers(0, levels, nx * ny * nz).astype(np.float32)
        removed += check_against_gudhi(f, nx, ny, nz, THRESHOLDS)
    assert removed > 60


def test_plateaus_and_sea_level_pits():
    for seed in range(6):
        nx, ny = 17 + seed, 13
        x, y = np.arange(nx), np.arange(ny)[:, None]
        rng = np.random.default_rng(seed)
        a, b = rng.uniform(0, 6.28, 2)
        terraces = np.maximum(0, np.round(2 * np.sin(0.9 * x + a) * np.cos(0.8 * y + b) + 0.5))
        pits = 1 + (x * 7 + y * 13 + (x * y) % 5) % 3
        pits = np.where((x * 3 + y * 5) % (5 + seed) == 0, 0, pits)
        for f in (terraces, pits, 4 - pits):
            check_against_gudhi(f.astype(np.float32), nx, ny, 1, THRESHOLDS)
    # 3D plateaus
    rng = np.random.default_rng(3)
    f = np.maximum(0, rng.integers(-2, 3, 6 * 5 * 4)).astype(np.float32)
    check_against_gudhi(f, 6, 5, 4, THRESHOLDS)


def mask_shapes(nx, ny, nz):
    """Masks (True = missing) of several shapes: checkerboard, a column channel cutting the
    grid in two, the main diagonal (which no edge crosses), a hole, the border, scattered."""
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    return {
        "checkerboard": (x + y + z) % 2 == 1,
        "column": x == nx // 2,
        "diagonal": x == y,
        "hole": (x == nx // 2) & (y == ny // 2),
        "border": (x == 0) | (y == 0) | (x == nx - 1) | (y == ny - 1),
        "scattered": (x * 7 + y * 13 + z * 5) % 10 < 3,
    }


def test_masked_fields():
    """Missing vertices (NaN, or a declared fill value): every simplex touching them leaves
    the complex, and the forest must have GUDHI's pairs component by component."""
    rng = np.random.default_rng(17)
    for nx, ny, nz in ((15, 11, 1), (9, 8, 1), (5, 4, 4)):
        for name, missing in mask_shapes(nx, ny, nz).items():
            for levels in (3, 1000):
                f = rng.integers(0, levels, nx * ny * nz).astype(np.float32)
                m = missing.ravel()
                nan_marked = f.copy()
                nan_marked[m] = np.nan
                check_against_gudhi(nan_marked, nx, ny, nz, THRESHOLDS, valid=~m)
                filled = f.copy()
                filled[m] = -9999.0
                check_against_gudhi(filled, nx, ny, nz, (0.0, 0.1), valid=~m, fill=-9999.0)


def real_field(name):
    for d in DATA_DIRS:
        path = os.path.join(d, name)
        if os.path.exists(path):
            return np.fromfile(path, "<f4")
    return None


REAL_FIELDS = [
    # (file, nx, ny, nz): scalar fields, and single components of the bundled vector fields
    ("metno_arctic20_cur_u_41x41.f32", 41, 41, 1),
    ("ncl_storm_t0_u_36x33.f32", 36, 33, 1),
    ("piv_soapfilm_v_63x63.f32", 63, 63, 1),
    ("gfs10m_wind_2014_u_360x181.f32", 360, 181, 1),
    ("ttk_heatedcyl_sim10_t4.5_128x256.f32", 128, 256, 1),
    ("pop_ocean_temp_320x384.f32", 320, 384, 1),
    ("eraint_z500_480x241.f32", 480, 241, 1),
    ("ttk_viscousfingers_t050_64x64x64.f32", 64, 64, 64),
    ("ttk_isabel02_velmag_125x125x25.f32", 125, 125, 25),
    ("ncl_nc4uvt_t_128x64x14.f32", 128, 64, 14),
    ("ncl_vinth2p_t_t0_128x64x18.f32", 128, 64, 18),
]


@pytest.mark.parametrize("name,nx,ny,nz", REAL_FIELDS)
def test_real_fields(name, nx, ny, nz):
    f = real_field(name)
    if f is None:
        pytest.skip(f"{name} not found in {DATA_DIRS}")
    assert f.size == nx * ny * nz
    check_against_gudhi(f, nx, ny, nz, (0.0, 0.001, 0.01, 0.05), skeleton_only=nz > 1)


@pytest.mark.parametrize("name,nx,ny", [("pop_ocean_temp_320x384.f32", 320, 384),
                                        ("cmems_glob1deg_cur_u_360x171.f32", 360, 171)])
def test_real_fields_with_land_masked(name, nx, ny):
    """Ocean fields whose land was set to 0: declared as the fill value, it leaves the mesh."""
    f = real_field(name)
    if f is None:
        pytest.skip(f"{name} not found in {DATA_DIRS}")
    valid = f != 0.0
    assert (~valid).sum() > 10000
    check_against_gudhi(f, nx, ny, 1, (0.0, 0.001, 0.01), valid=valid, fill=0.0)


def significant_pairs(cx, f, p_abs):
    """The pairs GUDHI finds in f of persistence at least p_abs, lower and upper, and each
    component's (lowest, highest) vertices: what a standard persistence tool reports as the
    significant extrema, their saddles and their pairing."""
    fd = np.asarray(f, np.float64)
    lower, lower_roots = cx.pairs(f, False)
    upper, upper_roots = cx.pairs(f, True)
    kept_lower = sorted((m, s) for m, s in lower if fd[s] - fd[m] >= p_abs)
    kept_upper = sorted((m, s) for m, s in upper if fd[m] - fd[s] >= p_abs)
    return kept_lower, kept_upper, sorted(lower_roots), sorted(upper_roots)


def compress_round_trip(f, nx, ny, nz, rel, persistence):
    """factz compress --mode contour-tree, then decompress: (decoded field, compress report)."""
    with tempfile.TemporaryDirectory() as d:
        src, fz, out = (os.path.join(d, n) for n in ("f.f32", "f.fz", "g.f32"))
        np.asarray(f, "<f4").tofile(src)
        dims = ["-2", str(nx), str(ny), "--scalar"] if nz == 1 else ["-3", str(nx), str(ny), str(nz)]
        run = subprocess.run([CLI, "compress", *dims, "-i", src, "-z", fz, "-M", "REL", repr(rel),
                              "--mode", "contour-tree", "--persistence", repr(persistence), "--json"],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        report = json.loads(run.stdout)
        back = subprocess.run([CLI, "decompress", "-z", fz, "-o", out], capture_output=True, text=True)
        assert back.returncode == 0, back.stderr
        return np.fromfile(out, "<f4"), report


def check_compressed_against_gudhi(f, nx, ny, nz, settings, skeleton_only=False):
    """For each (REL, P): the contour-tree stream's decoded field has, by GUDHI, exactly the
    original's significant pairs (the same extremum and saddle vertices, the same pairing,
    the same component roots) at the threshold compress used, and every value within the
    bound. Returns the number of significant pairs checked."""
    f = np.asarray(f, np.float32).ravel()
    cx = Complex(nx, ny, nz, np.ones(f.size, bool), skeleton_only)
    checked = 0
    for rel, persistence in settings:
        g, report = compress_round_trip(f, nx, ny, nz, rel, persistence)
        assert g.size == f.size
        err = np.abs(g.astype(np.float64) - f.astype(np.float64)).max()
        assert err <= report["eb_abs"], (rel, persistence, err, report["eb_abs"])
        p_abs = report["persistence_abs"]
        want = significant_pairs(cx, f, p_abs)
        got = significant_pairs(cx, g, p_abs)
        for kind, a, b in zip(("minima", "maxima", "lowest", "highest"), want, got):
            assert a == b, (rel, persistence, kind, sorted(set(a) ^ set(b))[:8])
        checked += len(want[0]) + len(want[1])
    return checked


def test_compressed_fields_keep_their_significant_pairs():
    """Mode contour-tree against GUDHI on the decoded fields: random fields with many ties,
    terraces, a smooth field with noise, and tiny or flat grids."""
    rng = np.random.default_rng(23)
    checked = 0
    for trial in range(12):
        three = trial % 3 == 0
        nx, ny, nz = (int(rng.integers(3, 9)), int(rng.integers(3, 9)), int(rng.integers(2, 6))) if three else \
            (int(rng.integers(2, 40)), int(rng.integers(2, 30)), 1)
        levels = (3, 7, 1000)[trial % 3]
        f = rng.integers(0, levels, nx * ny * nz).astype(np.float32)
        checked += check_compressed_against_gudhi(f, nx, ny, nz, ((1e-2, 1e-2), (1e-1, 1e-2), (1e-3, 0.2)))
    x, y = np.meshgrid(np.arange(64), np.arange(48))
    smooth = np.sin(x / 5.0) * np.cos(y / 7.0) + 0.05 * rng.standard_normal(x.shape)
    terraces = np.maximum(0, np.round(3 * np.sin(0.3 * x) * np.cos(0.25 * y)))
    for f in (smooth, terraces):
        checked += check_compressed_against_gudhi(f, 64, 48, 1, ((1e-2, 1e-2), (1e-3, 1e-3), (1e-2, 1e-3)))
    for f, nx, ny in ((np.zeros(6), 3, 2), (np.full(4, 7.0), 2, 2), (np.array([1.0, 0.0]), 2, 1)):
        check_compressed_against_gudhi(f, nx, ny, 1, ((1e-2, 1e-2),))
    assert checked > 100


# The scalar fields of REAL_FIELDS, not the vector components, and not the hurricane (its
# GUDHI complexes and two compressions would double the test's time).
COMPRESSED_FIELDS = [r for r in REAL_FIELDS
                     if not r[0].startswith(("metno_", "ncl_storm_", "piv_", "gfs10m_", "ttk_isabel"))]


@pytest.mark.parametrize("name,nx,ny,nz", COMPRESSED_FIELDS)
def test_compressed_real_fields_keep_their_significant_pairs(name, nx, ny, nz):
    """Issue 19's acceptance by an independent tool: no significant extremum of a real field
    moves, appears or disappears after a contour-tree round trip."""
    f = real_field(name)
    if f is None:
        pytest.skip(f"{name} not found in {DATA_DIRS}")
    assert f.size == nx * ny * nz
    checked = check_compressed_against_gudhi(f, nx, ny, nz, ((1e-2, 1e-2), (1e-3, 1e-3)), skeleton_only=nz > 1)
    assert checked > 0


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-rs", "-p", "no:cacheprovider"]))
