#!/usr/bin/env bash
# Makes the 3D vector fields of the real-data comparison (issue 22; docs/benchmarks.md, "3D:
# real data and cpSZ"), as raw little-endian float32 files NAME_{u,v,w}_NXxNYxNZ.f32 (x
# fastest, then y, then z), and prints one provenance line per field (also written to
# OUT_DIR/PROVENANCE.txt):
#
#   cavity3d   48^3  3D lid-driven cavity, OpenFOAM icoFoam (Debian package openfoam),
#                    velocity at the cell centres at the final time
#   cavity3d_crop 24^3  its crop bundled in tests/data (cells x 16..39, y 20..43, z 12..35)
#   bandlim3d  64^3  random band-limited field: i.i.d. Gaussian noise per component, every
#                    Fourier mode with |k| >= KCUT zeroed (numpy, fixed seed)
#   abc3d      64^3  the ABC flow of bench/lib/synth3d.hpp (A = sqrt 3, B = sqrt 2, C = 1)
#
#   scripts/real_vector3d_fields.sh OUT_DIR
#
# Env: NU (kinematic viscosity, default 0.0025: Re = U L / nu = 400 with lid speed 1 and
# unit cube), END_TIME (default 4), DT (default 0.01: Courant number about 0.5),
# KCUT (default 6). icoFoam runs serially.
# Needs the Debian package openfoam (apt-get install openfoam) and /usr/bin/python3 with numpy.
set -euo pipefail
out_dir=${1:?usage: $0 OUT_DIR}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
nu=${NU:-0.0025}
end_time=${END_TIME:-4}
dt=${DT:-0.01}
kcut=${KCUT:-6}
n=48
command -v icoFoam >/dev/null || { echo "icoFoam not found: apt-get install openfoam" >&2; exit 1; }
# The Debian binaries find their etc/ files (controlDict defaults) through WM_PROJECT_DIR.
export WM_PROJECT_DIR=${WM_PROJECT_DIR:-/usr/share/openfoam}
foam_version=$(dpkg-query -W -f='${Version}' openfoam 2>/dev/null || echo unknown)

case_dir=$(mktemp -d)
trap 'rm -rf "$case_dir"' EXIT
mkdir -p "$case_dir"/{0,constant,system}

header() {  # header CLASS LOCATION OBJECT
  printf 'FoamFile\n{\n    version 2.0;\n    format ascii;\n    class %s;\n    location "%s";\n    object %s;\n}\n' "$1" "$2" "$3"
}

# Unit cube, n^3 uniform hexahedra; the lid is the face y = 1, moving in +x at speed 1.
{
  header dictionary system blockMeshDict
  cat <<EOF
convertToMeters 1;
vertices ( (0 0 0) (1 0 0) (1 1 0) (0 1 0) (0 0 1) (1 0 1) (1 1 1) (0 1 1) );
blocks ( hex (0 1 2 3 4 5 6 7) ($n $n $n) simpleGrading (1 1 1) );
edges ();
boundary
(
    movingWall { type wall; faces ( (3 7 6 2) ); }
    fixedWalls { type wall; faces ( (0 4 7 3) (2 6 5 1) (1 5 4 0) (0 3 2 1) (4 5 6 7) ); }
);
mergePatchPairs ();
EOF
} >"$case_dir/system/blockMeshDict"
{
  header dictionary system controlDict
  cat <<EOF
application icoFoam;
startFrom startTime;
startTime 0;
stopAt endTime;
endTime $end_time;
deltaT $dt;
writeControl runTime;
writeInterval $end_time;
purgeWrite 0;
writeFormat ascii;
writePrecision 9;
writeCompression off;
timeFormat general;
timePrecision 6;
runTimeModifiable false;
EOF
} >"$case_dir/system/controlDict"
{
  header dictionary system fvSchemes
  cat <<'EOF'
ddtSchemes { default Euler; }
gradSchemes { default Gauss linear; }
divSchemes { default none; div(phi,U) Gauss linear; }
laplacianSchemes { default Gauss linear orthogonal; }
interpolationSchemes { default linear; }
snGradSchemes { default orthogonal; }
EOF
} >"$case_dir/system/fvSchemes"
{
  header dictionary system fvSolution
  cat <<'EOF'
solvers
{
    p { solver PCG; preconditioner DIC; tolerance 1e-06; relTol 0.05; }
    pFinal { $p; relTol 0; }
    U { solver smoothSolver; smoother symGaussSeidel; tolerance 1e-05; relTol 0; }
}
PISO { nCorrectors 2; nNonOrthogonalCorrectors 0; pRefCell 0; pRefValue 0; }
EOF
} >"$case_dir/system/fvSolution"
{
  header dictionary constant transportProperties
  echo "nu $nu;"
} >"$case_dir/constant/transportProperties"
{
  header volVectorField 0 U
  cat <<'EOF'
dimensions [0 1 -1 0 0 0 0];
internalField uniform (0 0 0);
boundaryField
{
    movingWall { type fixedValue; value uniform (1 0 0); }
    fixedWalls { type noSlip; }
}
EOF
} >"$case_dir/0/U"
{
  header volScalarField 0 p
  cat <<'EOF'
dimensions [0 2 -2 0 0 0 0];
internalField uniform 0;
boundaryField
{
    movingWall { type zeroGradient; }
    fixedWalls { type zeroGradient; }
}
EOF
} >"$case_dir/0/p"

