#!/usr/bin/env bash
# Install the build into a temporary prefix, move it, and build + run tests/install/sample
# three ways: (a) find_package(cuda_shim), (b) find_package(CUDAToolkit) with the drop-in,
# (c) pkg-config (NVIDIA's module names without rpath, and cuda-shim.pc with it). Every binary
# runs directly and under bin/cuda-shim run, and must have loaded the installed libraries:
# NVIDIA's libcudart.so.13 may sit in the loader's cache (a machine with the toolkit).
# Usage: test_install.sh CMAKE BUILD_DIR LIBDIR CUDA_VERSION CXX GENERATOR [MAKE_PROGRAM]
set -euo pipefail
cmake=$1 build=$2 libdir=$3 cuda_version=$4 cxx=$5 generator=$6 make_program=${7:-}
here=$(cd -- "$(dirname -- "$0")" && pwd -P)
work=$(mktemp -d "${TMPDIR:-/tmp}/cuda-shim-install.XXXXXX")
work=$(cd -- "$work" && pwd -P)
trap 'rm -rf -- "$work"' EXIT

fail() { printf 'install test: FAILED: %s\n' "$*" >&2; exit 1; }
step() { printf '::: %s\n' "$*"; }
unset LD_LIBRARY_PATH LD_PRELOAD CUDA_SHIM_LIBDIR CUDA_SHIM_DEVICES CUDA_SHIM_CONFIG \
  CUDA_PATH CUDAToolkit_ROOT PKG_CONFIG_LIBDIR CMAKE_PREFIX_PATH 2>/dev/null || true

# A command's output in $work/log; on failure, show it and stop.
quiet() {
  local what=$1; shift
  local rc=0
  "$@" > "$work/log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { cat "$work/log" >&2; fail "$what (exit status $rc): $*"; }
}

step "cmake --install $build --prefix $work/first"
quiet "cmake --install" "$cmake" --install "$build" --prefix "$work/first"
p=$work/first
for f in "$libdir"/libcuda.so.1 "$libdir"/libcuda.so "$libdir"/libcudart.so.13 "$libdir"/libcudart.so \
    "$libdir"/libnvJitLink.so.13 include/cuda_shim/nvJitLink.h include/cuda_shim/cuda.h include/cuda_shim/cuda_runtime.h include/cuda_shim/cuda_shim_ext.h \
    include/cuda_shim/crt/host_defines.h bin/cuda-shim bin/cuda-shim-info bin/cuda-shim-demo \
    bin/cuda-shim-ipc "$libdir"/cmake/cuda_shim/cuda_shim-config.cmake \
    "$libdir"/cmake/cuda_shim/cuda_shim-config-version.cmake \
    share/cuda_shim/dropin/FindCUDAToolkit.cmake "$libdir/pkgconfig/cuda-$cuda_version.pc" \
    "$libdir/pkgconfig/cudart-$cuda_version.pc" "$libdir"/pkgconfig/cuda-shim.pc share/doc/cuda_shim/README.md; do
  [ -e "$p/$f" ] || fail "the install lacks $f"
done
# No build-tree RPATH left; libcudart keeps $ORIGIN (it finds libcuda.so.1 beside itself).
for f in "$p/$libdir"/libcuda.so.1 "$p/$libdir"/libcudart.so.13 "$p/$libdir"/libnvJitLink.so.13 "$p"/bin/cuda-shim-*; do
  if readelf -d "$f" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then fail "$f keeps a build-tree RPATH"; fi
done
# shellcheck disable=SC2016  # the literal $ORIGIN
readelf -d "$p/$libdir/libcudart.so.13" | grep -qF '[$ORIGIN]' || fail "libcudart.so.13 lost its \$ORIGIN RUNPATH"
# Relocatable: no consumer file names the prefix.
if grep -rlF "$p" "$p/$libdir/cmake" "$p/$libdir/pkgconfig" "$p/share/cuda_shim"; then
  fail "the files above name the install prefix $p (not relocatable)"
fi

launcher_checks() {
  quiet "$1/bin/cuda-shim info" "$1/bin/cuda-shim" info
  grep -q . "$work/log" || fail "$1/bin/cuda-shim info printed nothing"
  quiet "$1/bin/cuda-shim run -- cuda-shim-demo" "$1/bin/cuda-shim" run -- "$1/bin/cuda-shim-demo"
  quiet "cuda-shim-demo run directly (its RUNPATH)" env -u LD_LIBRARY_PATH "$1/bin/cuda-shim-demo"
}
step "the launcher and tools in $p"
launcher_checks "$p"
mv -- "$p" "$work/moved"
p=$work/moved
lib=$p/$libdir
step "the launcher and tools after moving the prefix to $p"
launcher_checks "$p"

