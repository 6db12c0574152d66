#!/usr/bin/env bash
# One device call for tuning and cold load (issue 13 sections 4 and benchmarks): builds what it
# needs for sm_90, runs the GPU tests of tuning at load, the weight upload and the zoo networks
# (EfficientNet-B0 included), then bench/networks/run.py without the PyTorch peers: every network
# untuned against tuned, with the cold load's phases and tuning's own whole-network check.
#   OUT=/tmp/out bench/networks/tune-load-check.sh [NETWORKS] [DTYPES]
# NETWORKS / DTYPES: run.py's --networks / --dtypes (default: all five, f16,f32). Carry .deb
# (scripts/gpu-deps.sh) when the machine is fresh. Logs and the report go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-$(pwd)/tune-load-out}
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu}
export PATH="/usr/local/cuda/bin:$PATH"
args=(-S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJET_WERROR=ON
      -DCMAKE_CUDA_ARCHITECTURES=90 -DJET_BUILD_SAMPLES=OFF -DJET_TEST_NUMPY=OFF)
[ -d .deb/flatbuffers/usr ] && args+=(-DJET_FLATBUFFERS_ROOT="$(pwd)/.deb/flatbuffers")
[ -d .deb/doctest/usr ] && args+=(-DCMAKE_PREFIX_PATH="$(pwd)/.deb/doctest/usr")
cmake "${args[@]}" >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
targets=(jet-bench jet-make-model jet-tune jet_runtime_test_tuning jet_runtime_test_zero_alloc
         jet_runtime_test_engine jet_runtime_test_weight_upload)
t0=$(date +%s)
if ! cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E 'error' -A3 "$out/build.log" | head -40; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"
status=0
for t in tuning zero_alloc engine weight_upload; do
  "$build/tests/jet_runtime_test_$t" >"$out/test_$t.log" 2>&1 || status=1
  echo "test_$t: $(grep -E '^\[doctest\] (test cases|assertions)' "$out/test_$t.log" | tr '\n' ' ')"
  grep -E 'ERROR|FAILED' -A3 "$out/test_$t.log" | head -12
done
python3 bench/networks/run.py "$build" "$out/networks.md" --no-torch \
  --networks "${1:-resnet18,resnet50,mobilenet_v2,efficientnet_b0,resnet50_b32}" --dtypes "${2:-f16,f32}" \
  >"$out/networks.log" 2>&1 || status=1
grep '^error:' "$out/networks.log" | head -10
# The two tables (time untuned / tuned, cold load; the load's phases and tuning's check), no raw JSON.
sed -n '/^| network | batch/,/^$/p' "$out/networks.md" | cut -d'|' -f1-6,11-12,14-16
sed -n '/^| network | dtype | cold/,/^$/p' "$out/networks.md"
exit $status
