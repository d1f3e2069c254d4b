/* release_sig_posix.c - release_sig.h's Ed25519 through OpenSSL's
 * libcrypto (EVP_PKEY_ED25519, OpenSSL 1.1.1 and later). */
#ifndef _WIN32
#include "loadlab/release_sig.h"

#include "loadlab/err.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>

int release_sig_supported(void)
{
	return 0;
}

int release_sig_verify(const struct release_keys *keys, const char *sha256_hex, const unsigned char sig[64])
{
	char message[sizeof(RELEASE_SIG_CONTEXT) + 64];

	if (!release_sig_message(sha256_hex, message, sizeof(message)))
		return err_set(LL_EINVAL, "A build's SHA-256 is 64 lowercase hex digits.");
	for (int i = 0; i < keys->count; i++) {
		EVP_PKEY *key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, keys->key[i], 32);
		EVP_MD_CTX *ctx = key ? EVP_MD_CTX_new() : NULL;
		int good =
			ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, key) == 1 &&
			EVP_DigestVerify(ctx, sig, 64, (const unsigned char *)message, strlen(message)) == 1;
		EVP_MD_CTX_free(ctx);
		EVP_PKEY_free(key);
		if (good)
			return 0;
	}
	return err_set(LL_EFORBIDDEN,
		       "The build is not signed by any of the %d release key(s) of this agent.", keys->count);
}

/* The Ed25519 private key of PEM; NULL (message set) when it is none. */
static EVP_PKEY *read_private(const char *pem, size_t len)
{
	BIO *bio = len <= RELEASE_PRIVATE_KEY_FILE_MAX ? BIO_new_mem_buf(pem, (int)len) : NULL;
	EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;

	BIO_free(bio);
	if (key && EVP_PKEY_id(key) != EVP_PKEY_ED25519) {
		EVP_PKEY_free(key);
		key = NULL;
	}
	if (!key)
		err_set(LL_EFORMAT, "The private key is not an Ed25519 key in PKCS#8 PEM (release-key new "
				    "makes one).");
	return key;
}

int release_key_public(const char *pem, size_t len, unsigned char ret_public[32])
{
	EVP_PKEY *key = read_private(pem, len);
	size_t n = 32;
	int rc = 0;

	if (!key)
		return LL_EFORMAT;
	if (EVP_PKEY_get_raw_public_key(key, ret_public, &n) != 1 || n != 32)
		rc = err_set(LL_EFORMAT, "Cannot read the public half of the private key.");
	EVP_PKEY_free(key);
	return rc;
}

int release_sig_sign(const char *pem, size_t len, const char *sha256_hex, unsigned char ret_sig[64])
{
	char message[sizeof(RELEASE_SIG_CONTEXT) + 64];
	unsigned char sig[64];
	size_t n = sizeof(sig);
	EVP_PKEY *key;
	EVP_MD_CTX *ctx;
	int rc = 0;

	if (!release_sig_message(sha256_hex, message, sizeof(message)))
		return err_set(LL_EINVAL, "A build's SHA-256 is 64 lowercase hex digits.");
	if (!(key = read_private(pem, len)))
		return LL_EFORMAT;
	ctx = EVP_MD_CTX_new();
	if (!ctx || EVP_DigestSignInit(ctx, NULL, NULL, NULL, key) != 1 ||
	    EVP_DigestSign(ctx, sig, &n, (const unsigned char *)message, strlen(message)) != 1 || n != 64)
		rc = err_set(LL_EFORMAT, "OpenSSL could not sign with the key.");
	else
		memcpy(ret_sig, sig, 64);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	return rc;
}

int release_key_new(char **ret_pem, unsigned char ret_public[32])
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	EVP_PKEY *key = NULL;
	BIO *bio = NULL;
	BUF_MEM *mem = NULL;
	char *pem = NULL;
	size_t n = 32;
	int rc = 0;

	if (!ctx || EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_keygen(ctx, &key) != 1 ||
	    EVP_PKEY_get_raw_public_key(key, ret_public, &n) != 1 || n != 32 ||
	    !(bio = BIO_new(BIO_s_mem())) ||
	    PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) != 1) {
		rc = err_set(LL_EIO, "OpenSSL could not make an Ed25519 key.");
		goto out;
	}
	BIO_get_mem_ptr(bio, &mem);
	if (!mem || !(pem = malloc(mem->length + 1))) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	memcpy(pem, mem->data, mem->length);
	pem[mem->length] = '\0';
	*ret_pem = pem;
out:
	BIO_free(bio);
	EVP_PKEY_free(key);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}
#endif
