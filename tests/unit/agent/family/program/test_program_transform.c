/*
 * The program family's fetch and transform stages (agent/family/program/)
 * on real mingw-built DLLs: `rebase` gives the program's DLLs
 * non-overlapping bases from PROGRAM_UNIQUE_BASE up and clears their ASLR
 * flag, `aslr-off` keeps the bases, `as-built` leaves every byte as it
 * was; a DLL whose relocations were stripped (as a linker's /FIXED
 * leaves it) makes `rebase` invalid with a reason naming the file while
 * `aslr-off` still applies; a signed image (a security directory) that a
 * variant changes gets a note that its signature no longer holds. And
 * the job's variants read once per build (program_read_variants(), which
 * the PE and the ELF programs share).
 *
 * The fixtures are built here with x86_64-w64-mingw32-gcc (installed by
 * scripts/install-deps.sh); a missing compiler fails the test.
 */
#include "check.h"
#include "family/program/program_int.h"
#include "loadlab/err.h"
#include "loadlab/pe.h"
#include "loadlab/plat.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DLL_SOURCE                                                            \
	"int __stdcall DllMain(void *h, unsigned r, void *p) { return 1; }\n" \
	"__declspec(dllexport) int f(void) { return 1; }\n"                   \
	"int (*table[])(void) = { f };\n"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char fixtures[1024];

/* Compiles the fixture DLL NAME into the fixtures folder at base 0x10000000. */
static int build_dll(const char *name)
{
	char src[PLAT_MAX_PATH + 1], out[PLAT_MAX_PATH + 1];
	int code = -1;

	snprintf(src, sizeof(src), "%s/dll.c", fixtures);
	snprintf(out, sizeof(out), "%s/%s", fixtures, name);
	const char *argv[] = {
		"/usr/bin/x86_64-w64-mingw32-gcc", "-shared", "-O1", "-nostdlib", "-Wl,-e,DllMain",
		"-Wl,--image-base=0x10000000",     "-o",      out,   src,         NULL};
	struct plat_spawn_options o = {.argv = argv};
	if (plat_write_file(src, DLL_SOURCE, strlen(DLL_SOURCE)) < 0 || plat_run(&o, 120000, &code, NULL) < 0)
		return -1;
	return code == 0 ? 0 : -1;
}

/* Rewrites NAME's headers: RELOCS_STRIPPED in the file header, or a
 * security directory over 8 bytes appended to the file (SIGNED). */
static int patch_dll(const char *name, bool strip, bool sign)
{
	char path[PLAT_MAX_PATH + 1];
	unsigned char *data;
	size_t len;
	char *raw;

	snprintf(path, sizeof(path), "%s/%s", fixtures, name);
	if (plat_read_file(path, 1u << 20, &raw, &len) < 0)
		return -1;
	data = realloc(raw, len + 8);
	if (!data) {
		free(raw);
		return -1;
	}
	uint32_t pe = data[0x3c] | data[0x3d] << 8 | data[0x3e] << 16 | (uint32_t)data[0x3f] << 24;
	uint32_t opt = pe + 24, security = opt + 112 + 4 * 8; /* PE32+ data directory 4 */
	if (strip)
		data[pe + 4 + 18] |= 0x01; /* IMAGE_FILE_RELOCS_STRIPPED */
	if (sign) {
		uint32_t offset = (uint32_t)len, size = 8;
		memcpy(data + security, &offset, 4);
		memcpy(data + security + 4, &size, 4);
		memset(data + len, 0, 8);
		len += 8;
	}
	int rc = plat_write_file(path, data, len);
	free(data);
	return rc;
}

