/* blob_files.c - the content-addressed file store (blob_files.h). */
#include "blob_files.h"
#include "worker.h"

#include "loadlab/clock.h"
#include "loadlab/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define BLOBS_PATH_MAX 1200

struct blob_store {
	char root[BLOBS_PATH_MAX - 200]; /* DATA_DIR/blobs */
	char host[65];                   /* this host's name, '+' and '/' replaced */
	char owner[128];                 /* "HOST+PID+START": this process's temporary files */
	unsigned long long tmp_serial;   /* the last temporary file's number (atomic) */
	struct blob_limits limits;
	pthread_mutex_t lock;      /* used_bytes, reserved_bytes */
	long long used_bytes;      /* stored blobs */
	long long reserved_bytes;  /* uploads in flight: the bytes received so far */
	long long uploads_open;    /* begun, not yet finished or aborted */
	pthread_mutex_t refs_lock; /* blobs_refs_lock() */

	pthread_t sweeper;
	bool sweeper_running, stopping;
	pthread_mutex_t stop_lock;
	pthread_cond_t stop_cond;
	blobs_references_fn references;
	void *references_context;
};

struct blob_upload {
	struct blob_store *store;
	char hex[65];
	char tmp_path[BLOBS_PATH_MAX];
	int fd;             /* -1: the blob exists, the body is only hashed */
	long long declared; /* -1: unknown */
	long long received;
	long long reserved; /* counted in store->reserved_bytes */
	EVP_MD_CTX *hash;
};

bool blobs_name_valid(const char *hex)
{
	size_t n = 0;

	for (; hex[n]; n++)
		if (!((hex[n] >= '0' && hex[n] <= '9') || (hex[n] >= 'a' && hex[n] <= 'f')))
			return false;
	return n == 64;
}

/* DATA_DIR/blobs/ab/cdef... for HEX; FOLDER_ONLY: DATA_DIR/blobs/ab. */
static void blob_path(const struct blob_store *s, const char *hex, bool folder_only, char *out)
{
	if (folder_only)
		snprintf(out, BLOBS_PATH_MAX, "%s/%.2s", s->root, hex);
	else
		snprintf(out, BLOBS_PATH_MAX, "%s/%.2s/%s", s->root, hex, hex + 2);
}

/* The error of a failed disk call (errno): LL_ENOSPACE when the disk or
 * the user's quota is full, else LL_EIO. The message says what failed,
 * never where: it goes to clients, who have no business with the data
 * folder's path. */
static int disk_error(const char *what)
{
	int e = errno;

	if (e == ENOSPC || e == EDQUOT)
		return err_set(LL_ENOSPACE, "The disk that holds the blobs is full: cannot %s.", what);
	return err_set(LL_EIO, "Cannot %s: %s.", what, strerror(e));
}

int blobs_disk_free(struct blob_store *s, long long *ret_bytes)
{
	struct statvfs st;

	if (statvfs(s->root, &st) < 0)
		return disk_error("read the free space of the blob folder");
	*ret_bytes = (long long)st.f_bavail * (long long)st.f_frsize;
	return 0;
}

/* LL_ENOSPACE unless the disk has NEED bytes free beyond min_free_bytes. */
static int check_disk(struct blob_store *s, long long need)
{
	long long free_bytes = 0;
	int rc = blobs_disk_free(s, &free_bytes);

	if (rc == 0 && free_bytes - need < s->limits.min_free_bytes)
		rc = err_set(LL_ENOSPACE,
			     "The disk that holds the blobs has %lld bytes free, and %lld are kept free "
			     "(--min-free-bytes): this upload does not fit.",
			     free_bytes, s->limits.min_free_bytes);
	return rc;
}

static int fsync_folder(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0 || fsync(fd) < 0)
		rc = disk_error("fsync a blob folder");
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Whether the temporary file NAME (ST) may be removed: no live upload
 * holds it (blob_files.h). NOW in s. */
static bool tmp_stale(const struct blob_store *s, const char *name, const struct stat *st, time_t now)
{
	long long max_age = s->limits.tmp_max_age_s > 0 ? s->limits.tmp_max_age_s : 3600;
	size_t host_len = strlen(s->host), own_len = strlen(s->owner);
	char *end;
	long pid;

	if (strncmp(name, s->owner, own_len) == 0 && name[own_len] == '+')
		return false; /* this process's: its uploads end or abort them */
	if (strncmp(name, s->host, host_len) == 0 && name[host_len] == '+') {
		errno = 0;
		pid = strtol(name + host_len + 1, &end, 10);
		if (errno == 0 && end != name + host_len + 1 && *end == '+' && pid > 0) {
			if (pid == (long)getpid())
				return true; /* an earlier process with this PID */
			if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
				return true; /* its process is gone */
		}
	}
	return (long long)(now - st->st_mtime) > max_age;
}

