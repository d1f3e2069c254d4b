/* agent_builds.c - the folder of agent binaries (agent_builds.h). */
#include "agent_builds.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/release_sig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_PREFIX "loadlab-agent-"
/* What every loadlab-agent carries before its version (agent/update/update.c). */
#define VERSION_MARKER "loadlab-agent-version="
#define VERSION_MAX 64
#define LABEL_MAX 64

struct build {
	char file[256], os[16], arch[16], label[LABEL_MAX + 1], version[VERSION_MAX + 1], sha256[65];
	char signature[129]; /* FILE.sig's hex digits; "" when there is none */
	long long size;
};

struct agent_builds {
	pthread_mutex_t lock;
	char dir[1024], pin_path[1200];
	char pin_key[8], pin_value[VERSION_MAX + 1]; /* pin_key "" when not pinned */
	struct build builds[AGENT_BUILDS_MAX];
	int count;
};

static const char *const known_os[] = {"linux", "windows", NULL};
static const char *const known_arch[] = {"x86_64", "i686", "aarch64", NULL};

static bool in_list(const char *const *list, const char *word)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(list[i], word) == 0)
			return true;
	return false;
}

static bool version_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '+' || c == '-';
}

static bool version_valid(const char *v)
{
	size_t n = strlen(v);

	if (n < 1 || n > VERSION_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!version_char(v[i]))
			return false;
	return true;
}

