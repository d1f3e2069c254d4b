#include "identity.h"
#include "loadlab/plat.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IDENTITY_FILE_LIMIT 4096
#define TOKEN_PREFIX "llagt_"
#define TOKEN_HEX_DIGITS 64

bool identity_token_valid(const char *token)
{
	size_t prefix = strlen(TOKEN_PREFIX);

	if (strncmp(token, TOKEN_PREFIX, prefix) != 0 || strlen(token) != prefix + TOKEN_HEX_DIGITS)
		return false;
	for (const char *p = token + prefix; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
			return false;
	return true;
}

void identity_path(const char *data_dir, char *out, unsigned size)
{
	snprintf(out, size, "%s%cagent.json", data_dir, plat_path_separator);
}

int identity_load(const char *data_dir, struct identity *ret)
{
	char path[4096], chunk[512];
	struct buf text;
	cJSON *root = NULL;
	const char *token;
	long long id;
	FILE *f;
	size_t n;
	int rc;

	identity_path(data_dir, path, sizeof(path));
	f = fopen(path, "rb");
	if (!f)
		return err_set(LL_ENOTFOUND, "No agent identity in %s.", path);
	buf_init(&text, IDENTITY_FILE_LIMIT);
	rc = 0;
	while (rc == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		rc = buf_append(&text, chunk, n);
	fclose(f);
	if (rc < 0 || json_parse_object(buf_str(&text), text.len, 0, &root) < 0 ||
	    json_get_int(root, "id", 1, 9007199254740992LL, true, 0, &id) < 0 ||
	    json_get_string(root, "token", IDENTITY_TOKEN_MAX, true, NULL, &token) < 0 ||
	    !identity_token_valid(token)) {
		rc = err_set(LL_EFORMAT, "The agent identity %s is damaged; remove it to enroll again.",
			     path);
		goto out;
	}
	ret->id = id;
	snprintf(ret->token, sizeof(ret->token), "%s", token);
	rc = 0;
out:
	cJSON_Delete(root);
	buf_release(&text);
	return rc;
}

int identity_save(const char *data_dir, const struct identity *identity, const char *server, const char *name)
{
	char path[4096];
	cJSON *root = cJSON_CreateObject();
	int rc;

	identity_path(data_dir, path, sizeof(path));
	if (!root || !cJSON_AddNumberToObject(root, "id", (double)identity->id) ||
	    !cJSON_AddStringToObject(root, "token", identity->token) ||
	    !cJSON_AddStringToObject(root, "server", server) || !cJSON_AddStringToObject(root, "name", name))
		rc = err_set(LL_ENOMEM, "Out of memory.");
	else
		rc = json_write_file_atomic(path, root, true, true);
	cJSON_Delete(root);
	return rc;
}
