/* update.c - the agent updates itself by digest (update.h). */
#include "update.h"
#include "measure/plat_churn.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/release_sig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* loadlabd reads a build's version from this marker (server/agent_builds/
 * agent_builds.h); update_self_read() uses it, so it stays in the file. */
#define VERSION_MARKER "loadlab-agent-version="
const char update_version_marker[] = VERSION_MARKER LOADLAB_VERSION;

#if defined(__x86_64__) || defined(_M_X64)
#define UPDATE_ARCH "x86_64"
#elif defined(__i386__) || defined(_M_IX86)
#define UPDATE_ARCH "i686"
#elif defined(__aarch64__)
#define UPDATE_ARCH "aarch64"
#else
#define UPDATE_ARCH "unknown"
#endif

/* Refused digests kept, newest last. */
#define REFUSED_MAX 16
#define MARKER_LIMIT 16384

static void update_path(const char *data_dir, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s%cupdate%c%s", data_dir, plat_path_separator, plat_path_separator, name);
}

/* EXE's last good copy: loadlab-agent.previous, loadlab-agent.previous.exe. */
static void previous_path(const char *exe, char *out, size_t size)
{
	size_t n = strlen(exe);

	if (n > 4 && strcmp(exe + n - 4, ".exe") == 0)
		snprintf(out, size, "%.*s.previous.exe", (int)(n - 4), exe);
	else
		snprintf(out, size, "%s.previous", exe);
}

static bool hex64(const char *s)
{
	return s && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

int update_self_read(struct update_self *self)
{
	int rc;

	memset(self, 0, sizeof(*self));
	self->os = UPDATE_PLAT_OS;
	self->arch = UPDATE_ARCH;
	self->version = update_version_marker + strlen(VERSION_MARKER);
	if ((rc = plat_churn_self_path(self->exe, sizeof(self->exe))) < 0 ||
	    (rc = plat_file_sha256(self->exe, self->sha256, &self->size)) < 0)
		return rc;
	return 0;
}

/* The JSON object in DATA_DIR/update/NAME, NULL when there is none or it
 * is damaged (then it is removed: it only ever held this agent's notes). */
static cJSON *read_note(const char *data_dir, const char *name)
{
	char path[PLAT_MAX_PATH + 64], *text = NULL;
	size_t len = 0;
	cJSON *root = NULL;

	update_path(data_dir, name, path, sizeof(path));
	if (!plat_file_exists(path) || plat_read_file(path, MARKER_LIMIT, &text, &len) < 0)
		return NULL;
	if (json_parse_object(text, len, 8, &root) < 0) {
		log_event(LOG_WARN, "update_note_damaged", "file", path, NULL);
		plat_remove_file(path);
	}
	free(text);
	return root;
}

static int write_note(const char *data_dir, const char *name, const cJSON *note)
{
	char dir[PLAT_MAX_PATH + 64], path[PLAT_MAX_PATH + 64];
	int rc;

	snprintf(dir, sizeof(dir), "%s%cupdate", data_dir, plat_path_separator);
	update_path(data_dir, name, path, sizeof(path));
	if ((rc = plat_mkdirs_private(dir)) < 0)
		return rc;
	return json_write_file_atomic(path, note, false, true);
}

static void remove_note(const char *data_dir, const char *name)
{
	char path[PLAT_MAX_PATH + 64];

	update_path(data_dir, name, path, sizeof(path));
	plat_remove_file(path);
}

static bool is_refused(const char *data_dir, const char *sha256)
{
	cJSON *note = read_note(data_dir, "refused.json"), *item;
	bool found = false;

	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(note, "sha256"))
		if (cJSON_IsString(item) && strcmp(item->valuestring, sha256) == 0)
			found = true;
	cJSON_Delete(note);
	return found;
}

