/*
 * plat_hash_posix.c - plat_int.h's SHA-256 with OpenSSL's EVP interface
 * (libcrypto, linked by loadlab_common on POSIX).
 */
#ifndef _WIN32

#include "plat_int.h"

#include <openssl/evp.h>

#include "loadlab/err.h"

struct plat_sha256_state {
	EVP_MD_CTX *ctx;
};

int plat_sha256_begin(struct plat_sha256_state **ret_state)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return err_set(LL_ENOMEM, "Cannot start a SHA-256 digest.");
	}
	/* The state is the context itself: no allocation of our own. */
	*ret_state = (struct plat_sha256_state *)ctx;
	return 0;
}

int plat_sha256_update(struct plat_sha256_state *state, const void *data, size_t len)
{
	if (EVP_DigestUpdate((EVP_MD_CTX *)state, data, len) != 1)
		return err_set(LL_EIO, "SHA-256 digest failed.");
	return 0;
}

int plat_sha256_finish(struct plat_sha256_state *state, unsigned char ret_digest[32])
{
	unsigned char digest[EVP_MAX_MD_SIZE];
	unsigned int digest_len = 0;

	if (EVP_DigestFinal_ex((EVP_MD_CTX *)state, digest, &digest_len) != 1 || digest_len != 32)
		return err_set(LL_EIO, "SHA-256 digest failed.");
	for (int i = 0; i < 32; i++)
		ret_digest[i] = digest[i];
	return 0;
}

void plat_sha256_free(struct plat_sha256_state *state)
{
	EVP_MD_CTX_free((EVP_MD_CTX *)state);
}

#endif /* !_WIN32 */
