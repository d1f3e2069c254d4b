/*
 * elf_audit.c - the loader probe of the program family's ELF programs
 * (agent/family/program/program_elf_verify.c): an LD_AUDIT library
 * (rtld-audit(7)) compiled with the host's cc when loadlab-agent is built
 * on Linux and shipped inside it, so a lab machine needs no compiler.
 *
 *	LD_AUDIT=/w/tools/elf_audit.so LOADLAB_AUDIT_OUT=/w/probe.txt PROGRAM
 *
 * appends to LOADLAB_AUDIT_OUT one line per object the dynamic loader
 * opened (la_objopen), in the order it opened them:
 *
 *	object<TAB><pid><TAB>0x<l_addr><TAB><namespace><TAB><path>
 *
 * l_addr is the load bias (the difference between the object's addresses
 * in memory and in its file); path is the loader's l_name, the file it
 * opened, or for the program itself (whose l_name is empty) the target of
 * /proc/self/exe. The first line is
 *
 *	env<TAB><pid><TAB>LD_BIND_NOW=<value>   (or "LD_BIND_NOW unset")
 *
 * read from /proc/self/environ, what the loader saw. A process the
 * program starts inherits the variables and appends its own lines: the
 * pid tells them apart. Only write(2) and
 * friends: an audit library runs before the program's own libc is set up.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int out_fd = -1;

static void out_line(const char *line)
{
	size_t len = strlen(line);

	if (out_fd >= 0 && write(out_fd, line, len) != (ssize_t)len)
		out_fd = -1; /* nothing to report it to: the agent sees a short report */
}

/* The value of NAME in /proc/self/environ (what the loader saw; an
 * audit library may run before its libc's environ is set), or NULL. */
static const char *env_value(const char *name)
{
	static char env[65536];
	static ssize_t n = -1;
	size_t len = strlen(name);
	ssize_t got;

	if (n < 0) {
		int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
		n = 0;
		while (fd >= 0 && n < (ssize_t)sizeof(env) - 1 &&
		       (got = read(fd, env + n, sizeof(env) - 1 - (size_t)n)) > 0)
			n += got;
		if (fd >= 0)
			close(fd);
		env[n] = '\0';
	}
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(env + i) + 1)
		if (strncmp(env + i, name, len) == 0 && env[i + (ssize_t)len] == '=')
			return env + i + len + 1;
	return NULL;
}

unsigned int la_version(unsigned int version)
{
	const char *path = env_value("LOADLAB_AUDIT_OUT"), *bind_now;
	char line[256];

	if (path && out_fd < 0 &&
	    (out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) >= 0) {
		bind_now = env_value("LD_BIND_NOW");
		if (bind_now)
			snprintf(line, sizeof(line), "env\t%d\tLD_BIND_NOW=%.200s\n", (int)getpid(),
				 bind_now);
		else
			snprintf(line, sizeof(line), "env\t%d\tLD_BIND_NOW unset\n", (int)getpid());
		out_line(line);
	}
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	char exe[4096], line[4096 + 128];
	const char *name = map->l_name;
	ssize_t n;

	(void)cookie;
	if (!name || !*name) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		name = exe;
	}
	snprintf(line, sizeof(line), "object\t%d\t0x%llx\t%ld\t%s\n", (int)getpid(),
		 (unsigned long long)map->l_addr, (long)lmid, name);
	out_line(line);
	return 0; /* no symbol binding is audited: binding stays the loader's own */
}
