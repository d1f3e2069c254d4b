/* facts.h backend for Linux: /proc, /sys, uname, sysinfo, statfs. */
#ifdef __linux__

#include "facts.h"
#include "loadlab/plat.h"

#include "loadlab/err.h"
#include "runner/runner.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

/* Where the Linux agent runs PE programs from (DESIGN.md, Windows builds). */
#define WINE64_PATH "/usr/lib/wine/wine64"

static void trim(char *s)
{
	size_t len = strlen(s);

	while (len > 0 && isspace((unsigned char)s[len - 1]))
		s[--len] = '\0';
}

/* The value after the first "KEY<spaces>:" line of /proc/cpuinfo. */
static void cpu_model(char *out, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(out, size, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (!colon || strncmp(line, "model name", 10) != 0)
			continue;
		colon++;
		while (*colon == ' ' || *colon == '\t')
			colon++;
		trim(colon);
		if (*colon)
			snprintf(out, size, "%s", colon);
		break;
	}
	fclose(f);
}

/* ID-VERSION_ID of /etc/os-release, e.g. "debian-12". */
static void distribution(char *out, size_t size)
{
	FILE *f = fopen("/etc/os-release", "r");
	char line[256], id[64] = "", version[64] = "";

	snprintf(out, size, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *target = NULL, *value;
		if (strncmp(line, "ID=", 3) == 0)
			target = id, value = line + 3;
		else if (strncmp(line, "VERSION_ID=", 11) == 0)
			target = version, value = line + 11;
		else
			continue;
		trim(value);
		if (*value == '"')
			value++;
		value[strcspn(value, "\"")] = '\0';
		snprintf(target, 64, "%.63s", value);
	}
	fclose(f);
	if (*id)
		snprintf(out, size, "%s%s%s", id, *version ? "-" : "", version);
}

/* The file system type of the mount holding PATH: the longest mount point
 * of /proc/self/mounts that is a prefix of PATH's real path. */
static void file_system(const char *path, char *out, size_t size)
{
	char real[PATH_MAX], line[4096], best[64] = "";
	size_t best_len = 0;
	FILE *f;
	struct statfs st;

	snprintf(out, size, "unknown");
	if (!realpath(path, real))
		return;
	f = fopen("/proc/self/mounts", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char device[1024], point[2048], type[64];
		size_t len;
		if (sscanf(line, "%1023s %2047s %63s", device, point, type) != 3)
			continue;
		len = strlen(point);
		if (strncmp(real, point, len) != 0 || (len > 1 && real[len] != '/' && real[len] != '\0'))
			continue;
		if (len >= best_len) {
			best_len = len;
			snprintf(best, sizeof(best), "%s", type);
		}
	}
	if (f)
		fclose(f);
	if (!*best && statfs(real, &st) == 0) {
		/* Magic numbers of <linux/magic.h>. */
		static const struct {
			unsigned long magic;
			const char *name;
		} kinds[] = {
			{0xEF53UL, "ext4"},      {0x58465342UL, "xfs"}, {0x9123683EUL, "btrfs"},
			{0x01021994UL, "tmpfs"}, {0x4d44UL, "vfat"},    {0x5346544eUL, "ntfs"},
		};
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if ((unsigned long)st.f_type == kinds[i].magic)
				snprintf(best, sizeof(best), "%s", kinds[i].name);
	}
	if (strcmp(best, "vfat") == 0 || strcmp(best, "msdos") == 0)
		snprintf(best, sizeof(best), "fat32");
	else if (strcmp(best, "ntfs3") == 0 || strcmp(best, "fuseblk") == 0)
		snprintf(best, sizeof(best), "ntfs");
	if (*best)
		snprintf(out, size, "%s", best);
}

/* The kind of block device holding PATH: /sys/dev/block/MAJOR:MINOR leads
 * to the device (or its partition, whose parent is the disk); "nvme" by
 * its name, else "hdd" or "ssd" from queue/rotational. */