/* Removes the files in blobs/tmp/ that no live upload holds (tmp_stale()). */
static int clean_tmp(struct blob_store *s)
{
	char path[BLOBS_PATH_MAX];
	struct dirent *entry;
	time_t now = time(NULL);
	int removed = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/tmp", s->root);
	if (!(dir = opendir(path)))
		return err_set(LL_EIO, "Cannot read %s: %s.", path, strerror(errno));
	while ((entry = readdir(dir))) {
		struct stat st;
		if (entry->d_name[0] == '.' ||
		    fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || !tmp_stale(s, entry->d_name, &st, now))
			continue;
		if (unlinkat(dirfd(dir), entry->d_name, 0) == 0)
			removed++;
	}
	closedir(dir);
	if (removed) {
		char text[16];
		snprintf(text, sizeof(text), "%d", removed);
		log_event(LOG_INFO, "blob_tmp_removed", "files", text, NULL);
	}
	return 0;
}

/* This process's name for its temporary files, S->owner. */
static void name_owner(struct blob_store *s)
{
	if (gethostname(s->host, sizeof(s->host) - 1) < 0 || !s->host[0])
		snprintf(s->host, sizeof(s->host), "localhost");
	s->host[sizeof(s->host) - 1] = '\0';
	for (char *c = s->host; *c; c++)
		if (*c == '+' || *c == '/')
			*c = '_';
	snprintf(s->owner, sizeof(s->owner), "%s+%ld+%lld", s->host, (long)getpid(), clock_now_ms());
}

/* Calls FN(S, hex, stat, CONTEXT) for every stored blob. */
static int each_blob(struct blob_store *s,
		     void (*fn)(struct blob_store *, const char *, const struct stat *, void *),
		     void *context)
{
	DIR *root = opendir(s->root);
	struct dirent *folder;

	if (!root)
		return err_set(LL_EIO, "Cannot read %s: %s.", s->root, strerror(errno));
	while ((folder = readdir(root))) {
		char path[BLOBS_PATH_MAX], hex[65];
		struct dirent *entry;
		DIR *dir;
		if (strlen(folder->d_name) != 2 || !strchr("0123456789abcdef", folder->d_name[0]) ||
		    !strchr("0123456789abcdef", folder->d_name[1]))
			continue;
		/* Both fit: s->root is checked at open, d_name is 2 bytes. */
		if ((size_t)snprintf(path, sizeof(path), "%s/%.2s", s->root, folder->d_name) >=
			    sizeof(path) ||
		    !(dir = opendir(path)))
			continue;
		while ((entry = readdir(dir))) {
			struct stat st;
			if (strlen(entry->d_name) != 62)
				continue;
			snprintf(hex, sizeof(hex), "%.2s%.62s", folder->d_name, entry->d_name);
			if (!blobs_name_valid(hex) ||
			    fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISREG(st.st_mode))
				continue;
			fn(s, hex, &st, context);
		}
		closedir(dir);
	}
	closedir(root);
	return 0;
}

static void count_blob(struct blob_store *s, const char *hex, const struct stat *st, void *context)
{
	(void)hex, (void)context;
	s->used_bytes += st->st_size;
}

int blobs_open(const char *data_dir, const struct blob_limits *limits, struct blob_store **ret_store)
{
	struct blob_store *s = calloc(1, sizeof(*s));
	char path[BLOBS_PATH_MAX];
	int rc;

	if (!s)
		return LL_ENOMEM;
	if (strlen(data_dir) + 16 > sizeof(s->root)) {
		free(s);
		return err_set(LL_EINVAL, "data-dir is too long.");
	}
	snprintf(s->root, sizeof(s->root), "%s/blobs", data_dir);
	snprintf(path, sizeof(path), "%s/tmp", s->root);
	if ((mkdir(s->root, 0700) < 0 && errno != EEXIST) || (mkdir(path, 0700) < 0 && errno != EEXIST)) {
		rc = err_set(LL_EIO, "Cannot create %s: %s.", path, strerror(errno));
		free(s);
		return rc;
	}
	s->limits = *limits;
	name_owner(s);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->refs_lock, NULL);
	pthread_mutex_init(&s->stop_lock, NULL);
	pthread_cond_init(&s->stop_cond, NULL);
	if ((rc = clean_tmp(s)) < 0 || (rc = each_blob(s, count_blob, NULL)) < 0) {
		blobs_close(s);
		return rc;
	}
	*ret_store = s;
	return 0;
}