static bool hex_valid(const char *v)
{
	if (strlen(v) != 64)
		return false;
	for (int i = 0; i < 64; i++)
		if (!((v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f')))
			return false;
	return true;
}

/* Fills B's os, arch and label from NAME; false when NAME is not a build's. */
static bool parse_name(const char *name, struct build *b)
{
	char rest[256], *os, *arch, *label, *save = NULL;
	size_t n = strlen(name);
	bool exe = n > 4 && strcmp(name + n - 4, ".exe") == 0;

	if (strncmp(name, NAME_PREFIX, strlen(NAME_PREFIX)) != 0 || n >= sizeof(rest))
		return false;
	snprintf(rest, sizeof(rest), "%s", name + strlen(NAME_PREFIX));
	if (exe)
		rest[strlen(rest) - 4] = '\0';
	os = strtok_r(rest, "-", &save);
	arch = os ? strtok_r(NULL, "-", &save) : NULL;
	label = arch ? strtok_r(NULL, "", &save) : NULL;
	if (!os || !arch || !in_list(known_os, os) || !in_list(known_arch, arch))
		return false;
	if (exe != (strcmp(os, "windows") == 0))
		return false;
	if (label) {
		if (strlen(label) > LABEL_MAX)
			return false;
		for (const char *c = label; *c; c++)
			if (!version_char(*c) || *c == '-')
				return false;
	}
	snprintf(b->file, sizeof(b->file), "%s", name);
	snprintf(b->os, sizeof(b->os), "%s", os);
	snprintf(b->arch, sizeof(b->arch), "%s", arch);
	snprintf(b->label, sizeof(b->label), "%s", label ? label : "");
	return true;
}

/* Looks for VERSION_MARKER in DATA (LEN bytes) and copies the version
 * after it into B when it ends within DATA. */
static void find_version(const unsigned char *data, size_t len, struct build *b)
{
	size_t m = strlen(VERSION_MARKER), i = 0;

	while (!b->version[0] && i + m < len) {
		const unsigned char *p = memchr(data + i, 'l', len - m - i);
		size_t at, k = 0;
		if (!p)
			return;
		at = (size_t)(p - data);
		i = at + 1;
		if (memcmp(p, VERSION_MARKER, m) != 0)
			continue;
		while (at + m + k < len && k <= VERSION_MAX && version_char((char)p[m + k]))
			k++;
		if (k >= 1 && k <= VERSION_MAX && at + m + k < len && p[m + k] == '\0') {
			memcpy(b->version, p + m, k);
			b->version[k] = '\0';
		}
	}
}

/* Size, SHA-256 and version of the file at PATH, in one pass. */
static int measure(const char *path, struct build *b)
{
	static const char hexdigits[] = "0123456789abcdef";
	unsigned char buffer[65536 + 128], digest[32];
	EVP_MD_CTX *hash = EVP_MD_CTX_new();
	size_t carry = 0;
	unsigned int digest_len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	ssize_t got;

	b->size = 0;
	b->version[0] = '\0';
	if (fd < 0 || !hash || EVP_DigestInit_ex(hash, EVP_sha256(), NULL) != 1) {
		rc = err_set(LL_EIO, "Cannot read the agent build %s: %s.", path, strerror(errno));
		goto out;
	}
	/* The last 128 bytes of a piece are kept before the next, so a marker
	 * that straddles two pieces is still found. */
	while ((got = read(fd, buffer + carry, sizeof(buffer) - carry)) > 0) {
		size_t len = carry + (size_t)got;
		if (EVP_DigestUpdate(hash, buffer + carry, (size_t)got) != 1) {
			rc = err_set(LL_EIO, "Cannot hash %s.", path);
			goto out;
		}
		b->size += got;
		if (b->size > AGENT_BUILD_MAX_BYTES) {
			rc = err_set(LL_ETOOBIG, "The agent build %s is larger than %lld bytes.", path,
				     AGENT_BUILD_MAX_BYTES);
			goto out;
		}
		find_version(buffer, len, b);
		carry = len < 128 ? len : 128;
		memmove(buffer, buffer + len - carry, carry);
	}
	if (got < 0 || EVP_DigestFinal_ex(hash, digest, &digest_len) != 1) {
		rc = err_set(LL_EIO, "Cannot read the agent build %s: %s.", path, strerror(errno));
		goto out;
	}
	for (int i = 0; i < 32; i++) {
		b->sha256[2 * i] = hexdigits[digest[i] >> 4];
		b->sha256[2 * i + 1] = hexdigits[digest[i] & 15];
	}
	b->sha256[64] = '\0';
out:
	if (fd >= 0)
		close(fd);
	EVP_MD_CTX_free(hash);
	return rc;
}

/* The signature file PATH.sig of the build B, when there is one: its hex
 * digits into B (not checked against any key: the server has none). */
static void read_signature(const char *path, struct build *b)
{
	static const char hexdigits[] = "0123456789abcdef";
	char sig_path[1410], text[RELEASE_SIG_FILE_MAX + 1];
	unsigned char sig[64];
	struct stat st;
	ssize_t got;
	int fd, rc = 0;

	b->signature[0] = '\0';
	snprintf(sig_path, sizeof(sig_path), "%s.sig", path);
	/* Not blocked by a FIFO of that name: only a regular file is read. */
	if ((fd = open(sig_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return;
	got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, text, sizeof(text)) : -1;
	close(fd);
	if (got < 0 || (rc = release_sig_parse(text, (size_t)got, sig)) < 0) {
		log_event(LOG_WARN, "agent_build_signature_skipped", "file", b->file, "reason",
			  got < 0 ? "not a readable regular file" : err_message(rc), NULL);
		return;
	}
	for (int i = 0; i < 64; i++) {
		b->signature[2 * i] = hexdigits[sig[i] >> 4];
		b->signature[2 * i + 1] = hexdigits[sig[i] & 15];
	}
	b->signature[128] = '\0';
}

/* Whether NAME is a build's signature file (NAME.sig). */
static bool is_signature_name(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && strcmp(name + n - 4, ".sig") == 0;
}

static int compare_files(const void *a, const void *b)
{
	return strcmp(((const struct build *)a)->file, ((const struct build *)b)->file);
}

/* Scans DIR into a new array (the lock not held: hashing takes time). */
static int scan(const char *dir, struct build *out, int *ret_count)
{
	DIR *d;
	struct dirent *e;
	int count = 0, rc;

	*ret_count = 0;
	if (!*dir)
		return 0;
	if (!(d = opendir(dir)))
		return err_set(LL_EIO, "Cannot read the agent builds folder %s: %s.", dir, strerror(errno));
	while ((e = readdir(d))) {
		struct build b;
		char path[1400];
		struct stat st;
		memset(&b, 0, sizeof(b));
		if (e->d_name[0] == '.' || is_signature_name(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (!parse_name(e->d_name, &b)) {
			log_event(LOG_WARN, "agent_build_skipped", "file", e->d_name, "reason",
				  "not named loadlab-agent-OS-ARCH[-LABEL][.exe] (docs/agent.md, Updates)",
				  NULL);
			continue;
		}
		if (count == AGENT_BUILDS_MAX) {
			log_event(LOG_WARN, "agent_build_skipped", "file", e->d_name, "reason",
				  "more than 64 builds in the folder", NULL);
			continue;
		}
		if ((rc = measure(path, &b)) < 0) {
			log_event(LOG_WARN, "agent_build_skipped", "file", e->d_name, "reason",
				  err_message(rc), NULL);
			continue;
		}
		read_signature(path, &b);
		out[count++] = b;
	}
	closedir(d);
	qsort(out, (size_t)count, sizeof(out[0]), compare_files);
	for (int i = 0; i < count; i++)
		log_event(LOG_INFO, "agent_build", "file", out[i].file, "sha256", out[i].sha256, "version",
			  out[i].version, "signed", out[i].signature[0] ? "yes" : "no", NULL);
	*ret_count = count;
	return 0;
}

static int read_pin(struct agent_builds *b)
{
	cJSON *root = NULL;
	char *text = NULL;
	const char *value = NULL;
	long len;
	FILE *f = fopen(b->pin_path, "rb");
	int rc = 0;

	if (!f)
		return errno == ENOENT ? 0
				       : err_set(LL_EIO, "Cannot read %s: %s.", b->pin_path, strerror(errno));
	text = calloc(1, 4097);
	len = text ? (long)fread(text, 1, 4096, f) : 0;
	fclose(f);
	if (!text)
		return err_set(LL_ENOMEM, "Out of memory.");
	if (json_parse_object(text, (size_t)len, 4, &root) < 0 ||
	    ((json_get_string(root, "sha256", 64, false, NULL, &value) < 0 || !value || !hex_valid(value)) &&
	     (json_get_string(root, "version", VERSION_MAX, false, NULL, &value) < 0 || !value ||
	      !version_valid(value)))) {
		rc = err_set(LL_EFORMAT,
			     "%s is not a pin ({\"sha256\": HEX} or {\"version\": V}); remove it or "
			     "set the pin again.",
			     b->pin_path);
	} else {
		snprintf(b->pin_key, sizeof(b->pin_key), "%s",
			 cJSON_GetObjectItemCaseSensitive(root, "sha256") && hex_valid(value) ? "sha256"
											      : "version");
		snprintf(b->pin_value, sizeof(b->pin_value), "%s", value);
	}
	cJSON_Delete(root);
	free(text);
	return rc;
}

int agent_builds_open(const char *dir, const char *data_dir, struct agent_builds **ret_builds)
{
	struct agent_builds *b = calloc(1, sizeof(*b));
	int rc;

	if (!b)
		return err_set(LL_ENOMEM, "Out of memory.");
	pthread_mutex_init(&b->lock, NULL);
	snprintf(b->dir, sizeof(b->dir), "%s", dir ? dir : "");
	snprintf(b->pin_path, sizeof(b->pin_path), "%s/%s", data_dir, AGENT_BUILDS_PIN_FILE);
	if ((rc = read_pin(b)) < 0 || (rc = scan(b->dir, b->builds, &b->count)) < 0) {
		agent_builds_close(b);
		return rc;
	}
	*ret_builds = b;
	return 0;
}

int agent_builds_rescan(struct agent_builds *b)
{
	struct build *fresh = calloc(AGENT_BUILDS_MAX, sizeof(*fresh));
	int count, rc;

	if (!fresh)
		return err_set(LL_ENOMEM, "Out of memory.");
	if ((rc = scan(b->dir, fresh, &count)) == 0) {
		pthread_mutex_lock(&b->lock);
		memcpy(b->builds, fresh, sizeof(b->builds));
		b->count = count;
		pthread_mutex_unlock(&b->lock);
	}
	free(fresh);
	return rc;
}

/* Whether build I is the one its OS/ARCH is told to run (the lock held). */
static bool is_wanted(const struct agent_builds *b, const struct build *x)
{
	if (!b->pin_key[0])
		return x->label[0] == '\0';
	return strcmp(b->pin_key, "sha256") == 0 ? strcmp(x->sha256, b->pin_value) == 0
						 : strcmp(x->version, b->pin_value) == 0;
}

/* The last component of PATH ("agents" of "/srv/loadlab/agents/"). */
static void last_component(const char *path, char *out, size_t size)
{
	size_t n = strlen(path);
	const char *start;

	while (n > 1 && path[n - 1] == '/')
		n--;
	start = path + n;
	while (start > path && start[-1] != '/')
		start--;
	snprintf(out, size, "%.*s", (int)(n - (size_t)(start - path)), start);
}

int agent_builds_list(struct agent_builds *b, bool full_path, cJSON **ret_list)
{
	cJSON *out = cJSON_CreateObject(), *list;
	bool ok = out != NULL;
	char dir_name[sizeof(b->dir)];

	pthread_mutex_lock(&b->lock);
	last_component(b->dir, dir_name, sizeof(dir_name));
	if (ok)
		ok = b->dir[0] ? cJSON_AddStringToObject(out, "dir", full_path ? b->dir : dir_name) != NULL
			       : cJSON_AddNullToObject(out, "dir") != NULL;
	if (ok && b->pin_key[0]) {
		cJSON *pin = cJSON_AddObjectToObject(out, "pin");
		ok = pin && cJSON_AddStringToObject(pin, b->pin_key, b->pin_value);
	} else if (ok) {
		ok = cJSON_AddNullToObject(out, "pin") != NULL;
	}
	list = ok ? cJSON_AddArrayToObject(out, "builds") : NULL;
	ok = list != NULL;
	for (int i = 0; ok && i < b->count; i++) {
		const struct build *x = &b->builds[i];
		cJSON *o = json_array_add_object(list);
		ok = o && cJSON_AddStringToObject(o, "os", x->os) &&
		     cJSON_AddStringToObject(o, "arch", x->arch) &&
		     (x->label[0] ? cJSON_AddStringToObject(o, "label", x->label)
				  : cJSON_AddNullToObject(o, "label")) &&
		     cJSON_AddStringToObject(o, "file", x->file) &&
		     (x->version[0] ? cJSON_AddStringToObject(o, "version", x->version)
				    : cJSON_AddNullToObject(o, "version")) &&
		     cJSON_AddStringToObject(o, "sha256", x->sha256) &&
		     cJSON_AddNumberToObject(o, "size", (double)x->size) &&
		     (x->signature[0] ? cJSON_AddStringToObject(o, "signature", x->signature)
				      : cJSON_AddNullToObject(o, "signature")) &&
		     cJSON_AddBoolToObject(o, "wanted", is_wanted(b, x));
	}
	pthread_mutex_unlock(&b->lock);
	if (!ok) {
		cJSON_Delete(out);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret_list = out;
	return 0;
}

int agent_builds_open_wanted(struct agent_builds *b, const char *os, const char *arch, int *ret_fd,
			     long long *ret_size, char ret_sha256[65])
{
	struct build found;
	char path[1400];
	struct stat st;
	bool have = false;
	int fd;

	pthread_mutex_lock(&b->lock);
	for (int i = 0; i < b->count && !have; i++)
		if (strcmp(b->builds[i].os, os) == 0 && strcmp(b->builds[i].arch, arch) == 0 &&
		    is_wanted(b, &b->builds[i])) {
			found = b->builds[i];
			have = true;
		}
	pthread_mutex_unlock(&b->lock);
	if (!have)
		return err_set(LL_ENOTFOUND, "No agent build is wanted for %s/%s.", os, arch);
	snprintf(path, sizeof(path), "%s/%s", b->dir, found.file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	/* A file changed since the scan is not served as the one scanned. */
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size != found.size) {
		if (fd >= 0)
			close(fd);
		return err_set(LL_ESTATE,
			       "The agent build %s changed since the folder was scanned: rescan it.",
			       found.file);
	}
	*ret_fd = fd;
	*ret_size = found.size;
	memcpy(ret_sha256, found.sha256, 65);
	return 0;
}

int agent_builds_pin(struct agent_builds *b, const char *key, const char *value)
{
	cJSON *pin;
	int rc;

	if (!key) {
		if (unlink(b->pin_path) < 0 && errno != ENOENT)
			return err_set(LL_EIO, "Cannot remove %s: %s.", b->pin_path, strerror(errno));
		pthread_mutex_lock(&b->lock);
		b->pin_key[0] = '\0';
		pthread_mutex_unlock(&b->lock);
		return 0;
	}
	if (strcmp(key, "sha256") == 0 ? !hex_valid(value) : !version_valid(value))
		return err_set(LL_EINVAL,
			       strcmp(key, "sha256") == 0
				       ? "The pin's sha256 must be 64 lowercase hex digits."
				       : "The pin's version must be 1..64 of A-Z a-z 0-9 . _ + -.");
	if (!(pin = cJSON_CreateObject()) || !cJSON_AddStringToObject(pin, key, value)) {
		cJSON_Delete(pin);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	rc = json_write_file_atomic(b->pin_path, pin, false, true);
	cJSON_Delete(pin);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&b->lock);
	snprintf(b->pin_key, sizeof(b->pin_key), "%s", key);
	snprintf(b->pin_value, sizeof(b->pin_value), "%s", value);
	pthread_mutex_unlock(&b->lock);
	return 0;
}

void agent_builds_close(struct agent_builds *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	free(b);
}
