/* submit_program.c - a program folder to blobs and a manifest
 * (submit_program.h). */
#include "submit_program.h"

#include "client.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/plat.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct walk {
	char root[PATH_MAX]; /* the folder, resolved */
	cJSON *files;        /* {RELATIVE: "sha256:HEX"} */
	cJSON *sizes;        /* {RELATIVE: size}, for the uploads */
	int count;
};

static bool inside(const char *root, const char *path)
{
	size_t n = strlen(root);

	return strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static int walk_folder(struct walk *w, const char *abs, const char *rel, int depth);

/* One entry of the folder: ABS on disk, REL in the manifest. */
static int walk_entry(struct walk *w, const char *abs, const char *rel, int depth)
{
	char resolved[PATH_MAX], hex[65], ref[72];
	struct stat st;
	long long size;
	int rc;

	if (lstat(abs, &st) < 0)
		return err_set(LL_EIO, "Cannot read %s: %s.", abs, strerror(errno));
	if (S_ISLNK(st.st_mode)) {
		if (!realpath(abs, resolved) || !inside(w->root, resolved))
			return err_set(LL_EINVAL,
				       "%s is a symbolic link that leads out of the program folder.", abs);
		if (stat(resolved, &st) < 0)
			return err_set(LL_EIO, "Cannot read %s: %s.", resolved, strerror(errno));
	}
	if (S_ISDIR(st.st_mode))
		return walk_folder(w, abs, rel, depth + 1);
	if (!S_ISREG(st.st_mode))
		return err_set(LL_EINVAL, "%s is not a regular file or a folder.", abs);
	if ((rc = job_spec_program_path_check(rel, NULL)) < 0)
		return rc;
	if (++w->count > JOB_SPEC_MAX_PROGRAM_FILES)
		return err_set(LL_ERANGE, "The program folder has more than %d files.",
			       JOB_SPEC_MAX_PROGRAM_FILES);
	if ((rc = plat_file_sha256(abs, hex, &size)) < 0)
		return rc;
	snprintf(ref, sizeof(ref), "sha256:%s", hex);
	if (!cJSON_AddStringToObject(w->files, rel, ref) ||
	    !cJSON_AddNumberToObject(w->sizes, rel, (double)size))
		return LL_ENOMEM;
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The folder ABS, REL in the manifest ("" for the top), names sorted so
 * that the manifest does not depend on the order on disk. */
static int walk_folder(struct walk *w, const char *abs, const char *rel, int depth)
{
	char **names = NULL;
	size_t count = 0, cap = 0;
	struct dirent *entry;
	DIR *dir;
	int rc = 0;

	if (depth > SUBMIT_PROGRAM_MAX_DEPTH)
		return err_set(LL_ERANGE, "%s is nested more than %d folders deep.", abs,
			       SUBMIT_PROGRAM_MAX_DEPTH);
	if (!(dir = opendir(abs)))
		return err_set(LL_EIO, "Cannot read the folder %s: %s.", abs, strerror(errno));
	while ((entry = readdir(dir))) {
		if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
			continue;
		if (count == cap) {
			char **more = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));
			if (!more) {
				rc = LL_ENOMEM;
				break;
			}
			names = more;
		}
		if (!(names[count] = strdup(entry->d_name))) {
			rc = LL_ENOMEM;
			break;
		}
		count++;
	}
	closedir(dir);
	if (rc == 0)
		qsort(names, count, sizeof(*names), compare_names);
	for (size_t i = 0; rc == 0 && i < count; i++) {
		char child_abs[PATH_MAX], child_rel[PATH_MAX];
		if ((size_t)snprintf(child_abs, sizeof(child_abs), "%s/%s", abs, names[i]) >=
			    sizeof(child_abs) ||
		    (size_t)snprintf(child_rel, sizeof(child_rel), "%s%s%s", rel, *rel ? "/" : "",
				     names[i]) >= sizeof(child_rel)) {
			rc = err_set(LL_EINVAL, "A path under %s is too long.", abs);
			break;
		}
		rc = walk_entry(w, child_abs, child_rel, depth);
	}
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return rc;
}

struct progress {
	bool tty;
	int index, total;
	const char *name;
	long long last_shown;
};

static void show_progress(void *context, long long sent, long long total)
{
	struct progress *p = context;

	if (!p->tty || (sent == p->last_shown && sent != 0))
		return;
	p->last_shown = sent;
	fprintf(stderr, "\ruploading %d/%d %.60s: %lld%%\033[K", p->index, p->total, p->name,
		total > 0 ? sent * 100 / total : 100);
	fflush(stderr);
}

