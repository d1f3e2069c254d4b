# Windows x64 (Vista- and 10-class): cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-mingw-x86_64.cmake
set(LOADLAB_MINGW_HOST x86_64-w64-mingw32)
set(LOADLAB_MINGW_ARCH x86_64)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_FLAGS_INIT "-D_WIN32_WINNT=0x0600")
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-mingw-common.cmake)
