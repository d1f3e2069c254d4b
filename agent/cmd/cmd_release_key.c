/*
 * cmd_release_key.c - loadlab-agent release-key new --out DIR | public
 * KEY: the lab's release key pair (loadlab/release_sig.h; docs/agent.md,
 * "Signed builds"), made by the admin on a machine of their own. new
 * writes DIR/release.key (the private key, mode 0600) and
 * DIR/release-keys.pub (the public key file an agent reads); neither is
 * overwritten. public prints the public key line of a private key (to
 * add it to the agents' files during a rotation).
 */
#include "cmd/commands.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/plat.h"
#include "loadlab/release_sig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHO "loadlab-agent release-key"
#define PRIVATE_NAME "release.key"

static void help(void)
{
	printf("usage: loadlab-agent release-key new --out DIR\n"
	       "       loadlab-agent release-key public KEY\n"
	       "\n"
	       "new makes a release key pair (Ed25519): DIR/" PRIVATE_NAME " (the private key,\n"
	       "PKCS#8 PEM, mode 0600: keep it off the lab's machines) and\n"
	       "DIR/" RELEASE_KEYS_FILE " (the public key: copy it into each agent's data\n"
	       "folder). Neither is overwritten. public prints the public key line of\n"
	       "the private key KEY, to append to the agents' " RELEASE_KEYS_FILE " during a\n"
	       "rotation. Sign a build with loadlab-agent release-sign (docs/agent.md,\n"
	       "Signed builds).\n"
	       "\n"
	       "exit: 0 done; 2 usage or an error.\n");
}

static int make_pair(const char *dir)
{
	char private_path[PLAT_MAX_PATH + 32], public_path[PLAT_MAX_PATH + 32], line[160], text[400];
	unsigned char public_key[32];
	char *pem = NULL;
	int rc;

	snprintf(private_path, sizeof(private_path), "%s%c%s", dir, plat_path_separator, PRIVATE_NAME);
	snprintf(public_path, sizeof(public_path), "%s%c%s", dir, plat_path_separator, RELEASE_KEYS_FILE);
	if (plat_file_exists(private_path) || plat_file_exists(public_path))
		return err_exit(WHO, err_set(LL_ECONFLICT, "%s or %s exists already: nothing was written.",
					     private_path, public_path));
	if ((rc = plat_mkdirs_private(dir)) < 0 || (rc = release_key_new(&pem, public_key)) < 0)
		return err_exit(WHO, rc);
	release_key_line(public_key, line, sizeof(line));
	snprintf(text, sizeof(text), "# loadlab release key, made %lld (Unix time)\n%s",
		 clock_now_ms() / 1000, line);
	if ((rc = plat_write_file_atomic(private_path, pem, strlen(pem), true)) < 0 ||
	    (rc = plat_write_file_atomic(public_path, text, strlen(text), false)) < 0) {
		free(pem);
		return err_exit(WHO, rc);
	}
	free(pem);
	printf("private key: %s\npublic key:  %s\n%s", private_path, public_path, line);
	return 0;
}

static int print_public(const char *key_path)
{
	unsigned char public_key[32];
	char *pem = NULL, line[160];
	size_t len = 0;
	int rc;

	if ((rc = plat_read_file(key_path, RELEASE_PRIVATE_KEY_FILE_MAX, &pem, &len)) < 0 ||
	    (rc = release_key_public(pem, len, public_key)) < 0) {
		free(pem);
		return err_exit(WHO, rc);
	}
	free(pem);
	release_key_line(public_key, line, sizeof(line));
	fputs(line, stdout);
	return 0;
}

int cmd_release_key(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		help();
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "new") == 0 && strcmp(argv[2], "--out") == 0)
		return make_pair(argv[3]);
	if (argc == 3 && strcmp(argv[1], "public") == 0)
		return print_public(argv[2]);
	return err_exit_usage(WHO, "give 'new --out DIR' or 'public KEY'");
}
