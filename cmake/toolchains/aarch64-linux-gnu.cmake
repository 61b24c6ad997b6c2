# Cross-compiling for 64-bit Arm Linux on an x86-64 Debian machine with Debian's cross toolchain
# (g++-aarch64-linux-gnu: compilers, binutils and the arm64 libc / libstdc++ under
# /usr/aarch64-linux-gnu). Used by the runtime-only build (scripts/build_cross.sh aarch64):
#   cmake -S . -B build-aarch64 -G Ninja -DTESSERA_RUNTIME_ONLY=ON \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# The programs it builds run here under qemu-user: qemu-aarch64 -L /usr/aarch64-linux-gnu PROGRAM.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(TESSERA_CROSS_TRIPLE aarch64-linux-gnu)
set(TESSERA_CROSS_SYSROOT /usr/aarch64-linux-gnu)
find_program(TESSERA_CROSS_CXX ${TESSERA_CROSS_TRIPLE}-g++)
if(NOT TESSERA_CROSS_CXX)
  message(FATAL_ERROR "${TESSERA_CROSS_TRIPLE}-g++ not found: install Debian's g++-aarch64-linux-gnu (scripts/setup.sh)")
endif()
set(CMAKE_C_COMPILER ${TESSERA_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${TESSERA_CROSS_TRIPLE}-g++)

# Libraries and headers only from the arm64 tree; programs (ccache, ninja) from the build machine.
set(CMAKE_FIND_ROOT_PATH ${TESSERA_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# How CMake (and the tests) run the programs built here.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${CMAKE_SYSTEM_PROCESSOR};-L;${TESSERA_CROSS_SYSROOT})
