#!/usr/bin/env bash
# Builds the two cpSZ drivers that bench/cpsz3d_compare.sh runs (issue 22), outside this
# repository, from source folders checked out by the caller (none of their code is here):
#   OUT_DIR/bin/cpsz3d      cpSZ's own test/sz_compress_cp_preserve_3d_test.cpp
#                           (https://github.com/szcompressor/cpSZ; docs/benchmarks.md used
#                           ed9a709): cpsz3d U V W NZ NY NX ABS_EB, writes U.out V.out W.out
#   OUT_DIR/bin/cpsz_sos3d  cpSZ-SoS's own test/sz_compress_cp_preserve_3d_test.cpp
#                           (https://github.com/xty9501/cpsz-sos; used dfef5b2):
#                           cpsz_sos3d U V W NZ NY NX REL_EB OPTION, same outputs
# Each driver is linked with the files of its repository's src/ that it needs (the cp-preserving
# 3D compressor and decompressor, SZ's (de)compression utilities, Huffman coder and lossless
# stage; cpSZ-SoS also its SoS 3D compressor), compiled into the driver as object files
# (their CMake builds a shared libcpsz instead; the code is the same). FTK
# (https://github.com/lxAltria/ftk; used eval-cpSZ cc7952c and master 11830bb, whose
# include/ trees are identical) is used header-only for its ftk/numeric predicates; no
# FTK library is built or linked. Its config.hh, which FTK's CMake would generate, is written
# here into OUT_DIR/ftk-config with FTK's CMake defaults: FTK_FP_PRECISION 32768,
# FTK_CP_MAX_NUM_VARS 3, no optional package (so no MPI: the drivers are serial).
# Compiler: CXX (default g++) with CXXFLAGS (default "-O2 -std=gnu++11": the optimisation
# level and C++ standard that both projects' CMake files set), linked with -lzstd (Debian's
# libzstd-dev). Object files go to OUT_DIR/obj/{cpsz,cpsz_sos}.
#
#   bash bench/build_cpsz3d.sh CPSZ_SRC CPSZ_SOS_SRC FTK_SRC OUT_DIR
#
# Env: CXX, CXXFLAGS, JOBS (parallel compilations, default 1).
set -euo pipefail
usage="usage: $0 CPSZ_SRC CPSZ_SOS_SRC FTK_SRC OUT_DIR"
cpsz_src=${1:?$usage}
sos_src=${2:?$usage}
ftk_src=${3:?$usage}
out_dir=${4:?$usage}
cxx=${CXX:-g++}
read -r -a cxxflags <<<"${CXXFLAGS:--O2 -std=gnu++11}"
jobs=${JOBS:-1}

for f in "$cpsz_src/test/sz_compress_cp_preserve_3d_test.cpp" \
         "$sos_src/test/sz_compress_cp_preserve_3d_test.cpp" \
         "$ftk_src/include/ftk/numeric/critical_point_test.hh"; do
  [[ -f $f ]] || { echo "missing $f" >&2; exit 1; }
done
mkdir -p "$out_dir"/{bin,ftk-config/ftk,obj/cpsz,obj/cpsz_sos}
out_dir=$(cd "$out_dir" && pwd)
cpsz_src=$(cd "$cpsz_src" && pwd)
sos_src=$(cd "$sos_src" && pwd)
ftk_src=$(cd "$ftk_src" && pwd)

# FTK's generated configuration header, with the defaults of its CMake and no options.
ftk_version=$(tr -d ' \n' <"$ftk_src/version.txt" 2>/dev/null || echo unknown)
cat >"$out_dir/ftk-config/ftk/config.hh" <<EOF
// Written by FaCTz's bench/build_cpsz3d.sh: FTK's defaults, no optional package.
#ifndef _FTK_CONFIG_HH
#define _FTK_CONFIG_HH
#define FTK_VERSION "$ftk_version"
#define FTK_FP_PRECISION 32768
#define FTK_CP_MAX_NUM_VARS 3
#define DIY_NO_MPI
#ifndef __CUDACC__
#define __device__
#define __host__
#endif
#endif
EOF

# build NAME SRC_DIR OUT_BINARY SRC_FILES...: compiles SRC_DIR/test's 3D driver and the
# listed files of SRC_DIR/src, then links them with zstd.
build() {
  local name=$1 src=$2 binary=$3
  shift 3
  local obj=$out_dir/obj/$name
  local inc=(-I"$src/include" -I"$out_dir/ftk-config" -I"$ftk_src/include")
  local files=("$src/test/sz_compress_cp_preserve_3d_test.cpp")
  local f
  for f in "$@"; do files+=("$src/src/$f"); done
  echo "== $name: $cxx ${cxxflags[*]} ${inc[*]} -c (${#files[@]} files), -j$jobs"
  printf '%s\n' "${files[@]}" | xargs -P "$jobs" -I{} sh -c \
    'f=$1; o=$2/$(basename "$1" .cpp).o; shift 2; set -x; exec "$@" -c "$f" -o "$o"' \
    _ {} "$obj" "$cxx" "${cxxflags[@]}" "${inc[@]}"
  local objs=()
  for f in "${files[@]}"; do objs+=("$obj/$(basename "$f" .cpp).o"); done
  (set -x; "$cxx" "${cxxflags[@]}" -o "$binary" "${objs[@]}" -lzstd)
}

common=(sz_compression_utils.cpp sz_decompression_utils.cpp sz_huffman.cpp sz_lossless.cpp
        sz_compress_3d.cpp sz_decompress_3d.cpp
        sz_compress_cp_preserve_3d.cpp sz_decompress_cp_preserve_3d.cpp)
build cpsz "$cpsz_src" "$out_dir/bin/cpsz3d" "${common[@]}"
build cpsz_sos "$sos_src" "$out_dir/bin/cpsz_sos3d" "${common[@]}" sz_compress_cp_preserve_sos_3d.cpp
echo "built $out_dir/bin/cpsz3d and $out_dir/bin/cpsz_sos3d"
