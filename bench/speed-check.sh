#!/usr/bin/env bash
# One device call of kernel work (METHOD.md: build, check, time several variants, print a short
# table last): builds only what the steps need for sm_90, runs the GPU tests of the GEMM family
# against the CPU reference, then the benchmarks. Logs go to $OUT.
#   OUT=/tmp/out bench/speed-check.sh [STEP...]
# Steps (default "tests conv"): tests (jet_test_conv tactic sweep + jet_test_gemm), conv
# (jet_bench_conv ResNet-50 f16 NHWC at N=1 and N=32 with --tactics), conv-all (the full
# jet_bench_conv), r18 (bench/networks/run.py --networks resnet18), sanitize (memcheck + racecheck of the tactic
# sweep and the GEMM tests), ncu (Nsight Compute: per-kernel GPU time, grid and registers of
# cuDNN's and our kernels on the layers in $NCU_LAYERS, f16 NHWC, N=1 and N=32), ncu-detail
# (one launch of ours and of cuDNN's in detail), cuda-ops (bench/cuda_ops: GEMV rows), conv-bwd
# (jet_bench_conv_bwd: conv_backward_data / conv_backward_filter against cuDNN's backward on
# ResNet-50's layers at N=1 and N=32, $CONV_BWD_VARIANTS, default f32 NCHW and f16 NHWC), train
# (a ResNet-18 training step, batch 32, f32, SGD momentum, with batch norm folded and kept:
# jet_bench_train_step against PyTorch eager, bench/train/torch_train_step.py, on the same GPU),
# train-tests (the training add-on's CUDA tests: jet_train_gpu_tests, jet_train_trainer_cuda, and
# the backward-data algorithms' test, which runs on every backend present).
# The build has the training add-on.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$(pwd)/speed-out}
mkdir -p "$out"
build=${BUILD_DIR:-build-gpu}
export PATH="/usr/local/cuda/bin:$PATH"
steps=" ${*:-tests conv} "
want() { [[ "$steps" == *" $1 "* ]]; }
args=(-S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DJET_WERROR=ON
      -DCMAKE_CUDA_ARCHITECTURES=90a -DJET_BUILD_SAMPLES=OFF -DJET_TEST_NUMPY=OFF
      -DJET_BUILD_TRAINING=ON)
[ -d .deb/flatbuffers/usr ] && args+=(-DJET_FLATBUFFERS_ROOT="$(pwd)/.deb/flatbuffers")
[ -d .deb/doctest/usr ] && args+=(-DCMAKE_PREFIX_PATH="$(pwd)/.deb/doctest/usr")

# SKIP_BUILD=1: reuse BUILD_DIR as another script built it (scripts/gpu-check.sh's full build
# holds every target used here).
if [ "${SKIP_BUILD:-0}" != 1 ]; then
cmake "${args[@]}" >"$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
targets=(jet_test_conv jet_test_gemm jet_runtime_test_engine)
want conv || want conv-all || want ncu || want ncu-detail || want ncu-source && targets+=(jet_bench_conv)
want r18 || want nets && targets+=(jet-bench jet-make-model)
want cuda-ops && targets+=(jet_bench_cuda_ops)
want conv-bwd && targets+=(jet_bench_conv_bwd)
want train && targets+=(jet_bench_train_step)
want train-tests && targets+=(jet_train_gpu_tests jet_train_trainer_cuda jet_train_test_conv_backward_data_algo)
t0=$(date +%s)
if ! cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >"$out/build.log" 2>&1; then
  grep -E 'error' -A3 "$out/build.log" | head -40; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"
fi
status=0
if want tests; then
  "$build/tests/jet_test_conv" -tc='*tactics*,*IMPLICIT_GEMM*,*PRECOMP*,conv_forward GEMM' \
    >"$out/test_conv.log" 2>&1 || status=1
  "$build/tests/jet_test_gemm" >"$out/test_gemm.log" 2>&1 || status=1
  "$build/tests/jet_runtime_test_engine" >"$out/test_engine.log" 2>&1 || status=1
  echo "test_engine: $(grep -E '^\[doctest\] (test cases|assertions)' "$out/test_engine.log" | tr '\n' ' ')"
  echo "test_conv: $(grep -E '^\[doctest\] (test cases|assertions)' "$out/test_conv.log" | tr '\n' ' ')"
  echo "test_gemm: $(grep -E '^\[doctest\] (test cases|assertions)' "$out/test_gemm.log" | tr '\n' ' ')"
  grep -E 'ERROR|FAILED|CHECK|REQUIRE' "$out/test_conv.log" "$out/test_gemm.log" "$out/test_engine.log" | head -20