/* Adds SHA256 to the refused digests (the oldest go past REFUSED_MAX). */
static void refuse(const char *data_dir, const char *sha256, const char *reason)
{
	cJSON *note = read_note(data_dir, "refused.json"), *list;

	log_event(LOG_WARN, "update_refused", "sha256", sha256, "reason", reason, NULL);
	if (is_refused(data_dir, sha256)) {
		cJSON_Delete(note);
		return;
	}
	if (!note)
		note = cJSON_CreateObject();
	list = cJSON_GetObjectItemCaseSensitive(note, "sha256");
	if (!cJSON_IsArray(list)) {
		cJSON_DeleteItemFromObjectCaseSensitive(note, "sha256");
		list = cJSON_AddArrayToObject(note, "sha256");
	}
	while (list && cJSON_GetArraySize(list) >= REFUSED_MAX)
		cJSON_DeleteItemFromArray(list, 0);
	if (list && cJSON_AddItemToArray(list, cJSON_CreateString(sha256)))
		write_note(data_dir, "refused.json", note);
	cJSON_Delete(note);
}

int update_put_back(const char *data_dir, const char *exe, const char *sha256, const char *reason)
{
	char previous[PLAT_MAX_PATH + 32];
	int rc;

	previous_path(exe, previous, sizeof(previous));
	log_event(LOG_WARN, "update_rolled_back", "sha256", sha256, "previous", previous, "reason", reason,
		  NULL);
	if ((rc = update_plat_restore(exe, previous)) < 0) {
		log_event(LOG_ERROR, "update_rollback_failed", "reason", err_message(rc), NULL);
		return rc;
	}
	refuse(data_dir, sha256, reason);
	remove_note(data_dir, "pending.json");
	return 0;
}

int update_rollback(struct update_state *st, const char *reason)
{
	int rc = update_put_back(st->data_dir, st->self.exe, st->self.sha256, reason);

	if (rc == 0)
		st->deadline_ms = 0;
	return rc;
}

int update_watch(const char *data_dir, long long confirm_ms, bool (*alive)(void *context), void *context,
		 char ret_to[65], char *reason, size_t size)
{
	long long started = clock_monotonic_us() / 1000;
	cJSON *marker = read_note(data_dir, "pending.json");
	const char *to = NULL;

	if (!marker || json_get_string(marker, "to", 64, true, NULL, &to) < 0 || !hex64(to)) {
		cJSON_Delete(marker);
		return 0;
	}
	memcpy(ret_to, to, 65);
	cJSON_Delete(marker);
	/* The new copy has CONFIRM_MS from its start; its start may take a
	 * while: a quarter more, and 10 s. */
	while (clock_monotonic_us() / 1000 - started < confirm_ms + confirm_ms / 4 + 10000) {
		char path[PLAT_MAX_PATH + 64];
		update_path(data_dir, "pending.json", path, sizeof(path));
		if (!plat_file_exists(path))
			return 0;
		if (!alive(context)) {
			/* Gone: one last look, it may have confirmed just before. */
			if (!plat_file_exists(path))
				return 0;
			snprintf(reason, size, "the new copy ended before it reached the server");
			return 1;
		}
		plat_sleep_ms(200);
	}
	snprintf(reason, size, "the new copy did not reach the server within %lld s", confirm_ms / 1000);
	return 1;
}

