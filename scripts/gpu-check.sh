#!/usr/bin/env bash
# GPU verification, run on the lent GPU machine (see docs/design.md): builds with CUDA for sm_90,
# runs every test (the GPU tests compare each CUDA routine with the CPU backend), runs them again
# under compute-sanitizer, runs the benchmarks, and writes logs plus summary.txt to $OUT.
#   OUT=/tmp/out scripts/gpu-check.sh
# JET_GPU_STEPS picks steps (default all: "tests arch sanitizer bench"; the build always runs and
# is incremental), so the whole check can be split over two calls of a 10-minute limit.
# JET_SAN_TIMEOUT (seconds) bounds each sanitizer job; one that runs out is reported as FAILED.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$(pwd)/gpu-check-out}
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu}
summary="$out/summary.txt"
# Logs go to one archive ($OUT returns at most 8 files); summary.txt stays beside it.
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$out/logs.tgz" . 2>/dev/null' EXIT
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

export PATH="/usr/local/cuda/bin:$PATH"
# The device copy of the tree may lack git objects: the caller can pass JET_COMMIT.
say "gpu-check: $(date -u +%FT%TZ), commit ${JET_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
say "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || echo 'nvidia-smi failed')"
say "nvcc: $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"

# The GPU machine has no FlatBuffers and no ONNX: scripts/gpu-deps.sh unpacks Debian's flatc and
# FlatBuffers headers into .deb/flatbuffers (name .deb in the device call's carry). The runtime and
# the converter core (IR, planner, writer) use FlatBuffers header-only; the ONNX importer is not
# built there.
cmake_args=(-S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DJET_WERROR=ON
            -DCMAKE_CUDA_ARCHITECTURES=90a -DJET_BUILD_SAMPLES=OFF -DJET_BUILD_TRAINING=ON)
if [ -d .deb/flatbuffers/usr ]; then cmake_args+=(-DJET_FLATBUFFERS_ROOT="$(pwd)/.deb/flatbuffers"); fi
# The .npy interop tests need numpy in /usr/bin/python3; without it they would fail, not skip.
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then cmake_args+=(-DJET_TEST_NUMPY=OFF); fi
# Debian's doctest-dev unpacked into .deb/doctest (carried to the GPU machine) when present.
if [ -d .deb/doctest/usr ]; then cmake_args+=(-DCMAKE_PREFIX_PATH="$(pwd)/.deb/doctest/usr"); fi
# Test data prepared on the workstation (scripts/gpu-data.sh; no ONNX, npm or numpy here) and
# carried in .testdata: ONNX conformance models and the real networks with ONNX Runtime's outputs.
# They add the conformance.cuda.* and networks.cuda_* tests to the tests step.
if [ -f .testdata/conformance/manifest.txt ]; then cmake_args+=(-DJET_CONFORMANCE_DIR="$(pwd)/.testdata/conformance"); fi
if [ -d .testdata/networks ]; then cmake_args+=(-DJET_NETWORKS_DIR="$(pwd)/.testdata/networks"); fi
# The samples need stb (.deb/stb from gpu-deps.sh); with .testdata/face_detect they add
# samples.face_detect_cuda_fp32/fp16 (face_detect against ONNX Runtime's pipeline).
if [ -d .deb/stb/usr ]; then cmake_args+=(-DJET_BUILD_SAMPLES=ON -DJET_STB_ROOT="$(pwd)/.deb/stb"); fi
if [ -f .testdata/face_detect/reference.json ]; then cmake_args+=(-DJET_FACE_DETECT_DIR="$(pwd)/.testdata/face_detect"); fi
status=0
if ! cmake "${cmake_args[@]}" >"$logs/configure.log" 2>&1; then
  say "configure: FAILED (see configure.log)"; tail -30 "$logs/configure.log"; exit 1
fi
if ! cmake --build "$build" -j"$(nproc)" >"$logs/build.log" 2>&1; then
  say "build: FAILED (see build.log)"; grep -E 'error' "$logs/build.log" | head -30; exit 1
fi
say "build: ok$(/usr/bin/python3 -c 'import numpy' 2>/dev/null || echo ' (no numpy in /usr/bin/python3: .npy interop tests off)')"

steps=" ${JET_GPU_STEPS:-tests arch sanitizer bench} "
want() { [[ "$steps" == *" $1 "* ]]; }

