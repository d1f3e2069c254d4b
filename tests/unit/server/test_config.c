/* loadlabd's settings (config.c): defaults, flags in both spellings,
 * environment variables, the config file, their order, and bad values. */
#include "check.h"
#include "config.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* config_load() with ARGS (NULL-terminated, without argv[0]). */
static int load(struct config *c, const char *const *args)
{
	char *argv[32] = {"loadlabd"};
	int argc = 1;
	bool help = false;

	for (; args && args[argc - 1]; argc++)
		argv[argc] = (char *)args[argc - 1];
	return config_load(c, argc, argv, &help);
}

/* One test value per flag and how to read it back. */
struct flag_case {
	const char *name, *value;
	const char *expect; /* the setting as text after loading */
};

static void setting_text(const struct config *c, const char *name, char *out, size_t size)
{
	if (!strcmp(name, "listen"))
		snprintf(out, size, "%s:%d", c->listen_host, c->listen_port);
	else if (!strcmp(name, "data-dir"))
		snprintf(out, size, "%s", c->data_dir);
	else if (!strcmp(name, "db"))
		snprintf(out, size, "%s", c->db_path);
	else if (!strcmp(name, "tls-cert"))
		snprintf(out, size, "%s", c->tls_cert);
	else if (!strcmp(name, "tls-key"))
		snprintf(out, size, "%s", c->tls_key);
	else if (!strcmp(name, "log-format"))
		snprintf(out, size, "%s", c->log_format);
	else if (!strcmp(name, "lease-seconds"))
		snprintf(out, size, "%d", c->lease_seconds);
	else if (!strcmp(name, "max-attempts"))
		snprintf(out, size, "%d", c->max_attempts);
	else if (!strcmp(name, "retry-backoff"))
		snprintf(out, size, "%d", c->retry_backoff_seconds);
	else if (!strcmp(name, "offline-after"))
		snprintf(out, size, "%d", c->offline_after_seconds);
	else if (!strcmp(name, "max-wait"))
		snprintf(out, size, "%d", c->max_wait_seconds);
	else if (!strcmp(name, "threads"))
		snprintf(out, size, "%d", c->threads);
	else if (!strcmp(name, "per-ip-limit"))
		snprintf(out, size, "%d", c->per_ip_limit);
	else if (!strcmp(name, "connection-timeout"))
		snprintf(out, size, "%d", c->connection_timeout);
	else if (!strcmp(name, "header-timeout"))
		snprintf(out, size, "%d", c->header_timeout);
	else if (!strcmp(name, "body-timeout"))
		snprintf(out, size, "%d", c->body_timeout);
	else if (!strcmp(name, "body-min-rate"))
		snprintf(out, size, "%lld", c->body_min_rate);
	else if (!strcmp(name, "answer-memory-bytes"))
		snprintf(out, size, "%lld", c->answer_memory_bytes);
	else if (!strcmp(name, "min-free-bytes"))
		snprintf(out, size, "%lld", c->min_free_bytes);
	else if (!strcmp(name, "program-max-bytes"))
		snprintf(out, size, "%lld", c->program_max_bytes);
	else if (!strcmp(name, "max-connections"))
		snprintf(out, size, "%d", c->max_connections);
	else if (!strcmp(name, "max-long-polls"))
		snprintf(out, size, "%d", c->max_long_polls);
	else if (!strcmp(name, "schedule-tick-ms"))
		snprintf(out, size, "%d", c->schedule_tick_ms);
	else if (!strcmp(name, "public-read"))
		snprintf(out, size, "%s", c->public_read ? "true" : "false");
	else if (!strcmp(name, "each-agent-build"))
		snprintf(out, size, "%s", c->each_agent_build ? "true" : "false");
	else if (!strcmp(name, "public-metrics"))
		snprintf(out, size, "%s", c->public_metrics ? "true" : "false");
	else if (!strcmp(name, "store-watch"))
		snprintf(out, size, "%s", c->store_watch ? "true" : "false");
	else if (!strcmp(name, "blob-max-bytes"))
		snprintf(out, size, "%lld", c->blob_max_bytes);
	else if (!strcmp(name, "blob-quota-bytes"))
		snprintf(out, size, "%lld", c->blob_quota_bytes);
	else if (!strcmp(name, "blob-retention-s"))
		snprintf(out, size, "%lld", c->blob_retention_s);
	else if (!strcmp(name, "blob-sweep-interval-s"))
		snprintf(out, size, "%lld", c->blob_sweep_interval_s);
	else if (!strcmp(name, "webhook-allow"))
		snprintf(out, size, "%.1000s", c->webhook_allow);
	else if (!strcmp(name, "agent-dir"))
		snprintf(out, size, "%s", c->agent_dir);
	else if (!strcmp(name, "webhook-timeout"))
		snprintf(out, size, "%d", c->webhook_timeout_s);
	else
		snprintf(out, size, "?");
}

