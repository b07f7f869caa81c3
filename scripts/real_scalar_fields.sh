#!/usr/bin/env bash
# Extracts real scalar fields (2D and 3D) that are NOT in ../shared/data from the NCL
# example data of the Debian package libncarg-data, as raw little-endian float32 files
# NAME_NXxNY.f32 / NAME_NXxNYxNZ.f32 (x fastest), plus a provenance README.md. They are the
# held-out fields of the TopoSZ acceptance (docs/toposz.md, scripts/scalar_ratios.sh).
#
#   scripts/real_scalar_fields.sh OUT_DIR
#
# Fill / missing values and NaN become 0, as in ../shared/data. Needs libncarg-data and
# python3-netcdf4 (scripts/deps.sh; installed here with apt-get when missing).
set -euo pipefail

source "$(dirname "$0")/lib/ncl_data.sh"
ncl_setup "$0" "$@"
/usr/bin/python3 - "$out_dir" "$version" <<'PY'
import os
import sys

import netCDF4
import numpy as np

out_dir, version = sys.argv[1], sys.argv[2]
src = "/usr/share/ncarg/data/cdf"
# name, file, variable, index into the leading dimensions (None: keep them as z), meaning
fields = [
    ("ncl_941110_psl", "941110_P.cdf", "Psl", (), "sea-level pressure 1994-11-10, 73x73 polar grid"),
    ("ncl_pstorm_t0", "Pstorm.cdf", "p", (0,), "sea-level pressure, Mar 1993 storm, timestep 0"),
    ("ncl_hgt_l0", "hgt.nc", "HGT", (0,), "geopotential height, time step 0 of 21 (HGT is time x lat x lon), 2.5 deg global"),
    ("ncl_sst30e_m0", "sst30e_netcdf.nc", "sst", (0,), "sea surface temperature, month 0"),
    ("ncl_chi200", "chi200_ud_smooth.nc", "CHI", (), "velocity potential at 200 hPa (smoothed)"),
    ("ncl_ice5g_topo", "ice5g_21k_1deg.nc", "Topo", (), "ICE-5G topography 21 ka, 1 deg"),
    ("ncl_seam_ps_t0", "seam.nc", "ps", (0,), "surface pressure, spectral-element grid, time 0"),
    ("ncl_vinth2p_ps_t0", "vinth2p.nc", "PS", (0,), "surface pressure, T42, time 0"),
    ("ncl_tstorm", "Tstorm.cdf", "t", None, "temperature, Mar 1993 storm, 64 timesteps as z"),
    ("ncl_meccatemp", "meccatemp.cdf", "t", None, "ECHAM/MECCA temperature, 31 levels"),
    ("ncl_fice", "fice.nc", "fice", None, "sea-ice fraction, 120 months as z"),
    ("ncl_nc4uvt_t", "nc4uvt.nc", "T", (0,), "temperature, 14 levels, T42"),
    ("ncl_vinth2p_t_t0", "vinth2p.nc", "T", (0,), "temperature, 18 hybrid levels, T42, time 0"),
    ("ncl_hgt", "hgt.nc", "HGT", None, "geopotential height, 21 time steps stacked as z, 2.5 deg global"),
]
rows = []
for name, fn, var, index, meaning in fields:
    ds = netCDF4.Dataset(os.path.join(src, fn))
    v = ds.variables[var]
    v.set_auto_maskandscale(True)
    a = v[:] if index is None else v[index]
    a = np.ma.filled(np.ma.masked_invalid(np.ma.asarray(a, dtype=np.float64)), 0.0).astype(np.float32)
    filled = int(np.count_nonzero(np.ma.getmaskarray(np.ma.masked_invalid(np.ma.asarray(v[:] if index is None else v[index])))))
    a = np.ascontiguousarray(a)
    dims = list(reversed(a.shape))  # x fastest
    out = f"{name}_{'x'.join(str(d) for d in dims)}.f32"
    a.astype("<f4").tofile(os.path.join(out_dir, out))
    rows.append(f"| {out} | {'x'.join(str(d) for d in dims)} | {meaning} | {fn}:{var}{'' if index is None else list(index)} | {filled} |")
    print(out)
with open(os.path.join(out_dir, "README.md"), "w") as f:
    f.write("# Held-out real scalar fields (not in ../shared/data)\n\n")
    f.write(f"Debian package libncarg-data {version} (NCL example data), /usr/share/ncarg/data/cdf;\n")
    f.write("(c) UCAR, BSD-style licence per /usr/share/doc/libncarg-data/copyright. Raw little-endian\n")
    f.write("float32, x fastest; fill / missing / NaN set to 0.\n\n")
    f.write("| file | dims | meaning | source | filled |\n|---|---|---|---|---|\n")
    f.write("\n".join(rows) + "\n")
PY
