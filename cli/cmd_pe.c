/*
 * loadlab pe: the PE image toolkit's front end. Every operation is in
 * common/ (loadlab/pe.h); this file parses arguments, reads and writes
 * files, and prints.
 *
 *   loadlab pe dump [--json] [--relocs] IMAGE
 *   loadlab pe rebase --base ADDR IMAGE
 *   loadlab pe rebase --batch ADDR [--down] IMAGE...
 *   loadlab pe bind [--path DIR]... IMAGE
 *
 * Images are modified in place. Exit 0 on success, 2 with one line on
 * stderr for bad arguments or an image the toolkit refused.
 */
#include "commands.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/pe.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DUMP_LIMIT (256u * 1024u * 1024u)
#define MAX_SEARCH_DIRS 64

static const char usage_text[] = "usage: loadlab pe dump [--json] [--relocs] IMAGE\n"
				 "       loadlab pe rebase --base ADDR IMAGE\n"
				 "       loadlab pe rebase --batch ADDR [--down] IMAGE...\n"
				 "       loadlab pe bind [--path DIR]... IMAGE\n"
				 "\n"
				 "dump    headers, sections, imports, exports, relocations, bound imports\n"
				 "        (--relocs lists every relocation)\n"
				 "rebase  give one image a new preferred base, or with --batch give each\n"
				 "        image its own 64 KiB-aligned base from ADDR upwards (--down:\n"
				 "        ending at ADDR, downwards); images are rewritten in place\n"
				 "bind    bind the imports against the DLLs in the image's folder, then\n"
				 "        each --path DIR; the image is rewritten in place\n";

static bool parse_address(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}

static int do_dump(int argc, char **argv)
{
	bool json = false, relocs = false;
	const char *path = NULL;
	struct pe_image *image = NULL;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (strcmp(argv[i], "--relocs") == 0)
			relocs = true;
		else if (argv[i][0] == '-' || path)
			return err_exit_usage("loadlab pe", "dump takes [--json] [--relocs] and one IMAGE");
		else
			path = argv[i];
	}
	if (!path)
		return err_exit_usage("loadlab pe", "dump needs an IMAGE");
	rc = pe_image_open(path, &image);
	if (rc < 0)
		return err_exit("loadlab pe", rc);
	if (json) {
		cJSON *root = NULL;
		char *text;

		rc = pe_dump_json(image, relocs, &root);
		if (rc == 0) {
			text = json_print(root);
			if (!text)
				rc = LL_ENOMEM;
			else
				fputs(text, stdout), fputc('\n', stdout);
			free(text);
		}
		cJSON_Delete(root);
	} else {
		struct buf out;

		buf_init(&out, DUMP_LIMIT);
		rc = pe_dump_text(image, relocs, &out);
		if (rc == 0)
			fwrite(buf_str(&out), 1, out.len, stdout);
		buf_release(&out);
	}
	pe_image_free(image);
	if (rc < 0) {
		char why[400];

		snprintf(why, sizeof(why), "%s", err_message(rc));
		err_set(rc, "%s: %s", path, why);
		return err_exit("loadlab pe", rc);
	}
	return fflush(stdout) == 0 ? 0 : 2;
}