static const char *disk_kind(const char *path)
{
	struct stat st;
	char link[64], real[PATH_MAX], file[PATH_MAX + 32];
	FILE *f;
	int c;

	if (stat(path, &st) < 0 || major(st.st_dev) == 0)
		return "unknown";
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(st.st_dev), minor(st.st_dev));
	if (!realpath(link, real))
		return "unknown";
	snprintf(file, sizeof(file), "%s/queue/rotational", real);
	if (access(file, R_OK) != 0) {
		char *slash = strrchr(real, '/');
		if (!slash)
			return "unknown";
		*slash = '\0';
		snprintf(file, sizeof(file), "%s/queue/rotational", real);
	}
	{
		const char *name = strrchr(real, '/');
		if (name && strncmp(name + 1, "nvme", 4) == 0)
			return "nvme";
	}
	f = fopen(file, "r");
	if (!f)
		return "unknown";
	c = fgetc(f);
	fclose(f);
	return c == '1' ? "hdd" : c == '0' ? "ssd" : "unknown";
}

/* "toolchain": the kinds of runner_elf_toolchains whose compiler and
 * linker are both in PATH. */
static bool elf_toolchains(cJSON *facts)
{
	cJSON *kinds = cJSON_AddArrayToObject(facts, "toolchain");

	if (!kinds)
		return false;
	for (size_t i = 0; i < RUNNER_ELF_TOOLCHAINS; i++) {
		const struct runner_elf_toolchain *t = &runner_elf_toolchains[i];
		char *compiler = facts_os_find_program(t->compiler),
		     *linker = facts_os_find_program(t->linker);
		bool found = compiler && linker;
		free(compiler);
		free(linker);
		if (found && !cJSON_AddItemToArray(kinds, cJSON_CreateString(t->kind)))
			return false;
	}
	return true;
}

int facts_os_collect(const char *work_dir, cJSON *facts)
{
	struct utsname uts;
	struct sysinfo si;
	char text[256];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	bool ok = true;

	if (uname(&uts) < 0)
		return err_set(LL_EIO, "uname failed.");
	ok = ok && cJSON_AddStringToObject(facts, "os", "linux");
	ok = ok && cJSON_AddStringToObject(facts, "os_version", uts.release);
	distribution(text, sizeof(text));
	ok = ok && cJSON_AddStringToObject(facts, "distro", text);
	ok = ok && cJSON_AddStringToObject(facts, "arch", uts.machine);
	cpu_model(text, sizeof(text));
	ok = ok && cJSON_AddStringToObject(facts, "cpu_model", text);
	if (cores > 0)
		ok = ok && cJSON_AddNumberToObject(facts, "cores", (double)cores);
	if (sysinfo(&si) == 0)
		ok = ok && cJSON_AddNumberToObject(
				   facts, "ram_mb",
				   (double)((unsigned long long)si.totalram * si.mem_unit / (1024 * 1024)));
	ok = ok && cJSON_AddStringToObject(facts, "disk", disk_kind(work_dir));
	file_system(work_dir, text, sizeof(text));
	ok = ok && cJSON_AddStringToObject(facts, "fs", text);
	ok = ok && elf_toolchains(facts);
	return ok ? 0 : err_set(LL_ENOMEM, "Out of memory.");
}

const char *facts_os_runner(void)
{
	return plat_is_executable(WINE64_PATH) ? "wine" : "native";
}

char *facts_os_find_program(const char *name)
{
	const char *path = getenv("PATH");
	const char *alias = strcmp(name, "lld") == 0 ? "ld.lld" : NULL;
	char candidate[PATH_MAX];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (int pass = 0; pass < (alias ? 2 : 1); pass++) {
		const char *want = pass ? alias : name;
		for (const char *p = path; *p;) {
			size_t len = strcspn(p, ":");
			if (len > 0 &&
			    (size_t)snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)len, p, want) <
				    sizeof(candidate) &&
			    plat_is_executable(candidate))
				return strdup(candidate);
			p += len;
			if (*p == ':')
				p++;
		}
	}
	return NULL;
}

#endif
