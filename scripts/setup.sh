#!/usr/bin/env bash
# Installs the Debian packages jetinfer needs, only those that are missing, and reports whether a
# CUDA toolkit is present. Idempotent: a second run installs nothing.
set -euo pipefail

packages=(build-essential cmake libflatbuffers-dev flatbuffers-compiler libstb-dev doctest-dev
          libprotobuf-dev protobuf-compiler libonnx-dev
          # scripts/fuzz.sh: clang with libFuzzer and the sanitizer runtimes, llvm-symbolizer
          clang libclang-rt-14-dev llvm
          # tests of the tools (.npy files)
          python3-numpy
          # ONNX's backend tests for the conformance suite (tests/conformance, docs/conformance.md)
          libonnx-testdata
          # real networks (tests/networks, docs/networks.md): PyTorch exports, Fashion-MNIST
          # training, skimage's photos as inputs
          python3-torch python3-torchvision python3-skimage dataset-fashion-mnist)

missing=()
for p in "${packages[@]}"; do
  if dpkg -s "$p" >/dev/null 2>&1; then :; else missing+=("$p"); fi
done
# tests/networks runs ONNX Runtime through node and npm: any node will do (a NodeSource one too),
# Debian's only when there is none.
if ! command -v npm >/dev/null 2>&1; then missing+=(nodejs npm); fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages already installed, nothing to do"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing missing packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  echo "setup: installed ${missing[*]}"
fi

nvcc_path=$(command -v nvcc || true)
if [ -z "$nvcc_path" ] && [ -x /usr/local/cuda/bin/nvcc ]; then nvcc_path=/usr/local/cuda/bin/nvcc; fi
if [ -n "$nvcc_path" ]; then
  echo "setup: CUDA toolkit found: $nvcc_path ($("$nvcc_path" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'))"
else
  echo "setup: no CUDA toolkit found (nvcc): the build will have the CPU backend only"
fi
