#!/usr/bin/env bash
# The main job, end to end: set up, build, compile an ONNX model to a native shared library,
# run it on its first reference data set, print its outputs, check them against the
# reference, and print the median latency.
#   scripts/run_model.sh [MODEL_DIR | MODEL.onnx] [--threads T]
# Default model: ../shared/models/ultraface-rfb-320.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-$root/../shared/models/ultraface-rfb-320}
threads=${2:-$(nproc)}
[ "${2:-}" = "--threads" ] && threads=${3:?}
bash "$root/scripts/setup.sh" >/dev/null
bash "$root/scripts/build.sh" "$root/build" >/dev/null
tessera="$root/build/tools/tessera"

if [ -d "$model" ]; then dir=$model; onnx=$model/model.onnx; else onnx=$model; dir=$(dirname "$model"); fi
[ -f "$onnx" ] || { echo "error: no ONNX model at $onnx" >&2; exit 2; }
work=$(mktemp -d)
so="$work/$(basename "$dir").so"

echo "== compile $onnx"
"$tessera" compile "$onnx" -o "$so"
"$tessera" inspect "$so"

ds=$(find "$dir" -maxdepth 1 -type d -name '*data_set_*' | sort | head -n 1)
inputs=()
if [ -n "$ds" ]; then
  names=$(python3 -c "import onnx,sys; m=onnx.load(sys.argv[1]); i={t.name for t in m.graph.initializer}; print(' '.join(x.name for x in m.graph.input if x.name not in i))" "$onnx")
  k=0
  for n in $names; do inputs+=(--input "$n=$ds/input_$k.pb"); k=$((k+1)); done
  echo "== run on $ds"
else
  echo "error: no data set next to $onnx; pass inputs with: $tessera run $so --input NAME=FILE.npy" >&2; exit 2
fi
"$tessera" run "$so" "${inputs[@]}" --output "$work/out.npz" --threads "$threads" --bench 30
python3 - "$work/out.npz" "$ds" "$onnx" <<'PY'
import sys, pathlib, numpy as np, onnx, onnx.numpy_helper
out = np.load(sys.argv[1]); ds = pathlib.Path(sys.argv[2]); m = onnx.load(sys.argv[3])
np.set_printoptions(precision=5, threshold=12, edgeitems=3)
for i, o in enumerate(m.graph.output):
    got = out[o.name]
    print(f"output {o.name}: shape {list(got.shape)} {got.dtype}\n  {got.ravel()[:8]} ...")
    ref_path = ds / f"output_{i}.pb"
    if ref_path.exists():
        t = onnx.TensorProto(); t.ParseFromString(ref_path.read_bytes()); ref = onnx.numpy_helper.to_array(t)
        err = np.abs(got - ref).max()
        ok = np.all(np.abs(got - ref) <= 1e-4 + 1e-3 * np.abs(ref))
        print(f"  max |got - ref| = {err:.3g}  ({'matches' if ok else 'DOES NOT MATCH'} the reference within 1e-4 + 1e-3*|ref|)")
PY
