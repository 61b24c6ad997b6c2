# The header-only libraries every build uses: nlohmann_json::nlohmann_json (the runtime's graph
# JSON) and CLI11::CLI11 (the command lines). Both are architecture-independent (Debian ships
# them as Architecture: all, in /usr/include).
#
# A native build finds their CMake packages. A cross build's find root path (the toolchain
# file's CMAKE_FIND_ROOT_PATH) hides /usr/include, and adding /usr/include itself to the cross
# compiler's search path would also expose the build machine's libc headers; so the cross build
# reaches them through a folder of links to just these two header trees
# (<build>/header-only/{nlohmann,CLI}).
if(NOT CMAKE_CROSSCOMPILING)
  find_package(nlohmann_json REQUIRED)
  find_package(CLI11 CONFIG QUIET)
  if(NOT TARGET CLI11::CLI11)
    # Older CLI11 packages have no CMake config; the header is all there is.
    find_path(TESSERA_CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
    add_library(CLI11::CLI11 INTERFACE IMPORTED)
    target_include_directories(CLI11::CLI11 INTERFACE ${TESSERA_CLI11_INCLUDE_DIR})
  endif()
  return()
endif()

set(_tessera_header_only ${CMAKE_BINARY_DIR}/header-only)
file(MAKE_DIRECTORY ${_tessera_header_only})
foreach(pair "nlohmann:nlohmann/json.hpp:nlohmann-json3-dev" "CLI:CLI/CLI.hpp:libcli11-dev")
  string(REPLACE ":" ";" parts ${pair})
  list(GET parts 0 dir)
  list(GET parts 1 header)
  list(GET parts 2 package)
  find_path(TESSERA_HOST_${dir}_INCLUDE_DIR ${header} PATHS /usr/include /usr/local/include
            NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
  if(NOT TESSERA_HOST_${dir}_INCLUDE_DIR)
    message(FATAL_ERROR "the cross build needs ${header} on the build machine (Debian ${package}; run scripts/setup.sh)")
  endif()
  file(CREATE_LINK ${TESSERA_HOST_${dir}_INCLUDE_DIR}/${dir} ${_tessera_header_only}/${dir} SYMBOLIC)
endforeach()
add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE ${_tessera_header_only})
add_library(CLI11::CLI11 INTERFACE IMPORTED)
target_include_directories(CLI11::CLI11 SYSTEM INTERFACE ${_tessera_header_only})
