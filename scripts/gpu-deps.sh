#!/usr/bin/env bash
# Prepares .deb/ (git-ignored): Debian packages unpacked for the GPU test machine, which cannot
# install anything. Name .deb in the device call's carry; scripts/gpu-check.sh picks them up.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deb
cd .deb
# DIR:PACKAGE...: each folder gets the listed packages unpacked into it. flatc (a host tool) and
# the FlatBuffers headers are all the runtime and the converter core need.
# stb: the samples' image files (face_detect's check against ONNX Runtime on the GPU).
for entry in doctest:doctest-dev flatbuffers:flatbuffers-compiler,libflatbuffers-dev stb:libstb-dev,libstb0; do
  name=${entry%%:*}
  if [ -d "$name" ]; then echo "gpu-deps: $name already unpacked"; continue; fi
  IFS=, read -r -a pkgs <<<"${entry#*:}"
  for pkg in "${pkgs[@]}"; do
    apt-get download "$pkg" >/dev/null
    dpkg -x "$pkg"_*.deb "$name"
    rm -f "$pkg"_*.deb
    echo "gpu-deps: unpacked $pkg into .deb/$name"
  done
done