/* True when a path of MISSING has the blob REF already (two files with
 * the same content are one upload). */
static bool already_listed(const cJSON *files, const cJSON *missing, const char *ref)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, missing)
		if (strcmp(cJSON_GetObjectItemCaseSensitive(files, item->valuestring)->valuestring, ref) == 0)
			return true;
	return false;
}

/* 1 when the daemon lacks blob HEX (HEAD answers 404), 0 when it has it,
 * else the error. */
static int blob_missing(struct rest_client *c, const char *hex)
{
	struct rest_answer answer;
	char path[128];
	int rc;

	snprintf(path, sizeof(path), "/api/v1/blobs/%.64s", hex);
	if ((rc = client_request(c, "HEAD", path, NULL, 0, &answer)) == 0)
		rest_answer_release(&answer);
	return rc == LL_ENOTFOUND ? 1 : rc;
}

/* Uploads the files of W->files that the server lacks. */
static int upload_missing(struct rest_client *c, struct walk *w, const char *folder, int *ret_uploaded,
			  long long *ret_bytes)
{
	struct progress progress = {isatty(STDERR_FILENO), 0, 0, NULL, -1};
	const cJSON *file;
	cJSON *missing = cJSON_CreateArray();
	int rc = 0;

	if (!missing)
		return LL_ENOMEM;
	*ret_uploaded = 0;
	*ret_bytes = 0;
	cJSON_ArrayForEach(file, w->files) {
		if ((rc = blob_missing(c, file->valuestring + 7)) <= 0) {
			if (rc < 0)
				goto out;
			continue;
		}
		rc = 0;
		if (!already_listed(w->files, missing, file->valuestring))
			cJSON_AddItemToArray(missing, cJSON_CreateString(file->string));
	}
	progress.total = cJSON_GetArraySize(missing);
	cJSON_ArrayForEach(file, missing) {
		const char *rel = file->valuestring;
		const char *ref = cJSON_GetObjectItemCaseSensitive(w->files, rel)->valuestring;
		long long size = (long long)cJSON_GetObjectItemCaseSensitive(w->sizes, rel)->valuedouble;
		struct rest_answer answer;
		char path[128], abs[PATH_MAX * 2];
		snprintf(path, sizeof(path), "/api/v1/blobs/%s", ref + 7);
		snprintf(abs, sizeof(abs), "%s/%s", folder, rel);
		progress.index++;
		progress.name = rel;
		progress.last_shown = -1;
		rc = rest_client_upload(c, path, abs, size, show_progress, &progress, &answer);
		if (rc == 0 && (rc = rest_answer_error(&answer, "PUT", path)) < 0) {
			char why[400];
			snprintf(why, sizeof(why), "%s", err_message(rc));
			rc = err_set(rc, "Uploading %s: %s", rel, why);
		}
		rest_answer_release(&answer);
		if (rc < 0)
			goto out;
		(*ret_uploaded)++;
		*ret_bytes += size;
	}
out:
	if (progress.tty && progress.index)
		fputs("\r\033[K", stderr);
	cJSON_Delete(missing);
	return rc;
}

/* The only file ending in .exe (any case), or NULL. */
static const char *only_exe(const cJSON *files)
{
	const cJSON *file, *found = NULL;

	cJSON_ArrayForEach(file, files) {
		size_t n = strlen(file->string);
		if (n >= 4 && strcasecmp(file->string + n - 4, ".exe") == 0) {
			if (found)
				return NULL;
			found = file;
		}
	}
	return found ? found->string : NULL;
}

/* DIR as given, or "program.dir" of JOB relative to JOB_PATH's folder. */
static int find_folder(cJSON *job, const char *job_path, const char *dir, char *out, size_t size)
{
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(job, "program");
	const cJSON *given = cJSON_GetObjectItemCaseSensitive(program, "dir");
	const char *slash;

	if (dir) {
		snprintf(out, size, "%s", dir);
		return 1;
	}
	if (!given)
		return 0;
	if (!cJSON_IsString(given) || !*given->valuestring)
		return err_set(LL_EINVAL, "%s: 'program.dir' must be a folder name.", job_path);
	slash = strrchr(job_path, '/');
	if (given->valuestring[0] == '/' || !slash || strcmp(job_path, "-") == 0)
		snprintf(out, size, "%s", given->valuestring);
	else
		snprintf(out, size, "%.*s/%s", (int)(slash - job_path), job_path, given->valuestring);
	return 1;
}