void blobs_close(struct blob_store *s)
{
	if (!s)
		return;
	if (s->sweeper_running)
		worker_stop(&s->stop_lock, &s->stop_cond, &s->stopping, s->sweeper);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->refs_lock);
	pthread_mutex_destroy(&s->stop_lock);
	pthread_cond_destroy(&s->stop_cond);
	free(s);
}

const struct blob_limits *blobs_limits(const struct blob_store *s)
{
	return &s->limits;
}

/* Opens blob HEX (O_RDONLY) and marks it used now. */
static int open_blob(struct blob_store *s, const char *hex, int *ret_fd, long long *ret_size)
{
	char path[BLOBS_PATH_MAX];
	struct stat st;
	int fd;

	if (!blobs_name_valid(hex))
		return err_set(LL_EINVAL, "A blob is named by 64 lowercase hex digits.");
	blob_path(s, hex, false, path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		return err_set(LL_ENOTFOUND, "No blob %s.", hex);
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return err_set(LL_EIO, "Cannot open blob %s: %s.", hex, strerror(errno));
	}
	futimens(fd, NULL); /* last used: the retention counts from here */
	*ret_fd = fd;
	*ret_size = st.st_size;
	return 0;
}

int blobs_stat(struct blob_store *s, const char *hex, long long *ret_size)
{
	int fd, rc = open_blob(s, hex, &fd, ret_size);

	if (rc == 0)
		close(fd);
	return rc;
}

int blobs_open_read(struct blob_store *s, const char *hex, int *ret_fd, long long *ret_size)
{
	return open_blob(s, hex, ret_fd, ret_size);
}

/* Counts N more bytes against the quota for UPLOAD (with COMMIT), or only
 * checks that they would fit. */
