/*
 * cmd_member.c - loadlab-agent with no subcommand: a lab machine's member
 * of the loadlabd fleet (fleet/fleet.h); its options, and the help text.
 */
#include "cmd/commands.h"
#include "fleet/fleet.h"
#include "update/update.h"
#include "measure/plat_churn.h"
#include "loadlab/plat.h"
#include "loadlab/rest_client.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/log.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKEN_FILE_LIMIT 512
#define MAX_LABELS 32
#define LABEL_VALUE_MAX 256
#define NAME_MAX_BYTES 64

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "loadlab-agent: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see loadlab-agent --help)\n");
	return 2;
}

/* "k=v,k2=v2" into an object; keys as facts' keys, values 1..256 bytes. */
static int parse_labels(const char *text, cJSON *labels)
{
	char *copy = strdup(text), *item, *save = NULL;
	int count = 0, rc = 0;

	if (!copy)
		return err_set(LL_ENOMEM, "Out of memory.");
	for (item = strtok_r(copy, ",", &save); item && rc == 0; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (!eq) {
			rc = err_set(LL_EINVAL, "Label '%s' is not KEY=VALUE.", item);
			break;
		}
		*eq = '\0';
		if (!job_spec_key_valid(item))
			rc = err_set(LL_EINVAL, "Label key '%s' must match ^[a-z][a-z0-9_]{0,31}$.", item);
		else if (eq[1] == '\0' || strlen(eq + 1) > LABEL_VALUE_MAX)
			rc = err_set(LL_EINVAL, "Label '%s' needs a value of 1..%d bytes.", item,
				     LABEL_VALUE_MAX);
		else if (cJSON_GetObjectItemCaseSensitive(labels, item))
			rc = err_set(LL_EINVAL, "Label '%s' is given twice.", item);
		else if (++count > MAX_LABELS)
			rc = err_set(LL_EINVAL, "At most %d labels.", MAX_LABELS);
		else if (!cJSON_AddStringToObject(labels, item, eq + 1))
			rc = err_set(LL_ENOMEM, "Out of memory.");
	}
	free(copy);
	return rc;
}

/* The first line of PATH, without its line end, into OUT. */
static int read_token_file(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return err_set(LL_EIO, "Cannot open the token file %s.", path);
	n = fread(out, 1, size - 1, f);
	fclose(f);
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	if (!*out)
		return err_set(LL_EINVAL, "The token file %s is empty.", path);
	return 0;
}

