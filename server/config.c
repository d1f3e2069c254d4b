#include "config.h"

#include "schedules/webhook_target.h"

#include "loadlab/err.h"
#include "loadlab/redact.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OPT_LIST: a string that each setting adds its entries to (','
 * separated), from every source. */
enum option_kind { OPT_STRING, OPT_INT, OPT_BOOL, OPT_LISTEN, OPT_LLONG, OPT_LIST };

struct option_def {
	const char *name; /* flag without "--", config key */
	enum option_kind kind;
	size_t offset;
	size_t size;              /* strings: buffer size */
	long long min, max;       /* ints */
	long long initial;        /* ints and booleans: the default */
	const char *initial_text; /* strings: the default, NULL for "" */
	const char *help;
};

#define STR(field, initial) \
	OPT_STRING, offsetof(struct config, field), sizeof(((struct config *)0)->field), 0, 0, 0, initial
#define INT(field, lo, hi, initial) OPT_INT, offsetof(struct config, field), 0, lo, hi, initial, NULL
#define BOOL(field, initial) OPT_BOOL, offsetof(struct config, field), 0, 0, 1, initial, NULL
#define LIST(field) \
	OPT_LIST, offsetof(struct config, field), sizeof(((struct config *)0)->field), 0, 0, 0, NULL
#define LLONG(field, lo, hi, initial) OPT_LLONG, offsetof(struct config, field), 0, lo, hi, initial, NULL

static const struct option_def options[] = {
	{"listen", OPT_LISTEN, 0, 0, 0, 0, 0, NULL, "HOST:PORT to serve on (port 0: any free port)"},
	{"data-dir", STR(data_dir, "./var"), "folder for the store and the token files"},
	{"db", STR(db_path, NULL),
	 "the store: a SQLite file or sqlite:PATH (default DATA_DIR/loadlab.db), or postgresql://..."},
	{"tls-cert", STR(tls_cert, NULL), "PEM certificate; with --tls-key serves HTTPS"},
	{"tls-key", STR(tls_key, NULL), "PEM private key"},
	{"log-format", STR(log_format, "text"), "text or json"},
	{"lease-seconds", INT(lease_seconds, 1, 3600, 60), "a task lease lasts this long unless renewed"},
	{"max-attempts", INT(max_attempts, 1, 100, 3), "leases per task before it is dead"},
	{"retry-backoff", INT(retry_backoff_seconds, 0, 3600, 10),
	 "seconds before a failed task is retried; doubles per attempt"},
	{"offline-after", INT(offline_after_seconds, 1, 86400, 120), "an agent unseen this long is offline"},
	{"max-wait", INT(max_wait_seconds, 0, 300, 60), "longest lease long-poll in seconds"},
	{"threads", INT(threads, 1, 256, 8), "HTTP worker threads"},
	{"per-ip-limit", INT(per_ip_limit, 1, 10000, 256), "concurrent connections per client address"},
	{"connection-timeout", INT(connection_timeout, 1, 3600, 120), "idle connection timeout in seconds"},
	{"header-timeout", INT(header_timeout, 1, 3600, 10),
	 "seconds a connection has to send a request's headers"},
	{"body-timeout", INT(body_timeout, 1, 86400, 3600),
	 "seconds a request's body may take in all (default 3600)"},
	{"body-min-rate", LLONG(body_min_rate, 0, 1LL << 30, 1024),
	 "bytes per second a request's body must average after its first 5 s (0: no minimum)"},
	{"max-connections", INT(max_connections, 16, 1000000, 8000),
	 "open connections at most (lowered to fit the open-files limit)"},
	{"max-long-polls", INT(max_long_polls, 0, 1000000, 0),
	 "parked lease long-polls at most (0: connections less a reserve)"},
	{"each-agent-build", BOOL(each_agent_build, false),
	 "a pe or elf job that does not say \"build\" builds on each agent (default: one shared build)"},
	{"store-watch", BOOL(store_watch, true),
	 "a parked lease long-poll wakes when another replica queues tasks (PostgreSQL LISTEN/NOTIFY;"
	 " false: the once-a-second check only)"},
	{"public-read", BOOL(public_read, false), "allow GET of jobs, agents and reports without a token"},
	{"public-metrics", BOOL(public_metrics, true), "allow /metrics without a token"},
	{"schedule-tick-ms", INT(schedule_tick_ms, 10, 60000, 1000),
	 "how often due schedules and finished series jobs are looked at"},
	{"blob-max-bytes", LLONG(blob_max_bytes, 1, 1LL << 40, 1LL << 30),
	 "largest blob in bytes (default 1 GiB)"},
	{"blob-quota-bytes", LLONG(blob_quota_bytes, 1, 1LL << 50, 20LL << 30),
	 "all blobs together, in bytes (default 20 GiB)"},
	{"answer-memory-bytes", LLONG(answer_memory_bytes, 1 << 20, 1LL << 40, 256LL << 20),
	 "bytes of answers held for clients that read slowly; a large answer past it gets 503 busy "
	 "(default 256 MiB)"},
	{"min-free-bytes", LLONG(min_free_bytes, 0, 1LL << 62, 256LL << 20),
	 "bytes kept free on the data folder's disk: uploads that would pass it get 507 storage_full, "
	 "/healthz says disk full below it (default 256 MiB)"},
	{"program-max-bytes", LLONG(program_max_bytes, 1, 1LL << 50, 4LL << 30),
	 "a program job's files added up, once per path, in bytes (default 4 GiB)"},
	{"blob-retention-s", LLONG(blob_retention_s, 0, 100LL * 365 * 86400, 7 * 86400),
	 "a blob no job references is removed after this many seconds unused (default 7 days)"},
	{"blob-sweep-interval-s", LLONG(blob_sweep_interval_s, 1, 86400, 3600),
	 "seconds between blob retention sweeps (default 3600)"},
	{"agent-dir", STR(agent_dir, NULL),
	 "folder of agent binaries served to the fleet, loadlab-agent-OS-ARCH[-LABEL][.exe] "
	 "(docs/agent.md, Updates)"},
	{"webhook-allow", LIST(webhook_allow),
	 "HOST or ADDRESS[/BITS] webhooks may reach although loopback, private or link-local "
	 "(repeatable; ',' separated)"},
	{"webhook-timeout", INT(webhook_timeout_s, 1, 300, 5), "seconds one webhook POST may take"},
};

