# Cross toolchain: x86_64 Linux host -> aarch64 Linux (NVIDIA Jetson), CPU side only.
# jetson-cuda.cmake includes this file and adds the CUDA toolkit.
#
#   cmake -S . -B build-arm64 --toolchain toolchains/aarch64-linux-gnu.cmake -DJET_WITH_CUDA=OFF
#
# Settings (each a -D cache value or an environment variable of the same name):
#   JET_GCC_VERSION   compiler version suffix: 9 -> aarch64-linux-gnu-g++-9 (JetPack 5),
#                     11 -> aarch64-linux-gnu-g++-11 (JetPack 6). Empty: the unsuffixed default.
#   JET_CROSS_PREFIX  compiler prefix, default "aarch64-linux-gnu-" (a path prefix works too, e.g.
#                     /opt/gcc-arm/bin/aarch64-none-linux-gnu-).
#   JET_SYSROOT       a copy of a Jetson root file system (see docs/jetson.md). Becomes
#                     CMAKE_SYSROOT and the find root; without it the Debian/Ubuntu cross libc in
#                     /usr/aarch64-linux-gnu is used (binaries then need that distro's glibc).
#   JET_QEMU          the user-mode emulator used to run tests (CMAKE_CROSSCOMPILING_EMULATOR),
#                     default qemu-aarch64-static (or qemu-aarch64) from PATH. Set it to OFF to
#                     disable; ctest then cannot run the tests on the build machine.
#
# Toolchain files are re-read by try_compile() and by check_language()'s sub-project, which do not
# see -D values: the settings are exported to the environment so that every re-read agrees.

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

foreach(_jet_var JET_GCC_VERSION JET_CROSS_PREFIX JET_SYSROOT JET_QEMU)
  if(NOT DEFINED ${_jet_var} AND DEFINED ENV{${_jet_var}})
    set(${_jet_var} "$ENV{${_jet_var}}")
  endif()
  if(DEFINED ${_jet_var})
    set(ENV{${_jet_var}} "${${_jet_var}}")
  endif()
endforeach()

if(NOT JET_CROSS_PREFIX)
  set(JET_CROSS_PREFIX "aarch64-linux-gnu-")
endif()
set(_jet_sfx "")
if(JET_GCC_VERSION)
  set(_jet_sfx "-${JET_GCC_VERSION}")
endif()
set(CMAKE_C_COMPILER "${JET_CROSS_PREFIX}gcc${_jet_sfx}")
set(CMAKE_CXX_COMPILER "${JET_CROSS_PREFIX}g++${_jet_sfx}")

# Where target headers, libraries and CMake packages are searched: the sysroot, else the cross libc.
if(JET_SYSROOT)
  if(NOT IS_DIRECTORY "${JET_SYSROOT}/usr/lib")
    message(FATAL_ERROR "JET_SYSROOT=${JET_SYSROOT} does not look like a root file system "
                        "(no usr/lib); see docs/jetson.md")
  endif()
  set(CMAKE_SYSROOT "${JET_SYSROOT}")
  set(_jet_target_root "${JET_SYSROOT}")
  # Ubuntu's multiarch and the Jetson driver libraries (libcuda.so lives in .../tegra) must be
  # visible to the linker when it resolves the dependencies of shared libraries.
  foreach(_jet_dir lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu/tegra)
    if(IS_DIRECTORY "${JET_SYSROOT}/${_jet_dir}")
      string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,-rpath-link,${JET_SYSROOT}/${_jet_dir}")
      string(APPEND CMAKE_SHARED_LINKER_FLAGS_INIT " -Wl,-rpath-link,${JET_SYSROOT}/${_jet_dir}")
    endif()
  endforeach()
else()
  set(_jet_target_root "/usr/aarch64-linux-gnu")
endif()
list(APPEND CMAKE_FIND_ROOT_PATH "${_jet_target_root}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Tests run through qemu's user-mode emulator (binfmt_misc is not needed: CMake and ctest prefix
# each test command with the emulator). -L points the emulated loader at the target's libraries.
if(NOT DEFINED JET_QEMU)
  find_program(_jet_qemu NAMES qemu-aarch64-static qemu-aarch64)
  if(_jet_qemu)
    set(JET_QEMU "${_jet_qemu}")
  endif()
endif()
if(JET_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${JET_QEMU};-L;${_jet_target_root}")
endif()
