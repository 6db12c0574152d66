# The .deb packages (cmake/packaging.cmake): `cpack -G DEB` on the build tree makes jetinfer and
# jetinfer-dev; their contents are unpacked (dpkg-deb -x, no installation) into a scratch root,
# checked, and the consumer project (jet::kernels and jet::runtime) is built against that root and
# run on MODEL. Run by ctest (see tests/CMakeLists.txt). Cross builds pass EXPECT_ARCH (arm64) and
# stop after checking the contents and the architecture.
file(REMOVE_RECURSE ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

run(${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR}/packages)
file(GLOB debs ${WORK_DIR}/packages/*.deb)
set(names "")
foreach(deb ${debs})
  execute_process(COMMAND dpkg-deb -f ${deb} Package Version Architecture Depends OUTPUT_VARIABLE fields)
  message(STATUS "${deb}:\n${fields}")
  execute_process(COMMAND dpkg-deb -f ${deb} Package OUTPUT_VARIABLE name OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(APPEND names ${name})
  run(dpkg-deb -x ${deb} ${WORK_DIR}/root)
endforeach()
list(SORT names)
if(NOT names STREQUAL "jetinfer;jetinfer-dev")
  message(FATAL_ERROR "cpack made packages '${names}', expected jetinfer and jetinfer-dev")
endif()
file(GLOB dev_deb ${WORK_DIR}/packages/jetinfer-dev_*.deb)
execute_process(COMMAND dpkg-deb -f ${dev_deb} Depends OUTPUT_VARIABLE dev_depends)
if(NOT dev_depends MATCHES "jetinfer")
  message(FATAL_ERROR "jetinfer-dev does not depend on jetinfer (Depends: ${dev_depends})")
endif()

set(root ${WORK_DIR}/root/usr)
foreach(file ${EXPECTED_FILES})
  if(NOT EXISTS ${root}/${file})
    message(FATAL_ERROR "the packages lack usr/${file}")
  endif()
endforeach()
if(EXPECT_ARCH)  # cross builds: the target's architecture; nothing here can run the contents
  foreach(deb ${debs})
    execute_process(COMMAND dpkg-deb -f ${deb} Architecture OUTPUT_VARIABLE arch OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT arch STREQUAL EXPECT_ARCH)
      message(FATAL_ERROR "${deb} is for ${arch}, expected ${EXPECT_ARCH}")
    endif()
  endforeach()
  return()
endif()

run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${root} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
foreach(consumer consumer consumer_runtime)
  execute_process(COMMAND ${WORK_DIR}/build/${consumer} ${MODEL} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message(STATUS "${consumer} printed: ${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${consumer}, built against the packaged jetinfer, failed (${rc})")
  endif()
endforeach()
# The packaged jet-run runs too.
run(${root}/bin/jet-run ${MODEL} --device cpu)
