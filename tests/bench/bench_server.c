/*
 * bench_server - loadlabd's REST throughput against a libmicrohttpd
 * hello-world floor, measured in one run.
 *
 *   bench_server PATH/TO/loadlabd [AGENTS=32] [SECONDS=5]
 *
 * 1. floor: AGENTS client threads (libcurl, keep-alive) GET a hello-world
 *    libmicrohttpd daemon in this process, configured as loadlabd is
 *    (thread pool of 8 on epoll, response queued after the first call).
 * 2. round trips: the same threads, each an enrolled agent of a real
 *    loadlabd (fresh data folder, SQLite, synchronous=FULL), loop
 *    lease -> heartbeat -> result, until the time is up or the first agent
 *    has no task left (then timed until that moment). Also prints
 *    loadlabd's CPU per request (/proc/PID/stat), the figure that decides
 *    the ratio when the machine's cores are the limit.
 * 3. durable ingestion: each agent holds up to HELD_MAX leases and posts
 *    results only; every 200 answer is a committed row. Timed until the
 *    first agent runs out of leases, so that all AGENTS clients post
 *    through the whole window.
 * 4. reference for durability: one thread committing single-row SQLite
 *    transactions (WAL, synchronous=FULL) in the daemon's data folder, one
 *    fsync each: the best a server without group commit could do on this
 *    disk. Measured for half the phase time right before ingestion and
 *    half right after, and averaged: this machine's fsync rate moves
 *    several-fold within a minute (other jobs share the disk), so a
 *    reference taken at another moment than the figure means nothing.
 * Prints requests/s for each and the ratios to the floor and to the
 * reference, and the store's writes per commit from /metrics.
 *
 * With LOADLAB_BENCH_URLS=URL[,URL...] and LOADLAB_BENCH_DATA_DIR=DIR
 * (tests/bench/bench_pg.py: replicas on one PostgreSQL database) it starts
 * no loadlabd: agent i talks to URL i mod n, the tokens are read from
 * DIR, loadlabd's CPU is not measured.
 */
#include <curl/curl.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loadlab/plat.h"

#define MAX_AGENTS 256
/* Jobs (one task per agent each) submitted per second of the round-trip
 * phase. Until pass 6 the phase had 400 jobs for 5 s: the agents ran out of
 * tasks before the end at 7,680 requests/s, which was then the figure. */
#define TRIP_JOBS_PER_SECOND 220
/* Leases each agent takes before the ingestion phase. */
#define HELD_MAX 400

static char base_url[128];
/* loadlabd's pid once started (0 before: the floor's phase). */
static pid_t daemon_pid;
/* loadlabd's CPU per request in the last phase, in microseconds. */
static double phase_cpu_us;
static char admin_token[160], enroll_token[160];
static int seconds = 5;

struct reply {
	char data[65536];
	size_t len;
};

static size_t collect(char *p, size_t size, size_t n, void *userdata)
{
	struct reply *r = userdata;
	size_t take = size * n;

	if (take > sizeof(r->data) - 1 - r->len)
		take = sizeof(r->data) - 1 - r->len;
	memcpy(r->data + r->len, p, take);
	r->len += take;
	r->data[r->len] = '\0';
	return size * n;
}

/* One request on a reused handle; returns the HTTP status (0 on error). */
static long call(CURL *curl, const char *method, const char *url, const char *token, const char *body,
		 struct reply *out)
{
	struct curl_slist *headers = NULL;
	char auth[200];
	long status = 0;

	out->len = 0;
	out->data[0] = '\0';
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, out);
	if (token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		headers = curl_slist_append(headers, auth);
	}
	headers = curl_slist_append(headers, "Content-Type: application/json");
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
	if (body) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	} else {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, NULL);
		curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	}
	if (curl_easy_perform(curl) == CURLE_OK)
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(headers);
	return status;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long json_int(const char *text, const char *key)
{
	char pattern[64];
	const char *p;

	snprintf(pattern, sizeof(pattern), "\"%s\":", key);
	p = strstr(text, pattern);
	return p ? strtol(p + strlen(pattern), NULL, 10) : -1;
}

