/* The binder on tiny images written to a temporary folder: IAT values,
 * forwarders, the bound import directory, header growth, DLLs not found,
 * and stale bindings. */
#include "check.h"
#include "loadlab/err.h"
#include "loadlab/pe.h"

#include "../../pe/pe_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

static char dir[64], sysdir[80];

static void write_file(const char *folder, const char *name, const struct fixture *f)
{
	FILE *fp = check_fopen(folder, name, "wb");

	if (!fp)
		return;
	CHECK_EQ_INT(fwrite(f->data, 1, f->size, fp), f->size);
	fclose(fp);
}

static void make_dlls(bool plus)
{
	struct fixture f;

	fx_init(&f, plus, 0x10000000, true, 0, false);
	fx_add_exports_target(&f);
	fx_put32(f.data + 0x48, 0xaaaa0001);
	write_file(dir, "target.dll", &f);
	/* other.dll lives in the "system" folder. */
	fx_init(&f, plus, 0x20000000, true, 0, false);
	fx_add_exports_other(&f);
	fx_put32(f.data + 0x48, 0xbbbb0002);
	write_file(sysdir, "OTHER.DLL", &f);
}

static struct pe_image *importer(bool plus, int extra_sections, bool flat)
{
	struct fixture f;
	struct pe_image *img = NULL;

	fx_init(&f, plus, 0x400000, false, extra_sections, flat);
	fx_add_imports(&f);
	CHECK_EQ_INT(pe_image_from_memory(f.data, f.size, &img), 0);
	return img;
}

static void check_bound(const struct pe_image *img, uint64_t target_base, uint32_t target_timestamp)
{
	struct pe_imports imp = {0, NULL};
	struct pe_bound_imports b = {0, NULL};

	CHECK_EQ_INT(pe_imports_read(img, false, &imp), 0);
	CHECK_EQ_INT(imp.module_count, 1);
	if (imp.module_count == 1 && imp.modules[0].function_count == 4) {
		const struct pe_import_module *m = &imp.modules[0];

		CHECK_EQ_INT(m->timestamp, 0xffffffff);
		CHECK_EQ_INT(m->forwarder_chain, 0xffffffff);
		CHECK_EQ_INT(m->functions[0].iat_value, target_base + 0x1010); /* alpha */
		CHECK_EQ_INT(m->functions[1].iat_value, target_base + 0x1020); /* beta, bad hint */
		CHECK_EQ_INT(m->functions[2].iat_value, target_base + 0x1030); /* ordinal 3 */
		CHECK_EQ_INT(m->functions[3].iat_value, 0x20000000 + 0x1040);  /* delta -> other.epsilon */
		/* The name table is kept. */
		CHECK_EQ_STR(m->functions[0].name, "alpha");
		CHECK(m->functions[2].by_ordinal);
	}
	CHECK_EQ_INT(pe_bound_imports_read(img, &b), 0);
	CHECK_EQ_INT(b.count, 1);
	if (b.count == 1) {
		CHECK_EQ_STR(b.modules[0].name, "TARGET.dll");
		CHECK_EQ_INT(b.modules[0].timestamp, target_timestamp);
		CHECK_EQ_INT(b.modules[0].forwarder_count, 1);
		if (b.modules[0].forwarder_count == 1) {
			CHECK(strcasecmp(b.modules[0].forwarders[0].name, "other.dll") == 0);
			CHECK_EQ_INT(b.modules[0].forwarders[0].timestamp, 0xbbbb0002);
		}
	}
	CHECK_EQ_INT(img->checksum, pe_checksum(img));
	pe_bound_imports_release(&b);
	pe_imports_release(&imp);
}

/* make_dlls(PLUS), then the importer (PE32+ when PLUS) bound with OPT:
 * pe_bind() must give 0, binding BOUND modules and skipping SKIPPED, in
 * *RES. NULL, after a failed check, when the importer does not open. */
static struct pe_image *bound_importer(bool plus, const struct pe_bind_options *opt, size_t bound,
				       size_t skipped, struct pe_bind_result *res)
{
	struct pe_image *img;

	make_dlls(plus);
	img = importer(plus, 0, false);
	if (!img)
		return NULL;
	CHECK_EQ_INT(pe_bind(img, opt, res), 0);
	CHECK_EQ_INT(res->modules_bound, bound);
	CHECK_EQ_INT(res->modules_skipped, skipped);
	return img;
}

/* pe_bind() on IMG with OPT must give RC and leave IMG's bytes as they were. */
static void check_bind_keeps_bytes(struct pe_image *img, const struct pe_bind_options *opt, int rc)
{
	struct pe_bind_result res;
	unsigned char *copy = malloc(img->size);
	size_t size = img->size;

	CHECK(copy != NULL);
	if (!copy)
		return;
	memcpy(copy, img->data, size);
	CHECK_EQ_INT(pe_bind(img, opt, &res), rc);
	CHECK(img->size == size && memcmp(copy, img->data, size) == 0);
	free(copy);
}

