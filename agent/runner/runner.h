/*
 * runner.h - where the agent's Windows programs run (those it generated
 * and those that ship inside it, programs/programs.h), and the compiler
 * that builds the pe family's generated ones; one copy shared by the
 * families (agent/family/) and the churn test (agent/measure/churn.c).
 *
 * A runner (wine.c) runs Windows programs natively on Windows, and on Linux
 * under Wine with a private WINEPREFIX below the task's work folder,
 * WINEDEBUG=-all and one persistent wineserver ("-f -p": in the
 * foreground, so the PID held is the server's) started here and stopped
 * by that PID after `wineserver -k`. wineboot is tried up to
 * RUNNER_WINEBOOT_ATTEMPTS times (it fails now and then on a busy
 * machine). A program's output is read from a file: under Wine a pipe
 * would tie the program's exit to whoever drains it.
 *
 * A toolchain (toolchain.c) is mingw-w64's gcc, which only the pe family
 * needs (its experiment is the programs it generates and compiles; churn
 * and the program family run programs built with the agent):
 * x86_64-w64-mingw32-gcc on Linux; gcc in PATH on Windows, else, for a
 * Windows agent under Wine, the host's x86_64-w64-mingw32-gcc (as
 * Z:\usr\bin\..., run through the host).
 *
 * A Linux toolchain (toolchain.c, struct runner_elf_toolchain) is what the
 * elf family builds native shared objects with: "gcc+ld" (gcc driving GNU
 * ld) or "clang+lld" (clang driving lld). The agent's facts list those
 * found as "toolchain" (fleet/facts.h); a job picks one with its matrix
 * key "toolchain" (docs/elf-pipeline.md).
 */
#ifndef LOADLAB_AGENT_RUNNER_H
#define LOADLAB_AGENT_RUNNER_H

#include <stdbool.h>

#include "loadlab/plat.h"

/* Tries of `wineboot -i` before a Wine session fails (three failed in a
 * row once, each exiting with 53 within 3 s, on an idle machine: five,
 * 7 s of pauses in all). */
#define RUNNER_WINEBOOT_ATTEMPTS 5
/* Tries of writing Wine's null display driver into the prefix's
 * registry and restarting the session to read it (runner_start). */
#define RUNNER_DISPLAY_ATTEMPTS 3
/* How long the `wineserver -k` client may wait for the server to exit:
 * under the 10.5 s after which it would SIGKILL it unsaved. */
#define RUNNER_KILL_CLIENT_MS 8000
/* How long a wineserver still running 5 s after `wineserver -k` has, once
 * sent SIGTERM, to save its registry and exit before it is killed. */
#define RUNNER_SERVER_TERM_GRACE_MS 15000
/* Longest time one run of a generated program may take (runner_run). */
#define RUNNER_RUN_TIMEOUT_MS 60000
/* Longest WINEDLLOVERRIDES entry (runner_dll_overrides_set), "WINEDLLOVERRIDES="
 * and the NUL included: 16 KiB, half of Windows' 32767-character limit on
 * one environment variable, room for about 1000 DLL names of 10 characters. */
#define RUNNER_MAX_DLL_OVERRIDES 16384
/* The runner's own overrides under Wine: no Mono or Gecko installer
 * dialogs while a prefix boots or a program starts. */
#define RUNNER_BASE_DLL_OVERRIDES "mscoree,mshtml="
/* The environment variable that names a booted WINEPREFIX (`wineboot -i`
 * run in it, then `wineserver -k`, which saves its registry) for
 * runner_start() to copy instead of booting a new prefix: a boot takes
 * 10 to 40 s on two busy cores, a copy a few. The tests set it; the copy
 * (`cp -a`, Wine rewrites the registry files in place) is still the
 * task's own prefix. */
#define RUNNER_WINE_TEMPLATE_ENV "LOADLAB_WINE_TEMPLATE"

struct runner_dll_registry; /* wine_dll_registry.c's record of what it wrote */

/* Most DLL names runner_dll_registry_set() writes into the registry. */
#define RUNNER_MAX_REGISTRY_OVERRIDES 1024