/* The value of option ARGV[*I] ("--x V" or "--x=V"), or NULL. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t len = strlen(name);

	if (strncmp(argv[*i], name, len) != 0)
		return NULL;
	if (argv[*i][len] == '=')
		return argv[*i] + len + 1;
	if (argv[*i][len] == '\0' && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

int cmd_member(int argc, char **argv)
{
	return cmd_member_start(argc, argv, true);
}

int cmd_member_start(int argc, char **argv, bool console_stop)
{
	struct fleet_options o;
	static char token[TOKEN_FILE_LIMIT], host[NAME_MAX_BYTES + 1];
	const char *token_file = NULL, *value;
	cJSON *labels = cJSON_CreateObject();
	enum log_format format;
	int rc;

	memset(&o, 0, sizeof(o));
	o.update_check_s = UPDATE_CHECK_SECONDS;
	o.update_confirm_s = UPDATE_CONFIRM_SECONDS;
	o.server = plat_getenv("LOADLAB_SERVER");
	o.enroll_token = plat_getenv("LOADLAB_ENROLL_TOKEN");
	o.data_dir = plat_getenv("LOADLAB_AGENT_DATA_DIR");
	if (!labels)
		return usage_error("%s", "out of memory");
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			cJSON_Delete(labels);
			return CMD_HELP;
		} else if (strcmp(arg, "--version") == 0) {
			printf("loadlab-agent %s\n", LOADLAB_VERSION);
			cJSON_Delete(labels);
			return 0;
		} else if (strcmp(arg, "--once") == 0) {
			o.once = true;
		} else if ((value = option_value(argc, argv, &i, "--server"))) {
			o.server = value;
		} else if ((value = option_value(argc, argv, &i, "--enroll-token-file"))) {
			token_file = value;
		} else if ((value = option_value(argc, argv, &i, "--enroll-token"))) {
			o.enroll_token = value;
		} else if ((value = option_value(argc, argv, &i, "--data-dir"))) {
			o.data_dir = value;
		} else if ((value = option_value(argc, argv, &i, "--min-free-bytes"))) {
			char *end;
			o.min_free_bytes = strtoll(value, &end, 10);
			if (*end || end == value || o.min_free_bytes < 1) {
				cJSON_Delete(labels);
				return usage_error("--min-free-bytes must be a number of bytes, not '%s'",
						   value);
			}
		} else if ((value = option_value(argc, argv, &i, "--update-check-seconds")) ||
			   (value = option_value(argc, argv, &i, "--update-confirm-seconds"))) {
			bool check = strncmp(arg, "--update-check-seconds", 22) == 0;
			char *end;
			long long n = strtoll(value, &end, 10);
			if (*end || end == value || n < (check ? 0 : 1) || n > 86400) {
				cJSON_Delete(labels);
				return usage_error(
					check ? "--update-check-seconds must be 0..86400, not '%s'"
					      : "--update-confirm-seconds must be 1..86400, not '%s'",
					value);
			}
			*(check ? &o.update_check_s : &o.update_confirm_s) = n;
		} else if ((value = option_value(argc, argv, &i, "--name"))) {
			o.name = value;
		} else if ((value = option_value(argc, argv, &i, "--labels"))) {
			if ((rc = parse_labels(value, labels)) < 0) {
				cJSON_Delete(labels);
				return usage_error("%s", err_message(rc));
			}
		} else if ((value = option_value(argc, argv, &i, "--log-format"))) {
			if (log_format_parse(value, &format) < 0) {
				cJSON_Delete(labels);
				return usage_error("--log-format must be text or json, not '%s'", value);
			}
			log_set_format(format);
		} else {
			cJSON_Delete(labels);
			return usage_error("unknown argument or missing value: '%s'", arg);
		}
	}
	rc = 2;
	if (!o.server || !*o.server) {
		usage_error("%s", "--server URL is required");
		goto out;
	}
	if (token_file) {
		if ((rc = read_token_file(token_file, token, sizeof(token))) < 0) {
			rc = usage_error("%s", err_message(rc));
			goto out;
		}
		o.enroll_token = token;
	}
	if (o.enroll_token && !*o.enroll_token)
		o.enroll_token = NULL;
	if (!o.data_dir || !*o.data_dir)
		o.data_dir = "loadlab-agent";
	if (!o.name) {
		plat_host_name(host, sizeof(host));
		o.name = host;
	}
	if (!*o.name || strlen(o.name) > NAME_MAX_BYTES) {
		rc = usage_error("%s", "--name must be 1..64 bytes");
		goto out;
	}
	o.labels = labels;
	if ((console_stop && (rc = plat_install_stop_handler()) < 0) ||
	    (rc = rest_client_global_init("loadlab-agent/" LOADLAB_VERSION)) < 0) {
		fprintf(stderr, "loadlab-agent: %s\n", err_message(rc));
		rc = 2;
		goto out;
	}
	{
		/* Read before the file may be replaced (Linux then names it
		 * "PATH (deleted)"). */
		static char exe[PLAT_MAX_PATH + 1];
		int restart_rc = plat_churn_self_path(exe, sizeof(exe));
		rc = fleet_run(&o);
		if (rc != FLEET_EXIT_RESTART || !console_stop)
			goto out;
		/* Updated or rolled back (update.h): this program's file is the
		 * copy to run now. A service's restart is service_win32.c's. */
		if (restart_rc == 0)
			restart_rc = update_restart(exe, argc, argv, o.data_dir, o.update_confirm_s * 1000);
		if (restart_rc < 0)
			fprintf(stderr, "loadlab-agent: %s\n", err_message(restart_rc));
		rc = restart_rc < 0 ? FLEET_EXIT_RESTART : FLEET_EXIT_OK;
	}
out:
	cJSON_Delete(labels);
	return rc;
}
