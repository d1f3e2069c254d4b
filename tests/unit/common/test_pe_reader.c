/* The PE reader on tiny images built in the test: every structure read
 * right, and malformed images refused with an error, never a crash. */
#include "check.h"
#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/pe.h"

#include "../../pe/pe_fixture.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static struct pe_image *open_fixture(const struct fixture *f)
{
	struct pe_image *img = NULL;

	CHECK_EQ_INT(pe_image_from_memory(f->data, f->size, &img), 0);
	return img;
}

/* A DLL fixture at 0x10000000 (PE32+ when PLUS) with what ADD puts in it
 * (NULL: nothing), opened; NULL, after a failed check, when it is not. */
static struct pe_image *open_dll_fixture(bool plus, void (*add)(struct fixture *f))
{
	struct fixture f;

	fx_init(&f, plus, 0x10000000, true, 0, false);
	if (add)
		add(&f);
	return open_fixture(&f);
}

static void test_headers(bool plus)
{
	struct pe_image *img = open_dll_fixture(plus, NULL);

	if (!img)
		return;
	CHECK_EQ_INT(img->pe32plus, plus);
	CHECK_EQ_INT(img->machine, plus ? PE_MACHINE_AMD64 : PE_MACHINE_I386);
	CHECK_EQ_INT(img->image_base, 0x10000000);
	CHECK_EQ_INT(img->timestamp, 0x12345678);
	CHECK_EQ_INT(img->section_count, 3);
	CHECK_EQ_STR(img->sections[1].name, ".rdata");
	CHECK_EQ_INT(img->sections[1].virtual_address, 0x2000);
	CHECK_EQ_INT(img->directory_count, 16);
	CHECK_EQ_INT(img->size_of_headers, 0x200);
	/* RVA translation: in a section, in the headers, past the file data. */
	{
		size_t off = 0;

		CHECK_EQ_INT(pe_rva_to_offset(img, 0x2010, 4, &off), 0);
		CHECK_EQ_INT(off, 0x410);
		CHECK_EQ_INT(pe_rva_to_offset(img, 0x10, 4, &off), 0);
		CHECK_EQ_INT(off, 0x10);
		off = 7;
		CHECK_EQ_INT(pe_rva_to_offset(img, 0x23fe, 4, &off), LL_EFORMAT);
		CHECK_EQ_INT(off, 7);
		CHECK_EQ_INT(pe_rva_to_offset(img, 0x5000, 1, &off), LL_EFORMAT);
		CHECK_EQ_INT(pe_rva_to_offset(img, 0xfffffffe, 4, &off), LL_EFORMAT);
	}
	pe_image_free(img);
}

static void test_imports(bool plus)
{
	struct fixture f;
	struct pe_image *img;
	struct pe_imports imp = {0, NULL}, delay = {0, NULL};

	fx_init(&f, plus, 0x400000, false, 0, false);
	fx_add_imports(&f);
	img = open_fixture(&f);
	if (!img)
		return;
	CHECK_EQ_INT(pe_imports_read(img, false, &imp), 0);
	CHECK_EQ_INT(imp.module_count, 1);
	if (imp.module_count == 1) {
		const struct pe_import_module *m = &imp.modules[0];

		CHECK_EQ_STR(m->name, "TARGET.dll");
		CHECK_EQ_INT(m->name_table_rva, 0x2100);
		CHECK_EQ_INT(m->iat_rva, 0x2140);
		CHECK_EQ_INT(m->function_count, 4);
		if (m->function_count == 4) {
			CHECK_EQ_STR(m->functions[0].name, "alpha");
			CHECK_EQ_INT(m->functions[0].hint, 0);
			CHECK_EQ_STR(m->functions[1].name, "beta");
			CHECK_EQ_INT(m->functions[1].hint, 5);
			CHECK(m->functions[2].by_ordinal);
			CHECK_EQ_INT(m->functions[2].ordinal, 3);
			CHECK(m->functions[2].name == NULL);
			CHECK_EQ_INT(m->functions[3].iat_rva, 0x2140 + 3 * (plus ? 8 : 4));
			CHECK_EQ_INT(m->functions[0].iat_value, 0x2180);
		}
	}
	pe_imports_release(&imp);
	CHECK_EQ_INT(imp.module_count, 0);
	CHECK_EQ_INT(pe_imports_read(img, true, &delay), 0);
	CHECK_EQ_INT(delay.module_count, 0);
	pe_imports_release(&delay);
	pe_image_free(img);
}

