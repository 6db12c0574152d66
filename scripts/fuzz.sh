#!/usr/bin/env bash
# Fuzzes the model loader (tests/fuzz/fuzz_loader.cpp) or the ONNX importer and converter
# (tests/fuzz/fuzz_onnx.cpp) with libFuzzer under ASan + UBSan.
#   scripts/fuzz.sh [SECONDS] [extra libFuzzer args]     default 600 s
# Steps: configure + build build-fuzz (clang, CPU only, JET_SANITIZE=address,undefined,
# JET_BUILD_FUZZERS=ON; only the target's executables), write the seed corpus, run libFuzzer for
# SECONDS, print a summary. Seeds: loader: valid tiny_cnn variants, a graph of the integer ops and
# every op type's one-node sample in f32 and f16 (jet_fuzz_seeds), with tests/fuzz/jet.dict; onnx: the model.onnx files of Debian's libonnx-testdata up to 32 KiB
# (ONNX's node and pytorch tests: every op and opset form).
# Exit status: non-zero when the build fails, when the fuzzer found anything (crash-*, leak-*,
# timeout-*, oom-* artifacts, a sanitizer report in a log) or when a fuzzer process failed.
# Environment:
#   FUZZ_TARGET       loader (default) or onnx
#   FUZZ_BUILD_DIR    build directory (default build-fuzz)
#   FUZZ_WORK_DIR     corpus, artifacts and logs (default <build dir>/run-TARGET); artifacts and logs are
#                     cleared at the start, so what is there afterwards belongs to this run
#   FUZZ_JOBS         parallel fuzzer processes (default nproc; each gets SECONDS)
#   FUZZ_KEEP_CORPUS  1: start from the corpus a previous run grew (default: seeds only)
#   FUZZ_TIMEOUT      seconds one input may take before it counts as a hang (default 10)
#   FUZZ_SKIP_BUILD   1: use the existing build as it is
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${1:-600}
if [ $# -gt 0 ]; then shift; fi
case "$seconds" in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [libFuzzer args...]" >&2; exit 2 ;; esac

target=${FUZZ_TARGET:-loader}
case "$target" in
  loader) targets=(jet_fuzz_loader jet_fuzz_seeds) ;;
  onnx) targets=(jet_fuzz_onnx) ;;
  *) echo "fuzz.sh: FUZZ_TARGET must be loader or onnx, not '$target'" >&2; exit 2 ;;
esac
fuzzer_name=jet_fuzz_$target
# Where Debian's libonnx-testdata puts ONNX's test models.
onnx_testdata=${ONNX_TESTDATA_DIR:-/usr/include/onnx/backend/test/data}

