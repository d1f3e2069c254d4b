/* release_sig_win32.c - release_sig.h on Windows: neither CryptoAPI nor
 * CNG (BCrypt) offers Ed25519, and the Windows agent links no OpenSSL, so
 * nothing is verified and nothing is signed: a Windows agent keeps
 * updates off (docs/agent.md, "Signed builds"). */
#ifdef _WIN32
#include "loadlab/release_sig.h"

#include "loadlab/err.h"

#define NO_ED25519 "This Windows build of loadlab has no Ed25519: it cannot check a release signature."

int release_sig_supported(void)
{
	return err_set(LL_EUNSUPPORTED, NO_ED25519);
}

int release_sig_verify(const struct release_keys *keys, const char *sha256_hex, const unsigned char sig[64])
{
	(void)keys;
	(void)sha256_hex;
	(void)sig;
	return err_set(LL_EUNSUPPORTED, NO_ED25519);
}

int release_sig_sign(const char *pem, size_t len, const char *sha256_hex, unsigned char ret_sig[64])
{
	(void)pem;
	(void)len;
	(void)sha256_hex;
	(void)ret_sig;
	return err_set(LL_EUNSUPPORTED, NO_ED25519);
}

int release_key_new(char **ret_pem, unsigned char ret_public[32])
{
	(void)ret_pem;
	(void)ret_public;
	return err_set(LL_EUNSUPPORTED, NO_ED25519);
}

int release_key_public(const char *pem, size_t len, unsigned char ret_public[32])
{
	(void)pem;
	(void)len;
	(void)ret_public;
	return err_set(LL_EUNSUPPORTED, NO_ED25519);
}
#endif
