#!/usr/bin/env bash
# Large scalar fields for the contour-tree race (issue 19): fields of 3 to 17 M vertices,
# where the race cannot hold every candidate (docs/toposz.md, step 5). Writes, as raw
# little-endian float32 named for bench/toposz_ab.sh:
#   smooth_256x256x256.f32   Gaussian noise, Fourier wavenumbers >= 8 set to 0 (seed 1:
#                            bench/toposz_speed.sh's field)
#   rough_256x256x256.f32    the same with wavenumbers >= 24 set to 0 (seed 2)
#   smooth_192x192x192.f32   wavenumbers >= 8 set to 0 (seed 3)
#   smooth2d_2048x2048.f32   a plane, wavenumbers >= 64 set to 0 (seed 4)
#   isabel_up_249x249x49.f32 ../shared/data's hurricane wind speed (125 x 125 x 25),
#                            trilinearly upsampled to 2n - 1 on each axis
#   dtmag_2048x2048.f32      the speed |(u, v)| of dt_synth's 2048^2 turbulent flow (seed 7)
#
#   bench/toposz_large_fields.sh OUT_DIR DT_SYNTH [SHARED_DATA=../shared/data]
#
# DT_SYNTH: the build's bench/evaluate/dt_synth. The hurricane is skipped, with a message,
# where SHARED_DATA does not hold it. Then, for example:
#   bench/toposz_ab.sh BEFORE/factz build/factz 1e-2 1e-2 OUT_DIR/*.f32
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 OUT_DIR DT_SYNTH [SHARED_DATA]" >&2
  exit 2
fi
out=$1
dt_synth=$(realpath "$2")
shared=${3:-$(dirname "$0")/../../shared/data}
mkdir -p "$out"
"$dt_synth" 2048 2048 7 "$out/dt2048" --no-count > /dev/null
PYTHONPATH="$(dirname "$0")/lib" /usr/bin/python3 - "$out" "$shared" <<'PY'
import os
import sys

import numpy as np
from smooth_fields import smooth

out, shared = sys.argv[1], sys.argv[2]


smooth(256, 8, 1, 3).tofile(f"{out}/smooth_256x256x256.f32")
smooth(256, 24, 2, 3).tofile(f"{out}/rough_256x256x256.f32")
smooth(192, 8, 3, 3).tofile(f"{out}/smooth_192x192x192.f32")
smooth(2048, 64, 4, 2).tofile(f"{out}/smooth2d_2048x2048.f32")
u = np.fromfile(f"{out}/dt2048_u_2048x2048.f32", "<f4")
v = np.fromfile(f"{out}/dt2048_v_2048x2048.f32", "<f4")
np.sqrt(u * u + v * v).astype("<f4").tofile(f"{out}/dtmag_2048x2048.f32")
os.remove(f"{out}/dt2048_u_2048x2048.f32")
os.remove(f"{out}/dt2048_v_2048x2048.f32")


def upsample(a, axis):  # 2n - 1 samples, linear between the originals
    n = a.shape[axis]
    x = np.linspace(0, n - 1, 2 * n - 1)
    i0 = np.floor(x).astype(int)
    i1 = np.minimum(i0 + 1, n - 1)
    shape = [1] * a.ndim
    shape[axis] = -1
    w = (x - i0).reshape(shape)
    return np.take(a, i0, axis) * (1 - w) + np.take(a, i1, axis) * w


isabel = f"{shared}/ttk_isabel02_velmag_125x125x25.f32"
if os.path.exists(isabel):
    a = np.fromfile(isabel, "<f4").reshape(25, 125, 125)
    for axis in range(3):
        a = upsample(a, axis)
    a.astype("<f4").tofile(f"{out}/isabel_up_249x249x49.f32")
else:
    print(f"{isabel} not found: the upsampled hurricane is skipped", file=sys.stderr)
PY
ls -l "$out"
