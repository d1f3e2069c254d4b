/*
 * plat.c - the half of plat.h that is the same on every OS, written once
 * on top of what each backend provides (plat_int.h and the per-OS
 * functions of plat.h), as libuv's uv-common.c sits on src/unix and
 * src/win.
 */
#include "loadlab/plat.h"
#include "plat_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"

/* SPAWN (plat_spawn or plat_spawn_host), then plat_wait(). */
static int run(int (*spawn)(const struct plat_spawn_options *, struct plat_process **),
	       const struct plat_spawn_options *options, long long timeout_ms, int *ret_exit_code,
	       long long *ret_wall_us)
{
	struct plat_process *process;
	int rc;

	if ((rc = spawn(options, &process)) < 0)
		return rc;
	rc = plat_wait(process, timeout_ms, ret_exit_code, ret_wall_us);
	plat_process_free(process); /* kills it when still running */
	return rc;
}

int plat_run(const struct plat_spawn_options *options, long long timeout_ms, int *ret_exit_code,
	     long long *ret_wall_us)
{
	return run(plat_spawn, options, timeout_ms, ret_exit_code, ret_wall_us);
}

int plat_run_host(const struct plat_spawn_options *options, long long timeout_ms, int *ret_exit_code,
		  long long *ret_wall_us)
{
	return run(plat_spawn_host, options, timeout_ms, ret_exit_code, ret_wall_us);
}

bool plat_sleep_unless_stopped(long long ms)
{
	while (ms > 0) {
		long long slice = ms < 100 ? ms : 100;

		if (plat_stop_requested())
			return false;
		plat_sleep_ms(slice);
		ms -= slice;
	}
	return !plat_stop_requested();
}

static bool is_separator(char c)
{
	return c == '/' || c == plat_path_separator;
}

int plat_path_join(char *out, size_t size, const char *a, const char *b)
{
	size_t a_len = strlen(a), b_len = strlen(b);
	bool separator = a_len > 0 && !is_separator(a[a_len - 1]);
	size_t total = a_len + (separator ? 1 : 0) + b_len;

	if (total >= size)
		return err_set(LL_ETOOBIG, "The path %s%c%s is longer than %zu bytes.", a,
			       plat_path_separator, b, size ? size - 1 : 0);
	memmove(out, a, a_len);
	if (separator)
		out[a_len++] = plat_path_separator;
	memmove(out + a_len, b, b_len);
	out[total] = '\0';
	return 0;
}

int plat_read_file(const char *path, size_t limit, char **ret_data, size_t *ret_len)
{
	FILE *f;
	char *data = NULL;
	size_t len = 0, cap = 0, n;
	int rc = 0;

	if (limit > SIZE_MAX - 2)
		limit = SIZE_MAX - 2;
	f = fopen(path, "rb");
	if (!f)
		return err_set(LL_EIO, "Cannot open %s: %s.", path, strerror(errno));
	/* The buffer grows to at most LIMIT + 1 bytes of data and the NUL: one
	 * byte past LIMIT shows that the file is longer. */
	do {
		if (cap - len < 2) {
			size_t next = cap ? cap * 2 : 4096;
			char *grown;

			if (next > limit + 2)
				next = limit + 2;
			grown = realloc(data, next);
			if (!grown) {
				rc = err_set(LL_ENOMEM, "Out of memory reading %s.", path);
				goto out;
			}
			data = grown;
			cap = next;
		}
		n = fread(data + len, 1, cap - len - 1, f);
		len += n;
		if (len > limit) {
			rc = err_set(LL_ETOOBIG, "%s is larger than %zu bytes.", path, limit);
			goto out;
		}
	} while (n > 0);
	if (ferror(f)) {
		rc = err_set(LL_EIO, "Cannot read %s.", path);
		goto out;
	}
	data[len] = '\0';
	*ret_data = data;
	*ret_len = len;
	data = NULL;
out:
	free(data);
	fclose(f);
	return rc;
}

int plat_write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	size_t n;

	if (!f)
		return err_set(LL_EIO, "Cannot create %s: %s.", path, strerror(errno));
	n = fwrite(data, 1, len, f);
	if (fclose(f) != 0 || n != len)
		return err_set(LL_EIO, "Cannot write %s.", path);
	return 0;
}

static void to_hex(const unsigned char digest[32], char ret_hex[65])
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < 32; i++) {
		ret_hex[2 * i] = digits[digest[i] >> 4];
		ret_hex[2 * i + 1] = digits[digest[i] & 15];
	}
	ret_hex[64] = '\0';
}

int plat_sha256(const void *data, size_t len, char ret_hex[65])
{
	struct plat_sha256_state *state = NULL;
	unsigned char digest[32];
	int rc;

	if ((rc = plat_sha256_begin(&state)) < 0)
		return rc;
	if ((rc = plat_sha256_update(state, data, len)) == 0 && (rc = plat_sha256_finish(state, digest)) == 0)
		to_hex(digest, ret_hex);
	plat_sha256_free(state);
	return rc;
}

int plat_file_sha256(const char *path, char ret_hex[65], long long *ret_size)
{
	struct plat_sha256_state *state = NULL;
	unsigned char digest[32];
	long long size = 0;
	char *block = NULL;
	FILE *f;
	size_t n;
	int rc;

	f = fopen(path, "rb");
	if (!f)
		return err_set(LL_EIO, "Cannot open %s: %s.", path, strerror(errno));
	block = malloc(65536);
	if (!block) {
		rc = err_set(LL_ENOMEM, "Out of memory hashing %s.", path);
		goto out;
	}
	if ((rc = plat_sha256_begin(&state)) < 0)
		goto out;
	while ((n = fread(block, 1, 65536, f)) > 0) {
		if ((rc = plat_sha256_update(state, block, n)) < 0)
			goto out;
		size += (long long)n;
	}
	if (ferror(f)) {
		rc = err_set(LL_EIO, "Cannot read %s.", path);
		goto out;
	}
	if ((rc = plat_sha256_finish(state, digest)) < 0)
		goto out;
	to_hex(digest, ret_hex);
	if (ret_size)
		*ret_size = size;
out:
	plat_sha256_free(state);
	free(block);
	fclose(f);
	return rc;
}

const char *plat_getenv(const char *name)
{
	return getenv(name);
}