static void test_delay_imports(void)
{
	struct fixture f;
	struct pe_image *img;
	struct pe_imports delay = {0, NULL};
	unsigned char *d;

	/* A delay-load descriptor (RVA form) reusing the import tables. */
	fx_init(&f, true, 0x400000, false, 0, false);
	fx_add_imports(&f);
	fx_dir(&f, 1, 0, 0);
	d = fx_at(&f, 0x2300);
	fx_put32(d, 1);
	fx_put32(d + 4, 0x21c0);
	fx_put32(d + 8, 0x2000);
	fx_put32(d + 12, 0x2140);
	fx_put32(d + 16, 0x2100);
	fx_dir(&f, 13, 0x2300, 64);
	img = open_fixture(&f);
	if (!img)
		return;
	CHECK_EQ_INT(pe_imports_read(img, true, &delay), 0);
	CHECK_EQ_INT(delay.module_count, 1);
	if (delay.module_count) {
		CHECK(delay.modules[0].delay);
		CHECK_EQ_STR(delay.modules[0].name, "TARGET.dll");
		CHECK_EQ_INT(delay.modules[0].function_count, 4);
		CHECK_EQ_INT(delay.modules[0].delay_module_handle_rva, 0x2000);
	}
	pe_imports_release(&delay);
	pe_image_free(img);
}

static void test_exports(bool plus)
{
	struct pe_image *img = open_dll_fixture(plus, fx_add_exports_target);
	struct pe_exports exp;
	const struct pe_export *e;

	if (!img)
		return;
	CHECK_EQ_INT(pe_exports_read(img, &exp), 0);
	CHECK_EQ_STR(exp.dll_name, "target.dll");
	CHECK_EQ_INT(exp.base, 1);
	CHECK_EQ_INT(exp.count, 4);
	CHECK_EQ_INT(exp.name_count, 3);
	CHECK_EQ_STR(exp.entries[0].name, "alpha");
	CHECK_EQ_INT(exp.entries[0].ordinal, 1);
	CHECK_EQ_INT(exp.entries[0].rva, 0x1010);
	CHECK(exp.entries[2].name == NULL);
	CHECK_EQ_STR(exp.entries[3].forwarder, "other.epsilon");
	CHECK(exp.entries[0].forwarder == NULL);
	e = pe_exports_find_name(&exp, "beta", 0); /* wrong hint */
	CHECK(e && e->ordinal == 2);
	e = pe_exports_find_name(&exp, "beta", 1); /* right hint */
	CHECK(e && e->ordinal == 2);
	CHECK(pe_exports_find_name(&exp, "zeta", 0) == NULL);
	e = pe_exports_find_ordinal(&exp, 3);
	CHECK(e && e->rva == 0x1030);
	CHECK(pe_exports_find_ordinal(&exp, 0) == NULL);
	CHECK(pe_exports_find_ordinal(&exp, 5) == NULL);
	pe_exports_release(&exp);
	pe_image_free(img);
}

static void test_relocs(bool plus)
{
	struct pe_image *img = open_dll_fixture(plus, fx_add_relocs);
	struct pe_relocs rel;

	if (!img)
		return;
	CHECK_EQ_INT(pe_relocs_read(img, &rel), 0);
	CHECK_EQ_INT(rel.block_count, 1);
	if (plus) {
		CHECK_EQ_INT(rel.count, 1);
		CHECK_EQ_INT(rel.entries[0].type, PE_REL_DIR64);
		CHECK_EQ_INT(rel.entries[0].rva, 0x1100);
	} else {
		CHECK_EQ_INT(rel.count, 4);
		CHECK_EQ_INT(rel.entries[3].type, PE_REL_HIGHADJ);
		CHECK_EQ_INT(rel.entries[3].param, 0x8000);
	}
	pe_relocs_release(&rel);
	CHECK_EQ_STR(pe_reloc_type_name(PE_MACHINE_ARMNT, 5), "ARM_MOV32");
	CHECK_EQ_STR(pe_reloc_type_name(PE_MACHINE_ARMNT, 7), "THUMB_MOV32");
	CHECK_EQ_STR(pe_reloc_type_name(PE_MACHINE_R4000, 5), "MIPS_JMPADDR");
	CHECK_EQ_STR(pe_reloc_type_name(PE_MACHINE_RISCV64, 8), "RISCV_LOW12S");
	CHECK_EQ_STR(pe_reloc_type_name(PE_MACHINE_AMD64, 10), "DIR64");
	pe_image_free(img);
}

