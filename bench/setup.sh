#!/usr/bin/env bash
# Installs the benchmark-only Python packages (bench/requirements.txt) on top of scripts/setup.sh.
# Idempotent: exits after a quick import check when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
PY=${PYTHON:-python3}
CHECK="import importlib.util, torch, matplotlib, tvm, tvm_ffi, psutil, xgboost, openvino; assert importlib.util.find_spec('onnx2torch')"
if $PY -c "$CHECK" 2>/dev/null; then
  echo "bench/setup.sh: all benchmark dependencies present"; exit 0
fi
echo "bench/setup.sh: installing benchmark Python packages"
$PY -m pip install -q torch==2.13.0 matplotlib "apache-tvm==0.27.0.post1" "apache-tvm-ffi==0.1.14.post0" psutil xgboost openvino
$PY -m pip install -q --no-deps onnx2torch
# a torchvision built for another torch breaks onnx2torch's import ("operator torchvision::nms does not exist")
if ! $PY -c "import torchvision" 2>/dev/null && $PY -m pip show -q torchvision >/dev/null 2>&1; then
  echo "bench/setup.sh: removing a torchvision that does not load with this torch"
  $PY -m pip uninstall -y -q torchvision
fi
$PY -c "$CHECK"
echo "bench/setup.sh: all benchmark dependencies present"
