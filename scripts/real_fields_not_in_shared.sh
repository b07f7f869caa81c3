#!/usr/bin/env bash
# Extracts real 2D vector fields that are NOT in ../shared/data from the NCL example data
# of the Debian package libncarg-data, as raw little-endian float32 pairs
# NAME_u_NXxNY.f32 / NAME_v_NXxNY.f32 (x fastest), plus a provenance README.md.
#
#   scripts/real_fields_not_in_shared.sh OUT_DIR
#
# Installs libncarg-data and python3-netcdf4 with apt-get when missing (netCDF4 reads
# both the netCDF-3 files and the one netCDF-4/HDF5 file, nc4uvt.nc; scipy.io.netcdf_file
# reads only netCDF-3). Fill / missing values and NaN become 0, as in ../shared/data.
# Grids are written in the files' own row order (C order, last dimension fastest), except
# where the file stores x slowest (NCEP grid 6), which is transposed so x is fastest.
set -euo pipefail

source "$(dirname "$0")/lib/ncl_data.sh"
ncl_setup "$0" "$@"
# The Debian python (where apt installs netCDF4), not whatever python3 is first on PATH.
/usr/bin/python3 - "$out_dir" "$version" <<'PY'
import os
import sys

import netCDF4
import numpy as np

out_dir, version = sys.argv[1], sys.argv[2]
src = "/usr/share/ncarg/data/cdf"


def plane(spec, index, transpose=False):
    """One 2D slice of "file:variable" as float32 with fill/missing/NaN -> 0;
    returns (array, n_filled)."""
    fname, name = spec.split(":")
    ds = netCDF4.Dataset(os.path.join(src, fname))
    var = ds.variables[name]
    var.set_auto_maskandscale(True)
    a = var[index] if index is not None else var[:]
    a = np.ma.masked_invalid(np.ma.asarray(a, dtype=np.float64))
    filled = int(np.ma.getmaskarray(a).sum())
    a = np.asarray(a.filled(0.0), dtype=np.float32)
    ds.close()
    if transpose:
        a = a.T
    return np.ascontiguousarray(a), filled


# (name, "file:u variable", "file:v variable", index into the leading dimensions,
#  transpose, meaning)
fields = [
    ("ncl_storm_t1", "Ustorm.cdf:u", "Vstorm.cdf:v", (1,), False,
     "surface wind (m/s), Mar 1993 'storm of the century', timestep 1 of 64"),
    ("ncl_storm_t10", "Ustorm.cdf:u", "Vstorm.cdf:v", (10,), False, "as above, timestep 10"),
    ("ncl_storm_t30", "Ustorm.cdf:u", "Vstorm.cdf:v", (30,), False, "as above, timestep 30"),
    ("ncl_storm_t63", "Ustorm.cdf:u", "Vstorm.cdf:v", (63,), False, "as above, timestep 63"),
    ("ncl_storm500_t0", "U500storm.cdf:u", "V500storm.cdf:v", (0,), False,
     "500 hPa wind (m/s), same storm, timestep 0"),
    ("ncl_storm500_t30", "U500storm.cdf:u", "V500storm.cdf:v", (30,), False, "as above, timestep 30"),
    ("ncl_storm500_t63", "U500storm.cdf:u", "V500storm.cdf:v", (63,), False, "as above, timestep 63"),
    ("ncl_uv300_t1", "uv300.nc:U", "uv300.nc:V", (1,), False,
     "CCM wind at 300 hPa (m/s), T42 Gaussian, time 1 (shared has time 0)"),
    ("ncl_uv300cyclic_t1", "ex01B1_uv300.hs.nc:U", "ex01B1_uv300.hs.nc:V", (1, 0), False,
     "the same CCM 300 hPa wind with the cyclic longitude repeated (129 columns), time 1"),
    ("ncl_nc4uvt_1000hPa", "nc4uvt.nc:U", "nc4uvt.nc:V", None, False,
     "CCM wind (m/s), netCDF-4 file, level 1000 hPa"),
    ("ncl_nc4uvt_500hPa", "nc4uvt.nc:U", "nc4uvt.nc:V", None, False, "as above, level 500 hPa"),
    ("ncl_nc4uvt_200hPa", "nc4uvt.nc:U", "nc4uvt.nc:V", None, False, "as above, level 200 hPa"),
    ("ncl_eta_10m", "ced1.lf00.t00z.eta.nc:U_GRD_6_HTGL", "ced1.lf00.t00z.eta.nc:V_GRD_6_HTGL", (), True,
     "NCEP Eta 10 m wind (m/s), 1995-10-24 00Z analysis, grid 6"),
    ("ncl_eta_tropopause", "ced1.lf00.t00z.eta.nc:U_GRD_6_TRO", "ced1.lf00.t00z.eta.nc:V_GRD_6_TRO", (), True,
     "NCEP Eta wind at the tropopause (m/s)"),
    ("ncl_eta_isbl0", "ced1.lf00.t00z.eta.nc:U_GRD_6_ISBL", "ced1.lf00.t00z.eta.nc:V_GRD_6_ISBL", (0,), True,
     "NCEP Eta wind on isobaric level index 0 of 11"),
    ("ncl_eta_isbl5", "ced1.lf00.t00z.eta.nc:U_GRD_6_ISBL", "ced1.lf00.t00z.eta.nc:V_GRD_6_ISBL", (5,), True,
     "NCEP Eta wind on isobaric level index 5 of 11"),
    ("ncl_eta_isbl10", "ced1.lf00.t00z.eta.nc:U_GRD_6_ISBL", "ced1.lf00.t00z.eta.nc:V_GRD_6_ISBL", (10,), True,
     "NCEP Eta wind on isobaric level index 10 of 11"),
    ("ncl_pop_cur", "pop.nc:urot", "pop.nc:vrot", (), False,
     "POP ocean model surface velocity (cm/s), rotated to east/north, 320x384"),
    ("ncl_meteo_uvgrid", "meteo_data.nc:ugrid", "meteo_data.nc:vgrid", (), False,
     "small meteogram wind grid (m/s), 25x8"),
]

