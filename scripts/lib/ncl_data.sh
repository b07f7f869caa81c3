# Shared set-up of the scripts that extract held-out real fields from the NCL example data
# (scripts/real_fields_not_in_shared.sh, scripts/real_scalar_fields.sh). Source it, then
#   ncl_setup "$0" "$@"
# checks the one OUT_DIR argument, creates it, installs libncarg-data and python3-netcdf4
# with apt-get when missing, and sets out_dir and version (the libncarg-data version).
ncl_setup() {
  local script=$1
  shift
  if [[ $# -ne 1 ]]; then
    echo "usage: $script OUT_DIR" >&2
    exit 2
  fi
  out_dir=$1
  mkdir -p "$out_dir"
  local need=()
  dpkg -s libncarg-data >/dev/null 2>&1 || need+=(libncarg-data)
  dpkg -s python3-netcdf4 >/dev/null 2>&1 || need+=(python3-netcdf4)
  if [[ ${#need[@]} -gt 0 ]]; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"
  fi
  version=$(dpkg-query -W -f='${Version}' libncarg-data)
}