/* Refuses, before anything is uploaded, a job whose body with FILES as its
 * manifest would pass the daemon's JOB_SPEC_MAX_BODY. */
static int check_body_size(const cJSON *job, const cJSON *files, const char *folder)
{
	char *job_text = cJSON_PrintUnformatted(job), *files_text = cJSON_PrintUnformatted(files);
	size_t size = (job_text ? strlen(job_text) : 0) + (files_text ? strlen(files_text) : 0) + 16;
	int rc = 0;

	if (!job_text || !files_text)
		rc = LL_ENOMEM;
	else if (size > JOB_SPEC_MAX_BODY)
		rc = err_set(
			LL_ETOOBIG,
			"The job with the manifest of %s would be about %zu bytes, more than the %d a job "
			"may have (%d files at most, their paths about 170 bytes each on average); "
			"nothing was uploaded.",
			folder, size, JOB_SPEC_MAX_BODY, JOB_SPEC_MAX_PROGRAM_FILES);
	free(job_text);
	free(files_text);
	return rc;
}

/* The format of the program whose exe is ROOT/EXE, from its first bytes
 * (docs/program-elf.md, "Which programs are ELF"): "elf" for \177ELF,
 * "pe" for MZ, NULL for anything else (the daemon's rules then apply).
 * LL_EINVAL, before anything is uploaded, when the job's own
 * "program.format" says otherwise. */
static int exe_format(const cJSON *job, const char *root, const char *exe, const char **ret)
{
	const cJSON *given =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(job, "program"), "format");
	unsigned char magic[4] = {0};
	char path[PATH_MAX];
	size_t n = 0;
	FILE *f;

	*ret = NULL;
	if (!exe)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", root, exe);
	if ((f = fopen(path, "rb"))) {
		n = fread(magic, 1, sizeof(magic), f);
		fclose(f);
	}
	if (n == 4 && memcmp(magic, "\177ELF", 4) == 0)
		*ret = "elf";
	else if (n >= 2 && magic[0] == 'M' && magic[1] == 'Z')
		*ret = "pe";
	if (*ret && cJSON_IsString(given) && strcmp(given->valuestring, *ret) != 0)
		return err_set(LL_EINVAL,
			       "The job says \"format\": \"%s\", but %s starts as %s file does; nothing was "
			       "uploaded.",
			       given->valuestring, exe, strcmp(*ret, "elf") == 0 ? "an ELF" : "a PE");
	return 0;
}

/* FOLDER's files hashed, those the server lacks uploaded, into the new
 * manifest *RET_FILES ({PATH: "sha256:HEX"}); the summary line printed.
 * *RET_FORMAT (when not NULL): the exe's format (exe_format()). */
static int upload_folder(struct rest_client *c, const cJSON *job, const char *folder, cJSON **ret_files,
			 const char **ret_format)
{
	const char *exe, *format = NULL;
	struct walk w = {{0}, cJSON_CreateObject(), cJSON_CreateObject(), 0};
	long long bytes = 0;
	int rc, uploaded = 0;

	rc = LL_ENOMEM;
	if (!w.files || !w.sizes)
		goto out;
	if (!realpath(folder, w.root)) {
		rc = err_set(LL_EIO, "Cannot open the program folder %s: %s.", folder, strerror(errno));
		goto out;
	}
	if ((rc = walk_folder(&w, w.root, "", 0)) < 0)
		goto out;
	if (w.count == 0) {
		rc = err_set(LL_EINVAL, "The program folder %s has no files.", folder);
		goto out;
	}
	exe = cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(job, "program"), "exe"));
	if ((rc = exe_format(job, w.root, exe ? exe : only_exe(w.files), &format)) < 0 ||
	    (rc = check_body_size(job, w.files, folder)) < 0 ||
	    (rc = upload_missing(c, &w, w.root, &uploaded, &bytes)) < 0)
		goto out;
	if (ret_format)
		*ret_format = format;
	printf("program: %d file%s, %d uploaded (%lld bytes)\n", w.count, w.count == 1 ? "" : "s", uploaded,
	       bytes);
	fflush(stdout);
	*ret_files = w.files;
	w.files = NULL;
out:
	cJSON_Delete(w.files);
	cJSON_Delete(w.sizes);
	return rc;
}