rows = []
for name, uspec, vspec, index, transpose, meaning in fields:
    if uspec.startswith("nc4uvt.nc:"):  # time 0 at the level named in hPa
        with netCDF4.Dataset(os.path.join(src, "nc4uvt.nc")) as ds:
            levels = [int(x) for x in np.asarray(ds.variables["lev"][:])]
        hpa = int(name.split("_")[-1].replace("hPa", ""))
        index = (0, levels.index(hpa))
    u, fu = plane(uspec, index, transpose)
    v, fv = plane(vspec, index, transpose)
    ny, nx = u.shape
    assert v.shape == u.shape
    for comp, arr in (("u", u), ("v", v)):
        arr.astype("<f4").tofile(os.path.join(out_dir, "%s_%s_%dx%d.f32" % (name, comp, nx, ny)))
    zero = int(np.count_nonzero((u == 0) & (v == 0)))
    rows.append("| %s | %dx%d | %s | %s + %s, index %s%s | %d of %d (%.2f%%) | %d |"
                % (name, nx, ny, meaning, uspec, vspec, index,
                   ", transposed (x fastest)" if transpose else "", zero, nx * ny,
                   100.0 * zero / (nx * ny), fu + fv))
    print("wrote %s %dx%d" % (name, nx, ny))

with open(os.path.join(out_dir, "README.md"), "w") as fh:
    fh.write("# Real vector fields not in ../shared/data\n\n"
             "Raw little-endian float32, x fastest, `NAME_u_NXxNY.f32` / `NAME_v_NXxNY.f32`.\n"
             "Source: Debian package libncarg-data %s (NCL example data), files under\n"
             "%s. Licence: (c) UCAR, BSD-style, see\n"
             "/usr/share/doc/libncarg-data/copyright. Extracted by\n"
             "scripts/real_fields_not_in_shared.sh with python3-netcdf4; fill / missing /\n"
             "NaN values set to 0; rows in file order.\n\n"
             "| name | dims | meaning | source (file:variable, index) | zero vectors | filled values |\n"
             "|---|---|---|---|---|---|\n" % (version, src))
    fh.write("\n".join(rows) + "\n")
    fh.write("\nLeft out because ../shared/data has them (or a near copy): Ustorm/Vstorm\n"
             "timestep 0, uv300.nc time 0, 941110_UV.cdf, ex01B1_uv300.hs.nc time 0 (uv300\n"
             "time 0 with the cyclic column).\n")
PY
echo "fields written to $out_dir"