static void test_bind(bool plus)
{
	const char *dirs[] = {sysdir};
	struct pe_bind_options opt = {dir, dirs, 1, 0};
	struct pe_bind_result res = {9, 9, 9};
	struct pe_image *img = bound_importer(plus, &opt, 1, 0, &res);

	if (!img)
		return;
	CHECK_EQ_INT(res.functions_bound, 4);
	CHECK_EQ_INT(img->size_of_headers, 0x200); /* fit in the headers */
	check_bound(img, 0x10000000, 0xaaaa0001);
	/* Binding again gives the same bytes. */
	check_bind_keeps_bytes(img, &opt, 0);
	pe_image_free(img);
}

static void test_grow_headers(void)
{
	const char *dirs[] = {sysdir};
	struct pe_bind_options opt = {dir, dirs, 1, 0};
	struct pe_image *img, *before;
	struct pe_bind_result res;

	make_dlls(true);
	/* Four section headers leave 24 bytes after the table: the headers
	 * must grow to 0x400 and the sections move down in the file. */
	img = importer(true, 1, false);
	before = importer(true, 1, false);
	if (!img || !before)
		goto out;
	CHECK_EQ_INT(pe_bind(img, &opt, &res), 0);
	CHECK_EQ_INT(img->size_of_headers, 0x400);
	CHECK_EQ_INT(img->size, before->size + 0x200);
	CHECK_EQ_INT(img->sections[0].raw_offset, 0x400);
	CHECK_EQ_INT(img->sections[2].raw_offset, 0xa00);
	/* Section contents are unchanged but for the IAT and descriptor. */
	CHECK(memcmp(img->data + 0x400, before->data + 0x200, 0x200) == 0);
	CHECK(memcmp(img->data + 0xa00, before->data + 0x800, 0x200) == 0);
	check_bound(img, 0x10000000, 0xaaaa0001);
out:
	pe_image_free(img);
	pe_image_free(before);
}

static void test_no_room(void)
{
	const char *dirs[] = {sysdir};
	struct pe_bind_options opt = {dir, dirs, 1, 0};
	struct pe_image *img;
	struct pe_bind_result res;

	/* Flat layout: the first section starts where the headers end, and
	 * 0x40 bytes of headers are left: the directory (40 bytes) fits. */
	make_dlls(false);
	img = importer(false, 0, true);
	if (!img)
		return;
	CHECK_EQ_INT(pe_bind(img, &opt, &res), 0);
	pe_image_free(img);
	/* Crowd the headers with garbage: no room, and it cannot grow. */
	{
		struct fixture f;

		fx_init(&f, false, 0x400000, false, 0, true);
		fx_add_imports(&f);
		memset(f.data + 0x1c0, 0xcc, 0x40);
		CHECK_EQ_INT(pe_image_from_memory(f.data, f.size, &img), 0);
		if (!img)
			return;
		check_bind_keeps_bytes(img, &opt, LL_ETOOBIG);
		pe_image_free(img);
	}
}

static void test_missing_and_stale(void)
{
	const char *dirs[] = {sysdir};
	struct pe_bind_options opt = {dir, dirs, 1, 0};
	struct pe_bind_options no_sys = {dir, NULL, 0, 0};
	struct pe_bind_result res;
	struct pe_image *img, *target = NULL;
	struct pe_imports imp = {0, NULL};
	struct pe_bound_imports b = {0, NULL};
	char path[200];

	/* The forwarder target cannot be found: the descriptor stays unbound. */
	img = bound_importer(true, &no_sys, 0, 1, &res);
	if (!img)
		return;
	CHECK_EQ_INT(pe_imports_read(img, false, &imp), 0);
	CHECK_EQ_INT(imp.modules[0].timestamp, 0);
	CHECK_EQ_INT(imp.modules[0].functions[0].iat_value, 0x2180);
	CHECK_EQ_INT(img->directories[PE_DIR_BOUND_IMPORT].size, 0);
	pe_imports_release(&imp);

	/* Bound, then target.dll is rebased: the binding is stale (its
	 * timestamp differs), and the name table still says what to load. */
	CHECK_EQ_INT(pe_bind(img, &opt, &res), 0);
	snprintf(path, sizeof(path), "%s/target.dll", dir);
	CHECK_EQ_INT(pe_image_open(path, &target), 0);
	if (target) {
		CHECK_EQ_INT(pe_rebase(target, 0x30000000, 0xaaaa0001), 0);
		CHECK_EQ_INT(pe_image_save(target, path), 0);
		CHECK_EQ_INT(pe_bound_imports_read(img, &b), 0);
		CHECK(b.count == 1 && b.modules[0].timestamp != target->timestamp);
		pe_bound_imports_release(&b);
		pe_image_free(target);
	}
	/* Rebinding follows the DLL to its new base. */
	CHECK_EQ_INT(pe_bind(img, &opt, &res), 0);
	check_bound(img, 0x30000000, 0xaaaa0002);
	pe_image_free(img);
}

int main(void)
{
	char cmd[200];

	snprintf(dir, sizeof(dir), "/tmp/test_pe_bind.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sysdir, sizeof(sysdir), "%s/system", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", sysdir);
	if (system(cmd) != 0)
		return 1;
	test_bind(false);
	test_bind(true);
	test_grow_headers();
	test_no_room();
	test_missing_and_stale();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_finish();
}
