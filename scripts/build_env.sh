# Sourced by scripts/build.sh and scripts/fuzz.sh: the compiler cache and debug-info settings.
# Sets `build_env_cmake_args`, extra arguments for the cmake configure step.
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