struct runner {
	bool wine;           /* programs run under Wine's loader */
	bool through_wine64; /* Linux: each started by wine64 */
	char wine64[PLAT_MAX_PATH];
	char wineserver[PLAT_MAX_PATH];
	char prefix_env[PLAT_MAX_PATH + 16]; /* "WINEPREFIX=..." */
	/* Added to the environment of every program the runner starts:
	 * under wine64 the prefix, WINEDEBUG and WINEDLLOVERRIDES; natively
	 * (a Windows agent, under Wine too) nothing. NULL-ended, never NULL
	 * itself. */
	const char *env[5];
	char dll_overrides[RUNNER_MAX_DLL_OVERRIDES]; /* "WINEDLLOVERRIDES=..." */
	struct plat_process *server;
	char system_dirs[2][PLAT_MAX_PATH]; /* where the loader finds system DLLs */
	size_t system_dir_count;
	int boot_attempts;                    /* wineboot runs it took (Wine on Linux) */
	int display_attempts;                 /* tries to set the null display driver (0: not asked for) */
	struct runner_dll_registry *registry; /* runner_dll_registry_set()'s, until restored */
};

/* Prepares RUNNER: natively on Windows (a Windows agent under Wine starts
 * programs the same way, and notes `wine`); on Linux a private WINEPREFIX
 * below WORK, a persistent wineserver and a booted prefix (a copy of
 * the one RUNNER_WINE_TEMPLATE_ENV names, when set; boot_attempts 0). With
 * NULL_DISPLAY the prefix gets Wine's null display driver (windows and
 * messages without an X display; the server is restarted to read it,
 * and the key is read back from the new session, up to
 * RUNNER_DISPLAY_ATTEMPTS tries).
 * LL_ENOTFOUND when Wine is missing; on failure nothing is left running.
 * The RUNNER must not move between runner_start() and runner_stop(). */
int runner_start(struct runner *runner, const char *work, bool null_display);

/* Runs EXE (a path) with ARGS (NULL-terminated, may be NULL) in CWD, its
 * output to OUTPUT_PATH (may be NULL), for at most TIMEOUT_MS. Gives exit
 * code and wall time (either may be NULL). */
int runner_run(const struct runner *runner, const char *exe, const char *const *args, const char *cwd,
	       const char *output_path, long long timeout_ms, int *ret_exit_code, long long *ret_wall_us);

/* Has Wine's loader take ENTRIES (WINEDLLOVERRIDES syntax, "NAME=n,b;...";
 * the caller validated the names) for every program this runner starts
 * from now on, after RUNNER_BASE_DLL_OVERRIDES, so that an entry of
 * ENTRIES wins where both name a DLL (Wine's loader lets a later entry
 * replace an earlier one). Gives the whole value into *RET_VALUE
 * (borrowed from RUNNER), or NULL where nothing could be set: natively
 * (Windows' loader has no such variable) and on a Windows agent under
 * Wine, because Wine 8 sets WINEDLLOVERRIDES in every new process from
 * the Unix environment that Wine was started with, whatever the Windows
 * parent put in the child's environment (seen: `set
 * WINEDLLOVERRIDES=...` in cmd, then `cmd /c set` shows the old value;
 * other variables pass). LL_ETOOBIG when the entry would exceed
 * RUNNER_MAX_DLL_OVERRIDES, RUNNER unchanged. */
int runner_dll_overrides_set(struct runner *runner, const char *entries, const char **ret_value);

/* The same for a Windows agent under Wine (plat_under_wine(): ntdll has
 * wine_get_version), where the variable cannot be passed on: writes, for
 * each name of ENTRIES (WINEDLLOVERRIDES syntax, "NAME=n,b;..."), the
 * value NAME = "native,builtin" under HKCU\Software\Wine\DllOverrides
 * of the prefix the agent runs in, which Wine's loader reads in every
 * process it starts; the values each replaced (or their absence) are kept
 * in RUNNER until runner_dll_registry_restore() (runner_stop() calls it)
 * puts them back. *RET_KEY is the key written, or NULL where nothing was
 * (natively, and on Linux, where runner_dll_overrides_set() does it).
 * LL_ETOOBIG past RUNNER_MAX_REGISTRY_OVERRIDES names or a name of 256
 * bytes; LL_EIO when the registry refuses (what was written is restored
 * first). An agent killed between the two leaves its values behind: the
 * next task's restore cannot know them, so they stay "native,builtin". */
