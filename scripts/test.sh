#!/usr/bin/env bash
# The one test command: setup, configure, build and run every test. CI runs exactly this.
#   scripts/test.sh              build in ./build, run ctest, then scripts/cross-check.sh
# Environment: BUILD_DIR (default build), JET_CUDA_ARCHS (default 87, Jetson Orin: the CUDA
# sources are compiled even without a GPU so Orin compile errors are caught).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

scripts/setup.sh

build_dir=${BUILD_DIR:-build}
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

cmake_args=(-S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DJET_WERROR=ON)
if command -v nvcc >/dev/null 2>&1; then
  cmake_args+=(-DCMAKE_CUDA_ARCHITECTURES="${JET_CUDA_ARCHS:-87}")
fi

start=$(date +%s)
cmake "${cmake_args[@]}"
cmake --build "$build_dir" -j"$(nproc)"
echo "test.sh: configure + build took $(( $(date +%s) - start )) s"

# --verbose prints each doctest summary (assertion counts), not only the failures.
(cd "$build_dir" && ctest --output-on-failure --verbose -j"$(nproc)")
echo "test.sh: native build and tests took $(( $(date +%s) - start )) s"

# Jetson: aarch64 builds, tests under qemu, the CUDA 11.x floor and nvcc 13 for Orin/Thor.
# JET_SKIP_CROSS=1 skips it for a quick local run (CI always runs it).
if [ -z "${JET_SKIP_CROSS:-}" ]; then
  scripts/cross-check.sh
fi
echo "test.sh: total $(( $(date +%s) - start )) s"