static int reserve(struct blob_upload *u, long long n, bool commit)
{
	struct blob_store *s = u->store;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	if (s->used_bytes + s->reserved_bytes + n > s->limits.quota_bytes) {
		rc = err_set(BLOBS_E_QUOTA, "Storing this blob would pass the blob quota of %lld bytes.",
			     s->limits.quota_bytes);
	} else if (commit) {
		s->reserved_bytes += n;
		u->reserved += n;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void blobs_usage(struct blob_store *s, struct blob_usage *ret_usage)
{
	pthread_mutex_lock(&s->lock);
	ret_usage->used_bytes = s->used_bytes;
	ret_usage->reserved_bytes = s->reserved_bytes;
	ret_usage->uploads_open = s->uploads_open;
	pthread_mutex_unlock(&s->lock);
}

static void release_upload(struct blob_upload *u, long long stored)
{
	struct blob_store *s = u->store;

	pthread_mutex_lock(&s->lock);
	s->reserved_bytes -= u->reserved;
	s->used_bytes += stored;
	s->uploads_open--;
	pthread_mutex_unlock(&s->lock);
	if (u->fd >= 0) {
		close(u->fd);
		unlink(u->tmp_path);
	}
	EVP_MD_CTX_free(u->hash);
	free(u);
}

int blobs_upload_begin(struct blob_store *s, const char *hex, long long declared,
		       struct blob_upload **ret_upload)
{
	struct blob_upload *u;
	char path[BLOBS_PATH_MAX];
	int rc;

	if (!blobs_name_valid(hex))
		return err_set(LL_EINVAL, "A blob is named by 64 lowercase hex digits.");
	if (declared > s->limits.max_bytes)
		return err_set(BLOBS_E_TOO_BIG, "The blob is larger than the limit of %lld bytes.",
			       s->limits.max_bytes);
	if (!(u = calloc(1, sizeof(*u))))
		return LL_ENOMEM;
	u->store = s;
	u->fd = -1;
	u->declared = declared;
	pthread_mutex_lock(&s->lock);
	s->uploads_open++;
	pthread_mutex_unlock(&s->lock);
	snprintf(u->hex, sizeof(u->hex), "%s", hex);
	if (!(u->hash = EVP_MD_CTX_new()) || EVP_DigestInit_ex(u->hash, EVP_sha256(), NULL) != 1) {
		release_upload(u, 0);
		return err_set(LL_ENOMEM, "Cannot start a SHA-256 digest.");
	}
	blob_path(s, hex, false, path);
	if (access(path, F_OK) == 0) {
		utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW);
		*ret_upload = u;
		return 0;
	}
	/* An announced size that cannot fit now is refused at once; what is
	 * counted against the quota is only what arrives (blobs_upload_write). */
	if ((declared > 0 && (rc = reserve(u, declared, false)) < 0) ||
	    (rc = check_disk(s, declared > 0 ? declared : 0)) < 0) {
		release_upload(u, 0);
		return rc;
	}
	/* OWNER is this process's alone and the number is never reused in it:
	 * the name is new, and O_EXCL says so if it were not. */
	snprintf(u->tmp_path, sizeof(u->tmp_path), "%s/tmp/%s+%s.%llu", s->root, s->owner, hex,
		 __atomic_add_fetch(&s->tmp_serial, 1, __ATOMIC_RELAXED));
	u->fd = open(u->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (u->fd < 0) {
		rc = disk_error("create the upload's temporary file");
		release_upload(u, 0);
		return rc;
	}
	*ret_upload = u;
	return 0;
}

int blobs_upload_write(struct blob_upload *u, const void *data, size_t len)
{
	const char *p = data;
	long long after = u->received + (long long)len;
	int rc;

	if (after > u->store->limits.max_bytes)
		return err_set(BLOBS_E_TOO_BIG, "The blob is larger than the limit of %lld bytes.",
			       u->store->limits.max_bytes);
	if (u->declared >= 0 && after > u->declared)
		return err_set(LL_EINVAL, "The body is longer than its Content-Length.");
	if (u->fd >= 0 && after > u->reserved && (rc = reserve(u, after - u->reserved, true)) < 0)
		return rc;
	/* The disk again at each 16 MiB received (an upload of unknown size). */
	if (u->fd >= 0 && u->declared < 0 && (after >> 24) != (u->received >> 24) &&
	    (rc = check_disk(u->store, 0)) < 0)
		return rc;
	if (EVP_DigestUpdate(u->hash, data, len) != 1)
		return err_set(LL_EIO, "SHA-256 failed.");
	u->received = after;
	while (u->fd >= 0 && len > 0) {
		ssize_t n = write(u->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return disk_error("write the blob");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The upload's digest as 64 lowercase hex digits. */
static int digest_hex(struct blob_upload *u, char out[65])
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (EVP_DigestFinal_ex(u->hash, digest, &n) != 1 || n != 32)
		return err_set(LL_EIO, "SHA-256 failed.");
	for (unsigned int i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", digest[i]);
	return 0;
}

int blobs_upload_finish(struct blob_upload *u, bool *ret_created)
{
	struct blob_store *s = u->store;
	char hex[65], folder[BLOBS_PATH_MAX], path[BLOBS_PATH_MAX];
	long long stored = 0;
	int rc;

	if ((rc = digest_hex(u, hex)) < 0)
		goto out;
	if (u->declared >= 0 && u->received != u->declared) {
		rc = err_set(LL_EINVAL, "The body ended after %lld of %lld bytes.", u->received, u->declared);
		goto out;
	}
	if (strcmp(hex, u->hex) != 0) {
		rc = err_set(BLOBS_E_MISMATCH, "The body hashes to %s, not to the blob's name %s.", hex,
			     u->hex);
		goto out;
	}
	*ret_created = false;
	if (u->fd < 0)
		goto out;
	blob_path(s, u->hex, true, folder);
	blob_path(s, u->hex, false, path);
	if (fsync(u->fd) < 0) {
		rc = disk_error("fsync the blob");
		goto out;
	}
	fchmod(u->fd, 0600);
	if (mkdir(folder, 0700) < 0 && errno != EEXIST) {
		rc = disk_error("create the blob's folder");
		goto out;
	}
	/* link(2) refuses to replace: a concurrent upload of the same blob
	 * that got there first wins, and this one was not needed. */
	if (link(u->tmp_path, path) < 0) {
		if (errno != EEXIST)
			rc = disk_error("store the blob");
		goto out;
	}
	stored = u->received;
	*ret_created = true;
	rc = fsync_folder(folder);
out:
	release_upload(u, stored); /* unlinks the temporary name */
	return rc;
}

void blobs_upload_abort(struct blob_upload *u)
{
	if (u)
		release_upload(u, 0);
}

int blobs_missing(struct blob_store *s, const cJSON *hexes, cJSON **ret_missing, long long *ret_found_bytes)
{
	cJSON *missing = cJSON_CreateArray();
	const cJSON *item;
	long long found = 0;

	if (!missing)
		return LL_ENOMEM;
	cJSON_ArrayForEach(item, hexes) {
		long long size;
		int rc = cJSON_IsString(item) ? blobs_stat(s, item->valuestring, &size) : LL_EINVAL;
		if (rc == 0) {
			found += size;
			continue;
		}
		if (rc != LL_ENOTFOUND) {
			cJSON_Delete(missing);
			return rc;
		}
		cJSON_AddItemToArray(missing, cJSON_CreateString(item->valuestring));
	}
	*ret_missing = missing;
	if (ret_found_bytes)
		*ret_found_bytes = found;
	return 0;
}

void blobs_refs_lock(struct blob_store *s)
{
	pthread_mutex_lock(&s->refs_lock);
}

void blobs_refs_unlock(struct blob_store *s)
{
	pthread_mutex_unlock(&s->refs_lock);
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct sweep {
	const char **referenced; /* sorted */
	size_t count;
	time_t before; /* unused since before this: removable */
	int removed;
};

static void sweep_blob(struct blob_store *s, const char *hex, const struct stat *st, void *context)
{
	struct sweep *sw = context;
	char path[BLOBS_PATH_MAX];

	if (st->st_mtime > sw->before ||
	    bsearch(&hex, sw->referenced, sw->count, sizeof(*sw->referenced), compare_strings))
		return;
	blob_path(s, hex, false, path);
	if (unlink(path) < 0)
		return;
	pthread_mutex_lock(&s->lock);
	s->used_bytes -= st->st_size;
	pthread_mutex_unlock(&s->lock);
	sw->removed++;
	log_event(LOG_INFO, "blob_removed", "sha256", hex, "reason", "retention", NULL);
}

int blobs_sweep(struct blob_store *s, long long now_s, blobs_references_fn references, void *context,
		int *ret_removed)
{
	struct sweep sw = {0};
	cJSON *hashes = NULL;
	const cJSON *item;
	int rc;

	blobs_refs_lock(s);
	if ((rc = references(context, &hashes)) < 0)
		goto out;
	sw.count = (size_t)cJSON_GetArraySize(hashes);
	sw.referenced = calloc(sw.count + 1, sizeof(*sw.referenced));
	if (!sw.referenced) {
		rc = LL_ENOMEM;
		goto out;
	}
	sw.count = 0;
	cJSON_ArrayForEach(item, hashes)
		if (cJSON_IsString(item))
			sw.referenced[sw.count++] = item->valuestring;
	qsort(sw.referenced, sw.count, sizeof(*sw.referenced), compare_strings);
	sw.before = (time_t)(now_s - s->limits.retention_s);
	rc = each_blob(s, sweep_blob, &sw);
	*ret_removed = sw.removed;
out:
	blobs_refs_unlock(s);
	free(sw.referenced);
	cJSON_Delete(hashes);
	return rc;
}

static void *sweeper_main(void *arg)
{
	struct blob_store *s = arg;

	while (!worker_wait_or_stop(&s->stop_lock, &s->stop_cond, &s->stopping,
				    s->limits.sweep_interval_s * 1000)) {
		int removed = 0;
		int rc =
			blobs_sweep(s, (long long)time(NULL), s->references, s->references_context, &removed);
		/* Another replica's leftovers (blob_files.h), and its dead peers'. */
		if (rc == 0)
			rc = clean_tmp(s);
		if (rc < 0)
			log_event(LOG_WARN, "blob_sweep_failed", "message", err_message(rc), NULL);
	}
	return NULL;
}

int blobs_sweeper_start(struct blob_store *s, blobs_references_fn references, void *context)
{
	s->references = references;
	s->references_context = context;
	if (pthread_create(&s->sweeper, NULL, sweeper_main, s) != 0)
		return err_set(LL_ENOMEM, "Cannot start the blob sweeper.");
	s->sweeper_running = true;
	return 0;
}

/* ------------------------------------------------------ backup's copies */

struct folder_copy {
	const char *to_root;
	struct blob_copy_counts counts;
	int rc;
};

/* Copies FROM to TO (a new file, synced), hashing what it reads: the copy
 * is kept only when the bytes hash to HEX. */
static int copy_verified(const char *from, const char *to, const char *hex, long long *ret_bytes)
{
	char buffer[1 << 16], got[65];
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_MD_CTX *hash = EVP_MD_CTX_new();
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, rc = 0;
	long long bytes = 0;
	ssize_t got_bytes;

	if (!hash || in < 0 || EVP_DigestInit_ex(hash, EVP_sha256(), NULL) != 1 ||
	    (out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0) {
		rc = disk_error("copy a blob");
		goto out;
	}
	while ((got_bytes = read(in, buffer, sizeof(buffer))) > 0) {
		if (EVP_DigestUpdate(hash, buffer, (size_t)got_bytes) != 1 ||
		    write(out, buffer, (size_t)got_bytes) != got_bytes) {
			rc = disk_error("write a blob's copy");
			goto out;
		}
		bytes += got_bytes;
	}
	if (got_bytes < 0 || fsync(out) < 0) {
		rc = disk_error("copy a blob");
		goto out;
	}
	EVP_DigestFinal_ex(hash, digest, &n);
	for (unsigned int i = 0; i < n && i < 32; i++)
		snprintf(got + 2 * i, 3, "%02x", digest[i]);
	if (n != 32 || strcmp(got, hex) != 0)
		rc = err_set(BLOBS_E_MISMATCH, "The blob %s hashes to %s: it is damaged.", hex,
			     n == 32 ? got : "?");
	*ret_bytes = bytes;
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0 && rc == 0)
		rc = disk_error("copy a blob");
	if (rc < 0 && out >= 0)
		unlink(to);
	EVP_MD_CTX_free(hash);
	return rc;
}

static void copy_blob(struct blob_store *s, const char *hex, const struct stat *st, void *context)
{
	struct folder_copy *c = context;
	char from[BLOBS_PATH_MAX], folder[BLOBS_PATH_MAX], to[BLOBS_PATH_MAX], partial[BLOBS_PATH_MAX + 16];
	struct stat have;
	long long bytes = 0;
	int rc;

	if (c->rc < 0)
		return;
	blob_path(s, hex, false, from);
	snprintf(folder, sizeof(folder), "%s/%.2s", c->to_root, hex);
	snprintf(to, sizeof(to), "%s/%.2s/%s", c->to_root, hex, hex + 2);
	snprintf(partial, sizeof(partial), "%s.partial", to);
	if (stat(to, &have) == 0 && have.st_size == st->st_size) {
		c->counts.kept++; /* copied by an earlier run (content-addressed) */
		return;
	}
	unlink(partial);
	if (mkdir(folder, 0700) < 0 && errno != EEXIST)
		rc = disk_error("create a blob folder");
	else if ((rc = copy_verified(from, partial, hex, &bytes)) == 0 && rename(partial, to) < 0)
		rc = disk_error("store a blob's copy");
	if (rc == 0)
		rc = fsync_folder(folder);
	if (rc < 0) {
		unlink(partial);
		c->rc = rc;
		return;
	}
	c->counts.copied++;
	c->counts.bytes += bytes;
}

int blobs_copy_folder(const char *from_root, const char *to_root, struct blob_copy_counts *ret_counts)
{
	struct blob_store *from = calloc(1, sizeof(*from));
	struct folder_copy c = {.to_root = to_root};
	struct stat st;
	int rc;

	if (!from)
		return LL_ENOMEM;
	if (strlen(from_root) >= sizeof(from->root) || strlen(to_root) >= sizeof(from->root)) {
		free(from);
		return err_set(LL_EINVAL, "The blob folder's path is too long.");
	}
	snprintf(from->root, sizeof(from->root), "%s", from_root);
	if (stat(from_root, &st) < 0 && errno == ENOENT)
		rc = 0; /* no blobs */
	else if (mkdir(to_root, 0700) < 0 && errno != EEXIST)
		rc = disk_error("create the blob folder");
	else if ((rc = each_blob(from, copy_blob, &c)) == 0)
		rc = c.rc;
	free(from);
	if (rc < 0)
		return rc;
	*ret_counts = c.counts;
	return 0;
}