static void test_bound_directory(void)
{
	struct fixture f;
	struct pe_image *img;
	struct pe_bound_imports b;
	unsigned char *d;

	/* Two modules, the first with one forwarder ref, in the headers. */
	fx_init(&f, true, 0x400000, false, 0, false);
	d = f.data + 0x1b0;
	fx_put32(d, 0x11111111), fx_put16(d + 4, 32), fx_put16(d + 6, 1);
	fx_put32(d + 8, 0x22222222), fx_put16(d + 12, 43);
	fx_put32(d + 16, 0x33333333), fx_put16(d + 20, 53);
	fx_put_text(d + 32, "target.dll");
	fx_put_text(d + 43, "other.dll");
	fx_put_text(d + 53, "third.dll");
	fx_dir(&f, 11, 0x1b0, 0x40);
	img = open_fixture(&f);
	if (!img)
		return;
	CHECK_EQ_INT(pe_bound_imports_read(img, &b), 0);
	CHECK_EQ_INT(b.count, 2);
	if (b.count == 2) {
		CHECK_EQ_STR(b.modules[0].name, "target.dll");
		CHECK_EQ_INT(b.modules[0].timestamp, 0x11111111);
		CHECK_EQ_INT(b.modules[0].forwarder_count, 1);
		CHECK_EQ_STR(b.modules[0].forwarders[0].name, "other.dll");
		CHECK_EQ_INT(b.modules[0].forwarders[0].timestamp, 0x22222222);
		CHECK_EQ_STR(b.modules[1].name, "third.dll");
	}
	pe_bound_imports_release(&b);
	pe_image_free(img);
}

/* Reads everything a dump reads; returns the first error. */
static int read_all(const struct pe_image *img)
{
	struct buf out;
	cJSON *json = NULL;
	int rc;

	buf_init(&out, 1 << 20);
	rc = pe_dump_text(img, true, &out);
	buf_release(&out);
	if (rc == 0) {
		rc = pe_dump_json(img, true, &json);
		cJSON_Delete(json);
	}
	return rc;
}

static struct fixture full_fixture(bool plus)
{
	struct fixture f;

	fx_init(&f, plus, 0x10000000, true, 0, false);
	fx_add_imports(&f);
	fx_add_exports_target(&f);
	fx_add_relocs(&f);
	return f;
}

/* F must be refused with CODE and a message that names what is wrong
 * (FRAGMENT), so that each case shows which check fired. */
static void expect_refused(const struct fixture *f, const char *what, int code, const char *fragment)
{
	struct pe_image *img = NULL;
	int rc = pe_image_from_memory(f->data, f->size, &img);

	if (rc == 0) {
		rc = read_all(img);
		pe_image_free(img);
	}
	if (rc != code || !strstr(err_message(rc), fragment))
		fprintf(stderr, "%s: expected %d \"...%s...\", got %d \"%s\"\n", what, code, fragment, rc,
			err_message(rc));
	CHECK_EQ_INT(rc, code);
	CHECK(strstr(err_message(rc), fragment) != NULL);
}

