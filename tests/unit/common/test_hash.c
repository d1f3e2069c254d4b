/*
 * test_hash.c - plat_sha256() and plat_file_sha256() against the published
 * SHA-256 test vectors (FIPS 180-2, appendix B; NIST's "SHA256ShortMsg"
 * empty message). Built for POSIX as a unit test (OpenSSL EVP) and with
 * mingw-w64 for Windows (CryptoAPI), run under Wine by
 * tests/plat/test_plat_hash_wine.py.
 *
 * Usage: test_hash [OUT ERR] - with two paths, the report goes to those
 * files (Wine's own pipes are not reliable for a program's output).
 */
#include "loadlab/err.h"
#include "loadlab/plat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define TWO_BLOCKS "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
#define EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define MILLION_A "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

static void test_memory_vectors(void)
{
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	char hex[65];

	CHECK_EQ_INT(plat_sha256("abc", 3, hex), 0);
	CHECK_EQ_STR(hex, ABC);
	CHECK_EQ_INT(plat_sha256(two, strlen(two), hex), 0);
	CHECK_EQ_STR(hex, TWO_BLOCKS);
	CHECK_EQ_INT(plat_sha256("", 0, hex), 0);
	CHECK_EQ_STR(hex, EMPTY);
}

static void test_file_vectors(void)
{
	char *dir = NULL, path[PLAT_MAX_PATH + 1], hex[65] = "untouched";
	char *million = malloc(1000000);
	long long size = -1;

	CHECK(million != NULL);
	if (!million)
		return;
	memset(million, 'a', 1000000);
	CHECK_EQ_INT(plat_make_temp_dir("loadlab-test-hash", &dir), 0);
	if (!dir) {
		free(million);
		return;
	}

	/* One million 'a' (FIPS 180-2 B.3), read in 64 KiB blocks. */
	CHECK_EQ_INT(plat_path_join(path, sizeof(path), dir, "million-a"), 0);
	CHECK_EQ_INT(plat_write_file(path, million, 1000000), 0);
	CHECK_EQ_INT(plat_file_sha256(path, hex, &size), 0);
	CHECK_EQ_STR(hex, MILLION_A);
	CHECK_EQ_INT(size, 1000000);
	CHECK_EQ_INT(plat_sha256(million, 1000000, hex), 0);
	CHECK_EQ_STR(hex, MILLION_A);

	CHECK_EQ_INT(plat_path_join(path, sizeof(path), dir, "abc"), 0);
	CHECK_EQ_INT(plat_write_file(path, "abc", 3), 0);
	CHECK_EQ_INT(plat_file_sha256(path, hex, NULL), 0);
	CHECK_EQ_STR(hex, ABC);

	CHECK_EQ_INT(plat_path_join(path, sizeof(path), dir, "empty"), 0);
	CHECK_EQ_INT(plat_write_file(path, "", 0), 0);
	CHECK_EQ_INT(plat_file_sha256(path, hex, &size), 0);
	CHECK_EQ_STR(hex, EMPTY);
	CHECK_EQ_INT(size, 0);

	/* A missing file: LL_EIO naming it, outputs untouched. */
	CHECK_EQ_INT(plat_path_join(path, sizeof(path), dir, "missing"), 0);
	memcpy(hex, "untouched", 10);
	size = -1;
	CHECK_EQ_INT(plat_file_sha256(path, hex, &size), LL_EIO);
	CHECK(strstr(err_message(LL_EIO), "missing") != NULL);
	CHECK_EQ_STR(hex, "untouched");
	CHECK_EQ_INT(size, -1);

	CHECK_EQ_INT(plat_remove_tree(dir), 0);
	CHECK(!plat_file_exists(path));
	free(dir);
	free(million);
}

int main(int argc, char **argv)
{
	if (argc == 3 && (!freopen(argv[1], "w", stdout) || !freopen(argv[2], "w", stderr)))
		return 2;
	test_memory_vectors();
	test_file_vectors();
	return check_finish();
}
