# Sourced by scripts/build.sh, scripts/test.sh and scripts/fuzz.sh: the compiler cache, debug-info settings
# and the sanitizer build. Sets `build_env_cmake_args`, extra arguments for every cmake configure step.
#
# ccache: hash paths relative to the checkout so a fresh clone elsewhere still hits the cache.
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
build_env_cmake_args=()
if [ "${CI:-}" = true ]; then
  # CI builds one fresh clone once and throws it away, on a machine whose free disk varies: a compiler
  # cache would only be written (~4 GB of objects nobody reads back), and full DWARF is ~95% of every
  # binary. Line tables (-g1) still give sanitizer and crash stack traces file:line. A CI run
  # ran out of disk while linking the ASan tests with full -g and ccache on (2026-11-24).
  export CCACHE_DISABLE=1
  build_env_cmake_args=(
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
    "-DCMAKE_CXX_FLAGS_DEBUG=-g1" "-DCMAKE_C_FLAGS_DEBUG=-g1")
fi

# The sanitizer build (build-asan/; scripts/test.sh, scripts/fuzz.sh): clang-19, AddressSanitizer +
# UndefinedBehaviorSanitizer, libFuzzer's coverage instrumentation everywhere and libFuzzer linked into
# the fuzz targets (TESSERA_FUZZ), the C++ unit tests, no command-line tools (no test run there uses
# them). One build for the unit tests under the sanitizers and for fuzzing; clang builds it in ~2/3 of
# GCC's time. The libraries at -O1, ASan's advice for usable speed (at -O0 the conv schedule tests
# alone took ~25 min of CPU); the test sources at -O0 (TESSERA_TEST_COMPILE_OPTIONS: half their compile
# time, and they run little code themselves).
sanitizer_build=$root/build-asan
sanitizer_cmake_args=(-DTESSERA_FUZZ=ON -DTESSERA_SANITIZE=ON -DTESSERA_BUILD_TOOLS=OFF -DCMAKE_BUILD_TYPE=Debug
                      -DCMAKE_CXX_FLAGS=-O1 -DCMAKE_C_FLAGS=-O1 -DTESSERA_TEST_COMPILE_OPTIONS=-O0)
# Configures the sanitizer build; a folder configured with another compiler (GCC, before 2026-11-26)
# is started afresh, since CMake cannot change a build folder's compiler.
configure_sanitizer_build() {
  if [ -f "$sanitizer_build/CMakeCache.txt" ] &&
     ! grep -q '^CMAKE_CXX_COMPILER:FILEPATH=.*clang++-19$' "$sanitizer_build/CMakeCache.txt"; then
    echo "build_env: $sanitizer_build was configured with another compiler; starting it afresh"
    rm -rf "$sanitizer_build"
  fi
  CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$sanitizer_build" -G Ninja "${build_env_cmake_args[@]}" \
    "${sanitizer_cmake_args[@]}" >/dev/null
}
