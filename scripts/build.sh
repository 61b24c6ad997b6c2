#!/usr/bin/env bash
# Configures and builds Tessera. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# The build directory defaults to build/. Uses ccache when present, except in CI (build_env.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}; shift || true
jobs=${TESSERA_JOBS:-$(nproc)}
source "$root/scripts/build_env.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=${TESSERA_BUILD_TYPE:-RelWithDebInfo} \
  "${build_env_cmake_args[@]}" "$@" >/dev/null
cmake --build "$build" -j"$jobs"