static void test_malformed(bool plus)
{
	struct fixture f, g = full_fixture(plus);
	struct pe_image *img = NULL;
	uint32_t table = g.opt + (plus ? 240 : 224);

	CHECK_EQ_INT(pe_image_from_memory(g.data, g.size, &img), 0);
	CHECK_EQ_INT(read_all(img), 0);
	pe_image_free(img);

	f = g, f.data[0] = 'X';
	expect_refused(&f, "no MZ", LL_EFORMAT, "no MZ header");
	f = g, fx_put32(f.data + 0x3c, 0x9fe);
	expect_refused(&f, "e_lfanew past the end", LL_EFORMAT, "e_lfanew 0x9fe points past the file");
	f = g, f.data[0x41] = 'X';
	expect_refused(&f, "no PE signature", LL_EFORMAT, "no PE signature at 0x40");
	f = g, fx_put16(f.data + g.opt, 0x107);
	expect_refused(&f, "bad magic", LL_EFORMAT, "unknown optional header magic 0x107");
	f = g, fx_put16(f.data + 0x40 + 20, 0xffff);
	expect_refused(&f, "optional header past the file", LL_EFORMAT,
		       "optional header (65535 bytes) does not fit");
	f = g, fx_put16(f.data + 0x40 + 20, 16);
	expect_refused(&f, "optional header too short", LL_EFORMAT,
		       "optional header of 16 bytes is too short for PE32");
	f = g, fx_put32(f.data + g.opt + (plus ? 108 : 92), 16),
	fx_put16(f.data + 0x40 + 20, plus ? 120 : 100);
	expect_refused(&f, "directories past the optional header", LL_EFORMAT,
		       "16 data directories do not fit");
	f = g, fx_put16(f.data + 0x40 + 6, 60);
	expect_refused(&f, "section table past the file", LL_EFORMAT,
		       "section table (60 sections) runs past the file");
	f = g, fx_put32(f.data + g.opt + 36, 0x300);
	expect_refused(&f, "file alignment not a power of two", LL_EFORMAT,
		       "alignments 0x1000/0x300 are not powers of two");
	f = g, fx_put32(f.data + table + 12, 0xffffff00);
	expect_refused(&f, "section wraps", LL_EFORMAT, "section 0 ('.text') wraps the address space");
	f = g, fx_put32(fx_at(&f, 0x2000 + 12), 0x2400);
	expect_refused(&f, "import DLL name outside the file", LL_EFORMAT,
		       "string at RVA 0x2400 is not in the file");
	f = g, memset(fx_at(&f, 0x21c0), 'A', 0x240);
	expect_refused(&f, "unterminated DLL name", LL_EFORMAT, "string at RVA 0x21c0 is unterminated");
	f = g, fx_thunk(&f, 0x2100, 0x23ff);
	expect_refused(&f, "hint/name entry at the section's end", LL_EFORMAT,
		       "hint/name entry 0x23ff of 'TARGET.dll' is not in the file");
	f = g, fx_put32(fx_at(&f, 0x2000), 0x2400 - (plus ? 8 : 4)),
	fx_thunk(&f, 0x2400 - (plus ? 8 : 4), 0x2180);
	expect_refused(&f, "name table runs off the section", LL_EFORMAT,
		       "import table of 'TARGET.dll' runs out of the file");
	f = g, fx_put32(fx_at(&f, 0x2200 + 20), 0x7fffffff);
	expect_refused(&f, "export count beyond the limit", LL_ETOOBIG,
		       "lists 2147483647 functions and 3 names; the limit is 65536");
	f = g, fx_put32(fx_at(&f, 0x2200 + 20), 0x200);
	expect_refused(&f, "export address table past the section", LL_EFORMAT,
		       "export address table is not in the file");
	f = g, fx_put16(fx_at(&f, 0x2252), 9);
	expect_refused(&f, "export name points at a slot beyond the table", LL_EFORMAT,
		       "export name 'beta' points at slot 9 of 4");
	f = g, fx_put32(fx_at(&f, 0x2244), 0x3ffff);
	expect_refused(&f, "export name outside the file", LL_EFORMAT,
		       "string at RVA 0x3ffff is not in the file");
	f = g, fx_put32(fx_at(&f, 0x3004), 3);
	expect_refused(&f, "relocation block too small", LL_EFORMAT, "relocation block at +0x0 has size 3.");
	f = g, fx_put32(fx_at(&f, 0x3004), 0x1000);
	expect_refused(&f, "relocation block past the directory", LL_EFORMAT,
		       "relocation block at +0x0 has size 4096.");
	f = g, fx_dir(&f, 5, 0x3100, 0x200);
	expect_refused(&f, "relocation directory past the section", LL_EFORMAT,
		       "relocation directory (0x3100, 512 bytes) is not in the file");
	f = g, fx_dir(&f, 11, 0x9f0, 0x10);
	expect_refused(&f, "bound import directory outside the file", LL_EFORMAT,
		       "bound import directory runs out of the file");
	/* A descriptor table without its terminator at the end of .rdata. */
	f = g, memset(fx_at(&f, 0x2000), 0, 40);
	for (uint32_t at = 0x2000; at + 20 <= 0x2400; at += 20)
		fx_put32(fx_at(&f, at + 12), 0x21c0), fx_put32(fx_at(&f, at + 16), 0x2140),
			fx_put32(fx_at(&f, at), 0x2100);
	fx_dir(&f, 1, 0x2000, 20);
	expect_refused(&f, "unterminated import directory", LL_EFORMAT,
		       "the import directory runs out of the file");
}