int update_start(struct update_state *st, bool *ret_restart)
{
	cJSON *marker;
	const char *to = NULL;
	long long starts = 0;
	int rc;

	*ret_restart = false;
	if ((rc = update_self_read(&st->self)) < 0)
		return rc;
	log_event(LOG_INFO, "agent_binary", "version", st->self.version, "sha256", st->self.sha256, "exe",
		  st->self.exe, NULL);
	if (!(marker = read_note(st->data_dir, "pending.json")))
		return 0;
	if (json_get_string(marker, "to", 64, true, NULL, &to) < 0 || !hex64(to)) {
		remove_note(st->data_dir, "pending.json");
		cJSON_Delete(marker);
		return 0;
	}
	json_get_int(marker, "starts", 0, 1000, false, 0, &starts);
	if (strcmp(to, st->self.sha256) != 0) {
		/* This copy is not the new one: it was put back (a Windows
		 * service's watcher, or by hand). */
		char refused[65];
		snprintf(refused, sizeof(refused), "%s", to);
		remove_note(st->data_dir, "pending.json");
		cJSON_Delete(marker);
		refuse(st->data_dir, refused,
		       "the previous copy is running again: the new one did not confirm");
		return 0;
	}
	starts++;
	if (starts > UPDATE_MAX_STARTS) {
		cJSON_Delete(marker);
		if ((rc = update_rollback(st, "the new copy started too often without reaching the server")) <
		    0)
			return rc;
		*ret_restart = true;
		return 0;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(marker, "starts");
	cJSON_AddNumberToObject(marker, "starts", (double)starts);
	write_note(st->data_dir, "pending.json", marker);
	cJSON_Delete(marker);
	st->deadline_ms = clock_monotonic_us() / 1000 + st->confirm_ms;
	log_event(LOG_INFO, "update_started", "sha256", st->self.sha256, "reason",
		  "a new copy: it must reach the server to stay", NULL);
	return 0;
}

/* Says STATE and REASON (and SHA256, NULL: none) to the server with the
 * next lease request, when they differ from what it was told; logged
 * then too. */
static void update_say(struct update_state *st, const char *state, const char *reason, const char *sha256)
{
	char cut[UPDATE_REASON_MAX];

	snprintf(cut, sizeof(cut), "%s", reason);
	if (strcmp(st->update_state, state) == 0 && strcmp(st->update_reason, cut) == 0 &&
	    strcmp(st->update_sha256, sha256 ? sha256 : "") == 0)
		return;
	snprintf(st->update_state, sizeof(st->update_state), "%s", state);
	snprintf(st->update_reason, sizeof(st->update_reason), "%s", cut);
	snprintf(st->update_sha256, sizeof(st->update_sha256), "%s", sha256 ? sha256 : "");
	st->update_sent = false;
	if (strcmp(state, "off") == 0)
		log_event(LOG_WARN, "update_disabled", "reason", cut, NULL);
	else if (strcmp(state, "on") == 0)
		log_event(LOG_INFO, "update_enabled", "reason", cut, NULL);
}

void update_lease_fields(struct update_state *st, char *out, size_t size)
{
	size_t at = 0;

	*out = '\0';
	if (!st->reported && st->self.sha256[0])
		at += (size_t)snprintf(out, size, ",\"agent_version\":\"%s\",\"agent_sha256\":\"%s\"",
				       st->self.version, st->self.sha256);
	if (!st->update_sent && st->update_state[0] && at < size) {
		cJSON *o = cJSON_CreateObject();
		char *text = NULL;
		if (o && cJSON_AddStringToObject(o, "state", st->update_state) &&
		    cJSON_AddStringToObject(o, "reason", st->update_reason) &&
		    (st->update_sha256[0] ? cJSON_AddStringToObject(o, "sha256", st->update_sha256)
					  : cJSON_AddNullToObject(o, "sha256")) &&
		    (text = cJSON_PrintUnformatted(o)) && strlen(text) + 20 < size - at)
			snprintf(out + at, size - at, ",\"agent_update\":%s", text);
		cJSON_free(text);
		cJSON_Delete(o);
	}
}

void update_lease_sent(struct update_state *st)
{
	st->reported = true;
	st->update_sent = true;
}

void update_confirm(struct update_state *st)
{
	if (!st->deadline_ms)
		return;
	st->deadline_ms = 0;
	remove_note(st->data_dir, "pending.json");
	log_event(LOG_INFO, "update_confirmed", "sha256", st->self.sha256, "version", st->self.version, NULL);
}

bool update_overdue(const struct update_state *st)
{
	return st->deadline_ms && clock_monotonic_us() / 1000 > st->deadline_ms;
}

/* The wanted build of this OS/ARCH in the list LIST: its SHA-256 and
 * size, checked, and its "signature" (NULL: none; borrowed from LIST);
 * false when there is none. */
static bool wanted_build(const struct update_self *self, const cJSON *list, char sha256[65], long long *size,
			 const char **ret_signature)
{
	const cJSON *build;

	cJSON_ArrayForEach(build, cJSON_GetObjectItemCaseSensitive(list, "builds")) {
		const char *os = NULL, *arch = NULL, *hex = NULL;
		bool wanted = false;
		if (json_get_string(build, "os", 16, true, NULL, &os) < 0 ||
		    json_get_string(build, "arch", 16, true, NULL, &arch) < 0 ||
		    json_get_bool(build, "wanted", true, false, &wanted) < 0 || !wanted ||
		    strcmp(os, self->os) != 0 || strcmp(arch, self->arch) != 0)
			continue;
		if (json_get_string(build, "sha256", 64, true, NULL, &hex) < 0 || !hex64(hex) ||
		    json_get_int(build, "size", 1, UPDATE_MAX_BYTES, true, 0, size) < 0) {
			log_event(LOG_WARN, "update_list_malformed", "reason",
				  "the wanted build has no sha256 of 64 hex digits or a size of 1 byte "
				  "to 256 MiB",
				  NULL);
			return false;
		}
		memcpy(sha256, hex, 65);
		/* Checked by verify_signature(): any string, or none. */
		*ret_signature = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(build, "signature"));
		return true;
	}
	return false;
}