/* Values that differ from the defaults. tls-cert and tls-key are loaded
 * together (one alone is refused). */
static const struct flag_case flags[] = {
	{"listen", "0.0.0.0:9000", "0.0.0.0:9000"},
	{"data-dir", "/srv/ll", "/srv/ll"},
	{"db", "/srv/other.db", "/srv/other.db"},
	{"tls-cert", "/c.pem", "/c.pem"},
	{"tls-key", "/k.pem", "/k.pem"},
	{"log-format", "json", "json"},
	{"lease-seconds", "30", "30"},
	{"max-attempts", "5", "5"},
	{"retry-backoff", "0", "0"},
	{"offline-after", "300", "300"},
	{"max-wait", "15", "15"},
	{"threads", "2", "2"},
	{"per-ip-limit", "16", "16"},
	{"connection-timeout", "30", "30"},
	{"header-timeout", "5", "5"},
	{"body-timeout", "30", "30"},
	{"body-min-rate", "0", "0"},
	{"answer-memory-bytes", "2097152", "2097152"},
	{"min-free-bytes", "1000", "1000"},
	{"program-max-bytes", "123456789", "123456789"},
	{"max-connections", "20000", "20000"},
	{"max-long-polls", "900", "900"},
	{"public-read", "true", "true"},
	{"each-agent-build", "true", "true"},
	{"public-metrics", "false", "false"},
	{"store-watch", "false", "false"},
	{"schedule-tick-ms", "50", "50"},
	{"blob-max-bytes", "5368709120", "5368709120"},
	{"blob-quota-bytes", "109951162777600", "109951162777600"},
	{"blob-retention-s", "0", "0"},
	{"blob-sweep-interval-s", "60", "60"},
	{"webhook-allow", "127.0.0.1", "127.0.0.1"},
	{"webhook-timeout", "30", "30"},
	{"agent-dir", "/srv/agent-builds", "/srv/agent-builds"},
};

#define FLAG_COUNT (sizeof(flags) / sizeof(flags[0]))

static const struct flag_case *flag_case(const char *name)
{
	for (size_t i = 0; i < FLAG_COUNT; i++)
		if (!strcmp(flags[i].name, name))
			return &flags[i];
	return NULL;
}

/* Every flag of --help has a case above: a new flag must be tested. */
static void test_every_flag_listed(void)
{
	char text[8192] = "", *p;
	FILE *f = fmemopen(text, sizeof(text) - 1, "w");
	int seen = 0;

	CHECK(f != NULL);
	if (!f)
		return;
	config_usage(f);
	fclose(f);
	p = strstr(text, "options:");
	CHECK(p != NULL);
	while (p && (p = strstr(p, "\n  --"))) {
		char name[64];
		p += 5;
		sscanf(p, "%63[a-z-]", name);
		if (!strcmp(name, "config"))
			continue;
		if (!flag_case(name))
			fprintf(stderr, "no test case for --%s\n", name);
		CHECK(flag_case(name) != NULL);
		seen++;
	}
	CHECK_EQ_INT(seen, FLAG_COUNT);
}

/* Both "--flag value" and "--flag=value" for every flag. */
static void test_both_spellings(void)
{
	for (size_t i = 0; i < FLAG_COUNT; i++) {
		const struct flag_case *fc = &flags[i];
		const char *pair = !strcmp(fc->name, "tls-cert")  ? "tls-key"
				   : !strcmp(fc->name, "tls-key") ? "tls-cert"
								  : NULL;
		const struct flag_case *other = pair ? flag_case(pair) : NULL;
		char flag[64], joined[128], other_joined[128], got[1200];
		struct config c;

		snprintf(flag, sizeof(flag), "--%s", fc->name);
		snprintf(joined, sizeof(joined), "--%s=%s", fc->name, fc->value);
		if (other)
			snprintf(other_joined, sizeof(other_joined), "--%s=%s", other->name, other->value);

		const char *separate[] = {flag, fc->value, other ? other_joined : NULL, NULL};
		CHECK_EQ_INT(load(&c, separate), 0);
		setting_text(&c, fc->name, got, sizeof(got));
		if (strcmp(got, fc->expect))
			fprintf(stderr, "--%s %s gave '%s'\n", fc->name, fc->value, got);
		CHECK_EQ_STR(got, fc->expect);

		const char *one[] = {joined, other ? other_joined : NULL, NULL};
		CHECK_EQ_INT(load(&c, one), 0);
		setting_text(&c, fc->name, got, sizeof(got));
		CHECK_EQ_STR(got, fc->expect);
	}
}

