#!/usr/bin/env bash
# Configures and builds Tessera. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# The build directory defaults to build/. Uses ccache when present.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; shift || true
jobs=${TESSERA_JOBS:-$(nproc)}
# ccache: hash paths relative to the checkout so a fresh clone elsewhere still hits the cache.
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${TESSERA_BUILD_TYPE:-RelWithDebInfo} "$@" >/dev/null
cmake --build "$build" -j"$jobs"
