#!/usr/bin/env python3
"""A / B of factz binaries on the 3D fields of scripts/real_vector3d_fields.sh (issue 22):
in-process compression and decompression MB/s (`factz compress -3 ... --json`'s and
`factz decompress ... --json`'s throughput), the binaries run interleaved, REPEAT times each,
on THREADS threads (-x omp=THREADS); prints the medians per binary, the ratios last / first,
and the stream sizes each binary wrote (equal when the change keeps the bytes).

    python3 bench/ab3d_speed.py FIELDS_DIR BIN_A,BIN_B[,...] [REPEAT=7] [RELS=1e-1,1e-2,1e-3,1e-4] [THREADS=1]
"""
import json
import statistics
import subprocess
import sys
import tempfile

if len(sys.argv) < 3:
    sys.exit(__doc__)
fields, bins = sys.argv[1], sys.argv[2].split(",")
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 7
rels = sys.argv[4].split(",") if len(sys.argv) > 4 else ["1e-1", "1e-2", "1e-3", "1e-4"]
threads = sys.argv[5] if len(sys.argv) > 5 else "1"
scratch = tempfile.mkdtemp()
out = f"{scratch}/f.fz"
planes = [f"{scratch}/{c}.f32" for c in "uvw"]
for name, n in [("cavity3d", 48), ("bandlim3d", 64), ("abc3d", 64)]:
    for rel in rels:
        speed = [[] for _ in bins]  # by position: the same binary may be given twice
        dspeed = [[] for _ in bins]
        sizes = [set() for _ in bins]
        for _ in range(reps):
            for i, b in enumerate(bins):
                cmd = [b, "compress", "-3", str(n), str(n), str(n)]
                for c in "uvw":
                    cmd += ["-i", f"{fields}/{name}_{c}_{n}x{n}x{n}.f32"]
                cmd += ["-z", out, "-M", "REL", rel, "-x", f"omp={threads}", "--json"]
                r = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
                speed[i].append(r["throughput_mbs"])
                sizes[i].add(r["compressed_bytes"])
                cmd = [b, "decompress", "-z", out] + sum([["-o", p] for p in planes], []) + ["-x", f"omp={threads}", "--json"]
                r = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
                dspeed[i].append(r["throughput_mbs"])
        med = [statistics.median(v) for v in speed]
        dmed = [statistics.median(v) for v in dspeed]
        print(name, rel, "compress", " ".join(f"{m:7.2f}" for m in med), f" last/first {med[-1] / med[0]:.3f}",
              " decompress", " ".join(f"{m:7.2f}" for m in dmed), f" last/first {dmed[-1] / dmed[0]:.3f}",
              " sizes", [sorted(v) for v in sizes], flush=True)
