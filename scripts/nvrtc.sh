#!/usr/bin/env bash
# Installs NVIDIA's NVRTC (CUDA 13.0, the PyPI wheel: no GPU or CUDA toolkit needed) into
# target/nvrtc when it is missing, and prints the folder holding libnvrtc.so.13, for
#
#   TH_NVRTC_DIR=$(scripts/nvrtc.sh) cargo test --test cuda_nvrtc
#
# Progress goes to stderr, so stdout is only the folder. PYTHON names the interpreter whose pip
# installs it (default python3; the test command passes its venv's).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=13.0.88
DIR=target/nvrtc
LIB="$DIR/nvidia/cu13/lib"
if [ ! -f "$LIB/libnvrtc.so.13" ] || [ ! -f "$LIB/libnvrtc-builtins.so.13.0" ]; then
  echo "installing nvidia-cuda-nvrtc==$VERSION into $DIR" >&2
  "${PYTHON:-python3}" -m pip install --quiet --disable-pip-version-check --no-deps --target "$DIR" \
    "nvidia-cuda-nvrtc==$VERSION" >&2
fi
echo "$(pwd)/$LIB"
