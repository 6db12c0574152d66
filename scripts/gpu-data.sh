#!/usr/bin/env bash
# Prepares the test data the GPU machine cannot make itself (it has no ONNX, npm or numpy) into
# .testdata/ (git-ignored), for the device call's carry; scripts/gpu-check.sh finds it there.
#   scripts/gpu-data.sh [BUILD_DIR]          default build; the build must have the importer
#   .testdata/conformance   jet_conformance_prepare's output: ONNX's tests as .jet + .npy
#   .testdata/networks      tests/networks' prepared networks (.jet fp32/fp16, inputs, ONNX
#                           Runtime's outputs), those named in JET_GPU_NETWORKS (default: all)
#   .testdata/face_detect   samples.face_detect_prepare's output (BlazeFace .jet fp32/fp16, the
#                           photo, ONNX Runtime's faces), about 2 MB
# The carry limit is 64 MiB per call, .deb included: with all networks it may not fit, so name a
# subset per call (du -sh .testdata says how much there is).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
prepare="$build/tests/jet_conformance_prepare"
[ -x "$prepare" ] || { echo "gpu-data.sh: $prepare not built (needs libonnx-dev; scripts/setup.sh)" >&2; exit 1; }

rm -rf .testdata/conformance
mkdir -p .testdata
"$prepare" --out .testdata/conformance >/dev/null
echo "gpu-data.sh: conformance: $(grep -c '' .testdata/conformance/manifest.txt) tests, $(du -sh .testdata/conformance | cut -f1)"

rm -rf .testdata/networks
src="$build/tests/networks/data"
if [ -d "$src" ]; then
  # data/<precision>/<network>; JET_GPU_NETWORKS names networks (both precisions) or
  # precision/network (one); data/carry_plan.txt suggests groups that fit one call.
  mkdir -p .testdata/networks
  cp "$src/networks.txt" .testdata/networks/
  for d in "$src"/fp32/*/ "$src"/fp16/*/; do
    [ -d "$d" ] || continue
    name=$(basename "$d"); precision=$(basename "$(dirname "$d")")
    if [ -n "${JET_GPU_NETWORKS:-}" ] && [[ " $JET_GPU_NETWORKS " != *" $name "* ]] &&
       [[ " $JET_GPU_NETWORKS " != *" $precision/$name "* ]]; then continue; fi
    mkdir -p ".testdata/networks/$precision"
    cp -r "$d" ".testdata/networks/$precision/"
  done
  echo "gpu-data.sh: networks: $(cd .testdata/networks && ls -d fp*/* 2>/dev/null | tr '\n' ' ')($(du -sh .testdata/networks | cut -f1))"
else
  echo "gpu-data.sh: no prepared networks in $src (ctest -R networks.prepare makes them)"
fi
rm -rf .testdata/face_detect
if [ -f "$build/samples/face_detect_data/reference.json" ]; then
  # samples.face_detect_prepare's output: BlazeFace fp32/fp16 .jet, the photo, ONNX Runtime's faces.
  mkdir -p .testdata/face_detect
  cp "$build"/samples/face_detect_data/{blazeface_fp32.jet,blazeface_fp16.jet,astronaut.png,reference.json} .testdata/face_detect/
  echo "gpu-data.sh: face_detect: $(du -sh .testdata/face_detect | cut -f1)"
else
  echo "gpu-data.sh: no face_detect data in $build/samples (ctest -R samples.face_detect_prepare makes it)"
fi
du -sh .testdata