echo "running blockMesh and icoFoam (${n}^3, nu $nu, dt $dt, end time $end_time) in $case_dir" >&2
t0=$(date +%s)
(cd "$case_dir" && blockMesh >log.blockMesh 2>&1 && icoFoam >log.icoFoam 2>&1) || {
  tail -20 "$case_dir"/log.* >&2
  exit 1
}
t1=$(date +%s)
echo "icoFoam took $((t1 - t0)) s" >&2

/usr/bin/python3 - "$case_dir" "$out_dir" "$end_time" "$n" "$nu" "$dt" "$foam_version" "$kcut" "$((t1 - t0))" <<'PY'
import os
import re
import sys

import numpy as np

case_dir, out_dir, end_time, n, nu, dt, foam_version, kcut, seconds = sys.argv[1:]
n, kcut = int(n), int(kcut)
provenance = []


def write_field(name, dims, comps, line):
    dims_txt = "x".join(str(d) for d in dims)
    for c, arr in zip("uvw", comps):
        # arr is indexed [z, y, x]: C order puts x fastest.
        assert arr.shape == tuple(reversed(dims))
        np.ascontiguousarray(arr, dtype="<f4").tofile(
            os.path.join(out_dir, f"{name}_{c}_{dims_txt}.f32"))
    mag = np.sqrt(sum(a.astype(np.float64) ** 2 for a in comps))
    lo = min(float(a.min()) for a in comps)
    hi = max(float(a.max()) for a in comps)
    line += f"; range over u, v, w [{lo:.6g}, {hi:.6g}], max |U| {mag.max():.6g}"
    provenance.append(f"{name}_{{u,v,w}}_{dims_txt}.f32: {line}")


# OpenFOAM ASCII volVectorField: "internalField nonuniform List<vector> N ( (a b c) ... )".
time_dirs = [d for d in os.listdir(case_dir) if re.fullmatch(r"[0-9.eE+-]+", d) and float(d) > 0]
last = max(time_dirs, key=float)
text = open(os.path.join(case_dir, last, "U")).read()
m = re.search(r"internalField\s+nonuniform\s+List<vector>\s*(\d+)\s*\(", text)
count = int(m.group(1))
body = text[m.end():]
vals = np.array(re.findall(r"\(\s*(\S+)\s+(\S+)\s+(\S+)\s*\)", body[: body.index("\n)")]),
                dtype=np.float64)
assert vals.shape == (count, 3) and count == n**3, (vals.shape, count)
# blockMesh numbers the cells of one block x fastest, then y, then z.
u, v, w = (vals[:, c].reshape(n, n, n) for c in range(3))
write_field("cavity3d", (n, n, n), (u, v, w),
            f"3D lid-driven cavity, unit cube, lid y = 1 moving at (1, 0, 0), no-slip walls, "
            f"Re = {1.0 / float(nu):g} (nu = {nu}), icoFoam (PISO, Euler, Gauss linear) "
            f"dt {dt} to t = {last} ({seconds} s), velocity at the {n}^3 cell centres; "
            f"generated by scripts/real_vector3d_fields.sh with OpenFOAM v1912 "
            f"(Debian package openfoam {foam_version})")

# The bundled crop of tests/data (x 16..39, y 20..43, z 12..35: around the field's critical
# point at cube (32, 33, 23)).
if n == 48:
    write_field("cavity3d_crop", (24, 24, 24),
                tuple(a[12:36, 20:44, 16:40] for a in (u, v, w)),
                "the 24^3 crop x 16..39, y 20..43, z 12..35 of cavity3d (tests/data)")

# Random band-limited 64^3: Gaussian noise per component, modes with |k| >= kcut zeroed
# (k the integer wavenumber vector of numpy's FFT), scaled to unit RMS per component.
m3 = 64
rng = np.random.default_rng(20261202)
k = np.fft.fftfreq(m3, d=1.0 / m3)
kz, ky, kx = np.meshgrid(k, k, k, indexing="ij")
keep = np.sqrt(kx**2 + ky**2 + kz**2) < kcut
comps = []
for _ in range(3):
    f = np.fft.ifftn(np.fft.fftn(rng.standard_normal((m3, m3, m3))) * keep).real
    comps.append(f / np.sqrt(np.mean(f**2)))
write_field("bandlim3d", (m3, m3, m3), comps,
            f"random band-limited field: numpy {np.__version__} default_rng(20261202) standard normal noise "
            f"per component (u, v, w drawn in that order, each [z, y, x]), Fourier modes "
            f"with |k| >= {kcut} zeroed (numpy fft, integer wavenumbers), scaled to unit RMS")

# ABC flow on [0, 2 pi)^3 as bench/lib/synth3d.hpp's abc_flow.
a, b, c = np.sqrt(3.0), np.sqrt(2.0), 1.0
t = 2 * np.pi * np.arange(m3) / m3
z, y, x = np.meshgrid(t, t, t, indexing="ij")
write_field("abc3d", (m3, m3, m3),
            (a * np.sin(z) + c * np.cos(y), b * np.sin(x) + a * np.cos(z), c * np.sin(y) + b * np.cos(x)),
            "ABC flow A = sqrt 3, B = sqrt 2, C = 1 on [0, 2 pi)^3, x = 2 pi i / 64 (numpy, "
            "double rounded to float32)")

with open(os.path.join(out_dir, "PROVENANCE.txt"), "w") as fh:
    fh.write("\n".join(provenance) + "\n")
print("\n".join(provenance))
PY
