# Cross toolchain for Jetson with the CUDA backend: aarch64-linux-gnu.cmake plus a CUDA toolkit
# that holds the aarch64 target files (NVIDIA's cuda-cross-aarch64 / cuda-cross-sbsa packages, a
# Jetson sysroot's /usr/local/cuda, or the toolkit scripts/cross-check.sh assembles from Debian).
#
#   cmake -S . -B build-jp6 --toolchain toolchains/jetson-cuda.cmake -DJET_JETPACK=6 \
#         -DJET_SYSROOT=$HOME/jetson/jp6-rootfs
#   (or use a preset: cmake --preset jetson-jp6)
#
# Settings (-D cache values or environment variables), besides those of aarch64-linux-gnu.cmake:
#   JET_JETPACK        5, 6 or 7: picks the defaults below (default 6).
#                        JetPack 5: CUDA 11.4, gcc 9,  archs 72;87 (Xavier, Orin)
#                        JetPack 6: CUDA 12.x, gcc 11, arch  87    (Orin)
#                        JetPack 7: CUDA 13,   gcc default, archs 87;110 (Orin, Thor)
#   JET_CUDA_ROOT      the toolkit root holding bin/nvcc and targets/<target>; default
#                      $CUDA_HOME, else /usr/local/cuda-<JetPack's version> if present, else
#                      /usr/local/cuda.
#   JET_CUDA_TARGET    the target directory under <root>/targets: default aarch64-linux for
#                      CUDA 11/12, sbsa-linux for CUDA 13 (JetPack 7 unified Thor with SBSA),
#                      whichever of the two exists otherwise.
#   JET_CUDA_COMPILE_ONLY  ON: there is no aarch64 CUDA runtime to link against (an x86 toolkit
#                      only). Device code and host stubs are compiled (nvcc -cudart none, header
#                      target JET_CUDA_TARGET, e.g. x86_64-linux: the headers are the same), and
#                      only static libraries can be built (cmake --build ... --target jet_kernels).
#                      CI uses this to compile with nvcc 13 for Thor without the sbsa target files.
# CMAKE_CUDA_ARCHITECTURES, when given, overrides the JetPack default.

foreach(_jet_var JET_JETPACK JET_CUDA_ROOT JET_CUDA_TARGET JET_CUDA_COMPILE_ONLY)
  if(NOT DEFINED ${_jet_var} AND DEFINED ENV{${_jet_var}})
    set(${_jet_var} "$ENV{${_jet_var}}")
  endif()
  if(DEFINED ${_jet_var})
    set(ENV{${_jet_var}} "${${_jet_var}}")
  endif()
endforeach()

if(NOT JET_JETPACK)
  set(JET_JETPACK 6)
endif()
if(JET_JETPACK STREQUAL "5")
  set(_jet_default_gcc 9)
  set(_jet_default_archs "72;87")
  set(_jet_default_target aarch64-linux)
  set(_jet_default_roots /usr/local/cuda-11.4)
elseif(JET_JETPACK STREQUAL "6")
  set(_jet_default_gcc 11)
  set(_jet_default_archs "87")
  set(_jet_default_target aarch64-linux)
  set(_jet_default_roots /usr/local/cuda-12.6 /usr/local/cuda-12.2)
elseif(JET_JETPACK STREQUAL "7")
  set(_jet_default_gcc "")
  set(_jet_default_archs "87;110")
  set(_jet_default_target sbsa-linux)
  set(_jet_default_roots /usr/local/cuda-13.0 /usr/local/cuda-13)
else()
  message(FATAL_ERROR "JET_JETPACK must be 5, 6 or 7 (got '${JET_JETPACK}')")
endif()

if(NOT DEFINED JET_GCC_VERSION AND NOT DEFINED ENV{JET_GCC_VERSION})
  set(JET_GCC_VERSION "${_jet_default_gcc}")
endif()
include("${CMAKE_CURRENT_LIST_DIR}/aarch64-linux-gnu.cmake")

if(NOT JET_CUDA_ROOT)
  if(DEFINED ENV{CUDA_HOME})
    set(JET_CUDA_ROOT "$ENV{CUDA_HOME}")
  else()
    set(JET_CUDA_ROOT "/usr/local/cuda")
    foreach(_jet_root ${_jet_default_roots})
      if(EXISTS "${_jet_root}/bin/nvcc")
        set(JET_CUDA_ROOT "${_jet_root}")
        break()
      endif()
    endforeach()
  endif()
endif()
if(NOT EXISTS "${JET_CUDA_ROOT}/bin/nvcc")
  message(FATAL_ERROR "jetson-cuda: no nvcc in JET_CUDA_ROOT=${JET_CUDA_ROOT}/bin")
endif()

if(NOT JET_CUDA_TARGET)
  foreach(_jet_t ${_jet_default_target} aarch64-linux sbsa-linux)
    if(IS_DIRECTORY "${JET_CUDA_ROOT}/targets/${_jet_t}")
      set(JET_CUDA_TARGET ${_jet_t})
      break()
    endif()
  endforeach()
  if(NOT JET_CUDA_TARGET)
    message(FATAL_ERROR "jetson-cuda: ${JET_CUDA_ROOT}/targets has neither aarch64-linux nor "
      "sbsa-linux. Install the toolkit's cross target package (cuda-cross-aarch64 for JetPack 5/6, "
      "cuda-cross-sbsa for JetPack 7) or set JET_CUDA_TARGET.")
  endif()
endif()
set(JET_CUDA_TARGET_DIR "${JET_CUDA_ROOT}/targets/${JET_CUDA_TARGET}")

set(CMAKE_CUDA_COMPILER "${JET_CUDA_ROOT}/bin/nvcc")
set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}")
set(CUDAToolkit_ROOT "${JET_CUDA_ROOT}")
# FindCUDAToolkit (CMake < 3.31) only knows targets/aarch64-linux when cross compiling; naming
# the target directory covers sbsa-linux too. The target directory joins the find root so that
# find_library() (mode ONLY) sees libcudart there.
set(CUDAToolkit_TARGET_DIR "${JET_CUDA_TARGET_DIR}")
list(APPEND CMAKE_FIND_ROOT_PATH "${JET_CUDA_TARGET_DIR}")
# nvcc picks targets/aarch64-linux for an aarch64 host compiler; any other target directory must
# be named. (Compiler identification reads CMAKE_CUDA_FLAGS_INIT when CMAKE_CUDA_FLAGS is empty.)
if(NOT JET_CUDA_TARGET STREQUAL "aarch64-linux")
  string(APPEND CMAKE_CUDA_FLAGS_INIT " -target-dir ${JET_CUDA_TARGET}")
endif()
# CMake passes --sysroot to g++ but not through nvcc: hand it to the host compiler explicitly so
# .cu files see the board's glibc headers too.
if(JET_SYSROOT)
  string(APPEND CMAKE_CUDA_FLAGS_INIT " -Xcompiler=--sysroot=${JET_SYSROOT}")
endif()
if(JET_CUDA_COMPILE_ONLY)
  # CMake's compiler checks still link probe executables: let their CUDA runtime references stay
  # unresolved (warnings). Nothing of ours is linked in this mode.
  string(APPEND CMAKE_CUDA_FLAGS_INIT " -cudart none -Xlinker --warn-unresolved-symbols")
  string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,--warn-unresolved-symbols")
  set(CMAKE_CUDA_RUNTIME_LIBRARY None)
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "${_jet_default_archs}")
endif()