/* The fake blob store: a blob is the fixture file of that hash. */
static int fetch(void *context, const char *hex, const char *dest, long long limit)
{
	const char *const *names = context;
	(void)limit; /* the fixtures are small; the cache checks the size too */
	char path[PLAT_MAX_PATH + 1], have[65];
	for (size_t i = 0; names[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", fixtures, names[i]);
		if (plat_file_sha256(path, have, NULL) == 0 && strcmp(have, hex) == 0)
			return plat_copy_file(path, dest);
	}
	return err_set(LL_ENOTFOUND, "No blob %s.", hex);
}

struct run {
	struct program_context ctx;
	struct pipeline_task task;
	struct program_file files[3];
	struct program_variant variants[3];
	char work[PLAT_MAX_PATH + 1];
};

/* Fetches and transforms NAMES (bin/NAME each) with the variants as-built,
 * rebase and aslr-off; 0 or the stage's code. */
static int run_program(struct run *r, const char *const *names, const char *work_name)
{
	int rc;

	memset(r, 0, sizeof(*r));
	snprintf(r->work, sizeof(r->work), "%s/%s", fixtures, work_name);
	r->task.work_dir = r->work;
	r->task.jobs = 1;
	r->task.fetch_blob = fetch;
	r->task.fetch_blob_context = (void *)names;
	r->ctx.task = &r->task;
	snprintf(r->ctx.work, sizeof(r->ctx.work), "%s", r->work);
	for (size_t i = 0; names[i]; i++) {
		char path[PLAT_MAX_PATH + 1];
		snprintf(r->files[i].path, sizeof(r->files[i].path), "bin/%s", names[i]);
		snprintf(path, sizeof(path), "%s/%s", fixtures, names[i]);
		if (plat_file_sha256(path, r->files[i].sha256, NULL) < 0)
			return -1;
		r->ctx.file_count++;
	}
	/* one build, as program_read_section() makes it (program_int.h) */
	r->ctx.files = r->ctx.all_files = r->files;
	r->ctx.all_file_count = r->ctx.file_count;
	r->ctx.builds[0].files = r->files;
	r->ctx.builds[0].file_count = r->ctx.file_count;
	r->ctx.build_count = 1;
	snprintf(r->variants[0].name, sizeof(r->variants[0].name), "as-built");
	snprintf(r->variants[1].name, sizeof(r->variants[1].name), "rebase");
	r->variants[1].unique_bases = r->variants[1].aslr_off = true;
	snprintf(r->variants[2].name, sizeof(r->variants[2].name), "aslr-off");
	r->variants[2].aslr_off = true;
	r->ctx.variants = r->variants;
	r->ctx.variant_count = 3;
	if ((rc = plat_mkdirs(r->work)) < 0 || (rc = program_fetch(&r->ctx)) < 0)
		return rc;
	return program_transform(&r->ctx);
}

static void free_run(struct run *r)
{
	for (size_t v = 0; v < r->ctx.variant_count; v++) {
		cJSON_Delete(r->variants[v].notes);
		cJSON_Delete(r->variants[v].transform);
		cJSON_Delete(r->variants[v].verify);
		cJSON_Delete(r->variants[v].files);
	}
}

/* The image bin/NAME in variant V's folder, or NULL. */
static struct pe_image *open_variant_file(const struct run *r, size_t v, const char *name)
{
	char path[PLAT_MAX_PATH + 64];
	struct pe_image *image = NULL;
	snprintf(path, sizeof(path), "%s/bin/%s", r->variants[v].dir, name);
	return pe_image_open(path, &image) == 0 ? image : NULL;
}

static bool notes_mention(const struct program_variant *var, const char *what)
{
	const cJSON *n;
	cJSON_ArrayForEach(n, var->notes) {
		if (cJSON_IsString(n) && strstr(n->valuestring, what))
			return true;
	}
	return false;
}

static bool same_bytes(const struct run *r, size_t v, const char *name)
{
	char a[PLAT_MAX_PATH + 64], b[PLAT_MAX_PATH + 64], ha[65], hb[65];
	snprintf(a, sizeof(a), "%s/bin/%s", r->variants[v].dir, name);
	snprintf(b, sizeof(b), "%s/%s", fixtures, name);
	return plat_file_sha256(a, ha, NULL) == 0 && plat_file_sha256(b, hb, NULL) == 0 &&
	       strcmp(ha, hb) == 0;
}

/* Two DLLs at one base, one of them signed: rebase separates them. */
static void test_rebase_separates(void)
{
	const char *names[] = {"one.dll", "two.dll", NULL};
	struct run r;

	CHECK(build_dll("one.dll") == 0);
	CHECK(build_dll("two.dll") == 0);
	CHECK(patch_dll("two.dll", false, true) == 0);
	CHECK_EQ_INT(run_program(&r, names, "work-ok"), 0);
	if (check_failed)
		return;
	CHECK(r.files[0].pe && r.files[0].dll && !r.files[0].signed_image);
	CHECK(r.files[1].signed_image);
	for (size_t v = 0; v < 3; v++)
		CHECK(r.variants[v].valid);
	/* as-built: every byte as built, no note. */
	CHECK(same_bytes(&r, 0, "one.dll") && same_bytes(&r, 0, "two.dll"));
	CHECK(!notes_mention(&r.variants[0], "signed"));
	/* rebase: distinct, non-overlapping bases from PROGRAM_UNIQUE_BASE up,
	 * ASLR cleared; the signed one says its signature no longer holds. */
	struct pe_image *a = open_variant_file(&r, 1, "one.dll"), *b = open_variant_file(&r, 1, "two.dll");
	CHECK(a && b);
	if (a && b) {
		CHECK(a->image_base >= PROGRAM_UNIQUE_BASE && b->image_base >= PROGRAM_UNIQUE_BASE);
		CHECK(a->image_base + a->size_of_image <= b->image_base ||
		      b->image_base + b->size_of_image <= a->image_base);
		CHECK(!(a->dll_characteristics & PE_DLLCHAR_DYNAMIC_BASE));
		CHECK(!(b->dll_characteristics & PE_DLLCHAR_DYNAMIC_BASE));
	}
	pe_image_free(a);
	pe_image_free(b);
	CHECK(notes_mention(&r.variants[1], "two.dll is signed"));
	CHECK(!notes_mention(&r.variants[1], "one.dll"));
	/* aslr-off: bases as built, ASLR cleared. */
	a = open_variant_file(&r, 2, "one.dll");
	CHECK(a && a->image_base == 0x10000000 && !(a->dll_characteristics & PE_DLLCHAR_DYNAMIC_BASE));
	pe_image_free(a);
	CHECK(notes_mention(&r.variants[2], "signature no longer holds"));
	free_run(&r);
}

/* A DLL with its relocations stripped: rebase cannot apply. */
static void test_stripped_is_invalid(void)
{
	const char *names[] = {"one.dll", "fixed.dll", NULL};
	struct run r;

	CHECK(build_dll("fixed.dll") == 0);
	CHECK(patch_dll("fixed.dll", true, false) == 0);
	CHECK_EQ_INT(run_program(&r, names, "work-fixed"), 0);
	CHECK(r.files[1].relocs_stripped);
	CHECK(r.variants[0].valid);
	CHECK(!r.variants[1].valid);
	CHECK(strstr(r.variants[1].invalid_reason, "fixed.dll") != NULL);
	CHECK(strstr(r.variants[1].invalid_reason, "stripped") != NULL);
	CHECK(r.variants[2].valid);
	free_run(&r);
}

static int count_knobs(const cJSON *item, struct program_variant *var)
{
	var->bind = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "bind"));
	return 0;
}

