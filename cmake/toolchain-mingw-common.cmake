# Shared part of cmake/toolchain-mingw-*.cmake: cross-compiling the agent
# for Windows with mingw-w64. The including file sets LOADLAB_MINGW_HOST
# and LOADLAB_MINGW_ARCH. libcurl and cJSON come from the prefix that
# scripts/build-windows-deps.sh ARCH fills (build/windows-deps/ARCH/prefix,
# or $LOADLAB_WINDOWS_DEPS/ARCH/prefix), found through their pkg-config files.
set(CMAKE_SYSTEM_NAME Windows)
# _POSIX_C_SOURCE gives mingw's gmtime_r/localtime_r and its C99 printf
# (%zu, %lld) instead of msvcrt's.
string(APPEND CMAKE_C_FLAGS_INIT " -D_POSIX_C_SOURCE=200809L")
set(CMAKE_C_COMPILER ${LOADLAB_MINGW_HOST}-gcc)
set(CMAKE_RC_COMPILER ${LOADLAB_MINGW_HOST}-windres)

if(DEFINED ENV{LOADLAB_WINDOWS_DEPS})
  set(LOADLAB_WINDOWS_DEPS_PREFIX "$ENV{LOADLAB_WINDOWS_DEPS}/${LOADLAB_MINGW_ARCH}/prefix")
else()
  get_filename_component(LOADLAB_WINDOWS_DEPS_PREFIX
    "${CMAKE_CURRENT_LIST_DIR}/../build/windows-deps/${LOADLAB_MINGW_ARCH}/prefix" ABSOLUTE)
endif()

set(CMAKE_FIND_ROOT_PATH /usr/${LOADLAB_MINGW_HOST} ${LOADLAB_WINDOWS_DEPS_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config sees only the Windows prefix, never the host's .pc files.
set(ENV{PKG_CONFIG_LIBDIR} "${LOADLAB_WINDOWS_DEPS_PREFIX}/lib/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")