static int do_rebase(int argc, char **argv)
{
	uint64_t address = 0;
	bool have_base = false, batch = false, down = false;
	struct pe_image **images = NULL;
	uint64_t *bases = NULL, *old = NULL;
	char **paths;
	int npaths = 0, rc = 0, status = 2;

	paths = calloc((size_t)argc, sizeof(*paths));
	if (!paths)
		return err_exit("loadlab pe", LL_ENOMEM);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--base") == 0 || strcmp(argv[i], "--batch") == 0) {
			if (have_base) {
				status = err_exit_usage("loadlab pe", "rebase takes one --base or --batch");
				goto out;
			}
			batch = strcmp(argv[i], "--batch") == 0;
			if (!parse_address(i + 1 < argc ? argv[i + 1] : NULL, &address)) {
				status = err_exit_usage("loadlab pe",
							"--base/--batch needs an address such as 0x60000000");
				goto out;
			}
			have_base = true;
			i++;
		} else if (strcmp(argv[i], "--down") == 0) {
			down = true;
		} else if (argv[i][0] == '-') {
			status = err_exit_usage("loadlab pe", "unknown option for rebase");
			goto out;
		} else {
			paths[npaths++] = argv[i];
		}
	}
	if (!have_base || npaths == 0) {
		status = err_exit_usage("loadlab pe",
					"rebase needs --base ADDR IMAGE or --batch ADDR IMAGE...");
		goto out;
	}
	if (!batch && (npaths != 1 || down)) {
		status = err_exit_usage("loadlab pe", "rebase --base takes exactly one IMAGE and no --down");
		goto out;
	}
	images = calloc((size_t)npaths, sizeof(*images));
	bases = calloc((size_t)npaths, sizeof(*bases));
	old = calloc((size_t)npaths, sizeof(*old));
	if (!images || !bases || !old) {
		status = err_exit("loadlab pe", LL_ENOMEM);
		goto out;
	}
	for (int i = 0; i < npaths; i++) {
		rc = pe_image_open(paths[i], &images[i]);
		if (rc < 0) {
			status = err_exit("loadlab pe", rc);
			goto out;
		}
		old[i] = images[i]->image_base;
	}
	if (batch) {
		rc = pe_rebase_batch(images, (size_t)npaths, address, down, (uint32_t)time(NULL), bases);
	} else {
		rc = pe_rebase(images[0], address, (uint32_t)time(NULL));
		bases[0] = address;
	}
	if (rc < 0) {
		status = err_exit("loadlab pe", rc);
		goto out;
	}
	for (int i = 0; i < npaths; i++) {
		rc = pe_image_save(images[i], paths[i]);
		if (rc < 0) {
			status = err_exit("loadlab pe", rc);
			goto out;
		}
		printf("%s: 0x%" PRIx64 " -> 0x%" PRIx64 "\n", paths[i], old[i], bases[i]);
	}
	status = fflush(stdout) == 0 ? 0 : 2;
out:
	pe_images_free(images, (size_t)npaths);
	free(bases);
	free(old);
	free(paths);
	return status;
}

static int do_bind(int argc, char **argv)
{
	const char *dirs[MAX_SEARCH_DIRS];
	size_t ndirs = 0;
	const char *path = NULL, *slash;
	struct pe_bind_options options;
	struct pe_bind_result result;
	struct pe_image *image = NULL;
	char *image_dir;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--path") == 0) {
			if (i + 1 >= argc)
				return err_exit_usage("loadlab pe", "--path needs a folder");
			if (ndirs == MAX_SEARCH_DIRS)
				return err_exit_usage("loadlab pe", "too many --path folders");
			dirs[ndirs++] = argv[++i];
		} else if (argv[i][0] == '-' || path) {
			return err_exit_usage("loadlab pe", "bind takes [--path DIR]... and one IMAGE");
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return err_exit_usage("loadlab pe", "bind needs an IMAGE");
	/* The image's own folder is searched first, as by the loader. */
	slash = strrchr(path, '/');
	if (strrchr(path, '\\') > slash)
		slash = strrchr(path, '\\');
	{
		size_t len = slash ? (size_t)(slash - path) + (slash == path) : 1;

		image_dir = malloc(len + 1);
		if (!image_dir)
			return err_exit("loadlab pe", LL_ENOMEM);
		memcpy(image_dir, slash ? path : ".", len);
		image_dir[len] = '\0';
	}
	memset(&options, 0, sizeof(options));
	options.image_dir = image_dir;
	options.search_dirs = dirs;
	options.search_dir_count = ndirs;
	rc = pe_image_open(path, &image);
	if (rc == 0)
		rc = pe_bind(image, &options, &result);
	if (rc == 0)
		rc = pe_image_save(image, path);
	pe_image_free(image);
	free(image_dir);
	if (rc < 0)
		return err_exit("loadlab pe", rc);
	printf("%s: bound %zu modules (%zu functions), %zu left unbound\n", path, result.modules_bound,
	       result.functions_bound, result.modules_skipped);
	return fflush(stdout) == 0 ? 0 : 2;
}

int cmd_pe(int argc, char **argv)
{
	if (argc < 2)
		return err_exit_usage("loadlab pe", "missing subcommand: dump, rebase or bind");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(argv[1], "dump") == 0)
		return do_dump(argc - 1, argv + 1);
	if (strcmp(argv[1], "rebase") == 0)
		return do_rebase(argc - 1, argv + 1);
	if (strcmp(argv[1], "bind") == 0)
		return do_bind(argc - 1, argv + 1);
	return err_exit_usage("loadlab pe", "unknown subcommand; use dump, rebase or bind");
}