/* 0 when SIGNATURE (the list's: the hex digits of a signature file's
 * line, or NULL) is the release key's over SHA256; LL_EFORBIDDEN with
 * the reason else. */
static int verify_signature(const struct release_keys *keys, const char *signature, const char *sha256)
{
	unsigned char sig[64];
	char line[200];
	int rc;

	if (!signature)
		return err_set(LL_EFORBIDDEN, "The build is not signed (no FILE.sig beside it in loadlabd's "
					      "--agent-dir): only a build signed by the lab's release key is "
					      "installed.");
	snprintf(line, sizeof(line), "loadlab-release-sig ed25519 %s", signature);
	if ((rc = release_sig_parse(line, strlen(line), sig)) < 0)
		return err_set(LL_EFORBIDDEN, "The build's signature is not 128 hex digits: %s",
			       err_message(rc));
	if ((rc = release_sig_verify(keys, sha256, sig)) < 0)
		return err_set(LL_EFORBIDDEN, "%s", err_message(rc));
	return 0;
}

/* Downloads the wanted build into FILE and checks it against SHA256,
 * SIZE and the release key's SIGNATURE, before it may be run. */
static int download(struct update_state *st, struct rest_client *http, const char *file, const char *sha256,
		    long long size, const struct release_keys *keys, const char *signature)
{
	struct rest_answer a;
	char path[128], got_hex[65];
	long long got = 0;
	int rc;

	snprintf(path, sizeof(path), "/api/v1/agent-builds/%s/%s", st->self.os, st->self.arch);
	if ((rc = rest_client_download(http, path, file, size, &got, &a)) < 0)
		return rc;
	rc = rest_answer_error(&a, "GET", path);
	rest_answer_release(&a);
	if (rc < 0)
		return rc;
	if (got != size)
		return err_set(LL_EFORMAT, "The build has %lld bytes, the list said %lld.", got, size);
	if ((rc = plat_file_sha256(file, got_hex, &got)) < 0)
		return rc;
	if (strcmp(got_hex, sha256) != 0)
		return err_set(LL_EFORMAT, "The build's SHA-256 is %s, the list said %s.", got_hex, sha256);
	/* The bytes held, whatever the list said. */
	if ((rc = verify_signature(keys, signature, got_hex)) < 0)
		return rc;
	return plat_make_executable(file);
}

/* Runs FILE update-trial; 0 when it printed UPDATE_TRIAL_OK and exited 0. */
static int trial(struct update_state *st, const char *file)
{
	char out[PLAT_MAX_PATH + 64], *text = NULL;
	const char *argv[] = {file, "update-trial", "--server", st->server, "--data-dir", st->data_dir, NULL};
	struct plat_spawn_options o = {.argv = argv, .stdout_path = out, .stderr_path = out};
	size_t len = 0;
	int rc, code = -1;

	update_path(st->data_dir, "trial.log", out, sizeof(out));
	rc = plat_run(&o, UPDATE_TRIAL_SECONDS * 1000LL, &code, NULL);
	if (rc == LL_ERANGE)
		return err_set(LL_ESTATE, "Its trial run did not end within %d s.", UPDATE_TRIAL_SECONDS);
	if (rc < 0)
		return err_set(LL_EFORMAT, "It cannot be started: %s", err_message(rc));
	plat_read_file(out, 65536, &text, &len);
	if (code != 0 || !text || !strstr(text, UPDATE_TRIAL_OK)) {
		char line[300];
		rest_one_line(text ? text : "", line, sizeof(line));
		free(text);
		return err_set(LL_EFORMAT, "Its trial run exited with %d without saying it is ready: %s",
			       code, line);
	}
	free(text);
	return 0;
}

