/*
 * plat_hash_win32.c - plat_int.h's SHA-256 with CryptoAPI (advapi32):
 * the enhanced RSA and AES provider has CALG_SHA_256 from Windows XP SP3
 * on (named "... (Prototype)" there, so the type's default provider is
 * asked for when the Vista name is unknown). A verify-only context: no
 * key container is created or opened.
 */
#ifdef _WIN32

#include "plat_int.h"

#include <windows.h>
#include <wincrypt.h>

#include <stdlib.h>

#include "loadlab/err.h"

/* wincrypt.h hides these below NTDDI_WINXPSP3; the XP build targets XP
 * (0x0501) and reports LL_EUNSUPPORTED at run time on SP2 and older.
 * Values from wincrypt.h. */
#ifndef ALG_SID_SHA_256
#define ALG_SID_SHA_256 12
#endif
#ifndef CALG_SHA_256
#define CALG_SHA_256 (ALG_CLASS_HASH | ALG_TYPE_ANY | ALG_SID_SHA_256)
#endif

struct plat_sha256_state {
	HCRYPTPROV provider;
	HCRYPTHASH hash;
};

int plat_sha256_begin(struct plat_sha256_state **ret_state)
{
	struct plat_sha256_state *s = calloc(1, sizeof(*s));

	if (!s)
		return err_set(LL_ENOMEM, "Out of memory.");
	if (!CryptAcquireContextA(&s->provider, NULL, MS_ENH_RSA_AES_PROV_A, PROV_RSA_AES,
				  CRYPT_VERIFYCONTEXT | CRYPT_SILENT) &&
	    !CryptAcquireContextA(&s->provider, NULL, NULL, PROV_RSA_AES,
				  CRYPT_VERIFYCONTEXT | CRYPT_SILENT)) {
		DWORD e = GetLastError();
		free(s);
		return err_set(LL_EUNSUPPORTED, "No SHA-256 provider (error %lu; XP needs SP3).",
			       (unsigned long)e);
	}
	if (!CryptCreateHash(s->provider, CALG_SHA_256, 0, 0, &s->hash)) {
		DWORD e = GetLastError();
		CryptReleaseContext(s->provider, 0);
		free(s);
		return err_set(LL_EUNSUPPORTED, "Cannot start a SHA-256 digest (error %lu).",
			       (unsigned long)e);
	}
	*ret_state = s;
	return 0;
}

int plat_sha256_update(struct plat_sha256_state *state, const void *data, size_t len)
{
	const BYTE *p = data;

	/* CryptHashData takes a DWORD length: feed a size_t in slices. */
	while (len > 0) {
		DWORD slice = len > (1u << 30) ? (1u << 30) : (DWORD)len;
		if (!CryptHashData(state->hash, p, slice, 0))
			return err_set(LL_EIO, "SHA-256 digest failed (error %lu).",
				       (unsigned long)GetLastError());
		p += slice;
		len -= slice;
	}
	return 0;
}

int plat_sha256_finish(struct plat_sha256_state *state, unsigned char ret_digest[32])
{
	DWORD len = 32;

	if (!CryptGetHashParam(state->hash, HP_HASHVAL, ret_digest, &len, 0) || len != 32)
		return err_set(LL_EIO, "SHA-256 digest failed (error %lu).", (unsigned long)GetLastError());
	return 0;
}

void plat_sha256_free(struct plat_sha256_state *state)
{
	if (!state)
		return;
	CryptDestroyHash(state->hash);
	CryptReleaseContext(state->provider, 0);
	free(state);
}

#endif /* _WIN32 */
