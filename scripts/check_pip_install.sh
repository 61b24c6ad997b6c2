#!/usr/bin/env bash
# Checks the Python package as a user gets it: a fresh virtual environment, `pip install .` from
# this checkout (scikit-build-core builds the C++ core in build-py/, reused by later runs), then the
# README's Python example and examples/onnx_example.py. Not part of scripts/test.sh (a full Release
# build: ~15 min on 2 cores the first time); tests/python checks the same package from build/python.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$(mktemp -d /tmp/tessera-venv.XXXXXX)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install -q "$root"
"$venv/bin/pip" install -q onnx
cd "$(mktemp -d)"
"$venv/bin/python" -c "import tessera; print('tessera', tessera.__version__)"
# The README's example: the Python block between ```python and ```.
sed -n '/^```python$/,/^```$/p' "$root/README.md" | sed '1d;$d' | sed "s#\.\./shared#$root/../shared#" > readme_example.py
"$venv/bin/python" readme_example.py
"$venv/bin/python" "$root/examples/onnx_example.py" "$root/../shared/models/mnist-8"
"$venv/bin/tessera" inspect mnist.so | head -2
echo "check_pip_install: ok"
