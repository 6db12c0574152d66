#!/usr/bin/env bash
# CI stage: cross builds for Jetson (aarch64) on an x86_64 Debian 12 machine.
#   1. portability lint: sources stay within C++17 and CUDA 11.4 APIs (docs/jetson.md)
#   2. CPU-only aarch64 build (preset cpu-aarch64, gcc 11), test suite run under qemu-user
#   3. CUDA 11.8 (Debian non-free, cached) aarch64 build of everything, archs 72;87: the CUDA
#      sources compile and link under the 11.x floor (handle.cu's arch check included)
#   4. nvcc 13 (/usr/local/cuda) compile-only of the CUDA sources for Thor (110) with the aarch64
#      host compiler (no aarch64 CUDA 13 runtime here: nothing is linked). scripts/test.sh (CI)
#      skips this step: its native build is nvcc 13's compile of the same device code for 110
#      (JET_CUDA_ARCHS=110), and the aarch64 host side of the .cu files is step 3's.
#   5. report the highest GLIBC / GLIBCXX symbol versions the aarch64 binaries need
# Installs what it needs (apt-get, only what is missing). Non-zero exit on any failure.
# Environment:
#   CROSS_BUILD_DIR   build root (default build-cross; one sub-directory per configuration)
#   JET_CROSS_CACHE   where the unpacked CUDA 11.8 toolkit is kept (default ~/.cache/jetinfer)
#   JET_TEST_REDUCED  exported to the tests run under qemu (default 1: tests may use fewer shapes)
#   CROSS_JOBS        build parallelism (default nproc)
#   CROSS_SKIP        space-separated steps to skip: lint cpu cuda118 cuda13 glibc
#   JET_CUDA13_ARCHS  the nvcc 13 step's archs (default 110; "87;110" is the whole JetPack 7 preset)
#   CROSS_CTEST_EXCLUDE  ctest -E regex of tests not to run under qemu (prints a warning)
set -Eeuo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build_root=${CROSS_BUILD_DIR:-build-cross}
case "$build_root" in /*) ;; *) build_root="$root/$build_root" ;; esac
cache=${JET_CROSS_CACHE:-$HOME/.cache/jetinfer}
jobs=${CROSS_JOBS:-$(nproc)}
export JET_TEST_REDUCED=${JET_TEST_REDUCED:-1}
skip=" ${CROSS_SKIP:-} "
mkdir -p "$build_root" "$cache"

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

stage_start=$(date +%s)
timings=()
step() {  # step NAME FUNCTION: runs it, records its time; any failure ends the script (set -e)
  local name=$1 fn=$2 t0
  if [[ "$skip" == *" $name "* ]]; then
    echo "cross-check: [$name] skipped (CROSS_SKIP)"; timings+=("$(printf '%-8s skipped' "$name")"); return
  fi
  echo; echo "==== cross-check: [$name] ===="
  t0=$(date +%s)
  "$fn"
  local dt=$(( $(date +%s) - t0 ))
  timings+=("$(printf '%-8s %4d s' "$name" "$dt")")
  echo "cross-check: [$name] took $dt s"
}
die() { echo "cross-check: ERROR: $*" >&2; exit 1; }
failed_reported=0
on_err() {
  [ "$BASHPID" = "$$" ] && [ $failed_reported -eq 0 ] || return 0
  failed_reported=1
  echo "cross-check: FAILED (line $1, after $(( $(date +%s) - stage_start )) s)" >&2
}
trap 'on_err $LINENO' ERR
trap '[ -n "${fetch_pid:-}" ] && kill "$fetch_pid" 2>/dev/null; true' EXIT

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

# ---------------------------------------------------------------------------------------------
# 0. packages
setup() {
  local packages=(cmake g++-aarch64-linux-gnu g++-11-aarch64-linux-gnu binutils-aarch64-linux-gnu
                  qemu-user-static doctest-dev xz-utils ca-certificates)
  local missing=() p
  for p in "${packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "cross-check: all ${#packages[@]} packages already installed"
  else
    echo "cross-check: installing missing packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  # doctest is header-only; the cross find root (/usr/aarch64-linux-gnu) does not see the host's
  # /usr/include, and adding all of /usr/include would mix x86 headers in. Give it a copy.
  mkdir -p "$build_root/doctest/doctest"
  cp -u /usr/include/doctest/doctest.h "$build_root/doctest/doctest/"
}

# ---------------------------------------------------------------------------------------------
# 1. portability lint: what neither the CUDA 11.8 nor the CUDA 13 build catches.
lint() {
  local dirs=() d
  for d in kernels runtime bench samples converter tests tools; do [ -d "$d" ] && dirs+=("$d"); done
  local files
  files=$(find "${dirs[@]}" -type f \( -name '*.cu' -o -name '*.cuh' -o -name '*.cpp' -o -name '*.h' \
          -o -name '*.hpp' -o -name '*.cc' \) | sort)
  local bad=0
  check() {  # check REGEX MESSAGE
    local hits
    hits=$(echo "$files" | xargs -r grep -nE "$1" -- 2>/dev/null | grep -v 'jet-portability: ok' || true)
    if [ -n "$hits" ]; then
      echo "portability: $2"; echo "$hits" | sed 's/^/    /'; bad=1
    fi
  }
  # CUDA APIs newer than 11.4 that CUDA 11.8 (our floor compiler) still accepts.
  check '\bcudaLaunchKernelEx(C)?\b|\bcudaLaunchConfig_t\b|\bcudaLaunchAttribute|__cluster_dims__|cudaOccupancyMaxActiveClusters|ClusterSchedulingPolicy|NonPortableClusterSizeAllowed' \
        'launch attributes / clusters are CUDA 11.8+ (JetPack 5 has 11.4): use <<<>>> launches'
  check 'cuda_fp8\.h|__nv_fp8' 'FP8 types are CUDA 11.8+'
  # Graph instantiation: 5-argument form (11.x) and 3-argument form (12+) are incompatible.
  check '\bcudaGraphInstantiate\s*\(|cudaGraphInstantiateWithParams|cudaGraphInstantiateParams' \
        'instantiate graphs with cudaGraphInstantiateWithFlags(&exec, graph, flags) (11.4 .. 13)'
  # cudaDeviceProp fields removed in CUDA 13 (the nvcc 13 step catches them too).
  check '\.(clockRate|memoryClockRate|deviceOverlap|kernelExecTimeoutEnabled|computeMode|maxTexture1DLinear|cooperativeMultiDeviceLaunch)\b' \
        'removed cudaDeviceProp fields: query with cudaDeviceGetAttribute'
  # libcu++ 1.5 (CUDA 11.4) headers only.
  local cu_std
  cu_std=$(echo "$files" | xargs -r grep -nE '#\s*include\s*<cuda/std/' -- 2>/dev/null |
    grep -vE '<cuda/std/(atomic|barrier|latch|semaphore|cassert|cfloat|chrono|climits|cstddef|cstdint|ctime|complex|limits|ratio|tuple|type_traits|utility)>' || true)
  if [ -n "$cu_std" ]; then
    echo "portability: cuda/std header not in libcu++ 1.5 (CUDA 11.4)"; echo "$cu_std" | sed 's/^/    /'; bad=1
  fi
  # Floating-point std::from_chars is missing in gcc 9 (JetPack 5); integers are fine.
  check 'from_chars\s*\([^;]*(float|double|chars_format)|chars_format::' \
        'floating-point std::from_chars needs gcc 11 (JetPack 5 has gcc 9): use std::strtod'
  # Standard level: no C++20 headers.
  check '#\s*include\s*<(span|concepts|ranges|bit|numbers|format|source_location|compare|coroutine|version)>' \
        'C++20 header: sources are C++17'
  [ $bad -eq 0 ] || die "portability rules violated (see docs/jetson.md, 'Portability rules'; a line may opt out with a '// jet-portability: ok' comment and a reason)"
  echo "portability: $(echo "$files" | wc -l) files checked, no violations"
}

# ---------------------------------------------------------------------------------------------
# 2. CPU-only aarch64 build and tests under qemu.
cpu() {
  local b="$build_root/cpu"
  # gcc 11: JetPack 6's compiler and the oldest aarch64 cross g++ Debian 12 has (JetPack 5: gcc 9).
  JET_GCC_VERSION=11 cmake --preset cpu-aarch64 -B "$b" "${generator[@]}" -DJET_WERROR=ON \
        -DJET_DOCTEST_INCLUDE="$build_root/doctest"
  cmake --build "$b" -j"$jobs"
  echo "cross-check: running the test suite under qemu-aarch64 (JET_TEST_REDUCED=$JET_TEST_REDUCED)"
  local exclude=()
  if [ -n "${CROSS_CTEST_EXCLUDE:-}" ]; then
    echo "cross-check: WARNING: not running tests matching '$CROSS_CTEST_EXCLUDE' (CROSS_CTEST_EXCLUDE)"
    exclude=(-E "$CROSS_CTEST_EXCLUDE")
  fi
  (cd "$b" && ctest --output-on-failure -j"$jobs" --timeout 900 "${exclude[@]}")
}

# ---------------------------------------------------------------------------------------------
# 3. Debian's CUDA 11.8 (amd64 nvcc + arm64 target files), assembled into NVIDIA's layout:
#    <root>/bin/nvcc, <root>/nvvm, <root>/targets/aarch64-linux/{include,lib}.
cuda118_version="11.8.89~11.8.0-5~deb12u1"
cuda118_root="$cache/cuda-11.8-aarch64"
cuda118_fetch() {
  if [ -f "$cuda118_root/.complete" ] && [ "$(cat "$cuda118_root/.complete")" = "$cuda118_version" ]; then
    echo "cross-check: CUDA 11.8 toolkit cached in $cuda118_root"; return
  fi
  local apt="$build_root/apt" dl="$build_root/apt/debs" x="$build_root/apt/unpack"
  rm -rf "$apt" "$cuda118_root"
  mkdir -p "$apt/etc/apt/sources.list.d" "$apt/etc/apt/preferences.d" "$apt/etc/apt/apt.conf.d" \
           "$apt/etc/apt/trusted.gpg.d" "$apt/state/lists/partial" "$apt/cache/archives/partial" "$dl" "$x"
  : > "$apt/state/status"
  local mirror="${JET_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  cat > "$apt/etc/apt/sources.list" <<EOF
deb [arch=amd64,arm64 signed-by=$keyring] $mirror bookworm non-free
deb [arch=amd64,arm64 signed-by=$keyring] $mirror bookworm main
EOF
  cat > "$apt/apt.conf" <<EOF
Dir::Etc "$apt/etc/apt";
Dir::State "$apt/state";
Dir::State::Lists "$apt/state/lists";
Dir::State::status "$apt/state/status";
Dir::Cache "$apt/cache";
APT::Architecture "amd64";
APT::Architectures { "amd64"; "arm64"; };
APT::Sandbox::User "root";
EOF
  export APT_CONFIG="$apt/apt.conf"
  echo "cross-check: fetching Debian non-free CUDA $cuda118_version (about 760 MB)"
  apt-get update -qq
  (cd "$dl" && apt-get download -q \
     "nvidia-cuda-toolkit:amd64=$cuda118_version" "libnvvm4:amd64=$cuda118_version" \
     "nvidia-cuda-dev:arm64=$cuda118_version" "libcudart11.0:arm64=$cuda118_version" \
     libcu++-dev libcub-dev libthrust-dev)
  unset APT_CONFIG
  local f
  for f in "$dl"/*.deb; do
    case "$f" in
      *nvidia-cuda-dev_*)  # 650 MB: headers and the few libraries a cudart-only build needs
        dpkg-deb --fsys-tarfile "$f" | tar -x -C "$x" --wildcards './usr/include/*' \
          './usr/lib/aarch64-linux-gnu/libcudart*' './usr/lib/aarch64-linux-gnu/libcudadevrt.a' \
          './usr/lib/aarch64-linux-gnu/libculibos.a' './usr/lib/aarch64-linux-gnu/stubs/libcuda.so' ;;
      *) dpkg-deb -x "$f" "$x" ;;
    esac
  done
  local r="$cuda118_root.tmp" t="$cuda118_root.tmp/targets/aarch64-linux"
  rm -rf "$r"; mkdir -p "$r/bin" "$r/nvvm/bin" "$r/nvvm/lib64" "$t/lib"
  mv "$x/usr/lib/nvidia-cuda-toolkit/bin/nvcc" "$x/usr/lib/nvidia-cuda-toolkit/bin/crt" "$r/bin/"
  mv "$x/usr/lib/nvidia-cuda-toolkit/bin/cicc" "$r/nvvm/bin/"
  mv "$x/usr/lib/nvidia-cuda-toolkit/libdevice" "$r/nvvm/"
  mv "$x"/usr/lib/x86_64-linux-gnu/libnvvm.so* "$r/nvvm/lib64/"
  for f in ptxas fatbinary nvlink cudafe++ bin2c nvprune cuobjdump nvdisasm cu++filt; do
    mv "$x/usr/bin/$f" "$r/bin/"
  done
  mv "$x/usr/include" "$t/include"
  mv "$x"/usr/lib/aarch64-linux-gnu/* "$t/lib/"
  ln -s targets/aarch64-linux/include "$r/include"
  # NVIDIA's profile, restricted to the target directory nvcc picks from the host compiler
  # (targets/aarch64-linux for aarch64-linux-gnu-g++).
  cat > "$r/bin/nvcc.profile" <<'EOF'
TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/nvvm/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
EOF
  "$r/bin/nvcc" --version | tail -2
  echo "$cuda118_version" > "$r/.complete"
  mv "$r" "$cuda118_root"
  rm -rf "$apt"   # the 760 MB of packages are not kept; the unpacked toolkit is
  du -sh "$cuda118_root"
}

# Started in the background at the beginning (network + xz, one core) to overlap the cpu step.
fetch_pid=""
fetch_log="$build_root/cuda118-fetch.log"
fetch_start() {
  [[ "$skip" == *" cuda118 "* ]] && return
  ( t0=$(date +%s); cuda118_fetch; echo "cross-check: [fetch] took $(( $(date +%s) - t0 )) s" ) \
    > "$fetch_log" 2>&1 &
  fetch_pid=$!
  echo "cross-check: fetching/checking the CUDA 11.8 toolkit in the background (log: $fetch_log)"
}
fetch_wait() {
  local rc=0
  if [ -n "$fetch_pid" ]; then wait "$fetch_pid" || rc=$?; fetch_pid=""; fi
  cat "$fetch_log"
  [ $rc -eq 0 ] || die "fetching the Debian CUDA 11.8 toolkit failed"
  local t
  t=$(sed -n 's/^cross-check: \[fetch\] took \([0-9]*\) s$/\1/p' "$fetch_log")
  timings+=("$(printf '%-8s %4d s (in the background, overlapping lint/cpu)' fetch "${t:-0}")")
}

cuda118() {
  fetch_wait
  local b="$build_root/cuda118"
  # JetPack 5 ships gcc 9 and CUDA 11.4; Debian 12 has neither, gcc 11 and 11.8 are the closest.
  JET_CUDA_ROOT="$cuda118_root" JET_GCC_VERSION=11 \
    cmake --preset jetson-jp5 -B "$b" "${generator[@]}" -DJET_WERROR=ON \
          -DJET_DOCTEST_INCLUDE="$build_root/doctest" -DJET_BUILD_TRAINING=ON
  grep -q 'CMAKE_CUDA_COMPILER_VERSION "11\.8' "$b"/CMakeFiles/*/CMakeCUDACompiler.cmake ||
    die "the jetson-jp5 build does not use CUDA 11.8"
  # The library (every CUDA source, for both archs, the training add-on's included), and one
  # test executable: a real aarch64 binary linked through CMake's CUDA::cudart against CUDA 11.8.
  # (The other tests are the same C++ code the cpu step already built and ran.)
  cmake --build "$b" -j"$jobs" --target jet_kernels jet_test_cuda_handle
  # Link check of every object in the library: a shared library with no undefined symbols,
  # against CUDA 11.8's aarch64 cudart_static.
  local t="$cuda118_root/targets/aarch64-linux/lib"
  aarch64-linux-gnu-g++-11 -shared -o "$b/libjet_linkcheck.so" \
    -Wl,--whole-archive "$b/kernels/libjet_kernels.a" -Wl,--no-whole-archive \
    "$t/libcudart_static.a" -ldl -lrt -lpthread -Wl,--no-undefined
  echo "cross-check: every jet_kernels object links against CUDA 11.8 cudart_static (aarch64)"
  # Every CUDA source compiled for both archs (the training add-on's too: it is on here).
  local cu n=0
  for cu in kernels/cuda/*.cu kernels/training/cuda/*.cu; do
    n=$((n + 1))
  done
  local objs
  objs=$(find "$b/kernels" -name '*.cu.o' | wc -l)
  [ "$objs" -eq "$n" ] || die "expected $n CUDA objects, found $objs"
  local sass
  sass=$("$cuda118_root/bin/cuobjdump" --list-elf "$b/kernels/libjet_kernels.a" | grep -oE 'sm_[0-9]+' | sort -u | tr '\n' ' ')
  echo "cross-check: jet_kernels (CUDA 11.8, aarch64) holds SASS for: $sass"
  [[ "$sass" == *sm_72* && "$sass" == *sm_87* ]] || die "missing sm_72 or sm_87 code"
}

# ---------------------------------------------------------------------------------------------
# 4. nvcc 13 for Thor: compile every CUDA source (device code for 110, host stubs with the aarch64
#    compiler; the preset's 87 is left to the native stage, which compiles it with the same nvcc). This machine has only the x86_64 target files of CUDA 13, whose
#    headers are the same; JET_CUDA_COMPILE_ONLY makes CMake's probes tolerate the missing runtime.
cuda13() {
  local nvcc13=${JET_CUDA13_ROOT:-/usr/local/cuda}
  [ -x "$nvcc13/bin/nvcc" ] || die "no nvcc in $nvcc13/bin (set JET_CUDA13_ROOT)"
  local b="$build_root/cuda13" target=x86_64-linux
  if [ -d "$nvcc13/targets/sbsa-linux" ]; then target=sbsa-linux; fi
  JET_CUDA_ROOT="$nvcc13" JET_CUDA_TARGET=$target JET_CUDA_COMPILE_ONLY=ON \
    cmake --preset jetson-jp7 -B "$b" "${generator[@]}" -DJET_WERROR=ON \
          -DJET_BUILD_TESTS=OFF -DJET_BUILD_BENCH=OFF -DCMAKE_CUDA_ARCHITECTURES="${JET_CUDA13_ARCHS:-110}"
  if [ ${#generator[@]} -gt 0 ]; then
    # Only the CUDA objects: the C++ sources were already compiled for aarch64 in step 2.
    local objs
    mapfile -t objs < <(cd "$b" && ninja -t targets all | sed -n 's/^\(.*\.cu\.o\): .*/\1/p')
    [ ${#objs[@]} -gt 0 ] || die "no CUDA objects in the nvcc 13 build"
    echo "cross-check: compiling ${#objs[@]} CUDA sources with nvcc 13"
    (cd "$b" && ninja -j"$jobs" "${objs[@]}")
  else
    cmake --build "$b" -j"$jobs" --target jet_kernels
  fi
}

# ---------------------------------------------------------------------------------------------
# 5. glibc / libstdc++ symbol versions the aarch64 binaries need.
glibc() {
  local b any=0 report="$build_root/glibc-report.txt"
  : > "$report"
  for b in cpu cuda118; do
    [ -d "$build_root/$b" ] || continue
    local elfs=() f
    while IFS= read -r f; do
      if [ "$(head -c 4 "$f" | tr -d '\0' | tail -c 3)" = "ELF" ]; then elfs+=("$f"); fi
    done < <(find "$build_root/$b" -type f \( -perm -u+x -o -name '*.so*' \) ! -path '*/CMakeFiles/*' ! -path '*/install-test/*')
    [ ${#elfs[@]} -gt 0 ] || continue
    any=1
    local syms
    syms=$(aarch64-linux-gnu-objdump -T "${elfs[@]}" | { grep -oE '\b(GLIBC|GLIBCXX|CXXABI)_[0-9.]+' || true; } | sort -u)
    local g gx ca
    g=$(echo "$syms" | { grep '^GLIBC_' || true; } | sort -V | tail -1)
    gx=$(echo "$syms" | { grep '^GLIBCXX_' || true; } | sort -V | tail -1)
    ca=$(echo "$syms" | { grep '^CXXABI_' || true; } | sort -V | tail -1)
    [ -n "$g" ] || die "no GLIBC_ symbol versions found in the $b binaries"
    gx=${gx:-GLIBCXX_none}; ca=${ca:-CXXABI_none}
    local who
    local nwho=0 gsyms xsyms
    for f in "${elfs[@]}"; do
      if aarch64-linux-gnu-objdump -T "$f" | grep -w "$g" >/dev/null; then nwho=$((nwho + 1)); fi
    done
    gsyms=$(aarch64-linux-gnu-objdump -T "${elfs[@]}" | awk -v v="($g)" '$0 ~ v {print $NF}' | sort -u | head -6 | tr '\n' ' ')
    xsyms=$(aarch64-linux-gnu-objdump -T "${elfs[@]}" | awk -v v="$gx" '$0 ~ v" " || $0 ~ v")" {print $NF}' | sort -u | head -3 | tr '\n' ' ')
    printf '%-8s %3d binaries: highest %s, %s, %s\n' "$b" "${#elfs[@]}" "$g" "$gx" "$ca" | tee -a "$report"
    printf '         %s needed by %d of them, for: %s\n' "$g" "$nwho" "$gsyms" | tee -a "$report"
    printf '         %s for: %s\n' "$gx" "$xsyms" | tee -a "$report"
    # Board limits: JetPack 5 = Ubuntu 20.04 (glibc 2.31, GLIBCXX_3.4.28), JetPack 6 = 22.04
    # (2.35, 3.4.30), JetPack 7 = 24.04 (2.39, 3.4.33).
    local jp line=""
    for jp in "5 2.31 3.4.28" "6 2.35 3.4.30" "7 2.39 3.4.33"; do
      set -- $jp
      if [ "$(printf '%s\n%s\n' "${g#GLIBC_}" "$2" | sort -V | tail -1)" = "$2" ] &&
         [ "$(printf '%s\n%s\n' "${gx#GLIBCXX_}" "$3" | sort -V | tail -1)" = "$3" ]; then
        line+="JetPack $1: loads; "
      else
        line+="JetPack $1: NO (needs a JetPack $1 sysroot); "
      fi
    done
    echo "         $line" | tee -a "$report"
  done
  [ $any -eq 1 ] || die "no aarch64 binaries to inspect"
}

step setup setup
fetch_start
step lint lint
step cpu cpu
step cuda118 cuda118
step cuda13 cuda13
step glibc glibc

echo
echo "==== cross-check: summary ===="
printf '  %s\n' "${timings[@]}"
[ -f "$build_root/glibc-report.txt" ] && sed 's/^/  /' "$build_root/glibc-report.txt"
echo "cross-check: OK, total $(( $(date +%s) - stage_start )) s"
