#!/usr/bin/env bash
# Runs every Tessera test: set-up, build, the C++ unit tests and the end-to-end model tests (ctest).
#   scripts/test.sh              the full suite on the normal build (build/)
#   scripts/test.sh --sanitize   the C++ unit tests built with AddressSanitizer + UBSan (build-asan/)
#   scripts/test.sh --tsan       the runtime and its unit tests built with ThreadSanitizer (build-tsan/):
#                                the concurrency test (one model from 4 threads) and the thread pool's
#                                tests among them; any data race fails the run. Not in CI (.ci/run): time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
if [ "${1:-}" = "--tsan" ]; then
  bash "$root/scripts/build.sh" "$root/build-tsan" -DTESSERA_RUNTIME_ONLY=ON -DTESSERA_RUNTIME_TESTS=ON \
    -DTESSERA_SANITIZE_THREAD=ON
  # AForkedChild... forks a process whose pool has threads and starts threads in the child: ThreadSanitizer
  # does not support that ("starting new threads after multi-threaded fork is not supported") and
  # kills the child; the test runs in the normal and ASan builds.
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
    ctest --test-dir "$root/build-tsan" --output-on-failure -j2 -E AForkedChildRunsParallelLaunches
elif [ "${1:-}" = "--sanitize" ]; then
  # -O1: ASan's advice for usable speed; at -O0 the conv schedule tests alone took ~25 min of CPU.
  bash "$root/scripts/build.sh" "$root/build-asan" -DTESSERA_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_C_FLAGS=-O1
  # Model-level tests are slow under ASan; the unit tests of every layer run here.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$root/build-asan" --output-on-failure -E "e2e|conformance" -j2
else
  bash "$root/scripts/build.sh" "$root/build"
  ctest --test-dir "$root/build" --output-on-failure -j2
fi
