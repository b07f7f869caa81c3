#!/usr/bin/env python3
"""The container's share of scalar streams (issue 19's fields): for each field, modes none and
contour-tree at one REL bound and persistence, the ratios of the stream in the compact
container (format version 18, what factz writes) and in the classic one (the same sections plus
64 + 40 bytes per section: what builds before version 18 wrote), and ct / none for both.

    python3 bench/scalar_container_sizes.py --factz build/factz --rel 1e-2 --persistence 1e-2 \\
        ../shared/data/pop_ocean_temp_320x384.f32 ... HELD/*.f32

File names end in _NXxNY.f32 (2D) or _NXxNYxNZ.f32 (3D); HELD is a folder written by
scripts/real_scalar_fields.sh.
"""
import argparse
import json
import os
import re
import subprocess
import tempfile


def sizes(factz, stream):
    """(compact bytes, classic bytes) of a stream file."""
    info = json.loads(subprocess.run([factz, "info", "-z", stream, "--json"], check=True, capture_output=True,
                                     text=True).stdout)
    assert info["container"] == "compact", info
    return info["stream_bytes"], sum(s["stored_bytes"] for s in info["sections"]) + 64 + 40 * len(info["sections"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--factz", required=True)
    ap.add_argument("--rel", default="1e-2")
    ap.add_argument("--persistence", default="1e-2")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    print("| field | none classic | ct classic | ct / none classic | none compact | ct compact | ct / none compact |")
    print("|---|---|---|---|---|---|---|")
    at_least = [0, 0]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "s.fz")
        for path in a.files:
            dims = [int(d) for d in re.search(r"_(\d+x\d+(?:x\d+)?)\.f32$", path).group(1).split("x")]
            grid = ["-2"] + [str(d) for d in dims] + ["--scalar"] if len(dims) == 2 else ["-3"] + [str(d) for d in dims]
            raw = 4
            for d in dims:
                raw *= d
            got = {}
            for mode, extra in (("none", ["--mode", "none"]), ("ct", ["--persistence", a.persistence])):
                subprocess.run([a.factz, "compress"] + grid + ["-i", path, "-z", out, "-M", "REL", a.rel] + extra,
                               check=True, capture_output=True)
                got[mode] = sizes(a.factz, out)
            (n_new, n_old), (c_new, c_old) = got["none"], got["ct"]
            at_least[0] += n_old / c_old >= 0.6
            at_least[1] += n_new / c_new >= 0.6
            print(f"| {os.path.basename(path)[:-4]} | {raw / n_old:.2f} | {raw / c_old:.2f} | {n_old / c_old:.3f} | "
                  f"{raw / n_new:.2f} | {raw / c_new:.2f} | {n_new / c_new:.3f} |", flush=True)
    print(f"ct / none at least 0.6: {at_least[1]} of {len(a.files)} (classic container: {at_least[0]})")


if __name__ == "__main__":
    main()