/* JOB's "program" object (made when it has none) as a program job's. */
static cJSON *program_section(cJSON *job)
{
	cJSON *program = cJSON_GetObjectItemCaseSensitive(job, "program");

	if (!cJSON_IsObject(program)) {
		cJSON_DeleteItemFromObjectCaseSensitive(job, "program");
		if (!(program = cJSON_AddObjectToObject(job, "program")))
			return NULL;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(job, "family");
	if (!cJSON_AddStringToObject(job, "family", "program"))
		return NULL;
	cJSON_DeleteItemFromObjectCaseSensitive(program, "dir");
	return program;
}

/* Moves FILES into SECTION as "files", with "exe": SECTION's own, else
 * EXE (may be NULL), else the only .exe. */
static int set_build(cJSON *section, cJSON *files, const char *exe)
{
	cJSON_DeleteItemFromObjectCaseSensitive(section, "files");
	if (!cJSON_AddItemToObject(section, "files", files)) {
		cJSON_Delete(files);
		return LL_ENOMEM;
	}
	if (!cJSON_GetObjectItemCaseSensitive(section, "exe") && (exe || (exe = only_exe(files))) &&
	    !cJSON_AddStringToObject(section, "exe", exe))
		return LL_ENOMEM;
	return 0;
}

int submit_program_prepare(struct rest_client *c, cJSON *job, const char *job_path, const char *dir,
			   char **ret_body)
{
	char folder[PATH_MAX];
	cJSON *program, *files = NULL;
	const char *format = NULL;
	int rc;

	*ret_body = NULL;
	rc = find_folder(job, job_path, dir, folder, sizeof(folder));
	if (rc <= 0)
		return rc;
	if ((rc = upload_folder(c, job, folder, &files, &format)) < 0)
		return rc;
	if (!(program = program_section(job))) {
		cJSON_Delete(files);
		return LL_ENOMEM;
	}
	if ((rc = set_build(program, files, NULL)) < 0)
		return rc;
	/* An ELF exe makes the job an ELF program's; a PE one needs no word. */
	if (format && strcmp(format, "elf") == 0 && !cJSON_GetObjectItemCaseSensitive(program, "format") &&
	    !cJSON_AddStringToObject(program, "format", "elf"))
		return LL_ENOMEM;
	return (*ret_body = cJSON_PrintUnformatted(job)) ? 0 : LL_ENOMEM;
}

/* Before anything of an A/B job is uploaded: the format of each build's
 * exe (its own "exe" in GIVEN, the job's EXE, else unknown), every one of
 * them an ELF file when the job says "format": "elf" or one of them is
 * (docs/program-elf.md, "Two builds in one job"); PROGRAM then gets
 * "format": "elf" when it has none. LL_EINVAL naming the folder when a
 * build's exe contradicts the others'. */
static int builds_format(cJSON *job, cJSON *program, const cJSON *given, const char *exe,
			 const char *const *dirs, int count)
{
	const cJSON *format = cJSON_GetObjectItemCaseSensitive(program, "format");
	const char *formats[JOB_SPEC_MAX_PROGRAM_BUILDS] = {NULL}, *exes[JOB_SPEC_MAX_PROGRAM_BUILDS];
	char roots[JOB_SPEC_MAX_PROGRAM_BUILDS][PATH_MAX], why[PATH_MAX + 64];
	int elf = -1, rc;

	if (cJSON_IsString(format) && strcmp(format->valuestring, "elf") == 0)
		elf = count; /* the job's word */
	for (int i = 0; i < count; i++) {
		const char *own = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(given, i), "exe"));
		exes[i] = own ? own : exe;
		if (!realpath(dirs[i], roots[i]))
			return err_set(LL_EIO, "Cannot open the program folder %s: %s.", dirs[i],
				       strerror(errno));
		if ((rc = exe_format(job, roots[i], exes[i], &formats[i])) < 0)
			return rc;
		if (elf < 0 && formats[i] && strcmp(formats[i], "elf") == 0)
			elf = i;
	}
	if (elf < 0)
		return 0;
	if (elf == count)
		snprintf(why, sizeof(why), "the job says \"format\": \"elf\"");
	else
		snprintf(why, sizeof(why), "the exe of --program-dir %s is an ELF file", dirs[elf]);
	for (int i = 0; i < count; i++)
		if (!formats[i] || strcmp(formats[i], "elf") != 0)
			return err_set(LL_EINVAL,
				       "--program-dir %s: its exe %s is %s, and %s: every build of an ELF "
				       "program job is an ELF program; nothing was uploaded.",
				       dirs[i], exes[i] ? exes[i] : "(none named: give \"program.exe\")",
				       !exes[i]     ? "unknown"
				       : formats[i] ? "a PE file"
						    : "not an ELF file (no \\177ELF at its start)",
				       why);
	if (!format && !cJSON_AddStringToObject(program, "format", "elf"))
		return LL_ENOMEM;
	return 0;
}

