#!/usr/bin/env bash
# The start-up checks of tests/startup/CMakeLists.txt.
#   startup_test.sh needed FACTZ [IO_MODULE]  factz has no DT_NEEDED on libnetcdf, libhdf5 or
#                                             libmpi (the module has them: the check sees them)
#   startup_test.sh missing FACTZ DATA_DIR    with the modules nowhere factz looks, a netCDF
#                                             read fails with one line naming the module and
#                                             exit code 1; a raw-file compress still works
set -euo pipefail
mode=$1 factz=$2
libraries='lib(netcdf|hdf5|mpi)'

needed() {  # the DT_NEEDED entries of an ELF file, one a line
  readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
}

case $mode in
needed)
  command -v readelf >/dev/null || { echo "readelf (binutils) not installed: skipped"; exit 77; }
  if needed "$factz" | grep -E "$libraries"; then
    echo "factz links the libraries above: they belong in its loadable modules"
    exit 1
  fi
  if [[ $# -ge 3 && -n $3 ]]; then
    needed "$3" | grep -qE "$libraries" || { echo "$3 needs none of $libraries: is the check blind?"; exit 1; }
  fi
  echo "factz needs: $(needed "$factz" | tr '\n' ' ')"
  ;;
missing)
  data=$3
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # A copy of factz in a folder without modules, whose ../lib/factz has none either, and an
  # empty $FACTZ_MODULE_DIR.
  mkdir -p "$tmp/bin" "$tmp/empty" "$tmp/work"
  cp "$factz" "$tmp/bin/factz"
  export FACTZ_MODULE_DIR=$tmp/empty
  cd "$tmp/work"
  printf 'CDF\001' > storm.nc  # a netCDF signature: the CLI takes it for a netCDF file

  set +e
  "$tmp/bin/factz" compress -i storm.nc:U -i storm.nc:V -z out.fz > out.txt 2> err.txt
  code=$?
  set -e
  cat err.txt
  [[ $code -eq 1 ]] || { echo "exit code $code, expected 1"; exit 1; }
  [[ $(wc -l < err.txt) -eq 1 ]] || { echo "expected one line on stderr"; exit 1; }
  if [[ $FACTZ_NETCDF_BUILT_IN == 1 ]]; then
    for word in libfactz-io.so "$tmp/empty" '$FACTZ_MODULE_DIR' "$tmp/bin" "$tmp/lib/factz"; do
      grep -qF -- "$word" err.txt || { echo "the message does not name $word"; exit 1; }
    done
    "$tmp/bin/factz" --version | grep -q "libfactz-io.so, which is missing" ||
      { echo "factz --version does not say the module is missing"; exit 1; }
    # A module that is there but cannot be loaded: dlopen's reason.
    echo "not a shared object" > "$tmp/empty/libfactz-io.so"
    set +e
    "$tmp/bin/factz" compress -i storm.nc:U -i storm.nc:V -z out.fz 2> err.txt
    code=$?
    set -e
    cat err.txt
    [[ $code -eq 1 ]] || { echo "exit code $code, expected 1"; exit 1; }
    grep -qF "$tmp/empty/libfactz-io.so, which cannot be loaded" err.txt || { echo "no reason given"; exit 1; }
  else
    grep -q "built without netCDF-C" err.txt || { echo "expected backend_unavailable (no netCDF-C)"; exit 1; }
  fi

  # Raw fields need no module.
  "$tmp/bin/factz" compress -2 41 41 -i "$data/metno_arctic20_cur_u_41x41.f32" \
    -i "$data/metno_arctic20_cur_v_41x41.f32" -z raw.fz -M REL 1e-2
  "$tmp/bin/factz" decompress -z raw.fz -o u.f32 -o v.f32
  [[ $(stat -c %s u.f32) -eq $((41 * 41 * 4)) ]] || { echo "raw round trip failed"; exit 1; }
  echo "startup test passed"
  ;;
esac
