#!/usr/bin/env bash
# Each CUDA kernel's GPU time in a program's run, summed by kernel name: ncu with one metric
# (gpu__time_duration.sum) over the first N launches whose demangled name matches a regex, then a
# table of count, mean and total per kernel, largest total first. For finding which kernels of a
# step or layer take its time (bench/NOTES.md quotes tables like it), on the GPU machine.
#   bench/kernel-profile.sh [--launches N] [--match REGEX] [--top K] -- PROGRAM [ARGS...]
# Defaults: 200 launches, REGEX "jet::" (ours, not cuDNN's), top 25. ncu serializes the launches:
# run the program with --no-graph where it has it, and few repetitions.
set -euo pipefail
launches=200 match="jet::" top=25
while [ $# -gt 0 ]; do
  case "$1" in
    --launches) launches=$2; shift 2 ;;
    --match) match=$2; shift 2 ;;
    --top) top=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "usage: $0 [--launches N] [--match REGEX] [--top K] -- PROGRAM [ARGS...]" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "$0: no program given" >&2; exit 2; }
command -v ncu >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ncu --clock-control none --metrics gpu__time_duration.sum --kernel-name-base demangled \
    --kernel-name "regex:$match" --launch-count "$launches" "$@" >"$log" 2>&1 || {
  echo "$0: ncu failed:" >&2; tail -20 "$log" >&2; exit 1; }
# A kernel's block starts with its name line ("NAME(ARGS) (grid)x(block), Context N, Stream M, ...");
# the launch shape and the argument list (the last balanced parentheses; names hold others, as
# "(anonymous namespace)") are cut so that the launches of one kernel add up.
awk -v top="$top" '
  /, Context [0-9]+, Stream [0-9]+/ {
    name = $0; sub(/^ +/, "", name); sub(/ \([0-9, ]+\)x\([0-9, ]+\), Context .*$/, "", name)
    depth = 0
    for (i = length(name); i > 0; --i) {
      c = substr(name, i, 1)
      if (c == ")") ++depth
      else if (c == "(" && --depth == 0) { name = substr(name, 1, i - 1); break }
    }
    next
  }
  /gpu__time_duration.sum/ {
    v = $NF; gsub(/,/, "", v); unit = $(NF - 1)
    us = unit == "msecond" ? v * 1000 : unit == "nsecond" ? v / 1000 : v
    n[name]++; t[name] += us; all += us
  }
  END {
    printf "%d kernels, %.1f us in all\n", length(n), all
    for (k in n) printf "%10.1f %6d %9.2f  %s\n", t[k], n[k], t[k] / n[k], k | "sort -nr | head -" top
  }' "$log"
echo "(columns: total us, launches, mean us, kernel)"
