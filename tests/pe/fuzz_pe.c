/*
 * fuzz_pe.c - libFuzzer harness for the PE toolkit: the reader on any
 * bytes, then the rebaser and the binder on what the reader accepted.
 *
 * Built two ways (tests/pe/CMakeLists.txt):
 * - by fuzz_pe.sh with clang -fsanitize=fuzzer,address,undefined;
 * - with PE_FUZZ_REPLAY_MAIN by the project's compiler, as a driver that
 *   replays a corpus folder (`fuzz_pe_replay DIR...`) or writes the
 *   struct-built seed images (`fuzz_pe_replay --write-seeds DIR`).
 * The binder resolves against target.dll and other.dll (pe_fixture.h),
 * written to a private folder at start.
 */
#include "loadlab/buf.h"
#include "loadlab/pe.h"

#include "pe_fixture.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FUZZ_MAX_INPUT (1u << 20)

static char bind_dir[64];

static int write_fixture(const char *dir, const char *name, const struct fixture *f)
{
	char path[256];
	FILE *fp;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (!fp)
		return -1;
	ok = fwrite(f->data, 1, f->size, fp) == f->size;
	return fclose(fp) == 0 && ok ? 0 : -1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct fixture f;

	(void)argc, (void)argv;
	snprintf(bind_dir, sizeof(bind_dir), "/tmp/fuzz_pe.XXXXXX");
	if (!mkdtemp(bind_dir))
		abort();
	fx_init(&f, true, 0x10000000, true, 0, false);
	fx_add_exports_target(&f);
	write_fixture(bind_dir, "target.dll", &f);
	fx_init(&f, true, 0x20000000, true, 0, false);
	fx_add_exports_other(&f);
	write_fixture(bind_dir, "other.dll", &f);
	fx_init(&f, false, 0x10000000, true, 0, false);
	fx_add_exports_target(&f);
	write_fixture(bind_dir, "TARGET32.dll", &f);
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct pe_image *img = NULL;
	struct pe_imports imp = {0, NULL}, delay = {0, NULL};
	struct pe_exports exp;
	struct pe_relocs rel;
	struct pe_bound_imports bound = {0, NULL};
	struct pe_bind_options options = {bind_dir, NULL, 0, 0};
	struct pe_bind_result result;
	struct buf text;
	cJSON *json = NULL;
	uint64_t bases[2];

	if (size > FUZZ_MAX_INPUT || pe_image_from_memory(data, size, &img) < 0)
		return 0;
	if (pe_imports_read(img, false, &imp) == 0)
		pe_imports_release(&imp);
	if (pe_imports_read(img, true, &delay) == 0)
		pe_imports_release(&delay);
	if (pe_exports_read(img, &exp) == 0) {
		for (size_t i = 0; i < exp.name_count && i < 64; i++)
			pe_exports_find_name(&exp, exp.names[i].name, (uint16_t)i);
		pe_exports_find_ordinal(&exp, exp.base);
		pe_exports_release(&exp);
	}
	if (pe_relocs_read(img, &rel) == 0)
		pe_relocs_release(&rel);
	if (pe_bound_imports_read(img, &bound) == 0)
		pe_bound_imports_release(&bound);
	buf_init(&text, 64u << 20);
	pe_dump_text(img, true, &text);
	buf_release(&text);
	if (pe_dump_json(img, false, &json) == 0)
		cJSON_Delete(json);
	pe_checksum(img);
	{
		struct pe_image *pair[2] = {img, img};

		pe_rebase_plan(pair, 2, 0x10000000, size & 1, bases);
	}
	pe_rebase(img,
		  (img->image_base + 0x10000) & ~(uint64_t)0xffff & (img->pe32plus ? ~0ull : 0x7fffffffull),
		  1);
	pe_bind(img, &options, &result);
	pe_image_free(img);
	return 0;
}

#ifdef PE_FUZZ_REPLAY_MAIN
static int replay_file(const char *path, size_t *count)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data = malloc(FUZZ_MAX_INPUT + 1);
	size_t n;

	if (!f || !data) {
		if (f)
			fclose(f);
		free(data);
		fprintf(stderr, "cannot read %s\n", path);
		return -1;
	}
	n = fread(data, 1, FUZZ_MAX_INPUT + 1, f);
	fclose(f);
	LLVMFuzzerTestOneInput(data, n);
	free(data);
	(*count)++;
	return 0;
}

static int write_seeds(const char *dir)
{
	struct fixture f;
	int rc = 0;

	for (int plus = 0; plus < 2; plus++) {
		char name[64];

		fx_init(&f, plus, 0x400000, false, 0, false);
		fx_add_imports(&f);
		fx_add_relocs(&f);
		snprintf(name, sizeof(name), "importer%s.exe", plus ? "64" : "32");
		rc |= write_fixture(dir, name, &f);
		fx_init(&f, plus, 0x10000000, true, 0, false);
		fx_add_exports_target(&f);
		fx_add_relocs(&f);
		snprintf(name, sizeof(name), "target%s.dll", plus ? "64" : "32");
		rc |= write_fixture(dir, name, &f);
		fx_init(&f, plus, 0x400000, false, 1, false);
		fx_add_imports(&f);
		snprintf(name, sizeof(name), "crowded%s.exe", plus ? "64" : "32");
		rc |= write_fixture(dir, name, &f);
	}
	fx_init(&f, false, 0x400000, false, 0, true);
	fx_add_imports(&f);
	rc |= write_fixture(dir, "flat32.exe", &f);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	char cmd[128];
	int failed = 0;

	if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0)
		return write_seeds(argv[2]) ? 1 : 0;
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (!d) {
			failed |= replay_file(argv[i], &count) < 0;
			continue;
		}
		while ((e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			failed |= replay_file(path, &count) < 0;
		}
		closedir(d);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", bind_dir);
	if (system(cmd) != 0)
		failed = 1;
	printf("replayed %zu inputs\n", count);
	return failed || count == 0 ? 1 : 0;
}
#endif