/* --webhook-allow adds up across flags and the environment; a bad entry
 * is refused, naming it. */
static void test_webhook_allow_list(void)
{
	struct config c;
	const char *two[] = {"--webhook-allow", "127.0.0.1", "--webhook-allow=10.0.0.0/8,hooks.lab", NULL};
	const char *bad[] = {"--webhook-allow", "10.0.0.0/40", NULL};

	CHECK_EQ_INT(load(&c, NULL), 0);
	CHECK_EQ_STR(c.webhook_allow, "");
	CHECK_EQ_INT(c.webhook_timeout_s, 5);
	setenv("LOADLAB_WEBHOOK_ALLOW", "fd00::/8", 1);
	CHECK_EQ_INT(load(&c, two), 0);
	unsetenv("LOADLAB_WEBHOOK_ALLOW");
	CHECK_EQ_STR(c.webhook_allow, "fd00::/8,127.0.0.1,10.0.0.0/8,hooks.lab");
	CHECK_EQ_INT(load(&c, bad), LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL), "10.0.0.0/40") != NULL);
}

static void test_defaults_and_booleans(void)
{
	struct config c;

	CHECK_EQ_INT(load(&c, NULL), 0);
	CHECK_EQ_STR(c.listen_host, "127.0.0.1");
	CHECK_EQ_INT(c.listen_port, 8080);
	CHECK_EQ_STR(c.db_path, "./var/loadlab.db");
	CHECK_EQ_INT(c.lease_seconds, 60);
	CHECK_EQ_INT(c.max_attempts, 3);
	CHECK(c.public_metrics);
	CHECK(c.store_watch);
	CHECK(!c.public_read);
	CHECK(c.blob_max_bytes == 1LL << 30 && c.blob_quota_bytes == 20LL << 30);
	CHECK(c.blob_retention_s == 7 * 86400 && c.blob_sweep_interval_s == 3600);
	const char *too_big[] = {"--blob-max-bytes", "1099511627777", NULL};
	CHECK_EQ_INT(load(&c, too_big), LL_EINVAL);

	/* A boolean flag alone is true, also before another flag. */
	const char *alone[] = {"--public-read", "--threads", "4", NULL};
	CHECK_EQ_INT(load(&c, alone), 0);
	CHECK(c.public_read);
	CHECK_EQ_INT(c.threads, 4);
	const char *last[] = {"--public-read", NULL};
	CHECK_EQ_INT(load(&c, last), 0);
	CHECK(c.public_read);
	const char *words[] = {"--public-metrics", "off", "--public-read", "yes", NULL};
	CHECK_EQ_INT(load(&c, words), 0);
	CHECK(!c.public_metrics);
	CHECK(c.public_read);
	const char *digits[] = {"--public-metrics=0", "--public-read=1", NULL};
	CHECK_EQ_INT(load(&c, digits), 0);
	CHECK(!c.public_metrics);
	CHECK(c.public_read);
	/* The data dir names the default db; --db wins. */
	const char *dir[] = {"--data-dir", "/d", NULL};
	CHECK_EQ_INT(load(&c, dir), 0);
	CHECK_EQ_STR(c.db_path, "/d/loadlab.db");
	const char *port0[] = {"--listen", "[::1]:0", NULL};
	CHECK_EQ_INT(load(&c, port0), 0);
	CHECK_EQ_STR(c.listen_host, "[::1]");
	CHECK_EQ_INT(c.listen_port, 0);
}

static void test_bad_values(void)
{
	/* Each alone; "--flag value" and "--flag=value" are read alike, and
	 * both are here. */
	static const char *const bad[] = {
		"--threads=0",
		"--threads=257",
		"--threads=4x",
		"--threads=",
		"--lease-seconds=0",
		"--max-wait=301",
		"--public-metrics=maybe",
		"--listen=8080",
		"--listen=:80",
		"--listen=host:65536",
		"--listen=host:-1",
		"--log-format=xml",
		"--tls-cert=/c.pem",
		"--no-such-flag",
		"stray",
		"--threads",
	};
	static const char *const bad_pairs[][3] = {
		{"--threads", "0", NULL},
		{"--listen", "8080", NULL},
	};
	struct config c;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = {bad[i], NULL};
		int rc = load(&c, args);
		if (rc != LL_EINVAL)
			fprintf(stderr, "accepted: %s\n", bad[i]);
		CHECK_EQ_INT(rc, LL_EINVAL);
	}
	for (size_t i = 0; i < sizeof(bad_pairs) / sizeof(bad_pairs[0]); i++)
		CHECK_EQ_INT(load(&c, bad_pairs[i]), LL_EINVAL);
	/* A boolean flag does not swallow a following word that is no boolean. */
	const char *stray[] = {"--public-read", "maybe", NULL};
	CHECK_EQ_INT(load(&c, stray), LL_EINVAL);
}

