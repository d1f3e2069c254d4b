/*
 * update.h - the agent updates itself to the build loadlabd serves for its
 * OS and architecture (docs/agent.md, "Updates"; server: loadlabd
 * --agent-dir, GET /api/v1/agent-builds).
 *
 * Between tasks (at start and then at most every --update-check-seconds)
 * the fleet member reads the list; when the build wanted for its OS/ARCH
 * has another SHA-256 than its own file, it
 *
 *  0. only when the admin gave this agent the lab's release key
 *     (DATA_DIR/release-keys.pub, loadlab/release_sig.h): without it, or
 *     where there is no Ed25519 (the Windows agent), updates stay off;
 *     the list's "signature" of the build must verify against it, else
 *     nothing is downloaded (the build is refused until the list
 *     changes);
 *  1. downloads it into DATA_DIR/update/ (at most the size the list says,
 *     and never more than UPDATE_MAX_BYTES), checks its size and SHA-256
 *     against the list (nothing the server sends names a path), and the
 *     signature against the SHA-256 of the bytes it holds, before
 *     anything runs them;
 *  2. tries it: runs "NEW update-trial" (cmd/cmd_update_trial.c), which must
 *     start, read agent.json, authenticate with the server (GET
 *     /api/v1/agent-builds) and print UPDATE_TRIAL_OK within
 *     UPDATE_TRIAL_SECONDS. A build that fails (not a program of this
 *     system, exits at once, cannot enroll) is never installed and its
 *     digest is not tried again (DATA_DIR/update/refused.json) until the
 *     wanted digest changes;
 *  3. installs it: writes the marker DATA_DIR/update/pending.json
 *     {"from", "to", "exe", "previous", "starts"}, copies EXE to
 *     EXE.previous (the last good copy) and puts the new file at EXE
 *     (update_plat_install());
 *  4. restarts: the fleet member returns FLEET_EXIT_RESTART; cmd_member
 *     calls update_restart() (Linux: a forked watcher, then execv of EXE,
 *     same PID, so systemd sees no exit; Windows console: a new process),
 *     the Windows service hands over to EXE.previous's "service
 *     update-watch" (service_update_win32.c), which starts the service
 *     again and watches it.
 *
 * The new copy confirms by its first call the server answers (the list
 * read right after its start, or its lease request: update_confirm()):
 * the marker goes. It must do so within
 * --update-confirm-seconds (default UPDATE_CONFIRM_SECONDS) of its start
 * and within UPDATE_MAX_STARTS starts; else the previous copy is put back
 * (update_rollback()), its digest refused, and the agent restarts as the
 * previous copy. The watchers (the previous copy's code) do the same
 * from outside: a new copy that crashes at start is rolled back too.
 *
 * What the server is told: the lease request after each start, and the
 * next one after a change, carries "agent_update" {"state": "on" | "off"
 * | "refused", "reason": TEXT, "sha256": the refused build's digest or
 * null}, shown by GET /api/v1/agents (docs/agent.md, "Signed builds").
 */
#ifndef LOADLAB_AGENT_UPDATE_H
#define LOADLAB_AGENT_UPDATE_H

#include "loadlab/plat.h"
#include "loadlab/rest_client.h"

#include <stdbool.h>

/* The largest build downloaded. */
#define UPDATE_MAX_BYTES (256LL << 20)
/* The seconds a trial run may take. */
#define UPDATE_TRIAL_SECONDS 60
/* What a trial prints on success. */
#define UPDATE_TRIAL_OK "loadlab-agent update-trial ok"
/* Defaults of --update-check-seconds and --update-confirm-seconds. */
#define UPDATE_CHECK_SECONDS 300
#define UPDATE_CONFIRM_SECONDS 120
/* The longest reason "agent_update" carries (longer ones are cut). */
#define UPDATE_REASON_MAX 300
/* Starts of a new copy without a confirmation before it is rolled back. */
#define UPDATE_MAX_STARTS 3

/* This agent's binary. */
struct update_self {
	char exe[PLAT_MAX_PATH + 1];
	char sha256[65];
	long long size;
	const char *os, *arch, *version; /* static strings */
};

/* What the fleet member keeps between checks. */
struct update_state {
	struct update_self self;
	const char *data_dir, *server;
	long long check_ms;      /* --update-check-seconds in ms; 0: never check */
	long long confirm_ms;    /* --update-confirm-seconds in ms */
	long long next_check_ms; /* monotonic */
	long long deadline_ms;   /* monotonic; 0 unless a new copy awaits its confirmation */
	bool reported;           /* the version went with a lease request */
	/* What "agent_update" says (update_lease_fields()); sent once after
	 * each change. */
	char update_state[16], update_reason[UPDATE_REASON_MAX], update_sha256[65];
	bool update_sent;
};

