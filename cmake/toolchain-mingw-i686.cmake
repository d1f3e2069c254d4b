# Windows x86 (XP-class): cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-mingw-i686.cmake
# _WIN32_WINNT=0x0501 hides every post-XP API in the headers, and
# PSAPI_VERSION=1 keeps GetProcessMemoryInfo in psapi.dll instead of
# mapping it to Windows 7's K32GetProcessMemoryInfo (DESIGN.md, Known traps).
set(LOADLAB_MINGW_HOST i686-w64-mingw32)
set(LOADLAB_MINGW_ARCH i686)
set(CMAKE_SYSTEM_PROCESSOR i686)
set(CMAKE_C_FLAGS_INIT "-D_WIN32_WINNT=0x0501 -DWINVER=0x0501 -DPSAPI_VERSION=1")
include(${CMAKE_CURRENT_LIST_DIR}/toolchain-mingw-common.cmake)
