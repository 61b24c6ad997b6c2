#!/usr/bin/env bash
# Builds the runtime-only tree for another architecture: tessera-runtime (and the runtime library)
# cross-compiled with cmake/toolchains/<triple>.cmake, in build-<arch>/ (TESSERA_RUNTIME_ONLY: no
# LLVM, protobuf, fmt or GTest; no libzip, so .npz is off and outputs go to --output-dir).
#   scripts/build_cross.sh aarch64 [BUILD_DIR]
# Prints the path of the tessera-runtime it built. Idempotent and fast when up to date (the
# configure step runs once; ninja then only checks). Needs the cross compiler and, to run what
# it builds, qemu-user (both from scripts/setup.sh):
#   qemu-aarch64 -L /usr/aarch64-linux-gnu build-aarch64/tools/tessera_runtime/tessera-runtime --help
# Concurrent calls for one build folder wait for each other (a lock file in it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-}
case "$arch" in
  aarch64) triple=aarch64-linux-gnu ;;
  *) echo "usage: scripts/build_cross.sh aarch64 [BUILD_DIR]  (supported architectures: aarch64)" >&2; exit 2 ;;
esac
build=${2:-$root/build-$arch}
toolchain=$root/cmake/toolchains/$triple.cmake
if ! command -v "$triple-g++" >/dev/null; then
  echo "error: $triple-g++ not found: install Debian's g++-$triple (run scripts/setup.sh)" >&2
  exit 1
fi
mkdir -p "$build"
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
(
  flock 9
  if [ ! -f "$build/build.ninja" ] || [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DTESSERA_RUNTIME_ONLY=ON -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
      -DCMAKE_BUILD_TYPE=${TESSERA_BUILD_TYPE:-RelWithDebInfo} >"$build/configure.log" 2>&1 ||
      { cat "$build/configure.log" >&2; echo "error: configuring the $arch runtime failed (log above)" >&2; exit 1; }
  fi
  cmake --build "$build" -j"${TESSERA_JOBS:-$(nproc)}" >"$build/build.log" 2>&1 ||
    { tail -n 60 "$build/build.log" >&2; echo "error: building the $arch runtime failed (see $build/build.log)" >&2; exit 1; }
) 9>"$build/.build_cross.lock"
echo "$build/tools/tessera_runtime/tessera-runtime"
