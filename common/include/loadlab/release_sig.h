/*
 * release_sig.h - the lab's release key: Ed25519 signatures over agent
 * builds (docs/agent.md, "Signed builds"). The lab admin makes the key
 * pair offline and signs each build; an agent installs and runs only a
 * build signed by a key of its own key file, which the admin put beside
 * its identity. The server only carries the signatures: it can neither
 * make one nor choose the key they are checked against.
 *
 * What is signed: the 91-byte text RELEASE_SIG_CONTEXT followed by the
 * build's SHA-256 as 64 lowercase hex digits ("loadlab-agent-build
 * sha256 " + HEX). The agent hashes the bytes it downloaded itself and
 * checks the signature over that digest: a signature is good for those
 * bytes only, and for nothing else the key might sign.
 *
 * Files, all text, LF or CRLF line ends, '#' comments and blank lines
 * ignored:
 *
 *  - a public key file (the agent's DATA_DIR/release-keys.pub): one key
 *    a line, "loadlab-release-key ed25519 HEX [COMMENT]", HEX the 32-byte
 *    public key in 64 hex digits; 1..RELEASE_KEYS_MAX keys (more than one
 *    during a rotation: a build signed by any of them is good); at most
 *    RELEASE_KEY_FILE_MAX bytes;
 *  - a signature file (BUILD.sig beside BUILD): one line
 *    "loadlab-release-sig ed25519 HEX", HEX the 64-byte signature in 128
 *    hex digits; at most RELEASE_SIG_FILE_MAX bytes;
 *  - a private key file: PKCS#8 PEM ("openssl genpkey -algorithm
 *    ed25519" makes the same), mode 0600, kept off the lab's machines.
 *
 * Backends: release_sig_posix.c (OpenSSL's libcrypto, 1.1.1 or later);
 * release_sig_win32.c has no Ed25519 (neither CryptoAPI nor CNG offer
 * it): verify, sign and key_new return LL_EUNSUPPORTED there, so a
 * Windows agent never installs a build it cannot check. Parsing is
 * common (release_sig.c). Nothing here prints.
 */
#ifndef LOADLAB_RELEASE_SIG_H
#define LOADLAB_RELEASE_SIG_H

#include <stdbool.h>
#include <stddef.h>

#define RELEASE_KEYS_MAX 8
#define RELEASE_KEY_FILE_MAX 4096
#define RELEASE_SIG_FILE_MAX 1024
#define RELEASE_PRIVATE_KEY_FILE_MAX 4096
/* The prefix of the signed text (without a NUL), then 64 hex digits. */
#define RELEASE_SIG_CONTEXT "loadlab-agent-build sha256 "
/* The agent's public key file in its data folder (beside agent.json). */
#define RELEASE_KEYS_FILE "release-keys.pub"

struct release_keys {
	int count;
	unsigned char key[RELEASE_KEYS_MAX][32];
};

/* Parses a public key file's TEXT (LEN bytes) into *RET_KEYS. LL_EFORMAT
 * (with the line's number) for a line that is not a key, no key at all,
 * or more than RELEASE_KEYS_MAX; *RET_KEYS untouched on failure. */
int release_keys_parse(const char *text, size_t len, struct release_keys *ret_keys);

/* Reads and parses the public key file at PATH; LL_ENOTFOUND when there
 * is none, LL_ETOOBIG past RELEASE_KEY_FILE_MAX. */
int release_keys_read(const char *path, struct release_keys *ret_keys);

/* The line of a public key file for KEY into OUT (at least 128 bytes):
 * "loadlab-release-key ed25519 HEX\n". */
void release_key_line(const unsigned char key[32], char *out, size_t size);

/* Parses a signature file's TEXT (LEN bytes) into RET_SIG; LL_EFORMAT
 * when it is not exactly one signature line. */
int release_sig_parse(const char *text, size_t len, unsigned char ret_sig[64]);

/* SIG as "loadlab-release-sig ed25519 HEX\n" into OUT (at least 160 bytes). */
void release_sig_line(const unsigned char sig[64], char *out, size_t size);

/* 0 when this build can verify signatures; LL_EUNSUPPORTED (message
 * set) where there is no Ed25519. */
int release_sig_supported(void);

/* 0 when SIG is a signature by one of KEYS over the build whose SHA-256
 * is SHA256_HEX (64 lowercase hex digits). LL_EFORBIDDEN when no key
 * verifies it (a wrong key, or bytes that are not the signed ones),
 * LL_EINVAL for a digest that is not 64 lowercase hex digits,
 * LL_EUNSUPPORTED where there is no Ed25519. */
int release_sig_verify(const struct release_keys *keys, const char *sha256_hex, const unsigned char sig[64]);

/* Signs the build whose SHA-256 is SHA256_HEX with the private key PEM
 * (LEN bytes): RET_SIG. LL_EFORMAT for a PEM that is no Ed25519 private
 * key. */
int release_sig_sign(const char *pem, size_t len, const char *sha256_hex, unsigned char ret_sig[64]);

/* A new key pair: *RET_PEM (PKCS#8 PEM, NUL-terminated, the caller frees
 * it) and RET_PUBLIC. */
int release_key_new(char **ret_pem, unsigned char ret_public[32]);

/* The public key of the private key PEM (LEN bytes). */
int release_key_public(const char *pem, size_t len, unsigned char ret_public[32]);

/* The signed text for SHA256_HEX into OUT (at least
 * sizeof(RELEASE_SIG_CONTEXT) + 64 bytes, NUL-terminated); false when
 * SHA256_HEX is not 64 lowercase hex digits. Used by the backends. */
bool release_sig_message(const char *sha256_hex, char *out, size_t size);

#endif