int submit_program_prepare_builds(struct rest_client *c, cJSON *job, const char *const *dirs, int count,
				  char **ret_body)
{
	static const char *const labels[] = {"base", "candidate", "candidate-2", "candidate-3"};
	cJSON *program, *given, *builds, *exe_item;
	const char *exe;
	int rc;

	*ret_body = NULL;
	if (count < JOB_SPEC_MIN_PROGRAM_BUILDS || count > JOB_SPEC_MAX_PROGRAM_BUILDS)
		return err_set(LL_EINVAL, "--program-dir may be given once, or %d to %d times (an A/B job).",
			       JOB_SPEC_MIN_PROGRAM_BUILDS, JOB_SPEC_MAX_PROGRAM_BUILDS);
	if (!(program = program_section(job)))
		return LL_ENOMEM;
	/* the job's own builds (their labels, exes) are kept, in order */
	given = cJSON_DetachItemFromObjectCaseSensitive(program, "builds");
	if (given && (!cJSON_IsArray(given) || cJSON_GetArraySize(given) > count)) {
		cJSON_Delete(given);
		return err_set(LL_EINVAL,
			       "The job's 'program.builds' must be an array of at most %d "
			       "builds, one per --program-dir.",
			       count);
	}
	exe_item = cJSON_DetachItemFromObjectCaseSensitive(program, "exe");
	exe = cJSON_GetStringValue(exe_item);
	cJSON_DeleteItemFromObjectCaseSensitive(program, "files");
	if ((rc = builds_format(job, program, given, exe, dirs, count)) < 0)
		goto out;
	if (!(builds = cJSON_AddArrayToObject(program, "builds"))) {
		rc = LL_ENOMEM;
		goto out;
	}
	for (int i = 0; i < count; i++) {
		cJSON *b = given ? cJSON_DetachItemFromArray(given, 0) : NULL, *files = NULL;
		if (!b && !(b = cJSON_CreateObject())) {
			rc = LL_ENOMEM;
			goto out;
		}
		cJSON_AddItemToArray(builds, b);
		if (!cJSON_IsObject(b)) {
			rc = err_set(LL_EINVAL, "Each of the job's 'program.builds' must be an object.");
			goto out;
		}
		if (!cJSON_GetObjectItemCaseSensitive(b, "label") &&
		    !cJSON_AddStringToObject(b, "label", labels[i])) {
			rc = LL_ENOMEM;
			goto out;
		}
		if ((rc = upload_folder(c, job, dirs[i], &files, NULL)) < 0 ||
		    (rc = set_build(b, files, exe)) < 0)
			goto out;
	}
	rc = (*ret_body = cJSON_PrintUnformatted(job)) ? 0 : LL_ENOMEM;
out:
	cJSON_Delete(given);
	cJSON_Delete(exe_item);
	return rc;
}

int submit_program_check_files(struct rest_client *c, const cJSON *job, const char *job_path)
{
	const cJSON *files =
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(job, "program"), "files");
	const cJSON *file;
	/* The paths named, in what fits one message (err.h keeps 512 bytes);
	 * ", ..." says when some are left out. */
	char list[300] = "";
	size_t used = 0;
	int count = 0, listed = 0, rc;

	cJSON_ArrayForEach(file, files) {
		/* The server names a malformed reference better than this would. */
		if (!cJSON_IsString(file) || strncmp(file->valuestring, "sha256:", 7) != 0 ||
		    strlen(file->valuestring) != 7 + 64 ||
		    strspn(file->valuestring + 7, "0123456789abcdef") != 64)
			continue;
		if ((rc = blob_missing(c, file->valuestring + 7)) < 0)
			return rc;
		if (!rc)
			continue;
		count++;
		if (used + 2 + strlen(file->string) < sizeof(list)) {
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "",
						 file->string);
			listed++;
		}
	}
	if (count == 0)
		return 0;
	return err_set(LL_EINVAL,
		       "%s: %d of the program's files %s not uploaded: %s%s; give the folder that holds "
		       "them with --program-dir DIR (loadlab submit %s --program-dir DIR).",
		       strcmp(job_path, "-") == 0 ? "stdin" : job_path, count, count == 1 ? "is" : "are",
		       list, listed < count ? ", ..." : "", strcmp(job_path, "-") == 0 ? "-" : job_path);
}
