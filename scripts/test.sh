#!/usr/bin/env bash
# The one test command: setup, configure, build and run every test. CI runs exactly this.
#   scripts/test.sh              build in ./build and run ctest
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

cd "$build_dir"
# --verbose prints each doctest summary (assertion counts), not only the failures.
ctest --output-on-failure --verbose -j"$(nproc)"
echo "test.sh: total $(( $(date +%s) - start )) s"
