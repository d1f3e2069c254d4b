/*
 * plat_int.h - what each OS backend provides to the shared half of the
 * platform layer (plat.c), like libuv's uv-common.h: the shared code calls
 * these, and every backend defines them. Not for callers outside
 * common/src/plat/.
 */
#ifndef LOADLAB_PLAT_INT_H
#define LOADLAB_PLAT_INT_H

#include <stddef.h>

/* A SHA-256 computation in progress (OpenSSL's EVP_MD_CTX on POSIX, a
 * CryptoAPI hash on Windows). Opaque. */
struct plat_sha256_state;

/* Starts a SHA-256 computation. LL_EUNSUPPORTED when the OS has no
 * provider, LL_ENOMEM. */
int plat_sha256_begin(struct plat_sha256_state **ret_state);

/* Adds LEN bytes of DATA. */
int plat_sha256_update(struct plat_sha256_state *state, const void *data, size_t len);

/* Writes the 32-byte digest into RET_DIGEST. The state cannot be updated
 * afterwards; it is still freed with plat_sha256_free(). */
int plat_sha256_finish(struct plat_sha256_state *state, unsigned char ret_digest[32]);

/* Releases STATE; NULL is fine. */
void plat_sha256_free(struct plat_sha256_state *state);

#endif
