#include "auth.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

int auth_token_generate(const char *prefix, char *out, size_t out_size)
{
	unsigned char bytes[32];
	size_t got = 0, len = strlen(prefix);

	if (out_size < len + 2 * sizeof(bytes) + 1)
		return LL_EINVAL;
	while (got < sizeof(bytes)) {
		ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
		if (n < 0 && errno != EINTR)
			return err_set(LL_EIO, "The OS gave no random bytes.");
		if (n > 0)
			got += (size_t)n;
	}
	memcpy(out, prefix, len);
	for (size_t i = 0; i < sizeof(bytes); i++)
		snprintf(out + len + 2 * i, 3, "%02x", bytes[i]);
	return 0;
}

/* SHA-256 fetched from OpenSSL's provider once: EVP_sha256() passed to
 * EVP_Digest() fetches it again on every call (a lookup under locks that
 * was most of a request's token check, callgrind on bench_server). */
static EVP_MD *sha256;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
	sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
}

void auth_token_hash(const char *token, unsigned char hash[STORE_TOKEN_HASH_SIZE])
{
	unsigned int len = STORE_TOKEN_HASH_SIZE;

	pthread_once(&sha256_once, sha256_fetch);
	EVP_Digest(token, strlen(token), hash, &len, sha256 ? sha256 : EVP_sha256(), NULL);
}

/* Whether C is one of [A-Za-z0-9._~+/=-] (by ranges: a strchr() per byte
 * of every request's token showed in the profile). */
static bool token_byte(char c)
{
	switch (c) {
	case '.':
	case '_':
	case '~':
	case '+':
	case '/':
	case '=':
	case '-':
		return true;
	default:
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
	}
}

bool auth_token_well_formed(const char *token)
{
	size_t n = strlen(token);

	if (n < 16 || n > AUTH_TOKEN_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!token_byte(token[i]))
			return false;
	return true;
}

#define KIND(kind) (1u << (kind))
#define USER_KINDS (KIND(STORE_TOKEN_ADMIN) | KIND(STORE_TOKEN_USER))

/* The token kinds each class of route admits once a token is needed, one
 * bit KIND() each; AUTH_ANYONE needs none. */
static const unsigned admitted_kinds[] = {
	[AUTH_METRICS] = USER_KINDS,
	[AUTH_READER] = USER_KINDS,
	[AUTH_USER] = USER_KINDS,
	[AUTH_ADMIN] = KIND(STORE_TOKEN_ADMIN),
	[AUTH_ENROLL] = KIND(STORE_TOKEN_ENROLL) | KIND(STORE_TOKEN_ADMIN),
	[AUTH_AGENT] = KIND(STORE_TOKEN_AGENT),
	[AUTH_USER_OR_AGENT] = USER_KINDS | KIND(STORE_TOKEN_AGENT),
	[AUTH_READER_OR_AGENT] = USER_KINDS | KIND(STORE_TOKEN_AGENT),
};

static bool class_admits(enum auth_class class, enum store_token_kind kind)
{
	return (unsigned)class < sizeof(admitted_kinds) / sizeof(admitted_kinds[0]) && (unsigned)kind < 32 &&
	       (admitted_kinds[class] & KIND(kind)) != 0;
}

int auth_check(struct store *store, enum auth_class class, bool public_read, bool public_metrics,
	       const char *header, struct store_token *ret_token)
{
	unsigned char hash[STORE_TOKEN_HASH_SIZE];
	struct store_token token;
	const char *value;
	int rc;

	if (class == AUTH_ANYONE ||
	    ((class == AUTH_READER || class == AUTH_READER_OR_AGENT) && public_read) ||
	    (class == AUTH_METRICS && public_metrics)) {
		memset(ret_token, 0, sizeof(*ret_token));
		ret_token->id = 0;
		/* A public read with a good token is that token's read (an owner
		 * sees what is hidden from others); any other is anonymous. */
		if (class != AUTH_ANYONE && header && strncmp(header, "Bearer ", 7) == 0 &&
		    auth_token_well_formed(header + 7)) {
			auth_token_hash(header + 7, hash);
			if (store_token_find(store, hash, &token) == 0)
				*ret_token = token;
		}
		return 0;
	}
	if (!header)
		return err_set(LL_EAUTH, "This route needs a token: send 'Authorization: Bearer TOKEN'.");
	if (strncmp(header, "Bearer ", 7) != 0)
		return err_set(LL_EAUTH, "The Authorization header must be 'Bearer TOKEN'.");
	value = header + 7;
	if (!auth_token_well_formed(value))
		return err_set(LL_EAUTH, "The token is malformed.");
	auth_token_hash(value, hash);
	rc = store_token_find(store, hash, &token);
	if (rc == LL_ENOTFOUND)
		return err_set(LL_EAUTH, "The token is unknown or was revoked.");
	if (rc < 0)
		return rc;

	if (!class_admits(class, token.kind)) {
		const char *kind = store_token_kind_name(token.kind);
		return err_set(LL_EFORBIDDEN, "%s %s token may not use this route.",
			       strchr("aeiou", kind[0]) ? "An" : "A", kind);
	}
	*ret_token = token;
	return 0;
}

static int write_token_file(const char *data_dir, const char *name, const char *token)
{
	char path[1200];
	int fd;
	size_t len = strlen(token);

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_set(LL_EIO, "Cannot create %s: %s.", path, strerror(errno));
	if (write(fd, token, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd) < 0) {
		close(fd);
		return err_set(LL_EIO, "Cannot write %s.", path);
	}
	close(fd);
	log_event(LOG_INFO, "token_written", "path", path, NULL);
	return 0;
}

static int bootstrap_one(struct store *store, const char *data_dir, enum store_token_kind kind,
			 const char *env_name, const char *prefix, const char *file)
{
	const char *given = getenv(env_name);
	unsigned char hash[STORE_TOKEN_HASH_SIZE];
	char token[AUTH_TOKEN_MAX + 1];
	long long count;
	int rc;

	if (given && *given) {
		if (!auth_token_well_formed(given))
			return err_set(LL_EINVAL, "%s must be 16 to 256 characters of [A-Za-z0-9._~+/=-].",
				       env_name);
		auth_token_hash(given, hash);
		return store_token_create(store, kind, env_name, NULL, hash, clock_now_ms(), NULL);
	}
	if ((rc = store_token_count(store, kind, &count)) < 0)
		return rc;
	if (count > 0)
		return 0;
	if ((rc = auth_token_generate(prefix, token, sizeof(token))) < 0)
		return rc;
	auth_token_hash(token, hash);
	if ((rc = store_token_create(store, kind, file, NULL, hash, clock_now_ms(), NULL)) < 0)
		return rc;
	return write_token_file(data_dir, file, token);
}

int auth_bootstrap(struct store *store, const char *data_dir)
{
	int rc = bootstrap_one(store, data_dir, STORE_TOKEN_ADMIN, "LOADLAB_ADMIN_TOKEN", "lladm_",
			       "admin.token");

	if (rc == 0)
		rc = bootstrap_one(store, data_dir, STORE_TOKEN_ENROLL, "LOADLAB_ENROLL_TOKEN", "llenr_",
				   "enroll.token");
	return rc;
}
