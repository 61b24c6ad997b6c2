#!/usr/bin/env bash
# Runs every Tessera test (README's test command; CI, .ci/run, runs it). Each C++ file is compiled at
# most once per build folder and each test runs in one build:
#   scripts/test.sh              everything, in three steps:
#                                1. build/ (GCC, optimized) without the C++ unit tests: the end-to-end
#                                   model tests, the Python package's tests and the conformance ratchet;
#                                2. build-asan/ (clang-19, ASan + UBSan, scripts/build_env.sh): the C++
#                                   unit tests (every layer, the fuzz targets' corpus replays);
#                                3. every fuzz target for 30 s (scripts/fuzz.sh, in build-asan/; longer by
#                                   hand after changing a parser).
#   scripts/test.sh --sanitize   step 2 alone
#   scripts/test.sh --normal     every test, unit tests included, in build/ (the quick loop by hand; no sanitizer)
#   scripts/test.sh --tsan       the runtime and its unit tests built with ThreadSanitizer (build-tsan/):
#                                the concurrency test (one model from 4 threads) and the thread pool's
#                                tests among them; any data race fails the run. Not in CI: time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-all}
bash "$root/scripts/setup.sh"
source "$root/scripts/build_env.sh"

# The C++ unit tests in the sanitizer build. Model-level tests are slow under ASan and run in build/,
# as do the conformance runner's (tests/conformance/CMakeLists.txt says why).
sanitizer_tests() {
  configure_sanitizer_build
  cmake --build "$sanitizer_build" -j"${TESSERA_JOBS:-$(nproc)}"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$sanitizer_build" --output-on-failure -E "^e2e|^conformance" -j2
}

case "$mode" in
  all)
    bash "$root/scripts/build.sh" "$root/build" -DTESSERA_BUILD_UNIT_TESTS=OFF
    ctest --test-dir "$root/build" --output-on-failure -j2
    if [ "${CI:-}" = true ]; then
      # The CI machine's free disk varies (one run ran out while linking the ASan tests): the zoo smoke
      # test's Python environment (bench/zoo/.venv, ~6 GB: torch + torchvision wheels) is not used again.
      rm -rf "$root/bench/zoo/.venv"
    fi
    sanitizer_tests
    bash "$root/scripts/fuzz.sh" 30
    ;;
  --sanitize) sanitizer_tests ;;
  --normal)
    bash "$root/scripts/build.sh" "$root/build" -DTESSERA_BUILD_UNIT_TESTS=ON
    ctest --test-dir "$root/build" --output-on-failure -j2
    ;;
  --tsan)
    bash "$root/scripts/build.sh" "$root/build-tsan" -DTESSERA_RUNTIME_ONLY=ON -DTESSERA_RUNTIME_TESTS=ON \
      -DTESSERA_SANITIZE_THREAD=ON
    # AForkedChild... forks a process whose pool has threads and starts threads in the child: ThreadSanitizer
    # does not support that ("starting new threads after multi-threaded fork is not supported") and
    # kills the child; the test runs in the normal and ASan builds.
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
      ctest --test-dir "$root/build-tsan" --output-on-failure -j2 -E AForkedChildRunsParallelLaunches
    ;;
  *)
    echo "usage: scripts/test.sh [--sanitize | --normal | --tsan]" >&2
    exit 2
    ;;
esac
