/* loadlabd: the loadlab daemon (API.md, "Daemon"). */
#include "admin/admin.h"
#include "agent_builds/agent_builds.h"
#include "rest/routes.h"
#include "schedules/scheduler.h"
#include "server.h"

#include "loadlab/err.h"
#include "loadlab/log.h"
#include "loadlab/redact.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Makes PATH and its missing parents, each 0700 (the folder holds the
 * store and the token files). 0, or -1 with errno set. */
static int make_folders(const char *path)
{
	char partial[sizeof(((struct config *)0)->data_dir)];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(partial)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(partial, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (partial[i] != '/' && partial[i] != '\0')
			continue;
		partial[i] = '\0';
		if (mkdir(partial, 0700) < 0 && errno != EEXIST)
			return -1;
		partial[i] = path[i];
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct server server = {0};
	struct scheduler *scheduler = NULL;
	struct store_options store_options;
	enum log_format format;
	char db_shown[sizeof(server.config.db_path)];
	sigset_t signals;
	bool help;
	int rc, sig;

	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("loadlabd %s\n", LOADLAB_VERSION);
		return 0;
	}
	/* The operators' subcommands (admin.h) start no daemon. */
	if (argc > 1 && strcmp(argv[1], "backup") == 0)
		return admin_backup(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "restore") == 0)
		return admin_restore(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "migrate") == 0)
		return admin_migrate(argc - 1, argv + 1);
	server.routes = &rest_route_table;
	if ((rc = config_load(&server.config, argc, argv, &help)) < 0) {
		fprintf(stderr, "loadlabd: %s\n", err_message(rc));
		return 2;
	}
	if (help) {
		config_usage(stdout);
		return 0;
	}
	log_format_parse(server.config.log_format, &format);
	log_set_format(format);
	log_set_buffered(true); /* a line a request (log.h); unbuffered if it fails */

	/* Everything loadlabd makes is its own: the store, its journals, the
	 * token files, the data folder. */
	umask(077);
	if (make_folders(server.config.data_dir) < 0) {
		fprintf(stderr, "loadlabd: cannot create %s: %s\n", server.config.data_dir, strerror(errno));
		return 1;
	}
	store_options = (struct store_options){
		.lease_ms = server.config.lease_seconds * 1000LL,
		.max_attempts = server.config.max_attempts,
		.backoff_ms = server.config.retry_backoff_seconds * 1000LL,
		.backoff_max_ms = 300 * 1000LL,
		.offline_after_ms = server.config.offline_after_seconds * 1000LL,
		.each_agent_build = server.config.each_agent_build,
	};
	if (store_options.backoff_max_ms < store_options.backoff_ms)
		store_options.backoff_max_ms = store_options.backoff_ms;

	/* Signals are taken by sigwait below; every thread inherits the mask. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	pthread_sigmask(SIG_BLOCK, &signals, NULL);
	signal(SIGPIPE, SIG_IGN);

	rc = store_open(server.config.db_path, &store_options, &server.store);
	if (rc < 0 || (rc = auth_bootstrap(server.store, server.config.data_dir)) < 0 ||
	    (rc = route_blobs_start(&server)) < 0 ||
	    (rc = agent_builds_open(server.config.agent_dir, server.config.data_dir, &server.agent_builds)) <
		    0 ||
	    (rc = summarizer_start(server.store, &server.summarizer)) < 0 ||
	    (rc = report_cache_new(server.store, &server.report_cache)) < 0 ||
	    (rc = http_start(&server)) < 0 ||
	    (rc = scheduler_start(&server,
				  &(struct scheduler_options){server.config.schedule_tick_ms, NULL, NULL},
				  &scheduler)) < 0) {
		fprintf(stderr, "loadlabd: %s\n", err_message(rc));
		report_cache_free(server.report_cache);
		summarizer_stop(server.summarizer);
		blobs_close(server.blobs);
		agent_builds_close(server.agent_builds);
		store_close(server.store);
		return 1;
	}
	log_event(LOG_INFO, "started", "db",
		  redact_secrets(server.config.db_path, db_shown, sizeof(db_shown)), "data_dir",
		  server.config.data_dir, NULL);
	log_flush(); /* what came before "listening" is in the log when it is printed */
	printf("loadlabd: listening on %s://%s:%d\n", server.config.tls_cert[0] ? "https" : "http",
	       server.config.listen_host, server.port);
	fflush(stdout);

	sigwait(&signals, &sig);
	log_event(LOG_INFO, "stopping", "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT", NULL);
	scheduler_stop(scheduler);
	http_stop(&server, 10000);
	blobs_close(server.blobs);
	agent_builds_close(server.agent_builds);
	report_cache_free(server.report_cache); /* after http_stop(): no request waits for it */
	summarizer_stop(server.summarizer);
	store_close(server.store);
	log_event(LOG_INFO, "stopped", NULL);
	return 0;
}
