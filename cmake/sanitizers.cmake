# Sanitizer builds (JET_SANITIZE) and the fuzz targets (JET_BUILD_FUZZERS). Included from the root
# CMakeLists.txt before any target is defined, so the flags reach every target of the project.
#
#   -DJET_SANITIZE=address,undefined   ASan + UBSan on every C and C++ target, compile and link
#   -DJET_BUILD_FUZZERS=ON             tests/fuzz (libFuzzer; clang only, implies coverage
#                                      instrumentation of every target, see below)
#
# scripts/test.sh --sanitize and scripts/fuzz.sh configure these; see there for the options the
# sanitizers run with.

set(JET_SANITIZE "" CACHE STRING
    "Comma-separated -fsanitize= list for every target (e.g. address,undefined); empty: off")
option(JET_BUILD_FUZZERS "Build the libFuzzer targets in tests/fuzz (needs clang)" OFF)

if(JET_SANITIZE)
  # -fno-sanitize-recover=all: the first UBSan report aborts the process, so a test cannot pass
  # with a report buried in its log. The frame pointer keeps ASan's stack traces complete.
  set(_jet_san_flags -fsanitize=${JET_SANITIZE} -fno-omit-frame-pointer
      -fno-sanitize-recover=all)
  # C and C++ only: nvcc does not take these flags, and device code cannot be instrumented.
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_jet_san_flags}>")
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:${_jet_san_flags}>")
  message(STATUS "jetinfer: sanitizers ON (-fsanitize=${JET_SANITIZE})")

  # Our libraries are static: an outside project linking the installed, instrumented archives
  # needs the sanitizer runtimes too (tests/install builds one). Exported targets carry the link
  # flags; deferred to the end of the top-level directory, when those targets exist.
  function(_jet_sanitize_exported_targets)
    foreach(t jet_kernels jet_runtime)
      if(TARGET ${t})
        foreach(flag ${_jet_san_flags})  # one generator expression per flag: a list would split it
          set_property(TARGET ${t} APPEND PROPERTY INTERFACE_LINK_OPTIONS
                       "$<INSTALL_INTERFACE:${flag}>")
        endforeach()
      endif()
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _jet_sanitize_exported_targets)
endif()

if(JET_BUILD_FUZZERS AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(WARNING "jetinfer: JET_BUILD_FUZZERS needs clang (libFuzzer), not "
          "${CMAKE_CXX_COMPILER_ID}: tests/fuzz is not built. Configure with "
          "-DCMAKE_CXX_COMPILER=clang++ (scripts/fuzz.sh does).")
  set(JET_BUILD_FUZZERS OFF)  # the root CMakeLists.txt adds tests/fuzz only when this is ON
elseif(JET_BUILD_FUZZERS)
  # Coverage feedback from the code under test (loader, kernels), not only from the fuzz target:
  # fuzzer-no-link instruments without linking libFuzzer's main into every executable. The
  # coverage callbacks of the other executables come from the sanitizer runtime, so a fuzzer
  # build should also set JET_SANITIZE (scripts/fuzz.sh uses address,undefined).
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>")
  message(STATUS "jetinfer: fuzz targets ON (tests/fuzz, coverage-instrumented build)")
endif()