/* Every truncation and every single-byte change of the headers and tables
 * either parses or fails cleanly (under ASan, any bad read is a crash). */
static void test_mutations(bool plus)
{
	struct fixture g = full_fixture(plus);
	static const unsigned char values[] = {0x00, 0x01, 0x7f, 0x80, 0xff};
	size_t accepted = 0, refused = 0;

	for (size_t len = 0; len <= g.size; len += (len < 0x300 ? 1 : 16)) {
		struct pe_image *img = NULL;

		if (pe_image_from_memory(g.data, len, &img) == 0) {
			read_all(img);
			pe_image_free(img);
			accepted++;
		} else {
			refused++;
		}
	}
	for (size_t at = 0; at < g.size; at++) {
		if (at >= 0x200 && at < 0x400)
			continue; /* .text holds no structures */
		for (size_t v = 0; v < sizeof(values); v++) {
			struct fixture f = g;
			struct pe_image *img = NULL;

			f.data[at] = values[v];
			if (pe_image_from_memory(f.data, f.size, &img) == 0) {
				read_all(img);
				pe_image_free(img);
			}
		}
	}
	CHECK(accepted > 0);
	CHECK(refused > 0);
}

static void test_checksum(void)
{
	unsigned char data[1001];
	unsigned seed = 12345;
	struct fixture f = full_fixture(true);
	struct pe_image *img = NULL;

	for (size_t i = 0; i < sizeof(data); i++) {
		seed = seed * 1103515245u + 12345u;
		data[i] = (unsigned char)(seed >> 16);
	}
	/* Against the definition: word by word, end-around carry. */
	for (size_t size = 990; size <= sizeof(data); size++) {
		for (size_t field = 0; field < 12; field++) {
			uint32_t sum = 0;

			for (size_t i = 0; i < size; i += 2) {
				unsigned lo = (i >= field && i < field + 4) ? 0 : data[i];
				unsigned hi = (i + 1 >= size || (i + 1 >= field && i + 1 < field + 4))
						      ? 0
						      : data[i + 1];

				sum += lo | hi << 8;
				sum = (sum & 0xffff) + (sum >> 16);
			}
			CHECK_EQ_INT(pe_checksum_compute(data, size, field), sum + size);
		}
	}
	CHECK_EQ_INT(pe_checksum_compute(data, 0, 0), 0);
	CHECK_EQ_INT(pe_image_from_memory(f.data, f.size, &img), 0);
	if (img) {
		pe_checksum_update(img);
		CHECK_EQ_INT(img->checksum, pe_checksum(img));
		CHECK_EQ_INT(fx_get32(img->data + img->optional_offset + 64), img->checksum);
		/* Independent of the field's old value. */
		fx_put32(img->data + img->optional_offset + 64, 0xdeadbeef);
		CHECK_EQ_INT(pe_checksum(img), img->checksum);
		pe_image_free(img);
	}
}

static void test_file_errors(void)
{
	struct pe_image *img = (struct pe_image *)1;

	CHECK_EQ_INT(pe_image_open("/nonexistent/dir/x.dll", &img), LL_EIO);
	CHECK(img == (struct pe_image *)1);
	pe_image_free(NULL);
}

int main(void)
{
	for (int plus = 0; plus < 2; plus++) {
		test_headers(plus);
		test_imports(plus);
		test_exports(plus);
		test_relocs(plus);
		test_malformed(plus);
		test_mutations(plus);
	}
	test_delay_imports();
	test_bound_directory();
	test_checksum();
	test_file_errors();
	return check_finish();
}