/* Downloads, tries and installs the build SHA256 of SIZE bytes. */
static int install(struct update_state *st, struct rest_client *http, const char *sha256, long long size,
		   const struct release_keys *keys, const char *signature)
{
	char dir[PLAT_MAX_PATH + 64], file[PLAT_MAX_PATH + 64], previous[PLAT_MAX_PATH + 32];
	cJSON *marker = NULL;
	int rc;

	snprintf(dir, sizeof(dir), "%s%cupdate", st->data_dir, plat_path_separator);
	update_path(st->data_dir, strcmp(st->self.os, "windows") == 0 ? "new.exe" : "new", file,
		    sizeof(file));
	previous_path(st->self.exe, previous, sizeof(previous));
	if ((rc = plat_mkdirs_private(dir)) < 0)
		return rc;
	if ((rc = download(st, http, file, sha256, size, keys, signature)) < 0 ||
	    (rc = trial(st, file)) < 0) {
		char reason[600];
		if (rc == LL_ESTATE && plat_stop_requested())
			return rc;
		snprintf(reason, sizeof(reason), "%s", err_message(rc));
		plat_remove_file(file);
		/* A transfer that broke is tried again at the next check; a
		 * build that is not what the list says, or fails its trial, not.
		 * A bad signature is not remembered: the admin may sign the
		 * same bytes later (nothing is downloaded meanwhile). */
		if (rc == LL_EIO) {
			log_event(LOG_WARN, "update_failed", "sha256", sha256, "reason", reason, NULL);
			return 0;
		}
		if (rc == LL_EFORBIDDEN)
			log_event(LOG_WARN, "update_refused", "sha256", sha256, "reason", reason, NULL);
		else
			refuse(st->data_dir, sha256, reason);
		update_say(st, "refused", reason, sha256);
		return 0;
	}
	if (!(marker = cJSON_CreateObject()) || !cJSON_AddStringToObject(marker, "from", st->self.sha256) ||
	    !cJSON_AddStringToObject(marker, "to", sha256) ||
	    !cJSON_AddStringToObject(marker, "exe", st->self.exe) ||
	    !cJSON_AddStringToObject(marker, "previous", previous) ||
	    !cJSON_AddNumberToObject(marker, "starts", 0) ||
	    (rc = write_note(st->data_dir, "pending.json", marker)) < 0 ||
	    (rc = update_plat_install(st->self.exe, file, previous)) < 0) {
		char reason[600];
		snprintf(reason, sizeof(reason), "cannot install it: %s",
			 rc < 0 ? err_message(rc) : "out of memory");
		cJSON_Delete(marker);
		remove_note(st->data_dir, "pending.json");
		plat_remove_file(file);
		/* Not downloaded again at every check (a read-only EXE, say). */
		refuse(st->data_dir, sha256, reason);
		update_say(st, "refused", reason, sha256);
		return 0;
	}
	cJSON_Delete(marker);
	plat_remove_file(file);
	log_event(LOG_INFO, "update_installed", "from", st->self.sha256, "to", sha256, "previous", previous,
		  NULL);
	return 1;
}

