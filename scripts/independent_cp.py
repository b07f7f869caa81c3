#!/usr/bin/env python3
"""Independent exact critical-point extractor for 2D vector fields (pure Python).

Implements ARCHITECTURE.md section 3 from scratch, sharing no code with FaCTz:

* every float32 is read exactly (struct) and turned into an exact rational
  (fractions.Fraction), then into an integer multiple of 2^-149, so all
  arithmetic below is exact integer arithmetic;
* the Simulation of Simplicity tie-break is computed from its *definition*, not from
  the contract's list of terms: when the plain determinant is 0, each point is
  perturbed symbolically, (x + eps^(2*4^r), y + eps^(4^r)) with r its rank by global
  index among the three points (the origin, index -1, ranks first), the determinant is
  expanded as a polynomial in eps and the sign of its lowest-order non-zero coefficient
  decides.  (That this equals the contract's "first non-zero of D, x2-x1, y1-y2, x0-x2,
  +1" is a small theorem; agreeing with the C++ extractors checks it.)

Usage:  python3 scripts/independent_cp.py NX NY U.f32 V.f32 [--list]
Prints: {"critical_points": N, "types": {"saddle": .., ...}} (one JSON object); with
--list also "triangles": [[triangle id, type name], ...] in triangle order.
"""

import json
import struct
import sys
from fractions import Fraction

TYPE_NAMES = ["saddle", "attracting_node", "repelling_node", "attracting_focus",
              "repelling_focus", "center", "degenerate"]

SCALE = Fraction(2) ** 149  # every float32 is an integer multiple of 2^-149


def read_plane(path, n):
    with open(path, "rb") as fh:
        data = fh.read()
    if len(data) != 4 * n:
        raise SystemExit("%s: expected %d bytes (%d float32), found %d"
                         % (path, 4 * n, n, len(data)))
    values = struct.unpack("<%df" % n, data)
    out = []
    for x in values:
        if x != x or x in (float("inf"), float("-inf")):
            raise SystemExit("%s: NaN or Inf in input" % path)
        q = Fraction(x) * SCALE
        assert q.denominator == 1
        out.append(q.numerator)
    return out


def sign(a):
    return (a > 0) - (a < 0)


def poly_add(a, b, factor=1):
    out = dict(a)
    for e, c in b.items():
        out[e] = out.get(e, 0) + factor * c
    return out


def poly_mul(a, b):
    out = {}
    for ea, ca in a.items():
        for eb, cb in b.items():
            out[ea + eb] = out.get(ea + eb, 0) + ca * cb
    return out


def symbolic_sign(pts):
    """Sign of the perturbed determinant; pts = [(x, y, index)] * 3."""
    order = sorted(range(3), key=lambda k: pts[k][2])
    rank = [0, 0, 0]
    for r, k in enumerate(order):
        rank[k] = r
    # Coordinates as polynomials {exponent of eps: coefficient}.
    xs = [{0: p[0], 2 * 4 ** rank[k]: 1} for k, p in enumerate(pts)]
    ys = [{0: p[1], 4 ** rank[k]: 1} for k, p in enumerate(pts)]
    dx1 = poly_add(xs[1], xs[0], -1)
    dy2 = poly_add(ys[2], ys[0], -1)
    dx2 = poly_add(xs[2], xs[0], -1)
    dy1 = poly_add(ys[1], ys[0], -1)
    det = poly_add(poly_mul(dx1, dy2), poly_mul(dx2, dy1), -1)
    for e in sorted(det):
        if det[e] != 0:
            return sign(det[e])
    raise AssertionError("perturbed determinant vanished identically")


def orient(a, b, c):
    """Orientation of three (x, y, index) points, +1 or -1 (SoS)."""
    d = (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])
    if d != 0:
        return sign(d)
    return symbolic_sign([a, b, c])


ORIGIN = (0, 0, -1)


def inside(p0, p1, p2):
    s = orient(p0, p1, p2)
    return (orient(ORIGIN, p1, p2) == s and orient(p0, ORIGIN, p2) == s
            and orient(p0, p1, ORIGIN) == s)


def cp_type(ux, uy, vx, vy):
    det = ux * vy - uy * vx
    tr = ux + vy
    disc = tr * tr - 4 * det
    if det < 0:
        return "saddle"
    if det == 0:
        return "degenerate"
    if tr == 0:
        return "center"
    kind = "focus" if disc < 0 else "node"
    return ("attracting_" if tr < 0 else "repelling_") + kind


def extract(nx, ny, u, v):
    counts = {name: 0 for name in TYPE_NAMES}
    found = []
    for i in range(ny - 1):
        for j in range(nx - 1):
            a = i * nx + j            # (i, j)
            b = a + nx                # (i+1, j)
            c = a + 1                 # (i, j+1)
            e = a + nx + 1            # (i+1, j+1)
            for t, tri in ((0, (a, b, e)), (1, (a, c, e))):
                tri_id = 2 * (i * (nx - 1) + j) + t
                p = [(u[k], v[k], k) for k in tri]
                if not inside(*p):
                    continue
                f0, f1, f2 = p
                if t == 0:  # d/dx = f2 - f1, d/dy = f1 - f0
                    name = cp_type(f2[0] - f1[0], f1[0] - f0[0], f2[1] - f1[1], f1[1] - f0[1])
                else:       # d/dx = f1 - f0, d/dy = f2 - f1
                    name = cp_type(f1[0] - f0[0], f2[0] - f1[0], f1[1] - f0[1], f2[1] - f1[1])
                counts[name] += 1
                found.append([tri_id, name])
    return found, counts


def main(argv):
    listing = "--list" in argv[1:]
    argv = [a for a in argv if a != "--list"]
    if len(argv) != 5:
        sys.stderr.write("usage: independent_cp.py NX NY U.f32 V.f32 [--list]\n")
        return 2
    nx, ny = int(argv[1]), int(argv[2])
    if nx <= 0 or ny <= 0:
        sys.stderr.write("error: NX and NY must be positive\n")
        return 2
    u = read_plane(argv[3], nx * ny)
    v = read_plane(argv[4], nx * ny)
    found, counts = extract(nx, ny, u, v)
    result = {"critical_points": len(found), "types": counts}
    if listing:
        result["triangles"] = found
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