if want tests; then
  # install.deb is left out: its packages' dependency scan (dpkg-shlibdeps) needs the libraries
  # installed as packages, and here libstb comes unpacked from .deb/stb (no GPU code involved;
  # CI runs it).
  # JET_EXPECT_HOPPER_TILES: this build lists 90a, so on an sm_90 GPU the tactic test must run the
  # Hopper (wgmma) tiles, not pass by skipping them as it does where they cannot run.
  (cd "$build" && JET_EXPECT_HOPPER_TILES=1 ctest --output-on-failure --verbose -j4 -E '^install\.deb$') >"$logs/tests.log" 2>&1 || status=1
  say "tests: $(grep -E 'tests passed|tests failed' "$logs/tests.log" | tail -1)"
  grep -E 'test cases:|Test +#' "$logs/tests.log" | grep -E 'Test +#' | sed 's/^ *//' | tee -a "$summary"
  grep -E 'CUDA device 0|not tested' "$logs/tests.log" | head -2 | tee -a "$summary"
  # The conformance and network reports (counts per device and precision).
  grep -E '^([0-9]+: )?(conformance (cpu|cuda) fp(32|16): |networks? )' \
    "$logs/tests.log" | head -60 | tee -a "$summary"
fi

# The start-up architecture check: a build holding only sm_87 machine code (no PTX) must report
# ARCH_MISMATCH on this sm_90 device instead of failing at the first launch.
if ! want arch; then :
elif cmake -S . -B "$build-sm87" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=87-real \
     -DJET_BUILD_RUNTIME=OFF -DJET_BUILD_CONVERTER=OFF -DJET_BUILD_SAMPLES=OFF -DJET_BUILD_BENCH=OFF >"$logs/arch.log" 2>&1 &&
   cmake --build "$build-sm87" -j"$(nproc)" --target jet_test_cuda_handle >>"$logs/arch.log" 2>&1 &&
   JET_EXPECT_ARCH_MISMATCH=1 "$build-sm87/tests/jet_test_cuda_handle" -s >>"$logs/arch.log" 2>&1; then
  say "arch check: ok ($(grep -o 'ARCH_MISMATCH: .*' "$logs/arch.log" | head -1 | cut -c1-160))"
else
  say "arch check: FAILED (see arch.log)"; status=1
fi

# compute-sanitizer over every test executable (each sweeps the CUDA backend too): memcheck and
# racecheck on all of them (no hand-kept list of which kernels use shared memory to fall out of
# date); several at once, the GPU has room. The tests run their reduced shape set
# (JET_TEST_REDUCED=1, tests/kernels/util.h): every kind of case, fewer layout combinations, so
# the whole step fits one 10-minute call.
if want sanitizer; then
  # One job per line, "TOOL|EXE|TEST-CASE FILTER": conv's test cases run as separate jobs so that
  # the slow racecheck of the whole conv suite spreads over the GPU's parallel jobs.
  run_san() {
    local tool exe filter name log
    IFS='|' read -r tool exe filter <<<"$1"
    name=$(basename "$exe")${filter:+-$(echo "$filter" | tr -c 'A-Za-z0-9_\n' '_')}
    log="$logs/san-$tool-$name.log"
    # --require-cuda-init=no: a test case that only checks host-side validation makes no CUDA
    # call, which compute-sanitizer otherwise reports as an error.
    # JET_TEST_NO_ALLOC_COUNT: the tool allocates inside the CUDA calls it intercepts, so the
    # allocation-counting tests (the trainer's) skip their counts here; the tests step counts.
    JET_TEST_REDUCED=1 JET_TEST_NO_ALLOC_COUNT=1 timeout "${JET_SAN_TIMEOUT:-0}" \
      compute-sanitizer --tool "$tool" --error-exitcode 1 \
      --require-cuda-init=no "$exe" \
      ${filter:+"-tc=$filter"} >"$log" 2>&1
    case $? in 0) echo "ok $tool $name" ;; 124) echo "FAILED (timed out) $tool $name" ;;
                *) echo "FAILED $tool $name" ;; esac
  }
  export -f run_san; export logs
  # The slowest suites (conv, conv_find, resize: racecheck of conv_find alone ran past 200 s)
  # run one job per test case, and first: xargs starts jobs in order, so the longest ones must
  # not wait behind the short ones.
  split_suites="jet_test_conv jet_test_conv_find jet_test_resize"
  { for suite in $split_suites; do
      while IFS= read -r tc; do
        [ -n "$tc" ] || continue
        echo "racecheck|$build/tests/$suite|$tc"; echo "memcheck|$build/tests/$suite|$tc"
      done <<<"$("$build/tests/$suite" -ltc 2>/dev/null | grep -vE '^\[doctest\]|^=+$|^$' || true)"
    done
    # tests/training/jet_train_gpu_tests: the training add-on's CUDA kernels (JET_BUILD_TRAINING);
    # jet_train_trainer_cuda: the trainer on CUDA.
    for exe in "$build"/tests/jet_test_* "$build"/tests/training/jet_train_gpu_tests \
               "$build"/tests/training/jet_train_trainer_cuda; do
      [ -x "$exe" ] || continue
      [[ " $split_suites " == *" $(basename "$exe") "* ]] && continue
      echo "racecheck|$exe|"; echo "memcheck|$exe|"; done
  } | xargs -P 12 -d '\n' -n 1 bash -c 'run_san "$0"' >"$logs/sanitizer.txt" 2>&1
  # Every op type through the runtime on CUDA: the conformance models under memcheck.
  if [ -f .testdata/conformance/manifest.txt ]; then
    for precision in fp32 fp16; do
      if timeout "${JET_SAN_TIMEOUT:-0}" compute-sanitizer --tool memcheck --error-exitcode 1 \
           "$build/tests/jet_conformance_run" --manifest .testdata/conformance/manifest.txt --device cuda \
           --precision $precision --known-limits tests/conformance/known_limits.txt \
           >"$logs/san-memcheck-conformance-$precision.log" 2>&1; then
        echo "ok memcheck conformance-$precision"
      else echo "FAILED memcheck conformance-$precision"; fi >>"$logs/sanitizer.txt"
    done
  fi
  san_runs=$(grep -c '' "$logs/sanitizer.txt")
  san_failed=$(grep -c '^FAILED' "$logs/sanitizer.txt" || true)
  if [ "$san_failed" -eq 0 ]; then
    say "sanitizer: ok ($san_runs runs: memcheck and racecheck on every test, reduced shapes; conv per test case)"
  else say "sanitizer: FAILED: $(grep '^FAILED' "$logs/sanitizer.txt" | tr '\n' ' ')"; status=1; fi
  grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$logs"/san-*.log | sort | uniq -c | tee -a "$summary"
