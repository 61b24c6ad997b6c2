#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/) in the sanitizer build, build-asan/ (clang-19, AddressSanitizer,
# UBSan: scripts/build_env.sh), and runs each for SECONDS (default 60), TESSERA_FUZZ_JOBS at a time
# (default: one per core).
#   scripts/fuzz.sh [SECONDS] [TARGET...]      targets: onnx_import tensor_proto npy npz artifact
#                                              graph_executor vm rpc_messages image_decode (default: all)
# Each run starts from the seeds in tests/fuzz/corpus/<target>/ plus what earlier runs found
# (build-asan/fuzz-corpus/<target>/, where new inputs go). A crash, leak, timeout (> 10 s for one
# input) or out-of-memory (> 4 GiB) leaves its input in build-asan/fuzz-findings/<target>/ and makes
# the script exit 1 after the other targets ran; replay one with build-asan/tests/fuzz/fuzz_<target>
# FILE. Fix it at its root and add the input to tests/fuzz/corpus/<target>/ (ctest -R fuzz replays it).
# scripts/test.sh (CI) runs it for 30 s per target. Builds and runs hold /tmp/tessera-build.lock (2 cores).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
all=(onnx_import tensor_proto npy npz artifact graph_executor vm rpc_messages image_decode)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all[@]}"); fi
lock=/tmp/tessera-build.lock

bash "$root/scripts/setup.sh"
source "$root/scripts/build_env.sh"
build=$sanitizer_build
configure_sanitizer_build
flock "$lock" cmake --build "$build" -j"${TESSERA_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
# Runs one target; its exit status says whether it found something.
run_one() {
  local t=$1 corpus=$build/fuzz-corpus/$1 findings=$build/fuzz-findings/$1
  mkdir -p "$corpus" "$findings"
  "$build/tests/fuzz/fuzz_$t" "$corpus" "$root/tests/fuzz/corpus/$t" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$findings/" 2>"$build/fuzz-$t.log"
}
# TESSERA_FUZZ_JOBS targets at a time (default: one per core), holding the build lock meanwhile.
jobs=${TESSERA_FUZZ_JOBS:-$(nproc)}
exec 9>"$lock"
flock 9
failed=()
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  batch=("${targets[@]:i:jobs}")
  echo "== ${batch[*]/#/fuzz_}: $seconds s"
  pids=()
  for t in "${batch[@]}"; do run_one "$t" & pids+=($!); done
  for k in "${!batch[@]}"; do
    t=${batch[k]}
    if ! wait "${pids[k]}"; then
      failed+=("$t")
      tail -n 40 "$build/fuzz-$t.log"
    fi
    echo "fuzz_$t: $(grep -E "^stat::number_of_executed_units" "$build/fuzz-$t.log" | tr -d ' '), $(grep -oE "cov: [0-9]+ ft: [0-9]+" "$build/fuzz-$t.log" | tail -n 1)"
  done
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]} (inputs in $build/fuzz-findings/)"
  exit 1
fi
echo "fuzz: no finding in ${targets[*]}"
