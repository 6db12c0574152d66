#!/usr/bin/env bash
# The one test command: setup, configure, build and run every test. CI runs exactly this.
#   scripts/test.sh              every stage, in this order:
#                                  native    build in ./build, run ctest
#                                  sanitize  CPU-only ASan + UBSan build in build-sanitize, ctest
#                                  fuzz      scripts/fuzz.sh 40 on the model loader, then on the
#                                            ONNX importer (FUZZ_TARGET=onnx), libFuzzer
#                                  cross     scripts/cross-check.sh (Jetson builds, qemu tests)
#   scripts/test.sh --sanitize   setup and the sanitize stage only
# Environment: BUILD_DIR (default build), SANITIZE_BUILD_DIR (default build-sanitize),
# JET_CUDA_ARCHS (default 110, Jetson Thor: the CUDA sources are compiled with this machine's
# nvcc even without a GPU; see "Jetson" below for why 110), JET_FUZZ_SECONDS (default 40, per
# fuzz target).
# JET_SKIP_SANITIZE=1, JET_SKIP_FUZZ=1, JET_SKIP_CROSS=1 skip a stage for a quick local run (CI
# always runs them all).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

only_sanitize=0
case "${1:-}" in
  "") ;;
  --sanitize) only_sanitize=1 ;;
  *) echo "usage: scripts/test.sh [--sanitize]" >&2; exit 2 ;;
esac

scripts/setup.sh

start=$(date +%s)
timings=()
stage_done() { timings+=("$(printf '%-9s %4d s' "$1" $(( $(date +%s) - $2 )))"); }

# ASan + UBSan: every C/C++ target instrumented (cmake/sanitizers.cmake), CUDA off (device code
# is not instrumentable, and this machine has no GPU). clang when installed: it builds this tree
# with ASan in ~60% of gcc's CPU time, and its warnings (-Werror) complement the native gcc build.
# Leaks count; the first report of either sanitizer aborts the test. allocator_may_return_null:
# an impossible allocation (a damaged model asking for terabytes) returns null as it does without
# ASan, so the code's own ALLOC_FAILED path is what gets tested, not ASan's size limit.
# The real networks (label networks: PyTorch exports, training, ONNX Runtime, full-size CPU
# inference) run in the native stage only: under ASan they would take most of CI's time and test
# no code the other suites do not already run instrumented.
sanitize_stage() {
  local t0 dir=${SANITIZE_BUILD_DIR:-build-sanitize} compiler=() generator=()
  t0=$(date +%s)
  if command -v clang++ >/dev/null 2>&1; then
    # -gline-tables-only: file:line in the sanitizers' stack traces at little build cost.
    compiler=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
              -DCMAKE_C_FLAGS=-gline-tables-only -DCMAKE_CXX_FLAGS=-gline-tables-only)
  fi
  if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
  cmake -S "$root" -B "$dir" "${generator[@]}" "${compiler[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DJET_WERROR=ON -DJET_WITH_CUDA=OFF -DJET_SANITIZE=address,undefined -DJET_BUILD_TRAINING=ON \
    -DJET_BUILD_BENCH=OFF -DJET_BUILD_SAMPLES=OFF
  cmake --build "$dir" -j"$(nproc)"
  echo "test.sh: sanitize build took $(( $(date +%s) - t0 )) s"
  (cd "$dir" &&
   ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
   UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
   ctest --output-on-failure -j"$(nproc)" -LE networks)
  stage_done sanitize "$t0"
  echo "test.sh: sanitize build and tests took $(( $(date +%s) - t0 )) s"
}

if [ $only_sanitize -eq 1 ]; then
  sanitize_stage
  exit 0
fi

build_dir=${BUILD_DIR:-build}
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# JET_BUILD_TRAINING: the training add-on (issue 15) is off by default; CI builds and tests it.
cmake_args=(-S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DJET_WERROR=ON -DJET_BUILD_TRAINING=ON)
# 110 (Thor), not 87 (Orin): every device-code branch is gated at sm_70 or sm_80, so Orin and
# Thor compile the same code, and the cross stage compiles Orin's (and Xavier's) with CUDA 11.8,
# the JetPack 5 floor. This build is then nvcc 13's device compile for Jetson, Thor's ptxas
# included, and the cross stage's own nvcc 13 step (the same 110 device code beside host code for
# aarch64, 548 s of a 3016 s CI run on 2026-11-29) is skipped here.
if command -v nvcc >/dev/null 2>&1; then
  cmake_args+=(-DCMAKE_CUDA_ARCHITECTURES="${JET_CUDA_ARCHS:-110}")
fi

cmake "${cmake_args[@]}"
cmake --build "$build_dir" -j"$(nproc)"
echo "test.sh: configure + build took $(( $(date +%s) - start )) s"

# --verbose prints each doctest summary (assertion counts), not only the failures.
(cd "$build_dir" && ctest --output-on-failure --verbose -j"$(nproc)")
stage_done native "$start"
echo "test.sh: native build and tests took $(( $(date +%s) - start )) s"

if [ -z "${JET_SKIP_SANITIZE:-}" ]; then
  sanitize_stage
fi

if [ -z "${JET_SKIP_FUZZ:-}" ]; then
  t=$(date +%s)
  FUZZ_TARGET=loader scripts/fuzz.sh "${JET_FUZZ_SECONDS:-40}"
  FUZZ_TARGET=onnx scripts/fuzz.sh "${JET_FUZZ_SECONDS:-40}"
  stage_done fuzz "$t"
fi

# Jetson: aarch64 builds, tests under qemu, the CUDA 11.x floor for Xavier and Orin (nvcc 13 for
# Thor is the native build above, so the cross stage's cuda13 step is skipped unless CROSS_SKIP
# says otherwise).
if [ -z "${JET_SKIP_CROSS:-}" ]; then
  t=$(date +%s)
  CROSS_SKIP=${CROSS_SKIP-cuda13} scripts/cross-check.sh
  stage_done cross "$t"
fi
echo "test.sh: stage times:"
printf '  %s\n' "${timings[@]}"
echo "test.sh: total $(( $(date +%s) - start )) s"