# run_sample NAME BINARY [ENV...]: directly (with ENV) and under the launcher; both must load
# $lib/libcuda.so.1 and $lib/libcudart.so.13, per the program itself and per ldd.
run_sample() {
  local name=$1 bin=$2 out so path; shift 2
  for how in direct launcher; do
    if [ "$how" = direct ]; then
      out=$(env "$@" "$bin" 2>&1) || { printf '%s\n' "$out" >&2; fail "$name: $bin exited non-zero"; }
    else
      out=$("$p/bin/cuda-shim" run -- "$bin" 2>&1) ||
        { printf '%s\n' "$out" >&2; fail "$name: cuda-shim run -- $bin exited non-zero"; }
    fi
    printf '%s\n' "$out" | grep -qxF "sample: OK" || { printf '%s\n' "$out" >&2; fail "$name ($how): no OK"; }
    for so in libcuda.so.1:libcuda libcudart.so.13:libcudart; do
      printf '%s\n' "$out" | grep -qxF "sample: ${so#*:} $lib/${so%%:*}" ||
        { printf '%s\n' "$out" >&2; fail "$name ($how): ${so%%:*} was not loaded from $lib"; }
    done
  done
  for so in libcuda.so.1 libcudart.so.13; do
    path=$(env "$@" ldd "$bin" | awk -v so="$so" '$1 == so { print $3 }')
    if [ -z "$path" ] || [ "$(readlink -f -- "$path")" != "$lib/$so" ]; then
      fail "$name: ldd resolves $so to '${path:-nothing}', not $lib/$so"
    fi
  done
  printf '%s: ok (direct and cuda-shim run)\n' "$name"
}

cmake_sample() {  # NAME SOURCE_DIR CONFIGURE_ARGS...
  local name=$1 src=$2; shift 2
  local gen=(-G "$generator")
  [ -n "$make_program" ] && gen+=(-DCMAKE_MAKE_PROGRAM="$make_program")
  quiet "$name: configure" "$cmake" -S "$src" -B "$work/$name" "${gen[@]}" \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release "$@"
  cp "$work/log" "$work/$name.configure.log"
  quiet "$name: build" "$cmake" --build "$work/$name" -j2
}

step "(a) find_package(cuda_shim) with CMAKE_PREFIX_PATH=$p"
cmake_sample a "$here/sample" -DCMAKE_PREFIX_PATH="$p"
grep -qxF "cuda_shim_DIR:PATH=$lib/cmake/cuda_shim" "$work/a/CMakeCache.txt" ||
  fail "(a) found another cuda_shim package: $(grep cuda_shim_DIR "$work/a/CMakeCache.txt")"
run_sample "(a) find_package(cuda_shim)" "$work/a/sample"

step "(b) find_package(CUDAToolkit) with -DCMAKE_MODULE_PATH=$p/share/cuda_shim/dropin"
cmake_sample b "$here/sample/cudatoolkit" -DCMAKE_MODULE_PATH="$p/share/cuda_shim/dropin"
grep -qF "the cuda-shim emulator in $p" "$work/b.configure.log" ||
  { cat "$work/b.configure.log" >&2; fail "(b) the drop-in did not answer find_package(CUDAToolkit)"; }
run_sample "(b) CUDAToolkit drop-in" "$work/b/sample"

step "(c) pkg-config with PKG_CONFIG_PATH=$lib/pkgconfig"
command -v pkg-config > /dev/null || fail "(c) needs pkg-config"
export PKG_CONFIG_PATH=$lib/pkgconfig
[ "$(pkg-config --modversion "cuda-$cuda_version")" = "$cuda_version" ] || fail "(c) cuda-$cuda_version.pc's version"
flags=$(pkg-config --cflags --libs "cudart-$cuda_version" "cuda-$cuda_version") || fail "(c) pkg-config cudart/cuda"
# shellcheck disable=SC2086  # pkg-config's flags are words
quiet "(c) c++ \$(pkg-config cudart-$cuda_version cuda-$cuda_version)" \
  "$cxx" -std=c++17 -o "$work/c-nvidia-names" "$here/sample/sample.cpp" $flags -ldl
# NVIDIA's module names carry no rpath (as NVIDIA's): run it the way one runs those.
run_sample "(c) pkg-config cudart-$cuda_version cuda-$cuda_version" "$work/c-nvidia-names" LD_LIBRARY_PATH="$lib"
flags=$(pkg-config --cflags --libs cuda-shim) || fail "(c) pkg-config cuda-shim"
# shellcheck disable=SC2086
quiet "(c) c++ \$(pkg-config cuda-shim)" "$cxx" -std=c++17 -o "$work/c-shim" "$here/sample/sample.cpp" $flags -ldl
run_sample "(c) pkg-config cuda-shim (rpath)" "$work/c-shim"
step "all install checks passed"