/* The fleet member's start: fills STATE (CHECK_S, CONFIRM_S: the
 * options) and calls update_start(); true when the agent must restart
 * (a rollback). An agent that cannot read its own file goes on without
 * updates (logged update_disabled). */
bool update_begin(struct update_state *state, const char *data_dir, const char *server, long long check_s,
		  long long confirm_s);

/* Between tasks: rolls an overdue new copy back, else update_check();
 * true when the agent must restart. */
bool update_between_tasks(struct update_state *state, struct rest_client *http);

/* Fills SELF: this program's path, size and SHA-256, its OS, ARCH and
 * version. */
int update_self_read(struct update_self *self);

/* At the fleet member's start: reads SELF, then the marker. A marker for
 * this digest counts one more start (and rolls back past
 * UPDATE_MAX_STARTS: LL_ESTATE, *RET_RESTART set); a marker for another
 * digest means this copy was put back: the other is refused and the
 * marker removed. */
int update_start(struct update_state *state, bool *ret_restart);

/* The JSON members a lease request adds, "agent_version" and
 * "agent_sha256" (once per start), "agent_update" (after each change),
 * into OUT (",\"agent_version\":...": empty when all were sent). The
 * caller marks them sent (update_lease_sent()) when the server took
 * them. At most UPDATE_LEASE_FIELDS_MAX bytes. */
#define UPDATE_LEASE_FIELDS_MAX 1024
void update_lease_fields(struct update_state *state, char *out, size_t size);

/* The server took (or refused as unknown) the lease request's members. */
void update_lease_sent(struct update_state *state);

/* The server answered this copy (a lease's 200 or 204, the list's 200):
 * a new copy is confirmed. */
void update_confirm(struct update_state *state);

/* True when a new copy's confirmation is overdue (then roll back). */
bool update_overdue(const struct update_state *state);

/* Between tasks: when a check is due, reads the list and, for a wanted
 * build of another digest, downloads, tries and installs it; *RET_RESTART
 * is then set and the caller restarts. Errors are logged and leave the
 * agent as it was (0 returned), except LL_ESTATE for a stop. */
int update_check(struct update_state *state, struct rest_client *http, bool *ret_restart);

/* Puts EXE.previous back in place of EXE and refuses the current
 * digest; the caller restarts. */
int update_rollback(struct update_state *state, const char *reason);

/* Puts EXE.previous back in place of EXE, refuses SHA256 (EXE's digest)
 * with REASON and removes the marker: update_rollback() and the
 * watchers' rollback. */
int update_put_back(const char *data_dir, const char *exe, const char *sha256, const char *reason);

/* A watcher, run by the previous copy while the new one starts (Linux: a
 * process forked before the new copy is executed; a Windows service: the
 * previous copy's "service update-watch"). Returns 0 when there is no
 * marker or it goes (the new copy confirmed, or rolled back by itself),
 * 1 when the new copy must be rolled back: ALIVE(CONTEXT) said it ended
 * first, or CONFIRM_MS (and a margin) passed; then RET_TO holds its
 * digest and REASON says why. */
int update_watch(const char *data_dir, long long confirm_ms, bool (*alive)(void *context), void *context,
		 char ret_to[65], char *reason, size_t size);

/* Restarts as EXE with ARGV (ARGV[0] replaced by EXE). POSIX: forks a
 * watcher (update_watch(), CONFIRM_MS; on a rollback it ends a new copy
 * still running, puts the previous one back and, unless systemd runs the
 * agent ($INVOCATION_ID: the unit's Restart= starts it again), executes
 * it itself), then execv() in this process (returns only on failure).
 * Windows (console): a new process with the same command line, no
 * watcher (0: the caller exits). */
int update_restart(const char *exe, int argc, char **argv, const char *data_dir, long long confirm_ms);

/* OS backends (update_posix.c, update_win32.c), below update.c. */

#ifdef _WIN32
#define UPDATE_PLAT_OS "windows"
#else
#define UPDATE_PLAT_OS "linux"
#endif

/* Replaces EXE (which may be running) by NEW_FILE, keeping the old one as
 * PREVIOUS (an older PREVIOUS goes). */
int update_plat_install(const char *exe, const char *new_file, const char *previous);

/* Puts PREVIOUS back as EXE (EXE may be running; PREVIOUS is kept). */
int update_plat_restore(const char *exe, const char *previous);

#endif
