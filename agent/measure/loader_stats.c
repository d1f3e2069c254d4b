/* loader_stats.c - LD_DEBUG=statistics parsed (loader_stats.h). */
#include "measure/loader_stats.h"

#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"

/* The statistics lines: the label before the colon, where its number goes. */
struct label {
	const char *text;
	size_t offset;
	bool timed; /* a time, followed by its unit */
};

#define AT(field) offsetof(struct loader_stats, field)
static const struct label labels[] = {
	{"total startup time in dynamic loader", AT(startup_time), true},
	{"time needed for relocation", AT(relocation_time), true},
	{"time needed to load objects", AT(load_time), true},
	{"number of relocations", AT(relocations), false},
	{"number of relocations from cache", AT(relocations_from_cache), false},
	{"number of relative relocations", AT(relative_relocations), false},
	{"final number of relocations", AT(final_relocations), false},
	{"final number of relocations from cache", AT(final_relocations_from_cache), false},
};
#undef AT

/* LINE (LEN bytes) without its "   PID:\t" prefix into *BODY; the PID. */
static long long split_pid(const char *line, size_t len, const char **body)
{
	size_t i = 0;
	long long pid = 0;

	while (i < len && line[i] == ' ')
		i++;
	if (i == len || !isdigit((unsigned char)line[i]))
		return -1;
	while (i < len && isdigit((unsigned char)line[i]) && pid < 1000000000LL)
		pid = pid * 10 + (line[i++] - '0');
	if (i + 1 >= len || line[i] != ':' || line[i + 1] != '\t')
		return -1;
	*body = line + i + 2;
	return pid;
}

/* Parses BODY's "LABEL: NUMBER [UNIT ...]" into S; 1 when it was a
 * statistics line, 0 when not, LL_EINVAL when its number is not one. */
static int parse_line(const char *body, size_t len, struct loader_stats *s)
{
	const char *colon = memchr(body, ':', len), *p, *end = body + len;
	char number[32];

	if (!colon)
		return 0;
	while (body < colon && *body == ' ')
		body++;
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		const struct label *l = &labels[i];
		long long *field = (long long *)((char *)s + l->offset);
		size_t n = 0;
		if (strlen(l->text) != (size_t)(colon - body) ||
		    memcmp(l->text, body, (size_t)(colon - body)))
			continue;
		for (p = colon + 1; p < end && *p == ' '; p++)
			;
		while (p < end && isdigit((unsigned char)*p) && n < sizeof(number) - 1)
			number[n++] = *p++;
		number[n] = '\0';
		if (n == 0 || n >= 19)
			return err_set(LL_EFORMAT, "LD_DEBUG statistics: '%s' has no number.", l->text);
		if (*field < 0)
			*field = strtoll(number, NULL, 10);
		if (l->timed) {
			size_t u = 0;
			char unit[sizeof(s->time_unit)];
			while (p < end && *p == ' ')
				p++;
			while (p < end && isalpha((unsigned char)*p) && u < sizeof(unit) - 1)
				unit[u++] = *p++;
			unit[u] = '\0';
			if (!s->time_unit[0])
				snprintf(s->time_unit, sizeof(s->time_unit), "%s", unit);
		}
		return 1;
	}
	return 0;
}

int loader_stats_parse(const char *text, struct loader_stats *ret)
{
	struct loader_stats s;
	bool any = false;
	int rc;

	memset(&s, 0, sizeof(s));
	s.startup_time = s.relocation_time = s.load_time = -1;
	s.relocations = s.relocations_from_cache = s.relative_relocations = -1;
	s.final_relocations = s.final_relocations_from_cache = -1;
	s.pid = -1;
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n'), *body;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		long long pid = split_pid(line, len, &body);
		if (pid >= 0 && (s.pid < 0 || pid == s.pid)) {
			if ((rc = parse_line(body, len - (size_t)(body - line), &s)) < 0)
				return rc;
			if (rc == 1 && s.pid < 0)
				s.pid = pid;
			any = any || rc == 1;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!any)
		return err_set(LL_ENOTFOUND, "No loader statistics in the LD_DEBUG output.");
	*ret = s;
	return 0;
}

int loader_stats_json(const struct loader_stats *s, cJSON **ret)
{
	static const struct {
		const char *name;
		size_t offset;
	} fields[] = {
		{"relocations", offsetof(struct loader_stats, relocations)},
		{"relative_relocations", offsetof(struct loader_stats, relative_relocations)},
		{"relocations_from_cache", offsetof(struct loader_stats, relocations_from_cache)},
		{"final_relocations", offsetof(struct loader_stats, final_relocations)},
		{"final_relocations_from_cache", offsetof(struct loader_stats, final_relocations_from_cache)},
		{"startup_time", offsetof(struct loader_stats, startup_time)},
		{"relocation_time", offsetof(struct loader_stats, relocation_time)},
		{"load_time", offsetof(struct loader_stats, load_time)},
	};
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "source", "glibc LD_DEBUG=statistics, one untimed run"))
		goto fail;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		long long v = *(const long long *)((const char *)s + fields[i].offset);
		if (v >= 0 && !cJSON_AddNumberToObject(o, fields[i].name, (double)v))
			goto fail;
	}
	if (s->time_unit[0] && !cJSON_AddStringToObject(o, "time_unit", s->time_unit))
		goto fail;
	*ret = o;
	return 0;
fail:
	cJSON_Delete(o);
	return err_set(LL_ENOMEM, "Out of memory.");
}
