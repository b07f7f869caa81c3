#!/usr/bin/env bash
# Installs what FaCTz needs to build and test on Debian 12 (run as root). Skips apt-get
# when every package is already there, so repeated runs are fast and work offline.
set -euo pipefail
# Core build and tests, then per feature: evaluation (zfp baseline, PNG, FFTW, plots),
# divergence-free flows (Eigen, SuiteSparse, BLAS/LAPACK), Python and HDF5 bindings,
# MPI domain decomposition (OpenMPI, parallel HDF5), netCDF files (library and nccopy),
# the independent persistence check of the contour tree (GUDHI), and the Python ecosystem the
# Python tests read and write with (zarr and numcodecs with its entry points, xarray through
# h5netcdf).
pkgs=(build-essential cmake pkg-config libgtest-dev libzstd-dev zstd python3 python3-numpy
      libzfp-dev libpng-dev libfftw3-dev python3-matplotlib
      libeigen3-dev libsuitesparse-dev libopenblas-dev liblapacke-dev
      python3-dev pybind11-dev python3-pybind11 python3-pytest libhdf5-dev hdf5-tools python3-h5py
      python3-pip python3-venv python3-setuptools python3-wheel
      openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
      libnetcdf-dev netcdf-bin python3-gudhi
      python3-zarr python3-numcodecs python3-entrypoints python3-xarray python3-h5netcdf)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "factz: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