/* Two builds of two variants: four, build after build, "LABEL:PRESET". */
static void test_variants_per_build(void)
{
	static const char job_text[] =
		"{\"program\":{\"builds\":["
		"{\"label\":\"base\",\"exe\":\"a\",\"files\":{\"a\":\"sha256:" HEX64 "\"}},"
		"{\"label\":\"cand\",\"exe\":\"a\",\"files\":{\"a\":\"sha256:" HEX64
		"\",\"b\":\"sha256:" HEX64
		"\"}}]},\"variants\":[{\"name\":\"as-built\"},{\"name\":\"bind\",\"bind\":true}]}";
	static const char *const names[] = {"base:as-built", "base:bind", "cand:as-built", "cand:bind"};
	struct program_context ctx = {0};
	cJSON *job = cJSON_Parse(job_text), *none = cJSON_Parse("{\"variants\":[]}");
	void *variants = NULL;
	size_t count = 0;

	CHECK(job != NULL);
	CHECK_EQ_INT(program_read_section(&ctx, job), 0);
	CHECK_EQ_INT((int)ctx.build_count, 2);
	CHECK_EQ_INT(program_read_variants(&ctx, job, sizeof(struct program_variant), count_knobs, &variants,
					   &count),
		     0);
	CHECK_EQ_INT((int)count, 4);
	for (size_t v = 0; variants && v < count && v < 4; v++) {
		const struct program_variant *var = (const struct program_variant *)variants + v;
		CHECK_EQ_STR(var->name, names[v]);
		CHECK_EQ_STR(var->preset, v % 2 ? "bind" : "as-built");
		CHECK_EQ_INT((int)var->build, (int)(v / 2));
		CHECK(var->bind == (v % 2 == 1));
	}
	free(variants);
	variants = NULL;
	CHECK_EQ_INT(program_read_variants(&ctx, none, sizeof(struct program_variant), count_knobs, &variants,
					   &count),
		     LL_EINVAL);
	free(variants);
	free(ctx.all_files);
	free(ctx.args);
	cJSON_Delete(job);
	cJSON_Delete(none);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char cleanup[PLAT_MAX_PATH + 64];

	snprintf(fixtures, sizeof(fixtures), "%s/loadlab-program-transform-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fixtures)) {
		perror("mkdtemp");
		return 1;
	}
	test_variants_per_build();
	test_rebase_separates();
	test_stripped_is_invalid();
	if (check_failed)
		fprintf(stderr, "fixtures kept in %s; last error: %s\n", fixtures, err_message(LL_EINVAL));
	else {
		const char *argv[] = {"/bin/rm", "-rf", fixtures, NULL};
		struct plat_spawn_options o = {.argv = argv};
		snprintf(cleanup, sizeof(cleanup), "%s", fixtures);
		(void)plat_run(&o, 60000, NULL, NULL);
	}
	return check_finish();
}