static void test_env_and_file(void)
{
	char dir[] = "/tmp/loadlab-config-XXXXXX", path[300], command[300];
	struct config c;
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	snprintf(path, sizeof(path), "%s/loadlabd.conf", dir);
	f = fopen(path, "w");
	fprintf(f, "# settings\n  threads = 3  \nmax-attempts=7 # trailing comment\n\n"
		   "public-metrics = false\nlisten = 10.0.0.1:81\n");
	fclose(f);

	const char *with_file[] = {"--config", path, NULL};
	CHECK_EQ_INT(load(&c, with_file), 0);
	CHECK_EQ_INT(c.threads, 3);
	CHECK_EQ_INT(c.max_attempts, 7);
	CHECK(!c.public_metrics);
	CHECK_EQ_STR(c.listen_host, "10.0.0.1");
	CHECK_EQ_INT(c.listen_port, 81);

	/* The environment wins over the file, the command line over both. */
	setenv("LOADLAB_THREADS", "5", 1);
	setenv("LOADLAB_MAX_ATTEMPTS", "9", 1);
	setenv("LOADLAB_PUBLIC_METRICS", "true", 1);
	char config_arg[320];
	snprintf(config_arg, sizeof(config_arg), "--config=%s", path);
	const char *flags_win[] = {config_arg, "--max-attempts", "2", NULL};
	CHECK_EQ_INT(load(&c, flags_win), 0);
	CHECK_EQ_INT(c.threads, 5);
	CHECK_EQ_INT(c.max_attempts, 2);
	CHECK(c.public_metrics);

	/* LOADLAB_CONFIG names the file too; a bad env value is an error. */
	unsetenv("LOADLAB_THREADS");
	unsetenv("LOADLAB_MAX_ATTEMPTS");
	unsetenv("LOADLAB_PUBLIC_METRICS");
	setenv("LOADLAB_CONFIG", path, 1);
	CHECK_EQ_INT(load(&c, NULL), 0);
	CHECK_EQ_INT(c.threads, 3);
	setenv("LOADLAB_PER_IP_LIMIT", "lots", 1);
	CHECK_EQ_INT(load(&c, NULL), LL_EINVAL);
	unsetenv("LOADLAB_PER_IP_LIMIT");
	unsetenv("LOADLAB_CONFIG");

	/* Bad files: an unknown key, a line without '=', a bad value, none. */
	static const char *const bad_files[] = {"colour = blue\n", "threads\n", "threads = many\n"};
	for (size_t i = 0; i < sizeof(bad_files) / sizeof(bad_files[0]); i++) {
		f = fopen(path, "w");
		fputs(bad_files[i], f);
		fclose(f);
		CHECK_EQ_INT(load(&c, with_file), LL_EINVAL);
	}
	const char *missing[] = {"--config", "/nonexistent/loadlabd.conf", NULL};
	CHECK_EQ_INT(load(&c, missing), LL_EIO);

	snprintf(command, sizeof(command), "rm -rf %s", dir);
	CHECK_EQ_INT(system(command), 0);
}

static void test_help(void)
{
	struct config c;
	bool help = false;
	char *argv[] = {"loadlabd", "--threads", "0", "--help", NULL};

	CHECK_EQ_INT(config_load(&c, 4, argv, &help), 0);
	CHECK(help);
}

int main(void)
{
	test_webhook_allow_list();
	/* Only this test's settings count. */
	static const char *const names[] = {
		"LOADLAB_CONFIG",  "LOADLAB_LISTEN",      "LOADLAB_DATA_DIR",       "LOADLAB_DB",
		"LOADLAB_THREADS", "LOADLAB_PUBLIC_READ", "LOADLAB_PUBLIC_METRICS", "LOADLAB_LOG_FORMAT"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unsetenv(names[i]);
	test_every_flag_listed();
	test_both_spellings();
	test_defaults_and_booleans();
	test_bad_values();
	test_env_and_file();
	test_help();
	return check_finish();
}
