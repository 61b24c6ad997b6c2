#!/usr/bin/env bash
# Installs every dependency Tessera needs to build, test and benchmark.
# Idempotent: when everything is already present it only checks and exits (a few seconds).
set -euo pipefail

APT_PACKAGES=(
  build-essential cmake ninja-build ccache git
  llvm-19-dev libclang-rt-19-dev clang-19
  libprotobuf-dev protobuf-compiler
  libgtest-dev libgmock-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libdnnl-dev libopenblas-dev libzip-dev libxgboost-dev
  zlib1g-dev libzstd-dev libedit-dev libffi-dev libxml2-dev libcurl4-openssl-dev
  qemu-user g++-aarch64-linux-gnu
  libjpeg62-turbo-dev libpng-dev libtiff-dev libwebp-dev libopenjp2-7-dev libstb-dev
)
# libxgboost-dev: the tuner's cost model (XGBoost's C API, src/tune/cost_model.cc).
# clang-19 (with libclang-rt-19-dev's libFuzzer and sanitizer runtimes): the fuzz targets (scripts/fuzz.sh).
# qemu-user, g++-aarch64-linux-gnu: cross-compiled AArch64 artifacts (linked with aarch64-linux-gnu-gcc)
# and the runtime-only aarch64 build (scripts/build_cross.sh) run under qemu-aarch64 in tests/e2e/test_aarch64.py.
# libjpeg62-turbo-dev ... libstb-dev: ImageDecoder's codecs in the runtime (runtime/image_decode.h; CMake
# TESSERA_IMAGE_CODECS). pillow: tests/e2e/test_image_decoder.py encodes its images with it.
# torch: tests/e2e/test_accuracy_vs_ort.py exports ResNet-50 / MobileNetV2 / BERT-base / LSTM / GRU with bench/export_models.
# Exactly 2.13.0: the local CPU wheel (a plain `torch` would pull GBs of CUDA).
# nanobind, scikit-build-core: the Python package (python/, pyproject.toml); tqdm: tessera.tune's progress bar.
PIP_PACKAGES=(numpy onnx onnxruntime pytest torch==2.13.0 nanobind scikit-build-core tqdm pillow)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "setup: installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if ! $PY -c "import numpy, onnx, onnxruntime, pytest, torch, nanobind, scikit_build_core, tqdm, PIL" 2>/dev/null; then
  echo "setup: installing Python packages: ${PIP_PACKAGES[*]}"
  $PY -m pip install -q "${PIP_PACKAGES[@]}"
fi
echo "setup: all dependencies present"
