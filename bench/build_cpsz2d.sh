#!/usr/bin/env bash
# Builds the two cpSZ drivers that bench/cpsz2d_compare.sh runs (issue 20), outside this
# repository, from source folders checked out by the caller (none of their code is here):
#   OUT_DIR/bin/cpsz2d      cpSZ's own test/sz_compress_cp_preserve_2d_test.cpp
#                           (https://github.com/szcompressor/cpSZ; used ed9a709, 2024-10-05):
#                           cpsz2d U V NY NX ABS_EB (NY rows, NX the fast dimension, as its
#                           README's "uf.dat vf.dat 2400 3600" for the 3600 x 2400 ocean);
#                           sz3_compress_cp_preserve_2d_online_abs (SZ3-style interpolation
#                           with a per-vertex absolute bound <= ABS_EB), then zstd level 3;
#                           writes U.out V.out
#   OUT_DIR/bin/cpsz_sos2d  cpSZ-SoS's own test/sz_compress_cp_preserve_2d_test.cpp
#                           (https://github.com/xty9501/cpsz-sos; used dfef5b2, 2024-01-22):
#                           cpsz_sos2d U V NY NX REL_EB OPTION (OPTION 0 no speculation
#                           sz_compress_cp_preserve_sos_2d_online_fp, 1 _spec_eb,
#                           2 _spec_exec_fn, 3 the same with max_factor 8, 4 _spec_exec_all
#                           with 8); REL_EB is relative to the range over u and v together,
#                           in its fixed point; same outputs
# Each driver is linked with the files of its repository's src/ that it needs (the 2D
# cp-preserving compressor and decompressor, SZ's (de)compression utilities, Huffman coder
# and lossless stage, the 3D SZ files whose headers the 2D ones include; cpSZ-SoS also its SoS
# 2D compressor), compiled into the driver as object files (their CMake builds a shared
# libcpsz instead; the code is the same). FTK (https://github.com/lxAltria/ftk; used master
# 11830bb, whose include/ tree is that of eval-cpSZ cc7952c) is used header-only for the
# ftk/numeric predicates of cpSZ-SoS's SoS compressor (cpSZ's 2D files include no FTK
# header); no FTK library is built or linked. Its config.hh, which FTK's CMake would
# generate, is written here into OUT_DIR/ftk-config with FTK's CMake defaults:
# FTK_FP_PRECISION 32768, FTK_CP_MAX_NUM_VARS 3, no optional package (so no MPI: the drivers
# are serial). Compiler: CXX (default g++) with CXXFLAGS (default "-O2 -std=gnu++11": the
# optimisation level and C++ standard that both projects' CMake files set), linked with
# -lzstd (Debian's libzstd-dev). cpSZ's include/sz3_utils.hpp (which its 2D cp-preserving
# files include) calls assert without including <cassert>; g++ 12 rejects that, so cpSZ's files
# are compiled with "-include cassert" (the only change: no source file is edited). Object
# files go to OUT_DIR/obj2d/{cpsz,cpsz_sos}.
#
#   bash bench/build_cpsz2d.sh CPSZ_SRC CPSZ_SOS_SRC FTK_SRC OUT_DIR
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

for f in "$cpsz_src/test/sz_compress_cp_preserve_2d_test.cpp" \
         "$sos_src/test/sz_compress_cp_preserve_2d_test.cpp" \
         "$sos_src/src/sz_compress_cp_preserve_sos_2d.cpp" \
         "$ftk_src/include/ftk/numeric/critical_point_test.hh"; do
  [[ -f $f ]] || { echo "missing $f" >&2; exit 1; }
done
mkdir -p "$out_dir"/{bin,ftk-config/ftk,obj2d/cpsz,obj2d/cpsz_sos}
out_dir=$(cd "$out_dir" && pwd)
cpsz_src=$(cd "$cpsz_src" && pwd)
sos_src=$(cd "$sos_src" && pwd)
ftk_src=$(cd "$ftk_src" && pwd)

# FTK's generated configuration header, with the defaults of its CMake and no options.
ftk_version=$(tr -d ' \n' <"$ftk_src/version.txt" 2>/dev/null || echo unknown)
cat >"$out_dir/ftk-config/ftk/config.hh" <<EOF
// Written by FaCTz's bench/build_cpsz2d.sh: FTK's defaults, no optional package.
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

# build NAME SRC_DIR OUT_BINARY EXTRA_FLAGS SRC_FILES...: compiles SRC_DIR/test's 2D driver
# and the listed files of SRC_DIR/src (with the space-separated EXTRA_FLAGS), then links them
# with zstd.
build() {
  local name=$1 src=$2 binary=$3 extra
  read -r -a extra <<<"$4"
  shift 4
  local obj=$out_dir/obj2d/$name
  local inc=("${extra[@]}" -I"$src/include" -I"$out_dir/ftk-config" -I"$ftk_src/include")
  local files=("$src/test/sz_compress_cp_preserve_2d_test.cpp")
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
        sz_compress_cp_preserve_2d.cpp sz_decompress_cp_preserve_2d.cpp)
build cpsz "$cpsz_src" "$out_dir/bin/cpsz2d" "-include cassert" "${common[@]}"
build cpsz_sos "$sos_src" "$out_dir/bin/cpsz_sos2d" "" "${common[@]}" sz_compress_cp_preserve_sos_2d.cpp
echo "built $out_dir/bin/cpsz2d and $out_dir/bin/cpsz_sos2d"
