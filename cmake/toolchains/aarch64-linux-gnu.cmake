# Cross-building ninegrid for 64-bit Arm Linux with Debian's cross toolchain (g++-aarch64-linux-gnu):
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# The target's libraries are Debian's own arm64 packages installed beside the host's through multiarch
# (libprotobuf-dev:arm64, libturbojpeg0-dev:arm64, libstb-dev:arm64, zlib1g-dev:arm64, libgtest-dev:arm64,
# all under /usr/lib/aarch64-linux-gnu; scripts/install_deps.sh --arm installs them); headers are shared with the
# host's packages (/usr/include) and protoc is the host's. Executables run under qemu-user
# (scripts/test_arm.sh): CMake prefixes tests registered with add_test, and the test discovery of GoogleTest, with the emulator
# below; QEMU_CPU in the environment chooses the emulated core (cortex-a72, max).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Programs (protoc, python3) come from the host; libraries, headers and CMake packages from the target's
# sysroot (the cross toolchain's /usr/aarch64-linux-gnu) and from the multiarch /usr/lib/aarch64-linux-gnu.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# No -L: the programs run on Debian's arm64 runtime, the loader /lib/ld-linux-aarch64.so.1 and the libraries
# under /usr/lib/aarch64-linux-gnu (libc6:arm64 comes with the multiarch packages above). `-L
# /usr/aarch64-linux-gnu` would take the cross toolchain's loader, which then loads multiarch's libc.so.6
# through /etc/ld.so.cache: a loader and a libc of two different glibc builds, which hang in the first
# pthread_create.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