int update_check(struct update_state *st, struct rest_client *http, bool *ret_restart)
{
	struct rest_request r = {"GET", "/api/v1/agent-builds", NULL, 0, 30};
	struct rest_answer a;
	long long now = clock_monotonic_us() / 1000, size = 0;
	char sha256[65], keys_path[PLAT_MAX_PATH + 32], reason[UPDATE_REASON_MAX];
	const char *signature = NULL;
	struct release_keys keys;
	int rc;

	*ret_restart = false;
	if (!st->self.sha256[0])
		return 0;
	snprintf(keys_path, sizeof(keys_path), "%s%c%s", st->data_dir, plat_path_separator,
		 RELEASE_KEYS_FILE);
	if (st->deadline_ms) {
		/* A new copy: confirmed by an authenticated answer. */
		if ((rc = rest_client_send(http, &r, &a)) < 0)
			return rc == LL_ESTATE ? rc : 0;
		if (a.status == 200)
			update_confirm(st);
		rest_answer_release(&a);
		return 0;
	}
	if (!st->check_ms || now < st->next_check_ms)
		return 0;
	st->next_check_ms = now + st->check_ms;
	/* The key is read at each check: one added (or rotated) takes
	 * effect without a restart. No key, no list read. */
	if ((rc = release_sig_supported()) < 0 || (rc = release_keys_read(keys_path, &keys)) < 0) {
		update_say(st, "off", err_message(rc), NULL);
		return 0;
	}
	/* "on" unless this check refuses the wanted build again. */
	snprintf(reason, sizeof(reason), "%d release key(s) in DATA_DIR/%s", keys.count, RELEASE_KEYS_FILE);
	if ((rc = rest_client_send(http, &r, &a)) < 0)
		return rc == LL_ESTATE ? rc : 0;
	if (a.status != 200 || !a.body) {
		/* An older loadlabd has no list (404): nothing to update to. */
		if (a.status != 404)
			log_event(LOG_WARN, "update_list_refused", "reason", a.message, NULL);
		rest_answer_release(&a);
		update_say(st, "on", reason, NULL);
		return 0;
	}
	if (!wanted_build(&st->self, a.body, sha256, &size, &signature) ||
	    strcmp(sha256, st->self.sha256) == 0 || is_refused(st->data_dir, sha256)) {
		/* A build refused before (refused.json) keeps what was said. */
		if (strcmp(st->update_state, "refused") != 0 || strcmp(st->update_sha256, sha256) != 0)
			update_say(st, "on", reason, NULL);
		rest_answer_release(&a);
		return 0;
	}
	/* A build the key did not sign is not even downloaded. */
	if ((rc = verify_signature(&keys, signature, sha256)) < 0) {
		rest_answer_release(&a);
		if (strcmp(st->update_state, "refused") != 0 || strcmp(st->update_sha256, sha256) != 0)
			log_event(LOG_WARN, "update_refused", "sha256", sha256, "reason", err_message(rc),
				  NULL);
		update_say(st, "refused", err_message(rc), sha256);
		return 0;
	}
	log_event(LOG_INFO, "update_found", "from", st->self.sha256, "to", sha256, NULL);
	rc = install(st, http, sha256, size, &keys, signature); /* SIGNATURE lives in A's body */
	rest_answer_release(&a);
	if (rc < 0)
		return rc;
	*ret_restart = rc == 1;
	return 0;
}

bool update_begin(struct update_state *st, const char *data_dir, const char *server, long long check_s,
		  long long confirm_s)
{
	bool restart = false;
	int rc;

	memset(st, 0, sizeof(*st));
	st->data_dir = data_dir;
	st->server = server;
	st->check_ms = check_s * 1000;
	st->confirm_ms = confirm_s * 1000;
	if ((rc = update_start(st, &restart)) < 0) {
		update_say(st, "off", err_message(rc), NULL);
		st->check_ms = 0;
	} else if (!st->check_ms) {
		update_say(st, "off", "turned off by --update-check-seconds 0", NULL);
	}
	return restart;
}

bool update_between_tasks(struct update_state *st, struct rest_client *http)
{
	bool restart = false;

	if (update_overdue(st)) {
		char reason[160];
		snprintf(reason, sizeof(reason), "the new copy did not reach the server within %lld s",
			 st->confirm_ms / 1000);
		return update_rollback(st, reason) == 0;
	}
	update_check(st, http, &restart);
	return restart;
}
