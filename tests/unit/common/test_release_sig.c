/* release_sig.c and its OpenSSL backend: the key and signature files, a
 * signature OpenSSL's command line made (openssl pkeyutl -sign -rawin over
 * the signed text), and a good, a bad, a truncated signature and a wrong
 * key. */
#include "check.h"

#include "loadlab/err.h"
#include "loadlab/release_sig.h"

#include <stdlib.h>
#include <string.h>

/* "openssl genpkey -algorithm ed25519"; its public key; the SHA-256 of
 * "abc"; "openssl pkeyutl -sign -rawin" over RELEASE_SIG_CONTEXT + it. */
static const char cli_pem[] = "-----BEGIN PRIVATE KEY-----\n"
			      "MC4CAQAwBQYDK2VwBCIEIIIZUW/7mXYS3t3iXRVlgo0B2IU467Tv1x2Rp+ZeSp2k\n"
			      "-----END PRIVATE KEY-----\n";
static const char cli_key_file[] =
	"# the lab's release key\n"
	"loadlab-release-key ed25519 368cc37bc8cd9edb87e495ce65f8d70123b5d32f64f75f48b75930bf0895f415 "
	"2026\r\n";
static const char abc_sha256[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
static const char cli_sig_file[] = "loadlab-release-sig ed25519 "
				   "b817a69bfeb8ed311e80d2cf9e5596dcabe195206e124996ce264da1e62fdde6"
				   "ec1d29da62e42b10b9b0ebce8b1e439d149a18c1bcdcdf8c1133feac0e584a02\n";

static int parse_keys(const char *text, struct release_keys *keys)
{
	return release_keys_parse(text, strlen(text), keys);
}

static int parse_sig(const char *text, unsigned char sig[64])
{
	return release_sig_parse(text, strlen(text), sig);
}

static void key_files(void)
{
	struct release_keys keys = {0}, two = {0};
	char line[160], text[400];

	CHECK_EQ_INT(parse_keys(cli_key_file, &keys), 0);
	CHECK_EQ_INT(keys.count, 1);
	CHECK_EQ_INT(keys.key[0][0], 0x36);
	release_key_line(keys.key[0], line, sizeof(line));
	CHECK_EQ_STR(line, "loadlab-release-key ed25519 "
			   "368cc37bc8cd9edb87e495ce65f8d70123b5d32f64f75f48b75930bf0895f415\n");
	/* A rotation: two keys, blank lines and comments. */
	snprintf(text, sizeof(text), "\n%s\n  # the next key\n%s", line, line);
	CHECK_EQ_INT(parse_keys(text, &two), 0);
	CHECK_EQ_INT(two.count, 2);
	/* Not keys: untouched on failure. */
	CHECK_EQ_INT(parse_keys("", &keys), LL_EFORMAT);
	CHECK_EQ_INT(parse_keys("# only a comment\n", &keys), LL_EFORMAT);
	CHECK_EQ_INT(
		parse_keys("loadlab-release-key rsa 368cc37bc8cd9edb87e495ce65f8d70123b5d32f64f75f48b7593"
			   "0bf0895f415\n",
			   &keys),
		LL_EFORMAT);
	CHECK_EQ_INT(parse_keys("loadlab-release-key ed25519 368cc37b\n", &keys), LL_EFORMAT);
	CHECK_EQ_INT(parse_keys("loadlab-release-key ed25519 "
				"368cc37bc8cd9edb87e495ce65f8d70123b5d32f64f75f48b75930bf0895f41g\n",
				&keys),
		     LL_EFORMAT);
	CHECK(strstr(err_message(LL_EFORMAT), "Line 1") != NULL);
	CHECK_EQ_INT(keys.count, 1);
	{
		char many[2000];
		size_t at = 0;
		for (int i = 0; i <= RELEASE_KEYS_MAX; i++)
			at += (size_t)snprintf(many + at, sizeof(many) - at, "%s", line);
		CHECK_EQ_INT(parse_keys(many, &two), LL_EFORMAT);
		CHECK_EQ_INT(two.count, 2);
	}
	CHECK_EQ_INT(release_keys_parse("loadlab-release-key\0", 20, &keys), LL_EFORMAT);
}

static void sig_files(void)
{
	unsigned char sig[64], other[64];
	char line[200], text[400];

	CHECK_EQ_INT(parse_sig(cli_sig_file, sig), 0);
	CHECK_EQ_INT(sig[0], 0xb8);
	release_sig_line(sig, line, sizeof(line));
	CHECK_EQ_STR(line, cli_sig_file);
	/* Truncated, too long, two lines, another word, an extra word. */
	snprintf(text, sizeof(text), "%.*s\n", (int)strlen(cli_sig_file) - 2, cli_sig_file);
	CHECK_EQ_INT(parse_sig(text, other), LL_EFORMAT);
	snprintf(text, sizeof(text), "%.*s00\n", (int)strlen(cli_sig_file) - 1, cli_sig_file);
	CHECK_EQ_INT(parse_sig(text, other), LL_EFORMAT);
	snprintf(text, sizeof(text), "%s%s", cli_sig_file, cli_sig_file);
	CHECK_EQ_INT(parse_sig(text, other), LL_EFORMAT);
	snprintf(text, sizeof(text), "%.*s x\n", (int)strlen(cli_sig_file) - 1, cli_sig_file);
	CHECK_EQ_INT(parse_sig(text, other), LL_EFORMAT);
	CHECK_EQ_INT(parse_sig("loadlab-release-key ed25519 00\n", other), LL_EFORMAT);
	CHECK_EQ_INT(parse_sig("", other), LL_EFORMAT);
}

static void verify(void)
{
	struct release_keys keys, wrong;
	unsigned char sig[64], bad[64], public_key[32], mine[64];
	char *pem = NULL, other_sha256[65];

	CHECK_EQ_INT(parse_keys(cli_key_file, &keys), 0);
	CHECK_EQ_INT(parse_sig(cli_sig_file, sig), 0);
	/* OpenSSL's command line signed it: good. */
	CHECK_EQ_INT(release_sig_verify(&keys, abc_sha256, sig), 0);
	/* One bit of the signature flipped. */
	memcpy(bad, sig, 64);
	bad[10] ^= 0x01;
	CHECK_EQ_INT(release_sig_verify(&keys, abc_sha256, bad), LL_EFORBIDDEN);
	/* Another build's digest. */
	memcpy(other_sha256, abc_sha256, 65);
	other_sha256[0] = 'c';
	CHECK_EQ_INT(release_sig_verify(&keys, other_sha256, sig), LL_EFORBIDDEN);
	CHECK_EQ_INT(release_sig_verify(&keys, "BA7816BF", sig), LL_EINVAL);
	/* The same key, here: the public half, and a signature byte for byte
	 * (Ed25519 is deterministic). */
	CHECK_EQ_INT(release_key_public(cli_pem, strlen(cli_pem), public_key), 0);
	CHECK(memcmp(public_key, keys.key[0], 32) == 0);
	CHECK_EQ_INT(release_sig_sign(cli_pem, strlen(cli_pem), abc_sha256, mine), 0);
	CHECK(memcmp(mine, sig, 64) == 0);
	CHECK_EQ_INT(release_sig_sign("not a key", 9, abc_sha256, mine), LL_EFORMAT);
	/* A new key: its signature is good for its key, not for the other;
	 * a key file that lists both takes either (a rotation). */
	CHECK_EQ_INT(release_key_new(&pem, public_key), 0);
	CHECK(pem && strstr(pem, "BEGIN PRIVATE KEY"));
	CHECK_EQ_INT(release_sig_sign(pem, strlen(pem), abc_sha256, mine), 0);
	wrong.count = 1;
	memcpy(wrong.key[0], public_key, 32);
	CHECK_EQ_INT(release_sig_verify(&wrong, abc_sha256, mine), 0);
	CHECK_EQ_INT(release_sig_verify(&keys, abc_sha256, mine), LL_EFORBIDDEN);
	CHECK_EQ_INT(release_sig_verify(&wrong, abc_sha256, sig), LL_EFORBIDDEN);
	memcpy(keys.key[1], public_key, 32);
	keys.count = 2;
	CHECK_EQ_INT(release_sig_verify(&keys, abc_sha256, mine), 0);
	CHECK_EQ_INT(release_sig_verify(&keys, abc_sha256, sig), 0);
	free(pem);
}

int main(void)
{
	key_files();
	sig_files();
	verify();
	return check_finish();
}
