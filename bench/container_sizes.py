#!/usr/bin/env python3
"""What the container costs: every 2D vector field of ../shared/data (or the folders given)
compressed by `factz compress` at REL 1e-2, 1e-3 and 1e-4 in block and speculative mode; for
each stream its size (the compact container, format version 18), the size of the same stream
in the classic container (versions 1 to 17: 64 + 40 bytes per section around the same
section bytes, which is what builds before version 18 wrote), both ratios, and the best
violation-free cpSZ ratio of docs/benchmarks.md's table where it has one.

    python3 bench/container_sizes.py --factz build/factz [--data ../shared/data]
"""
import argparse
import glob
import json
import os
import re
import subprocess
import tempfile

# Best violation-free cpSZ / cpSZ-SoS ratio per field and REL (docs/benchmarks.md, "Block
# mode: bands coded in cache"; the same inputs and bounds).
BEST_CPSZ = {
    "cmems_glob1deg_cur": (4.22, 3.42, 3.39), "eraint_uv200": (35.44, 22.51, 11.52),
    "foam_shearlayer_t0.75": (51.58, 83.31, 52.11), "gfs10m_wind_2014": (10.13, 4.80, 3.16),
    "metno_arctic20_cur": (10.04, 4.49, 2.05), "ncl_941110_uv": (5.22, 3.87, 4.76),
    "ncl_storm_t0": (7.48, 4.45, 4.30), "ncl_uv300": (20.28, 9.19, 3.87),
    "piv_soapfilm": (3.88, 2.35, None),
}
RELS = ("1e-2", "1e-3", "1e-4")


def fields(data):
    for u in sorted(glob.glob(os.path.join(data, "*_u_*x*.f32"))):
        m = re.match(r"(.*)_u_(\d+)x(\d+)\.f32$", os.path.basename(u))
        v = os.path.join(data, f"{m.group(1)}_v_{m.group(2)}x{m.group(3)}.f32")
        if os.path.exists(v):
            yield m.group(1), int(m.group(2)), int(m.group(3)), u, v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--factz", required=True)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "s.fz")
        for name, nx, ny, u, v in fields(a.data):
            raw = 8 * nx * ny
            for k, rel in enumerate(RELS):
                for mode in ("block", "speculative"):
                    subprocess.run([a.factz, "compress", "-2", str(nx), str(ny), "-i", u, "-i", v, "-z", out,
                                    "--mode", mode, "-M", "REL", rel], check=True, capture_output=True)
                    info = json.loads(subprocess.run([a.factz, "info", "-z", out, "--json"], check=True,
                                                     capture_output=True, text=True).stdout)
                    assert info["format_version"] == 18 and info["container"] == "compact", info
                    stored = sum(s["stored_bytes"] for s in info["sections"])
                    compact = info["stream_bytes"]
                    classic = stored + 64 + 40 * len(info["sections"])
                    best = BEST_CPSZ.get(name, (None,) * 3)[k]
                    rows.append((name, nx, ny, rel, mode, classic, compact, raw / classic, raw / compact, best))
    print("| field | REL | mode | classic bytes | compact bytes | ratio classic | ratio compact | best cpSZ |")
    print("|---|---|---|---|---|---|---|---|")
    for name, nx, ny, rel, mode, classic, compact, rc, rn, best in rows:
        b = "-" if best is None else f"{best:.2f}"
        print(f"| {name} ({nx}x{ny}) | {rel} | {mode} | {classic} | {compact} | {rc:.2f} | {rn:.2f} | {b} |")
    for mode in ("block", "speculative"):
        with_cpsz = [r for r in rows if r[4] == mode and r[9] is not None]
        before = sum(r[7] >= r[9] for r in with_cpsz)
        after = sum(r[8] >= r[9] for r in with_cpsz)
        print(f"{mode}: at or above the best cpSZ on {after} of {len(with_cpsz)} rows (classic container: {before})")


if __name__ == "__main__":
    main()
