/*
 * config.h - loadlabd's settings, from defaults, a config file, the
 * environment and the command line, in that order (later wins).
 *
 * Every flag --NAME has an environment variable LOADLAB_NAME (upper case,
 * '-' as '_') and a config-file key NAME ("name = value" lines, '#'
 * comments). API.md, "Daemon", fixes the first seven.
 */
#ifndef LOADLAB_SERVER_CONFIG_H
#define LOADLAB_SERVER_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

struct config {
	char listen_host[64];
	int listen_port;
	char data_dir[1024];
	char db_path[1100]; /* default DATA_DIR/loadlab.db */
	char tls_cert[1024];
	char tls_key[1024];
	char log_format[8];        /* text | json */
	int lease_seconds;         /* 1..3600, default 60 */
	int max_attempts;          /* 1..100, default 3 */
	int retry_backoff_seconds; /* 0..3600, default 10 */
	int offline_after_seconds; /* 1..86400, default 120 */
	int max_wait_seconds;      /* longest lease long-poll, 0..300, default 60 */
	int threads;               /* 1..256, default 8 */
	int per_ip_limit;          /* 1..10000, default 256 */
	int connection_timeout;    /* seconds, 1..3600, default 120 */
	int header_timeout; /* seconds to send headers, 1..3600, default 10 (capped at connection_timeout) */
	int body_timeout;   /* seconds a request body may take in all, 1..86400, default 3600 */
	long long
		body_min_rate; /* bytes/s a body must average after its first 5 s, 0 (off)..1 GiB, default 1024 */
	int max_connections;        /* 16..1000000, default 8000; lowered to fit RLIMIT_NOFILE */
	int max_long_polls;         /* 0..1000000, default 0: connections less a reserve */
	bool each_agent_build;      /* a pe/elf job without "build" builds on each agent (docs/builds.md) */
	bool store_watch;           /* store_watch_tasks() (PostgreSQL LISTEN/NOTIFY), default true */
	bool public_read;           /* GET routes without a token */
	bool public_metrics;        /* /metrics without a token (default true) */
	int schedule_tick_ms;       /* scheduler tick (scheduler.h), 10..60000, default 1000 */
	long long blob_max_bytes;   /* one blob, default 1 GiB (413 beyond) */
	long long blob_quota_bytes; /* all blobs, default 20 GiB (507 beyond) */
	long long answer_memory_bytes; /* built answers held for slow readers at most, default 256 MiB */
	long long min_free_bytes;      /* kept free on the data folder's disk, default 256 MiB */
	long long program_max_bytes; /* a program job's files added up per path, default 4 GiB (413 beyond) */
	long long blob_retention_s;  /* unreferenced, unused blobs removed after this, default 7 days */
	long long blob_sweep_interval_s; /* between retention sweeps, default 3600 */
	char agent_dir[1024];            /* the agent builds served (agent_builds.h); "" none */
	char webhook_allow[4096];        /* the allow list of webhook_target.h, ',' separated */
	int webhook_timeout_s;           /* one webhook POST, 1..300, default 5 */
};

/* Fills CONFIG from defaults, the environment and ARGV (a --config FILE
 * found in either is read before the flags). *RET_HELP is set for --help.
 * LL_EINVAL with a message for a bad flag or value. */
int config_load(struct config *config, int argc, char **argv, bool *ret_help);

/* Writes the --help text. */
void config_usage(FILE *out);

#endif