build_dir=${FUZZ_BUILD_DIR:-build-fuzz}
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
work=${FUZZ_WORK_DIR:-$build_dir/run-$target}
case "$work" in /*) ;; *) work="$root/$work" ;; esac
jobs=${FUZZ_JOBS:-$(nproc)}
timeout=${FUZZ_TIMEOUT:-10}

for tool in clang clang++; do
  command -v "$tool" >/dev/null 2>&1 || { echo "fuzz.sh: $tool not found (scripts/setup.sh installs it)" >&2; exit 1; }
done

t0=$(date +%s)
if [ -z "${FUZZ_SKIP_BUILD:-}" ]; then
  generator=()
  if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
  # -gline-tables-only: file:line in the sanitizers' stack traces at little build cost.
  mkdir -p "$build_dir"
  cmake -S "$root" -B "$build_dir" "${generator[@]}" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS=-gline-tables-only -DJET_WERROR=ON -DJET_WITH_CUDA=OFF \
    -DJET_SANITIZE=address,undefined -DJET_BUILD_FUZZERS=ON \
    -DJET_BUILD_TESTS=OFF -DJET_BUILD_BENCH=OFF -DJET_BUILD_SAMPLES=OFF >"$build_dir/configure.log" 2>&1 ||
    { cat "$build_dir/configure.log"; echo "fuzz.sh: configure failed" >&2; exit 1; }
  cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]}"
fi
fuzzer="$build_dir/tests/fuzz/$fuzzer_name"
[ -x "$fuzzer" ] || { echo "fuzz.sh: $fuzzer was not built (the onnx target needs libonnx-dev and libprotobuf-dev)" >&2; exit 1; }
t_build=$(( $(date +%s) - t0 ))
echo "fuzz.sh: build took $t_build s"

# The sanitizers' settings: leaks count, the first report ends the process (libFuzzer then saves
# the input), stack traces symbolized.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:symbolize=1}
if symbolizer=$(command -v llvm-symbolizer); then export ASAN_SYMBOLIZER_PATH=$symbolizer; fi

seeds="$work/seeds" corpus="$work/corpus" artifacts="$work/artifacts" logs="$work/logs"
rm -rf "$seeds" "$artifacts" "$logs"
if [ "${FUZZ_KEEP_CORPUS:-}" != 1 ]; then rm -rf "$corpus"; fi
mkdir -p "$seeds" "$corpus" "$artifacts" "$logs"
dict=()
if [ "$target" = loader ]; then
  "$build_dir/tests/fuzz/jet_fuzz_seeds" "$seeds"
  dict=(-dict="$root/tests/fuzz/jet.dict")
else
  [ -d "$onnx_testdata" ] || { echo "fuzz.sh: no ONNX test models in $onnx_testdata (scripts/setup.sh installs libonnx-testdata)" >&2; exit 1; }
  # Each model under its test's name (node/test_conv_with_strides_padding -> node__test_conv...).
  while IFS= read -r m; do
    rel=${m#"$onnx_testdata"/}
    rel=${rel%/model.onnx}
    cp "$m" "$seeds/${rel//\//__}.onnx"
  done < <(find "$onnx_testdata/" -name model.onnx -size -33k | sort)  # "/": through the symlink
fi
nseeds=$(find "$seeds" -type f | wc -l)
[ "$nseeds" -gt 0 ] || { echo "fuzz.sh: FAILED: no seeds" >&2; exit 1; }
max_seed=$(find "$seeds" -type f -printf '%s\n' | sort -n | tail -1)
# Room for insertions beyond the largest seed, not enough for unboundedly large inputs.
max_len=$(( max_seed + max_seed / 4 + 1024 ))
if [ "$target" = loader ]; then
  # The seeds must load and run; otherwise only the loader's error paths would be fuzzed.
  if ! JET_FUZZ_EXPECT_VALID=1 "$fuzzer" "$seeds"/* >"$logs/seeds.log" 2>&1; then
    cat "$logs/seeds.log"
    echo "fuzz.sh: FAILED: a seed model does not load and run (see above)" >&2
    exit 1
  fi
  echo "fuzz.sh: every seed loads and runs:"
  grep 'loaded and ran' "$logs/seeds.log" | sed 's/^/  /'
fi
corpus_before=$(find "$corpus" -type f | wc -l)
echo "fuzz.sh: $nseeds seeds (largest $max_seed bytes), corpus starts with $corpus_before files;" \
     "$jobs process(es) x $seconds s, -max_len=$max_len -timeout=$timeout"

fuzz_args=(-max_total_time="$seconds" -max_len="$max_len" -timeout="$timeout"
           "${dict[@]}" -artifact_prefix="$artifacts/"
           -print_final_stats=1 "$@" "$corpus" "$seeds")
rc=0
t1=$(date +%s)
if [ "$jobs" -gt 1 ]; then
  # -jobs: independent processes sharing the corpus directory (each picks up the others' new
  # units), each writing fuzz-<n>.log in the working directory.
  (cd "$logs" && "$fuzzer" -jobs="$jobs" -workers="$jobs" \
     "${fuzz_args[@]}") >"$logs/main.log" 2>&1 || rc=$?
else
  "$fuzzer" "${fuzz_args[@]}" >"$logs/fuzz-0.log" 2>&1 || rc=$?
fi
t_fuzz=$(( $(date +%s) - t1 ))

# ---- Summary ---------------------------------------------------------------------------------
sum_stat() {  # sum of "stat::NAME: value" over the processes' logs
  cat "$logs"/fuzz-*.log 2>/dev/null | sed -n "s/^stat::$1: *//p" | awk '{ s += $1 } END { print s + 0 }'
}
execs=$(sum_stat number_of_executed_units)
new_units=$(sum_stat new_units_added)
peak_rss=$(cat "$logs"/fuzz-*.log 2>/dev/null | sed -n 's/^stat::peak_rss_mb: *//p' | sort -n | tail -1)
corpus_after=$(find "$corpus" -type f | wc -l)
findings=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
           -o -name 'oom-*' \) | wc -l)
reports=$(cat "$logs"/*.log | grep -c -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|FINDING:' || true)
cov=$(cat "$logs"/fuzz-*.log 2>/dev/null | sed -n 's/.* cov: \([0-9]*\) .*/\1/p' | sort -n | tail -1)

echo
echo "==== fuzz.sh summary ($target) ===="
echo "  fuzzing time     ${t_fuzz} s (${jobs} process(es), ${seconds} s each); build ${t_build} s"
echo "  executions       ${execs} ($(( execs / (t_fuzz > 0 ? t_fuzz : 1) )) exec/s in total)"
echo "  coverage         ${cov:-?} edges (the highest any process reached)"
echo "  corpus           ${corpus_before} -> ${corpus_after} files in $corpus (+${new_units} new units reported)"
echo "  peak RSS         ${peak_rss:-?} MB"
echo "  crashes found    ${findings} artifact(s) in $artifacts"
echo "  sanitizer/finding reports in logs: ${reports}"
if [ "$findings" -gt 0 ] || [ "$reports" -gt 0 ] || [ "$rc" -ne 0 ]; then
  ls -l "$artifacts" || true
  for f in "$logs"/*.log; do
    if grep -q -E 'ERROR: |runtime error:|FINDING:' "$f"; then
      echo "---- $f (from the first report) ----"
      # One process (awk stops printing, it does not close the pipe early): with pipefail, `sed |
      # head` died of SIGPIPE on a long report and hid the FAILED line below.
      awk '/ERROR: |runtime error:|FINDING:/ { on = 1 } on && shown++ < 80' "$f"
    fi
  done
  echo "fuzz.sh: FAILED (fuzzer exit status $rc). Reproduce: $fuzzer ARTIFACT;" \
       "minimize: $fuzzer -minimize_crash=1 -runs=10000 ARTIFACT" >&2
  exit 1
fi
echo "fuzz.sh: OK"