#define OPTION_COUNT (sizeof(options) / sizeof(options[0]))

/* Every option at its default (options[]'s INITIAL), the others zero. */
static void set_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->listen_host, sizeof(c->listen_host), "127.0.0.1");
	c->listen_port = 8080;
	for (size_t i = 0; i < OPTION_COUNT; i++) {
		const struct option_def *o = &options[i];
		char *field = (char *)c + o->offset;

		switch (o->kind) {
		case OPT_STRING:
			if (o->initial_text)
				snprintf(field, o->size, "%s", o->initial_text);
			break;
		case OPT_INT:
			*(int *)field = (int)o->initial;
			break;
		case OPT_LLONG:
			*(long long *)field = o->initial;
			break;
		case OPT_BOOL:
			*(bool *)field = o->initial != 0;
			break;
		case OPT_LISTEN:
		case OPT_LIST:
			break;
		}
	}
}

/* 1 for true, yes, on, 1; 0 for false, no, off, 0; -1 for anything else. */
static int bool_word(const char *value)
{
	if (!strcmp(value, "1") || !strcmp(value, "true") || !strcmp(value, "yes") || !strcmp(value, "on"))
		return 1;
	if (!strcmp(value, "0") || !strcmp(value, "false") || !strcmp(value, "no") || !strcmp(value, "off"))
		return 0;
	return -1;
}