fi

# Benchmarks.
want bench && for b in "$build"/bench/jet_bench_*; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  args=()
  # The full cuDNN comparison takes minutes: quick mode here unless JET_BENCH_FULL=1.
  if [ "$name" = jet_bench_conv ] && [ -z "${JET_BENCH_FULL:-}" ]; then args=(--quick); fi
  if "$b" "${args[@]}" >"$logs/$name.log" 2>&1; then say "bench $name: ok ($(tail -1 "$logs/$name.log"))"
  else say "bench $name: FAILED"; status=1; fi
  grep -E 'SUMMARY|geomean|Total' "$logs/$name.log" | tail -3 | sed "s/^/  $name: /" | tee -a "$summary"
done

# Whole networks through the runtime (jet-bench, untuned and tuned) against PyTorch, in the same
# run (bench/networks/run.py). JET_BENCH_NETWORKS / JET_BENCH_DTYPES split the work over calls
# (torch.compile of every network takes minutes); EfficientNet-B0 needs .testdata/networks.
if want bench; then
  if [ -x "$build/tools/jet-bench" ] && [ -x "$build/tools/jet-make-model" ]; then
    net_args=()
    [ -n "${JET_BENCH_NETWORKS:-}" ] && net_args+=(--networks "$JET_BENCH_NETWORKS")
    [ -n "${JET_BENCH_DTYPES:-}" ] && net_args+=(--dtypes "$JET_BENCH_DTYPES")
    if python3 bench/networks/run.py "$build" "$out/networks.md" "${net_args[@]}" >"$logs/networks.log" 2>&1; then
      say "bench networks: ok"
    else say "bench networks: FAILED"; grep '^error:' "$logs/networks.log" | tail -10 | tee -a "$summary"; status=1; fi
    sed -n '/^== summary ==$/,$p' "$logs/networks.log" | tail -n +2 | sed 's/^/  /' | tee -a "$summary"
  else say "bench networks: FAILED (jet-bench / jet-make-model not built)"; status=1; fi
fi

# The camera loop with BlazeFace on 2000 synthetic 1280x720 frames (samples/camera_loop/README.md):
# one JSON report a line in camera_loop_bench.jsonl (FPS, stages, memory), a line each here.
if want bench && [ -x "$build/samples/camera_loop/camera_loop" ]; then
  : >"$out/camera_loop_bench.jsonl"
  for p in fp16 fp32; do
    m=.testdata/face_detect/blazeface_$p.jet
    [ -f "$m" ] || { say "bench camera_loop $p: not run (no $m)"; continue; }
    if "$build/samples/camera_loop/camera_loop" --model "$m" --device cuda --bench --json \
         >"$logs/camera_loop_$p.json" 2>"$logs/camera_loop_$p.log"; then
      cat "$logs/camera_loop_$p.json" >>"$out/camera_loop_bench.jsonl"
      say "bench camera_loop $p: ok ($(python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); e = r["stages_ms"]["end_to_end"]; print("%.0f FPS, end-to-end p50 %.3f ms, p99 %.3f ms" % (r["fps"], e["p50"], e["p99"]))' "$logs/camera_loop_$p.json"))"
    else say "bench camera_loop $p: FAILED"; tail -5 "$logs/camera_loop_$p.log" | tee -a "$summary"; status=1; fi
  done
fi

say "gpu-check: $([ $status -eq 0 ] && echo PASSED || echo FAILED)"
exit $status
