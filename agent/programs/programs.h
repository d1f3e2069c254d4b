/*
 * programs.h - the Windows programs that ship inside the agent, kept as
 * real C files in agent/programs/ and compiled when the agent itself is
 * built (agent/CMakeLists.txt: mingw-w64, -Wall -Wextra -Werror, no PE
 * timestamp), so that no lab machine needs a compiler for them:
 *
 *	churn_parent.exe, churn_child.exe   the Windows churn (measure/churn.c)
 *	debug_probe.exe, idle_launcher.exe  the program family's helpers
 *	                                    (family/program/program_tools.c),
 *	                                    which both include start_program.h
 *	empty_program.exe                   its floor
 *
 * Each is embedded as bytes, with its size and SHA-256 taken at build time
 * (agent/programs/embed.cmake generates the tables behind these
 * functions), for one architecture: the agent's own on Windows (x86_64 in
 * build-win64, i686 in the XP-class build-win32), x86_64 on Linux, where
 * wine64 runs them. At run time the agent writes a program into its work
 * folder, checks the file against the recorded size and SHA-256, and runs
 * it; the result names what ran (agent_program_json()).
 *
 * On Linux the agent also carries the program family's ELF helpers,
 * compiled with the agent's own compiler for its own machine
 * (agent_program_native_arch(), "linux-x86_64"):
 *
 *	elf_audit.so     the loader probe, an LD_AUDIT library
 *	elf_launcher     pagein and until "idle"
 *	elf_empty        the floor of ELF programs
 *
 * (family/program/program_elf_tools.c writes them out).
 *
 * One file is embedded as C text instead: probe.c, the fixed head of the
 * pe family's generated main.c (family/pe/pe_generate.c), which the pe
 * family compiles on the machine with the rest of its experiment. The
 * build compiles it too (-c, warnings as errors) as a check.
 */
#ifndef LOADLAB_AGENT_PROGRAMS_H
#define LOADLAB_AGENT_PROGRAMS_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* One embedded program. */
struct agent_program {
	const char *name;           /* "churn_parent.exe" */
	const char *arch;           /* "x86_64" or "i686" */
	const unsigned char *bytes; /* SIZE bytes */
	size_t size;
	const char *sha256;   /* of BYTES, lowercase hex, taken when the agent was built */
	const char *compiler; /* the first line of the compiler's --version */
};

/* The text of the embedded source NAME ("probe.c"), NUL-terminated, its
 * length in *RET_SIZE (may be NULL); NULL when there is no such file. */
const char *agent_program_source(const char *name, size_t *ret_size);

/* The architecture of the Windows programs this agent carries (above). */
const char *agent_program_arch(void);

/* The architecture of the ELF helpers this agent carries (above), or ""
 * when it carries none (a Windows agent). */
const char *agent_program_native_arch(void);

/* The embedded program NAME built for ARCH into *RET (borrowed, static).
 * LL_ENOTFOUND with a message naming what this agent carries otherwise. */
int agent_program_find(const char *name, const char *arch, const struct agent_program **ret);

/* Writes this agent's program NAME (for agent_program_arch()) to PATH,
 * reads the file back and checks its size and SHA-256 against those
 * recorded at build time; *RET_PROGRAM (may be NULL) gets the program.
 * LL_EIO with both digests, and the file removed, when they differ. */
int agent_program_install(const char *name, const char *path, const struct agent_program **ret_program);

/* As agent_program_install(), for the program NAME built for ARCH. */
int agent_program_install_arch(const char *name, const char *arch, const char *path,
			       const struct agent_program **ret_program);

/* PROGRAM as a result records it: {"name", "arch", "size", "sha256",
 * "compiler", "built": "with the agent"}; NULL when out of memory. */
cJSON *agent_program_json(const struct agent_program *program);

/* ---- the tables embed.cmake generates (use the functions above) ---- */

struct agent_program_text {
	const char *name;
	const char *text; /* NUL-terminated */
	size_t size;
};

extern const struct agent_program_text agent_program_texts[];
extern const size_t agent_program_text_count;
extern const struct agent_program agent_programs[];
extern const size_t agent_program_count;
extern const char agent_programs_arch[];
extern const char agent_programs_native_arch[];

#endif
