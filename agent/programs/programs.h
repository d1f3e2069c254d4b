/*
 * programs.h - the Windows programs the agent builds on the lab machine,
 * kept as real C files in agent/programs/ (compiled by the normal build
 * with mingw-w64 and warnings as errors when a mingw compiler is found,
 * as a check) and embedded into the agent at build time
 * (agent/programs/embed.cmake generates the table behind this function):
 *
 *	churn_parent.c, churn_child.c   the Windows churn (measure/churn.c)
 *	probe.c                         the fixed head of the pe family's
 *	                                generated main.c (family/pe/pe_generate.c)
 *	debug_probe.c, idle_launcher.c  the program family's helpers
 *	                                (family/program/program_fetch.c), which
 *	                                both include start_program.h
 *	empty_program.c                 its floor
 *
 * The agent writes a source (and the headers it includes) into the work
 * folder and compiles it there.
 */
#ifndef LOADLAB_AGENT_PROGRAMS_H
#define LOADLAB_AGENT_PROGRAMS_H

#include <stddef.h>

/* The text of the embedded file NAME ("churn_parent.c"), NUL-terminated,
 * its length in *RET_SIZE (may be NULL); NULL when there is no such file. */
const char *agent_program_source(const char *name, size_t *ret_size);

#endif
