/*
 * facts.h - what the agent reports about its machine, at enrollment and
 * in every result:
 *
 *   os          "linux", "winxp", "vista", "win7", "win8", "win81", "win10", "win11"
 *   os_version  the kernel release (Linux) or "MAJOR.MINOR.BUILD" (Windows)
 *   arch        "x86_64", "i686", "aarch64", ...
 *   cpu_model   the processor's brand string
 *   cores       logical processors
 *   ram_mb      physical memory in MiB
 *   disk        "hdd", "ssd", "nvme" or "unknown": the device of the work folder
 *   fs          "ext4", "xfs", "btrfs", "tmpfs", "ntfs", "fat32", ...: the
 *               file system of the work folder
 *   toolchains  the compilers and linkers found, by name:
 *               x86_64-w64-mingw32-gcc, i686-w64-mingw32-gcc, gcc, clang, lld, cl
 *   toolchain_paths  where each of them is, in the same order
 *   toolchain   Linux: the elf family's toolchains whose compiler and
 *               linker are both in PATH, "gcc+ld" and "clang+lld"
 *               (runner.h); a job's matrix key "toolchain" picks one
 *   runner      "native", or "wine" where PE programs run under Wine (the
 *               Linux agent when /usr/lib/wine/wine64 exists; the Windows
 *               agent when it finds itself running under Wine)
 *
 * The OS-specific part is behind facts_os_collect(), one backend per OS
 * (agent/facts_linux.c, agent/facts_win32.c).
 */
#ifndef LOADLAB_AGENT_FACTS_H
#define LOADLAB_AGENT_FACTS_H

#include <cjson/cJSON.h>

/* The facts of this machine, for a work folder at WORK_DIR (which must
 * exist). Facts the OS does not tell are "unknown" (strings) or left out
 * (numbers). The caller deletes *RET_FACTS. */
int facts_detect(const char *work_dir, cJSON **ret_facts);

/* Backend: adds os, os_version, arch, cpu_model, cores, ram_mb, disk and fs
 * to FACTS. */
int facts_os_collect(const char *work_dir, cJSON *facts);

/* Backend: the runner for PE programs, "native" or "wine". */
const char *facts_os_runner(void);

/* Backend: the full path of toolchain program NAME (no extension), or
 * NULL when it is not found. The caller frees the path. */
char *facts_os_find_program(const char *name);

#endif