fi
if want train-tests; then
  for exe in training/jet_train_gpu_tests training/jet_train_trainer_cuda \
             training/jet_train_test_conv_backward_data_algo; do
    log="$out/$(basename "$exe").log"
    "$build/tests/$exe" >"$log" 2>&1; rc=$?
    [ $rc -eq 0 ] || status=1
    echo "$(basename "$exe"): exit $rc, $(grep -E '^\[doctest\] (test cases|assertions)' "$log" | tr '\n' ' ')"
    grep -E 'ERROR|FAILED|CHECK|REQUIRE' "$log" | head -10
  done
fi
if want sanitize; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool "$build/tests/jet_test_conv" -tc='*tactics*' \
      >"$out/san_${tool}_conv.log" 2>&1 || status=1
    compute-sanitizer --tool $tool "$build/tests/jet_test_gemm" -tc='*small M*,*larger*' \
      >"$out/san_${tool}_gemm.log" 2>&1 || status=1
    echo "sanitize $tool: $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$out"/san_${tool}_*.log | tr '\n' ' ')"
  done
fi
if want conv; then
  for v in ${CONV_VARIANTS:-f16:nhwc f32:nchw}; do
    "$build/bench/jet_bench_conv" --sets resnet50 --dtypes ${v%:*} --layouts ${v#*:} --tactics \
      --runs 5 --csv "$out/conv_r50_${v%:*}.csv" >"$out/conv_r50_${v%:*}.log" 2>&1 || status=1
    grep -E '^(geomean|network|SUMMARY)' "$out/conv_r50_${v%:*}.log"
  done
fi
if want ncu; then
  # One ncu process per layer and batch: every launch of the bench (cuDNN's find and timing, ours
  # per algorithm), one metric pass each, clocks and caches left alone; summarized per kernel name
  # and grid as count / median us.
  for layer in ${NCU_LAYERS:-res2a_branch2a res4*_branch2b res5a_branch2a}; do
    for n in 1 32; do
      tag="$(echo "$layer" | tr -c 'A-Za-z0-9_\n' '_')-n$n"
      timeout 120 ncu --csv --print-units base --clock-control none --cache-control none \
        --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread \
        "$build/bench/jet_bench_conv" --sets resnet50 --n $n --layers "$layer" --dtypes f16 \
        --layouts nhwc --runs 1 --no-graph >"$out/ncu-$tag.csv" 2>"$out/ncu-$tag.err" || status=1
      python3 - "$out/ncu-$tag.csv" "$layer N=$n" <<'PY'
import csv, sys, statistics, collections
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
by = collections.defaultdict(dict)
for r in csv.DictReader(rows):
    key = (r["Kernel Name"].replace("jet::cuda::", "")[:130], r.get("Grid Size", ""))
    by[key].setdefault(r["Metric Name"], []).append(r["Metric Value"])
out = []
for (name, _), m in by.items():
    t = [float(v.replace(",", "")) / 1000 for v in m.get("gpu__time_duration.sum", [])]
    if not t: continue
    out.append((statistics.median(t), len(t), name, m.get("launch__grid_size", ["?"])[0],
                m.get("launch__block_size", ["?"])[0], m.get("launch__registers_per_thread", ["?"])[0]))
print("ncu %s:" % sys.argv[2])
for med, cnt, name, g, b, r in sorted(out)[:14]:
    print("  %8.2f us x%-5d grid %-6s block %-4s regs %-4s %s" % (med, cnt, g, b, r, name))
PY
    done
  done
fi
if want ncu-detail; then
  # Where one launch spends its time: ours (gemm_mma_kernel) and cuDNN's (the first launch whose
  # name looks like a cuDNN/CUTLASS convolution) on $NCU_DETAIL_LAYER at N=$NCU_DETAIL_N (default 1).
  for who in "regex:gemm_mma_kernel" "regex:xmma|cutlass|implicit_convolve|sm90|sm80"; do
    timeout 120 ncu --clock-control none -k "$who" -c 1 --launch-skip ${NCU_SKIP:-20} \
      --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
      --section SchedulerStats --section MemoryWorkloadAnalysis \
      "$build/bench/jet_bench_conv" --sets resnet50 --n ${NCU_DETAIL_N:-1} --layers "${NCU_DETAIL_LAYER:-res2a_branch2a}" \
      --dtypes f16 --layouts nhwc --runs 1 --no-graph >>"$out/ncu-detail.txt" 2>&1 || status=1
  done
  grep -E '^  [a-zA-Z_].*\(|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Size|Grid Size|Warp Cycles Per Issued|Issue Slots Busy|DRAM Throughput|Compute \(SM\) Throughput|Stall|Dynamic Shared' "$out/ncu-detail.txt" | cut -c1-150 | head -60
fi
if want ncu-source; then
  # Where one kernel's warps stall, per SASS instruction: one launch of the kernel whose demangled
  # name matches $NCU_KERNEL (default: the 64x128 tile's conv kernel) on $NCU_DETAIL_LAYER at
  # N=$NCU_DETAIL_N, every tactic run (--tactics) so the tile need not be the heuristic's. Writes
  # the report and the per-instruction table (source.csv.gz); prints the summary sections and the
  # 40 instructions with the most stall samples.
  rep="$out/source"
  timeout 300 ncu --clock-control none --kernel-name-base demangled \
    -k "regex:${NCU_KERNEL:-MmaTile<.int.64, .int.128, .*ConvMaskLoader.*ConvEpi}" -c 1 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section SourceCounters --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --import-source no -f -o "$rep" \
    "$build/bench/jet_bench_conv" --sets resnet50 --n ${NCU_DETAIL_N:-32} \
    --layers "${NCU_DETAIL_LAYER:-res3*_branch2b}" --dtypes f16 --layouts nhwc --tactics --runs 1 \
    --no-graph >"$out/ncu-source.log" 2>&1 || status=1
  ncu -i "$rep.ncu-rep" --print-units base >"$out/ncu-source-details.txt" 2>&1 || status=1
  grep -E '^  [a-zA-Z_].*\(|Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Issued Warp|Eligible Warps|Compute \(SM\) Throughput|DRAM Throughput|L1/TEX Hit|Shared|Bank|Stall|stall|Pipe|pipe' \
    "$out/ncu-source-details.txt" | cut -c1-160 | head -60
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass >"$out/source.csv" 2>"$out/source.err" || status=1
  python3 - "$out/source.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hdr_i = next((i for i, r in enumerate(rows) if any("Source" == c for c in r)), None)
if hdr_i is None:
    print("source page: no header found; first lines:", rows[:3]); sys.exit(0)
hdr = rows[hdr_i]; body = [r for r in rows[hdr_i + 1:] if len(r) == len(hdr)]
print("source columns:", "; ".join(hdr)[:600])
col = next((i for i, c in enumerate(hdr) if c.startswith("Warp Stall Sampling (All")), None)
src = hdr.index("Source")
if col is None: sys.exit(0)
val = lambda r: float(r[col] or 0)
tot = sum(val(r) for r in body) or 1
print("total stall samples %d over %d instructions" % (tot, len(body)))
for r in sorted(body, key=val, reverse=True)[:40]:
    print("%5.1f%%  %s" % (100 * val(r) / tot, r[src][:90]))
PY
  gzip -f "$out/source.csv"
fi
if want cuda-ops; then
  # GEMV / FC rows (CUDA-graph replay over weight copies spanning twice the L2) and the copy
  # reference they are judged against.
  "$build/bench/jet_bench_cuda_ops" >"$out/cuda_ops.txt" 2>&1 || status=1
  grep -E '^device|^f(32|16),|memcpy|gemv|^summary' "$out/cuda_ops.txt"
fi
if want conv-bwd; then
  for v in ${CONV_BWD_VARIANTS:-f32:nchw f16:nhwc}; do
    "$build/bench/jet_bench_conv_bwd" --sets resnet50 --dtypes ${v%:*} --layouts ${v#*:} --runs 5 \
      >"$out/conv_bwd_r50_${v%:*}_${v#*:}.log" 2>&1 || status=1
    grep -E '^(geomean|network|SUMMARY|note: MISMATCH)' "$out/conv_bwd_r50_${v%:*}_${v#*:}.log"
  done
fi
if want train; then
  # ResNet-18 at batch 32, f32, SGD momentum, every parameter trainable: ours (jet_bench_train_step)
  # and PyTorch eager's (bench/train/torch_train_step.py) on the same layers, twice: the zoo's
  # (batch norm folded into the convolutions) and torchvision's with batch norm in train mode.
  for net in resnet18 resnet18-bn; do
    "$build/bench/jet_bench_train_step" --device cuda --network $net --batch 32 --steps 20 \
      >"$out/train_jet_$net.log" 2>&1 || status=1
    python3 bench/train/torch_train_step.py --device cuda --network $net --batch 32 --steps 20 \
      >"$out/train_torch_$net.log" 2>&1 || status=1
    cat "$out/train_jet_$net.log"; head -1 "$out/train_torch_$net.log"
    python3 - "$out/train_jet_$net.log" "$out/train_torch_$net.log" $net <<'PY'
import json, re, sys
jet = re.search(r"step: median ([0-9.]+) ms", open(sys.argv[1]).read())
rows = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
if jet and rows:
    ours, torch = float(jet.group(1)), rows[0]["median_ms"]
    print("train step %s b32 f32: ours %.3f ms, torch eager %.3f ms: ratio torch/ours %.3f (> 1: ours faster)"
          % (sys.argv[3], ours, torch, torch / ours))
else:
    print("train step %s: no result (see %s, %s)" % (sys.argv[3], sys.argv[1], sys.argv[2]))
PY
  done
fi
if want conv-all; then
  "$build/bench/jet_bench_conv" --tactics >"$out/conv_all.log" 2>&1 || status=1
  grep -E '^SUMMARY' "$out/conv_all.log"
fi
# ResNet-18/50 and MobileNetV2 at batch 1 through the runtime (zoo models, random weights):
# CUDA-graph replay time and the slowest layers of a profiled pass, f16 channels-last and f32.
if want nets; then
  # NETS: "model[:batch]" entries (default the three at batch 1); NET_VARIANTS: f16nhwc and/or f32.
  for mb in ${NETS:-resnet18 resnet50 mobilenet_v2}; do
    m=${mb%%:*}; batch=1; [[ $mb == *:* ]] && batch=${mb#*:}
    for v in ${NET_VARIANTS:-f16nhwc f32}; do
      flags=(--batch "$batch"); [ $v = f16nhwc ] && flags+=(--f16 --channels-last)
      "$build/tools/jet-make-model" $m "$out/$m-b$batch-$v.jet" "${flags[@]}" >/dev/null || { status=1; continue; }
      "$build/tools/jet-bench" "$out/$m-b$batch-$v.jet" --device cuda --warmup 50 --iterations 300 \
        --profile --json >"$out/$m-b$batch-$v.json" 2>"$out/$m-b$batch-$v.err" || { status=1; cat "$out/$m-b$batch-$v.err"; continue; }
      rm -f "$out/$m-b$batch-$v.jet"; [ -s "$out/$m-b$batch-$v.err" ] || rm -f "$out/$m-b$batch-$v.err"
      python3 - "$out/$m-b$batch-$v.json" "$m-b$batch-$v" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
g = j.get("graph") or {}
p = j.get("plain") or {}
med = lambda ph, k: ph.get(k, {}).get("median") if ph.get("ran") else None
prof = j.get("profile") or {}
layers = sorted(prof.get("layers", []), key=lambda l: -l["ms"])
top = ", ".join("%s %s %.4f" % (l["name"], l.get("algo", l["type"]), l["ms"]) for l in layers[:6])
by_type = {}
for l in prof.get("layers", []):
    n, t = by_type.get(l["type"], (0, 0.0))
    by_type[l["type"]] = (n + 1, t + l["ms"])
types = ", ".join("%s %dx %.4f" % (k, v[0], v[1]) for k, v in sorted(by_type.items(), key=lambda kv: -kv[1][1]))
print("%-22s graph %s ms, plain %s ms, profile total %.3f ms; by type: %s; top: %s" % (
    sys.argv[2], med(g, "gpu_compute_ms"), med(p, "gpu_compute_ms"), prof.get("total_ms", -1), types, top))
PY
    done
  done
fi
if want r18; then
  python3 bench/networks/run.py "$build" "$out/resnet18.md" --networks resnet18 --iterations 300 >"$out/r18.log" 2>&1 || status=1
  tail -1 "$out/r18.log"
fi
# One archive comes back ($OUT returns at most 8 files).
(cd "$out" && tar czf /tmp/speed-logs.tgz . && rm -rf ./* && mv /tmp/speed-logs.tgz .)
exit $status