int runner_dll_registry_set(struct runner *runner, const char *entries, const char **ret_key);

/* Puts back what runner_dll_registry_set() replaced. Safe to call twice. */
void runner_dll_registry_restore(struct runner *runner);

/* The PID of the wineserver this runner started (Wine on Linux), which
 * serves the programs it runs; 0 when there is none. */
long long runner_server_pid(const struct runner *runner);

/* Stops the wineserver this runner started (by its PID), after it ended
 * every process of the prefix. Safe to call twice, or without a start. */
void runner_stop(struct runner *runner);

/* PATH (absolute, this process's form) as a program started by this
 * runner sees it: under wine64 "Z:" and backslashes, elsewhere PATH
 * itself. OUT has PLAT_MAX_PATH + 1 bytes. */
int runner_program_path(const struct runner *runner, const char *path, char *out);

struct runner_toolchain {
	char gcc[PLAT_MAX_PATH];
	char version[128]; /* the first line of `gcc --version` */
	/* The compiler is the host's (Unix) mingw-w64 and this agent a Windows
	 * build under Wine: it runs through plat_spawn_host(), and every path
	 * in its arguments is a host path (plat_host_path()). */
	bool host;
	char target[64]; /* `gcc -dumpmachine`: "x86_64-w64-mingw32", "i686-w64-mingw32" */
	bool x86;        /* 32-bit x86: a DLL's stdcall entry is _DllMain@12 */
};

/* Finds the mingw-w64 compiler (above) into RET, then asks it for its
 * target (`gcc -dumpmachine`, its answer written to a file in WORK).
 * LL_ENOTFOUND with a message when there is no compiler. */
int runner_toolchain_find(const char *work, struct runner_toolchain *ret);

/* The same for the compiler NAME in PATH (a build task's toolchain,
 * "i686-w64-mingw32-gcc"); NAME NULL: runner_toolchain_find(). */
int runner_toolchain_find_named(const char *work, const char *name, struct runner_toolchain *ret);

/* A Linux compiler driver and the linker it drives, and the flags that
 * differ between them. */
struct runner_elf_toolchain {
	const char *kind;        /* "gcc+ld", "clang+lld": the fact, the matrix value, the result's kind */
	const char *compiler;    /* the driver in PATH: "gcc", "clang" */
	const char *linker;      /* the linker it runs, in PATH: "ld", "ld.lld" */
	const char *linker_name; /* as the result names it: "GNU ld", "lld" */
	const char *use_ld;      /* the driver's flag that picks the linker: "-fuse-ld=bfd", "-fuse-ld=lld" */
	const char *relr;        /* the linker's DT_RELR flag, after -Wl,: "-z,pack-relative-relocs" */
	bool order_file;         /* the linker takes --symbol-ordering-file (lld); GNU ld sorts sections */
	/* DT_RELR in a program too. glibc 2.36 refuses a program needing
	 * libc.so.6 with DT_RELR unless it depends on the version
	 * GLIBC_ABI_DT_RELR, which GNU ld adds and lld 14 does not: with lld
	 * only the libraries (linked without libc) are packed. */
	bool relr_program;
};

/* The Linux toolchains, "gcc+ld" first (the default when a job names none). */
#define RUNNER_ELF_TOOLCHAINS 2
extern const struct runner_elf_toolchain runner_elf_toolchains[RUNNER_ELF_TOOLCHAINS];

/* The Linux toolchain of KIND into *RET; LL_EINVAL with a message naming
 * the kinds there are when there is none. */
int runner_elf_toolchain(const char *kind, const struct runner_elf_toolchain **ret);

#endif
