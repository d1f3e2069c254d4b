/*
 * plat_hash_posix.c - plat_file_sha256() with OpenSSL's EVP interface.
 *
 * Kept apart from plat_posix.c so that a program that spawns processes but
 * never hashes does not need libcrypto at link time; a program that
 * hashes links PkgConfig::CRYPTO.
 */
#ifndef _WIN32

#include "loadlab/plat.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "loadlab/err.h"

int plat_file_sha256(const char *path, char ret_hex[65], long long *ret_size)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char block[65536], digest[EVP_MAX_MD_SIZE];
	unsigned int digest_len = 0;
	EVP_MD_CTX *ctx = NULL;
	long long size = 0;
	FILE *f;
	size_t n;
	int rc = 0;

	f = fopen(path, "rb");
	if (!f)
		return err_set(LL_EIO, "Cannot open %s: %s.", path, strerror(errno));
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		rc = err_set(LL_ENOMEM, "Cannot start a SHA-256 digest.");
		goto out;
	}
	while ((n = fread(block, 1, sizeof(block), f)) > 0) {
		if (EVP_DigestUpdate(ctx, block, n) != 1) {
			rc = err_set(LL_EIO, "SHA-256 digest failed.");
			goto out;
		}
		size += (long long)n;
	}
	if (ferror(f)) {
		rc = err_set(LL_EIO, "Cannot read %s.", path);
		goto out;
	}
	if (EVP_DigestFinal_ex(ctx, digest, &digest_len) != 1 || digest_len != 32) {
		rc = err_set(LL_EIO, "SHA-256 digest failed.");
		goto out;
	}
	for (unsigned int i = 0; i < 32; i++) {
		ret_hex[2 * i] = digits[digest[i] >> 4];
		ret_hex[2 * i + 1] = digits[digest[i] & 15];
	}
	ret_hex[64] = '\0';
	if (ret_size)
		*ret_size = size;
out:
	EVP_MD_CTX_free(ctx);
	fclose(f);
	return rc;
}

#endif /* !_WIN32 */
