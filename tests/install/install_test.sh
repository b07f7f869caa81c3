#!/usr/bin/env bash
# Installs the build into a temporary prefix, checks that the installed factz finds its
# loadable modules, and builds programs of a user against it: with find_package(factz
# CONFIG) (C++ on the shared and the static library, C on the shared one) and with
# pkg-config (C and C++). Each program compresses, decompresses and checks.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name factz.pc -print -quit)")/..
libdir=$(cd "$libdir" && pwd)

# What a user finds under the prefix.
for f in bin/factz include/factz/factz.h include/factz/factz.hpp; do
  [[ -e $prefix/$f ]] || { echo "missing after install: $f"; exit 1; }
done
[[ -e $libdir/libfactz.a ]] || { echo "missing after install: libfactz.a"; exit 1; }
ls "$libdir"/libfactz.so.* >/dev/null || { echo "missing after install: libfactz.so.*"; exit 1; }
[[ -e $libdir/cmake/factz/factz-config.cmake ]] || { echo "missing after install: factz-config.cmake"; exit 1; }
"$prefix/bin/factz" --version

# The CLI's loadable modules (the build's, installed in LIBDIR/factz), where the installed
# factz finds and loads them: a netCDF read answers with netCDF-C's own error, not with the
# module's absence.
for m in "$build"/libfactz-*.so; do
  [[ -e $m ]] || continue
  [[ -e $libdir/factz/${m##*/} ]] || { echo "missing after install: $libdir/factz/${m##*/}"; exit 1; }
done
if [[ -e $build/libfactz-io.so ]]; then
  "$prefix/bin/factz" --version | grep -qF "in $libdir/factz/libfactz-io.so" ||
    { echo "the installed factz does not find libfactz-io.so"; exit 1; }
  printf 'CDF\001' > "$tmp/bad.nc"
  if (cd "$tmp" && env -u FACTZ_MODULE_DIR "$prefix/bin/factz" compress -i bad.nc:U -i bad.nc:V -z bad.fz 2> "$tmp/err.txt"); then
    echo "a bad netCDF file was read"; exit 1
  fi
  if grep -q "libfactz-io.so" "$tmp/err.txt"; then cat "$tmp/err.txt"; exit 1; fi
fi

# find_package, shared and static, C++ and C.
cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/consumer" -j2 >/dev/null
LD_LIBRARY_PATH=$libdir "$tmp/consumer/app_shared"
"$tmp/consumer/app_static"
LD_LIBRARY_PATH=$libdir "$tmp/consumer/app_c"
# The static program needs no libfactz.so at run time.
if ldd "$tmp/consumer/app_static" | grep -q libfactz; then echo "app_static links libfactz.so"; exit 1; fi

# pkg-config, from the relocated prefix.
export PKG_CONFIG_PATH=$libdir/pkgconfig
[[ $(pkg-config --modversion factz) == "$(sed -n 's/^project(factz VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ]]
cc -o "$tmp/pc_c" "$src/tests/install/consumer/app.c" $(pkg-config --cflags --libs factz) -lm
LD_LIBRARY_PATH=$libdir "$tmp/pc_c"
c++ -std=c++20 -o "$tmp/pc_cpp" "$src/tests/install/consumer/app.cpp" $(pkg-config --cflags --libs factz)
LD_LIBRARY_PATH=$libdir "$tmp/pc_cpp"
echo "install test passed"
