# Installs the build tree to a scratch prefix and builds a tiny outside project against it with
# find_package(jetinfer): `consumer` (jet::kernels) and `consumer_runtime` (jet::runtime, run on
# the model file MODEL). Run by ctest (see tests/CMakeLists.txt).
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
foreach(consumer consumer consumer_runtime)
  execute_process(COMMAND ${WORK_DIR}/build/${consumer} ${MODEL} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message(STATUS "${consumer} printed: ${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${consumer}, built against the installed jetinfer, failed (${rc})")
  endif()
endforeach()