static int set_option(struct config *c, const struct option_def *o, const char *value, const char *source)
{
	char *end;
	long v;

	switch (o->kind) {
	case OPT_LIST: {
		char *field = (char *)c + o->offset, message[400];
		size_t used = strlen(field);
		int rc;
		if (used + 1 + strlen(value) >= o->size)
			return err_set(LL_EINVAL, "%s: %s has too many entries.", source, o->name);
		snprintf(field + used, o->size - used, "%s%s", used ? "," : "", value);
		if ((rc = webhook_allow_check(field)) < 0) {
			field[used] = '\0';
			snprintf(message, sizeof(message), "%s", err_message(rc));
			return err_set(rc, "%s: %s", source, message);
		}
		return 0;
	}
	case OPT_STRING:
		if (strlen(value) >= o->size)
			return err_set(LL_EINVAL, "%s: value of %s is too long.", source, o->name);
		snprintf((char *)c + o->offset, o->size, "%s", value);
		return 0;
	case OPT_INT:
	case OPT_LLONG: {
		long long n;
		errno = 0;
		n = strtoll(value, &end, 10);
		if (errno || end == value || *end || n < o->min || n > o->max)
			return err_set(LL_EINVAL, "%s: %s must be an integer from %lld to %lld, not '%s'.",
				       source, o->name, o->min, o->max, value);
		if (o->kind == OPT_INT)
			*(int *)((char *)c + o->offset) = (int)n;
		else
			*(long long *)((char *)c + o->offset) = n;
		return 0;
	}
	case OPT_BOOL:
		if (bool_word(value) < 0)
			return err_set(LL_EINVAL, "%s: %s must be true or false, not '%s'.", source, o->name,
				       value);
		*(bool *)((char *)c + o->offset) = bool_word(value) == 1;
		return 0;
	case OPT_LISTEN: {
		const char *colon = strrchr(value, ':');
		if (!colon || colon == value || (size_t)(colon - value) >= sizeof(c->listen_host))
			return err_set(LL_EINVAL, "%s: listen must be HOST:PORT, not '%s'.", source, value);
		errno = 0;
		v = strtol(colon + 1, &end, 10);
		if (errno || end == colon + 1 || *end || v < 0 || v > 65535)
			return err_set(LL_EINVAL, "%s: the port in '%s' must be 0 to 65535.", source, value);
		snprintf(c->listen_host, sizeof(c->listen_host), "%.*s", (int)(colon - value), value);
		c->listen_port = (int)v;
		return 0;
	}
	}
	return LL_EINVAL;
}

static const struct option_def *find_option(const char *name)
{
	for (size_t i = 0; i < OPTION_COUNT; i++)
		if (strcmp(options[i].name, name) == 0)
			return &options[i];
	return NULL;
}

static int load_file(struct config *c, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[2048], where[1100];
	int lineno = 0, rc = 0;

	if (!f)
		return err_set(LL_EIO, "Cannot read config file %s.", path);
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *key = line, *eq, *value, *end;
		const struct option_def *o;
		lineno++;
		line[strcspn(line, "#\r\n")] = '\0';
		while (isspace((unsigned char)*key))
			key++;
		if (!*key)
			continue;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		eq = strchr(key, '=');
		if (!eq) {
			rc = err_set(LL_EINVAL, "%s: expected 'name = value'.", where);
			break;
		}
		for (end = eq; end > key && isspace((unsigned char)end[-1]); end--)
			;
		*end = '\0';
		for (value = eq + 1; isspace((unsigned char)*value); value++)
			;
		for (end = value + strlen(value); end > value && isspace((unsigned char)end[-1]); end--)
			;
		*end = '\0';
		o = find_option(key);
		if (!o)
			rc = err_set(LL_EINVAL, "%s: unknown setting '%s'.", where, key);
		else
			rc = set_option(c, o, value, where);
	}
	fclose(f);
	return rc;
}

