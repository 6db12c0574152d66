#!/usr/bin/env bash
# Prepares .deb/ (git-ignored): Debian packages unpacked for the GPU test machine, which cannot
# install anything. Name .deb in the device call's carry; scripts/gpu-check.sh picks them up.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deb
cd .deb
for pkg in doctest-dev; do
  name=${pkg%-dev}
  if [ -d "$name" ]; then echo "gpu-deps: $name already unpacked"; continue; fi
  apt-get download "$pkg" >/dev/null
  dpkg -x "$pkg"_*.deb "$name"
  rm -f "$pkg"_*.deb
  echo "gpu-deps: unpacked $pkg into .deb/$name"
done
