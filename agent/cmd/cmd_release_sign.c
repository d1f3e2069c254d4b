/*
 * cmd_release_sign.c - loadlab-agent release-sign KEY FILE...: signs each
 * agent build FILE with the release key KEY (loadlab/release_sig.h),
 * writing FILE.sig beside it, which loadlabd serves with the build
 * (docs/agent.md, "Signed builds"). With --check KEYS instead of a
 * private key it verifies each FILE.sig against a public key file, as an
 * agent would.
 */
#include "cmd/commands.h"

#include "loadlab/err.h"
#include "loadlab/plat.h"
#include "loadlab/release_sig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHO "loadlab-agent release-sign"

static void help(void)
{
	printf("usage: loadlab-agent release-sign KEY FILE...\n"
	       "       loadlab-agent release-sign --check KEYS FILE...\n"
	       "\n"
	       "Signs each agent build FILE with the release key KEY (release-key new\n"
	       "made it): writes FILE.sig, one line 'loadlab-release-sig ed25519 HEX',\n"
	       "the signature of the build's SHA-256. Put FILE and FILE.sig in\n"
	       "loadlabd's --agent-dir. --check verifies each FILE.sig against the\n"
	       "public key file KEYS (an agent's " RELEASE_KEYS_FILE ") as the agent will.\n"
	       "\n"
	       "exit: 0 done (every signature good); 1 a signature is missing or bad;\n"
	       "2 usage or an error.\n");
}

static int sign_one(const char *pem, size_t pem_len, const char *file)
{
	char sha256[65], sig_path[PLAT_MAX_PATH + 8], line[200];
	unsigned char sig[64];
	long long size = 0;
	int rc;

	snprintf(sig_path, sizeof(sig_path), "%s.sig", file);
	if ((rc = plat_file_sha256(file, sha256, &size)) < 0 ||
	    (rc = release_sig_sign(pem, pem_len, sha256, sig)) < 0)
		return rc;
	release_sig_line(sig, line, sizeof(line));
	if ((rc = plat_write_file_atomic(sig_path, line, strlen(line), false)) < 0)
		return rc;
	printf("%s: sha256 %s, signed: %s\n", file, sha256, sig_path);
	return 0;
}

static int check_one(const struct release_keys *keys, const char *file)
{
	char sha256[65], sig_path[PLAT_MAX_PATH + 8], *text = NULL;
	unsigned char sig[64];
	long long size = 0;
	size_t len = 0;
	int rc;

	snprintf(sig_path, sizeof(sig_path), "%s.sig", file);
	if ((rc = plat_file_sha256(file, sha256, &size)) < 0 ||
	    (rc = plat_read_file(sig_path, RELEASE_SIG_FILE_MAX, &text, &len)) < 0 ||
	    (rc = release_sig_parse(text, len, sig)) < 0 ||
	    (rc = release_sig_verify(keys, sha256, sig)) < 0) {
		free(text);
		printf("%s: BAD: %s\n", file, err_message(rc));
		return rc;
	}
	free(text);
	printf("%s: sha256 %s, good signature\n", file, sha256);
	return 0;
}

int cmd_release_sign(int argc, char **argv)
{
	int failed = 0, rc;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		help();
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "--check") == 0) {
		struct release_keys keys;
		if ((rc = release_keys_read(argv[2], &keys)) < 0)
			return err_exit(WHO, rc);
		for (int i = 3; i < argc; i++)
			failed |= check_one(&keys, argv[i]) < 0;
		return failed ? 1 : 0;
	}
	if (argc >= 3 && argv[1][0] != '-') {
		char *pem = NULL;
		size_t len = 0;
		if ((rc = plat_read_file(argv[1], RELEASE_PRIVATE_KEY_FILE_MAX, &pem, &len)) < 0)
			return err_exit(WHO, rc);
		for (int i = 2; i < argc && rc == 0; i++)
			rc = sign_one(pem, len, argv[i]);
		free(pem);
		return rc < 0 ? err_exit(WHO, rc) : 0;
	}
	return err_exit_usage(WHO, "give KEY FILE... or --check KEYS FILE...");
}