static int load_env(struct config *c)
{
	char var[64];

	for (size_t i = 0; i < OPTION_COUNT; i++) {
		const char *value;
		size_t n = (size_t)snprintf(var, sizeof(var), "LOADLAB_%s", options[i].name);
		for (size_t j = 8; j < n; j++)
			var[j] = options[i].name[j - 8] == '-' ? '_' : (char)toupper((unsigned char)var[j]);
		value = getenv(var);
		if (value && *value) {
			int rc = set_option(c, &options[i], value, var);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int config_load(struct config *c, int argc, char **argv, bool *ret_help)
{
	const char *config_file = getenv("LOADLAB_CONFIG");
	int rc;

	set_defaults(c);
	*ret_help = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			*ret_help = true;
			return 0;
		}
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			config_file = argv[i + 1];
		else if (strncmp(argv[i], "--config=", 9) == 0)
			config_file = argv[i] + 9;
	}
	if (config_file && *config_file && (rc = load_file(c, config_file)) < 0)
		return rc;
	if ((rc = load_env(c)) < 0)
		return rc;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *value = NULL;
		char name[64];
		const struct option_def *o;

		if (strncmp(arg, "--", 2) != 0) {
			char shown[300]; /* a --db URI without its flag may hold a password */
			return err_set(LL_EINVAL, "Unexpected argument '%s' (see --help).",
				       redact_secrets(arg, shown, sizeof(shown)));
		}
		snprintf(name, sizeof(name), "%s", arg + 2);
		if (strchr(name, '=')) {
			value = strchr(arg, '=') + 1;
			name[strcspn(name, "=")] = '\0';
		}
		if (strcmp(name, "config") == 0) {
			if (!value)
				i++;
			continue;
		}
		o = find_option(name);
		if (!o)
			return err_set(LL_EINVAL, "Unknown option '--%s' (see --help).", name);
		/* A boolean flag alone means true; "--flag false" takes the next
		 * argument when it is a boolean word. */
		if (!value && o->kind == OPT_BOOL)
			value = i + 1 < argc && bool_word(argv[i + 1]) >= 0 ? argv[++i] : "true";
		if (!value) {
			if (i + 1 >= argc)
				return err_set(LL_EINVAL, "Option '--%s' needs a value.", name);
			value = argv[++i];
		}
		if ((rc = set_option(c, o, value, "command line")) < 0)
			return rc;
	}
	if (strcmp(c->log_format, "text") != 0 && strcmp(c->log_format, "json") != 0)
		return err_set(LL_EINVAL, "log-format must be text or json, not '%s'.", c->log_format);
	if (c->header_timeout > c->connection_timeout)
		c->header_timeout = c->connection_timeout;
	if (!c->tls_cert[0] != !c->tls_key[0])
		return err_set(LL_EINVAL, "TLS needs both --tls-cert and --tls-key.");
	if (!c->db_path[0]) {
		if (strlen(c->data_dir) + sizeof("/loadlab.db") > sizeof(c->db_path))
			return err_set(LL_EINVAL, "data-dir is too long.");
		snprintf(c->db_path, sizeof(c->db_path), "%s/loadlab.db", c->data_dir);
	}
	return 0;
}

void config_usage(FILE *out)
{
	fprintf(out, "usage: loadlabd [--listen 127.0.0.1:8080] [--data-dir DIR] [--db PATH]\n"
		     "                [--tls-cert F --tls-key F] [--config FILE] [--log-format text|json]\n"
		     "                [--max-connections 8000] [--max-long-polls 0] [--header-timeout 10]\n"
		     "                [more options below]\n\n"
		     "Every option also reads from LOADLAB_<NAME> (e.g. LOADLAB_DATA_DIR) and from\n"
		     "'name = value' lines of --config FILE; flags win over the environment, which\n"
		     "wins over the file. LOADLAB_ADMIN_TOKEN and LOADLAB_ENROLL_TOKEN set the\n"
		     "tokens instead of generating them.\n\noptions:\n");
	fprintf(out, "  --%-20s %s\n", "config FILE", "read settings from FILE");
	for (size_t i = 0; i < OPTION_COUNT; i++)
		fprintf(out, "  --%-20s %s\n", options[i].name, options[i].help);
}
