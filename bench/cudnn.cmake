# cuDNN, for bench/conv and bench/conv_bwd only: jet::kernels never links it. Included by
# bench/CMakeLists.txt when the CUDA backend is on. Looked for, in order, under
#   - JET_CUDNN_ROOT (cache variable, or the environment variable of that name),
#   - PyTorch's pip package nvidia-cudnn (the folder python3 reports for nvidia.cudnn), which
#     ships include/ and lib/libcudnn.so.9 but no unversioned libcudnn.so,
#   - the CUDA toolkit (CUDAToolkit_LIBRARY_ROOT, e.g. /usr/local/cuda) and the system paths.
# Not found: one status line, and bench/conv is not built.
set(JET_CUDNN_ROOT "$ENV{JET_CUDNN_ROOT}" CACHE PATH
    "cuDNN install folder (with include/ and lib/ or lib64/), for bench/conv")

set(_jet_cudnn_hints "")
if(JET_CUDNN_ROOT)
  list(APPEND _jet_cudnn_hints "${JET_CUDNN_ROOT}")
endif()
if(DEFINED ENV{JET_CUDNN_ROOT} AND NOT "$ENV{JET_CUDNN_ROOT}" STREQUAL "${JET_CUDNN_ROOT}")
  list(APPEND _jet_cudnn_hints "$ENV{JET_CUDNN_ROOT}")
endif()
find_program(JET_PYTHON3 NAMES python3)
mark_as_advanced(JET_PYTHON3)
if(JET_PYTHON3)
  execute_process(
    COMMAND "${JET_PYTHON3}" -c
            "import os, nvidia.cudnn as m; f = getattr(m, '__file__', None); print(os.path.dirname(f) if f else list(m.__path__)[0])"
    OUTPUT_VARIABLE _jet_cudnn_py RESULT_VARIABLE _jet_cudnn_py_rc
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET TIMEOUT 60)
  if(_jet_cudnn_py_rc EQUAL 0 AND IS_DIRECTORY "${_jet_cudnn_py}")
    list(APPEND _jet_cudnn_hints "${_jet_cudnn_py}")
  endif()
endif()
if(CUDAToolkit_LIBRARY_ROOT)
  list(APPEND _jet_cudnn_hints "${CUDAToolkit_LIBRARY_ROOT}")
endif()

# NAMES_PER_DIR: the first hint folder holding either name wins (a system libcudnn.so must not
# shadow the pip package's libcudnn.so.9); the header is then looked for beside the library first,
# so that both come from one install.
find_library(JET_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9 NAMES_PER_DIR
  HINTS ${_jet_cudnn_hints} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu lib/aarch64-linux-gnu)
if(JET_CUDNN_LIBRARY)
  get_filename_component(_jet_cudnn_libdir "${JET_CUDNN_LIBRARY}" DIRECTORY)
  get_filename_component(_jet_cudnn_libparent "${_jet_cudnn_libdir}" DIRECTORY)
  find_path(JET_CUDNN_INCLUDE_DIR cudnn.h
    HINTS "${_jet_cudnn_libparent}" ${_jet_cudnn_hints} ${CUDAToolkit_INCLUDE_DIRS}
    PATH_SUFFIXES include)
endif()
mark_as_advanced(JET_CUDNN_INCLUDE_DIR JET_CUDNN_LIBRARY)

if(NOT JET_CUDNN_INCLUDE_DIR OR NOT JET_CUDNN_LIBRARY)
  message(STATUS "cuDNN not found: bench/conv not built")
  return()
endif()

message(STATUS "cuDNN for bench/conv: ${JET_CUDNN_LIBRARY} (headers ${JET_CUDNN_INCLUDE_DIR})")

add_executable(jet_bench_conv ${CMAKE_CURRENT_LIST_DIR}/conv/conv.cu)
target_include_directories(jet_bench_conv SYSTEM PRIVATE "${JET_CUDNN_INCLUDE_DIR}")
target_link_libraries(jet_bench_conv PRIVATE jet::kernels jet_warnings CUDA::cudart
                      "${JET_CUDNN_LIBRARY}")
# Runs from the build tree wherever cuDNN lives (the pip package's lib/ is on no loader path).
set_target_properties(jet_bench_conv PROPERTIES BUILD_RPATH "${_jet_cudnn_libdir}")

# bench/conv_bwd: the backward convolutions (conv_backward_data, and conv_backward_filter of the
# training add-on) against cuDNN's, on the same layers; needs JET_BUILD_TRAINING.
if(JET_BUILD_TRAINING)
  add_executable(jet_bench_conv_bwd ${CMAKE_CURRENT_LIST_DIR}/conv_bwd/conv_bwd.cu)
  target_include_directories(jet_bench_conv_bwd SYSTEM PRIVATE "${JET_CUDNN_INCLUDE_DIR}")
  target_link_libraries(jet_bench_conv_bwd PRIVATE jet::kernels jet_warnings CUDA::cudart
                        "${JET_CUDNN_LIBRARY}")
  set_target_properties(jet_bench_conv_bwd PROPERTIES BUILD_RPATH "${_jet_cudnn_libdir}")
endif()
