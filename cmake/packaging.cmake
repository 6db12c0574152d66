# .deb packages through CPack, one per install component:
#   jetinfer      (component runtime): jet-run, jet-convert, jet-compare, jet-bench, jet-inspect
#                 (the install rules send shared libraries here too, but the project's libraries
#                 are static and a shared build is not tested)
#   jetinfer-dev  (component dev): headers, the static libraries, the CMake package
#                 (find_package(jetinfer) -> jet::kernels, jet::runtime); depends on jetinfer
# Build them from a configured and built tree:   cd build && cpack -G DEB
# The architecture is the target's: amd64 natively, arm64 from the Jetson and cpu-aarch64 presets
# (toolchains/*.cmake). Library dependencies come from dpkg-shlibdeps on native builds; a cross
# build cannot run it against the board's libraries, so its packages list none (install the
# JetPack runtime they need: CUDA, and libprotobuf / libonnx for jet-convert).
set(CPACK_PACKAGE_NAME jetinfer)
set(CPACK_PACKAGE_VENDOR "jetinfer")
set(CPACK_PACKAGE_CONTACT "jetinfer maintainers <maintainers@jetinfer.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME jetinfer)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME jetinfer-dev)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION science)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
    "jetinfer inference runtime and tools\n jet-run, jet-convert (ONNX to .jet), jet-compare, jet-bench and jet-inspect.")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "jetinfer development files\n Headers, static libraries and the CMake package (jet::kernels, jet::runtime).")
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
if(CMAKE_CROSSCOMPILING)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  endif()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
else()
  find_program(JET_DPKG_SHLIBDEPS dpkg-shlibdeps)
  if(JET_DPKG_SHLIBDEPS)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  else()
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)
  endif()
endif()
include(CPack)
