#!/usr/bin/env bash
# Creates the model zoo's virtual environment, bench/zoo/.venv, from bench/zoo/requirements.txt
# (PyPI only). Idempotent: exits after an import check when the environment is complete.
set -euo pipefail
zoo=$(cd "$(dirname "$0")" && pwd)
venv="$zoo/.venv"
check="import torch, torchvision, transformers, onnx, onnxruntime, onnxscript, numpy, matplotlib; \
assert torch.__version__.startswith('2.14.1') and torchvision.__version__.startswith('0.29.1')"
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "bench/zoo/setup.sh: the zoo environment is complete"; exit 0
fi
echo "bench/zoo/setup.sh: creating $venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q -r "$zoo/requirements.txt"
"$venv/bin/python" -c "$check"
echo "bench/zoo/setup.sh: the zoo environment is complete"