/* ---- the floor: hello world on libmicrohttpd, as loadlabd configures it */

static enum MHD_Result hello(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			     const char *version, const char *data, size_t *size, void **state)
{
	static int first;
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!*state) {
		*state = &first; /* queue on a later call: keeps keep-alive */
		return MHD_YES;
	}
	r = MHD_create_response_from_buffer(17, (void *)"{\"hello\":\"world\"}", MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

struct worker {
	pthread_t thread;
	int kind; /* 0 floor, 1 round trips, 2 ingestion */
	char token[160];
	char base[128]; /* the daemon this worker talks to */
	long agent_id;
	long requests, results, errors;
};

static volatile int go, stop_flag, finished;
/* The daemons' URLs (LOADLAB_BENCH_URLS; else the one started here). */
static char urls[8][128];
static int nurls;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	CURL *curl = curl_easy_init();
	struct reply *r = malloc(sizeof(*r));
	char url[256], body[512];
	long(*held)[2] = malloc(sizeof(long[HELD_MAX][2]));
	int nheld = 0;

	curl_easy_setopt(curl, CURLOPT_TIMEOUT, 30L);
	while (!go)
		usleep(1000);
	if (w->kind == 2) {
		/* Take a stock of leases first (not timed by this thread's count). */
		snprintf(url, sizeof(url), "%s/api/v1/lease", w->base);
		while (nheld < HELD_MAX && call(curl, "POST", url, w->token, "{}", r) == 200) {
			held[nheld][0] = json_int(r->data, "task_id");
			held[nheld][1] = json_int(r->data, "attempt");
			nheld++;
		}
		__atomic_fetch_add(&go, 1, __ATOMIC_SEQ_CST);
		while (go < 1000)
			usleep(1000);
	}
	while (!stop_flag) {
		if (w->kind == 0) {
			snprintf(url, sizeof(url), "%s/hello", w->base);
			if (call(curl, "GET", url, NULL, NULL, r) == 200)
				w->requests++;
			else
				w->errors++;
		} else if (w->kind == 1) {
			long task, attempt;
			snprintf(url, sizeof(url), "%s/api/v1/lease", w->base);
			if (call(curl, "POST", url, w->token, "{}", r) != 200) {
				/* Out of tasks: the window ends with the first agent's
				 * (the rate counted until then, not to the phase's end). */
				stop_flag = 1;
				break;
			}
			task = json_int(r->data, "task_id");
			attempt = json_int(r->data, "attempt");
			snprintf(url, sizeof(url), "%s/api/v1/agents/%ld/heartbeat", w->base, w->agent_id);
			if (call(curl, "POST", url, w->token, "{}", r) != 200)
				w->errors++;
			snprintf(url, sizeof(url), "%s/api/v1/tasks/%ld/result", w->base, task);
			snprintf(body, sizeof(body),
				 "{\"attempt\":%ld,\"facts\":{\"os\":\"bench\"},\"variants\":[{\"name\":"
				 "\"default\","
				 "\"warm\":{\"samples_us\":[1001,1002,999,1000,1003]}}]}",
				 attempt);
			if (call(curl, "POST", url, w->token, body, r) == 200)
				w->results++;
			else
				w->errors++;
			w->requests += 3;
		} else {
			if (!nheld) {
				stop_flag = 1; /* the window ends with the first agent's stock */
				break;
			}
			nheld--;
			snprintf(url, sizeof(url), "%s/api/v1/tasks/%ld/result", w->base, held[nheld][0]);
			snprintf(body, sizeof(body),
				 "{\"attempt\":%ld,\"facts\":{\"os\":\"bench\"},\"variants\":[{\"name\":"
				 "\"default\","
				 "\"warm\":{\"samples_us\":[1001,1002,999,1000,1003]}}]}",
				 held[nheld][1]);
			if (call(curl, "POST", url, w->token, body, r) == 200)
				w->results++;
			else
				w->errors++;
			w->requests++;
		}
	}
	free(r);
	free(held);
	curl_easy_cleanup(curl);
	__atomic_fetch_add(&finished, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Runs AGENTS workers of KIND for the bench's seconds; returns the rate. */
static double run_phase(struct worker *workers, int agents, int kind, const char *what, long *ret_results)
{
	long requests = 0, results = 0, errors = 0;
	double start, elapsed, cpu_before = daemon_pid ? plat_process_cpu_s(daemon_pid) : 0;

	go = 0;
	stop_flag = 0;
	finished = 0;
	for (int i = 0; i < agents; i++) {
		workers[i].kind = kind;
		snprintf(workers[i].base, sizeof(workers[i].base), "%s",
			 kind == 0 ? base_url : urls[i % nurls]);
		workers[i].requests = workers[i].results = workers[i].errors = 0;
		pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
	}
	go = 1;
	if (kind == 2) {
		while (go < 1 + agents)
			usleep(1000);
		go = 1000;
	}
	start = now_s();
	/* Until the time is up or a worker ran out of work. */
	while (now_s() - start < seconds && !stop_flag)
		usleep(1000);
	stop_flag = 1;
	for (int i = 0; i < agents; i++)
		pthread_join(workers[i].thread, NULL);
	elapsed = now_s() - start; /* the requests under way at the stop count */
	for (int i = 0; i < agents; i++) {
		requests += workers[i].requests;
		results += workers[i].results;
		errors += workers[i].errors;
	}
	printf("%-34s %9.0f requests/s  (%ld requests, %ld results, %ld errors, %.1f s)\n", what,
	       requests / elapsed, requests, results, errors, elapsed);
	phase_cpu_us = 0;
	if (daemon_pid && requests) {
		phase_cpu_us = (plat_process_cpu_s(daemon_pid) - cpu_before) * 1e6 / (double)requests;
		printf("%-34s %9.0f us of loadlabd CPU per request\n", "", phase_cpu_us);
	}
	if (ret_results)
		*ret_results = results;
	return requests / elapsed;
}

static int read_token(const char *dir, const char *name, char *out, size_t size)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f || !fgets(out, (int)size, f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* Single-row durable commits per second in DIR, for DURATION seconds. */
static double sqlite_commit_rate(const char *dir, double duration)
{
	char path[512];
	sqlite3 *db;
	sqlite3_stmt *insert;
	double start;
	long n = 0;

	snprintf(path, sizeof(path), "%s/reference.db", dir);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return 0;
	sqlite3_exec(db,
		     "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
		     "CREATE TABLE t (body TEXT)",
		     NULL, NULL, NULL);
	sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?)", -1, &insert, NULL);
	start = now_s();
	while (now_s() - start < duration) {
		sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
		sqlite3_bind_text(insert, 1, "{\"attempt\":1,\"facts\":{},\"variants\":[]}", -1,
				  SQLITE_STATIC);
		sqlite3_step(insert);
		sqlite3_reset(insert);
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		n++;
	}
	sqlite3_finalize(insert);
	sqlite3_close(db);
	return n / (now_s() - start);
}

/* Submits COUNT jobs of one task per agent (each_agent), timed. */
static int submit_jobs(CURL *curl, struct reply *r, int count, int agents)
{
	double start = now_s();
	char url[256];

	snprintf(url, sizeof(url), "%s/api/v1/jobs", base_url);
	for (int j = 0; j < count; j++)
		if (call(curl, "POST", url, admin_token,
			 "{\"name\":\"bench\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
			 "\"variants\":[\"default\"],\"matrix\":{\"each_agent\":{}}}",
			 r) != 201) {
			fprintf(stderr, "bench_server: submit failed: %s\n", r->data);
			return -1;
		}
	printf("%-34s %9.0f jobs/s (%d jobs of %d tasks)\n", "setup: job submission",
	       count / (now_s() - start), count, agents);
	return 0;
}

int main(int argc, char **argv)
{
	int agents = argc > 2 ? atoi(argv[2]) : 32;
	struct worker *workers;
	struct MHD_Daemon *hello_daemon;
	const union MHD_DaemonInfo *info;
	char data_dir[512] = "/tmp/loadlab-bench-XXXXXX", line[600], url[256], body[256];
	const char *given = getenv("LOADLAB_BENCH_URLS");
	double floor_rate, trip_rate, ingest_rate, reference_rate, reference_before, reference_after;
	double trip_cpu_us, ingest_cpu_us;
	long ingest_results, commits, writes, syncs;
	int pipe_fd[2];
	pid_t pid;
	FILE *out;
	CURL *curl;
	struct reply *r = malloc(sizeof(*r));

	if (argc < 2 || agents < 1 || agents > MAX_AGENTS) {
		fprintf(stderr, "usage: bench_server PATH/TO/loadlabd [AGENTS 1..%d] [SECONDS]\n",
			MAX_AGENTS);
		return 2;
	}
	if (argc > 3)
		seconds = atoi(argv[3]);
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	workers = calloc((size_t)agents, sizeof(*workers));

	hello_daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL, hello,
					NULL, MHD_OPTION_THREAD_POOL_SIZE, 8u,
					MHD_OPTION_PER_IP_CONNECTION_LIMIT, 1000u, MHD_OPTION_END);
	info = MHD_get_daemon_info(hello_daemon, MHD_DAEMON_INFO_BIND_PORT);
	snprintf(base_url, sizeof(base_url), "http://127.0.0.1:%u", info->port);
	printf("loadlabd REST benchmark: %d agents, %d s per phase, %ld cores\n", agents, seconds,
	       sysconf(_SC_NPROCESSORS_ONLN));
	floor_rate = run_phase(workers, agents, 0, "floor: libmicrohttpd hello world", NULL);
	MHD_stop_daemon(hello_daemon);

	if (given) {
		for (const char *u = given; *u && nurls < 8; u += strcspn(u, ","), u += *u == ',') {
			int n = (int)strcspn(u, ",");
			snprintf(urls[nurls++], sizeof(urls[0]), "%.*s", n, u);
		}
		snprintf(data_dir, sizeof(data_dir), "%s", getenv("LOADLAB_BENCH_DATA_DIR"));
		pid = 0;
		goto started;
	}
	if (!mkdtemp(data_dir) || pipe(pipe_fd) < 0)
		return 1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(pipe_fd[1], 1);
		dup2(null, 2);
		/* Its agents are played here, none a builder: each builds (docs/builds.md). */
		execl(argv[1], argv[1], "--listen", "127.0.0.1:0", "--data-dir", data_dir, "--per-ip-limit",
		      "1000", "--lease-seconds", "600", "--each-agent-build", (char *)NULL);
		_exit(127);
	}
	close(pipe_fd[1]);
	daemon_pid = pid;
	out = fdopen(pipe_fd[0], "r");
	if (!fgets(line, sizeof(line), out) || !strstr(line, "listening on ")) {
		fprintf(stderr, "bench_server: loadlabd did not start\n");
		return 1;
	}
	snprintf(base_url, sizeof(base_url), "%s", strstr(line, "listening on ") + 13);
	base_url[strcspn(base_url, "\n")] = '\0';
	snprintf(urls[0], sizeof(urls[0]), "%s", base_url);
	nurls = 1;
started:
	snprintf(base_url, sizeof(base_url), "%s", urls[0]);
	read_token(data_dir, "admin.token", admin_token, sizeof(admin_token));
	read_token(data_dir, "enroll.token", enroll_token, sizeof(enroll_token));

	curl = curl_easy_init();
	for (int i = 0; i < agents; i++) {
		char *t;
		snprintf(url, sizeof(url), "%s/api/v1/agents/enroll", base_url);
		snprintf(body, sizeof(body), "{\"name\":\"bench%d\",\"facts\":{\"os\":\"bench\"}}", i);
		if (call(curl, "POST", url, enroll_token, body, r) != 201 ||
		    !(t = strstr(r->data, "\"token\":\""))) {
			fprintf(stderr, "bench_server: enroll failed: %s\n", r->data);
			return 1;
		}
		workers[i].agent_id = json_int(r->data, "id");
		snprintf(workers[i].token, sizeof(workers[i].token), "%.*s", 70, t + 9);
	}
	/* Tasks for about 20,000 requests/s over the phase (each agent's are
	 * pinned to it, TRIP_JOBS_PER_SECOND a second of the phase). */
	if (submit_jobs(curl, r, TRIP_JOBS_PER_SECOND * seconds, agents) < 0)
		return 1;
	trip_rate = run_phase(workers, agents, 1, "loadlabd: lease+heartbeat+result", NULL);
	trip_cpu_us = phase_cpu_us;
	if (submit_jobs(curl, r, 300, agents) < 0)
		return 1;
	reference_before = sqlite_commit_rate(data_dir, seconds / 2.0);
	ingest_rate = run_phase(workers, agents, 2, "loadlabd: durable result ingestion", &ingest_results);
	ingest_cpu_us = phase_cpu_us;
	reference_after = sqlite_commit_rate(data_dir, seconds / 2.0);
	reference_rate = (reference_before + reference_after) / 2;

	snprintf(url, sizeof(url), "%s/metrics", base_url);
	call(curl, "GET", url, NULL, NULL, r);
	{
		const char *c = strstr(r->data, "\nloadlab_store_commits_total ");
		const char *w = strstr(r->data, "\nloadlab_store_writes_total ");
		const char *f = strstr(r->data, "\nloadlab_store_syncs_total ");
		commits = c ? strtol(c + 29, NULL, 10) : 0;
		writes = w ? strtol(w + 28, NULL, 10) : 0;
		syncs = f ? strtol(f + 27, NULL, 10) : 0;
	}
	printf("%-34s %9.0f commits/s  (%.0f before ingestion, %.0f after)\n", "reference: one fsync per row",
	       reference_rate, reference_before, reference_after);
	printf("\nratios (same clients, same machine, same run):\n");
	printf("  round trips: %.3f  (%.0f lease+heartbeat+result cycles/s)\n", trip_rate / floor_rate,
	       trip_rate / 3);
	printf("  durable ingestion: %.3f of the floor, %.2f x one-fsync-per-row  (%.0f results/s)\n",
	       ingest_rate / floor_rate, reference_rate > 0 ? ingest_rate / reference_rate : 0.0,
	       ingest_rate);
	printf("  group commit: %ld writes in %ld transactions, %ld fsyncs (%.1f writes per fsync)\n", writes,
	       commits, syncs, syncs ? (double)writes / syncs : 0.0);
	/* For `make bench` (bench_table.py): name figure unit reference ratio goal. */
	printf("BENCH round_trips %.0f requests/s %.0f %.4f ratio>=0.25\n", trip_rate, floor_rate,
	       trip_rate / floor_rate);
	printf("BENCH durable_ingestion %.0f results/s %.0f %.3f ratio>=3\n", ingest_rate, reference_rate,
	       reference_rate > 0 ? ingest_rate / reference_rate : 0.0);
	/* The CPU loadlabd spends on a request (its summarizer's share of a
	 * result included): what the round trips' ratio mostly depends on when
	 * the machine's cores are the limit. */
	printf("BENCH round_trip_cpu %.1f us/request - - -\n", trip_cpu_us);
	printf("BENCH ingestion_cpu %.1f us/result - - -\n", ingest_cpu_us);
	printf("BENCH writes_per_commit %.2f writes - - -\n", commits ? (double)writes / commits : 0.0);
	printf("BENCH writes_per_fsync %.2f writes - - -\n", syncs ? (double)writes / syncs : 0.0);
	curl_easy_cleanup(curl);
	if (given)
		return 0;
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	snprintf(line, sizeof(line), "rm -rf %s", data_dir);
	if (system(line) != 0)
		return 1;
	free(r);
	free(workers);
	return 0;
}
