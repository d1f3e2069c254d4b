/* The rebaser on tiny images: every relocation type applied, headers,
 * timestamp and checksum updated, refusals leave the image untouched, and
 * the batch planner's bases are aligned and disjoint. */
#include "check.h"
#include "loadlab/err.h"
#include "loadlab/pe.h"

#include "../../pe/pe_fixture.h"

#include <stdlib.h>

static struct pe_image *open_fixture(const struct fixture *f)
{
	struct pe_image *img = NULL;

	CHECK_EQ_INT(pe_image_from_memory(f->data, f->size, &img), 0);
	return img;
}

static const unsigned char *at(const struct pe_image *img, uint32_t rva)
{
	size_t off = 0;

	if (pe_rva_to_offset(img, rva, 8, &off) < 0)
		return img->data; /* reported by the value checks */
	return img->data + off;
}

/* A PE32 (PE32+ when PLUS) image at 0x10000000 with fx_add_relocs()'s
 * relocations. */
static void relocs_fixture(struct fixture *f, bool plus)
{
	fx_init(f, plus, 0x10000000, true, 0, false);
	fx_add_relocs(f);
}

/* F made by relocs_fixture(), opened and rebased to NEW_BASE with the
 * timestamp 0x5000; NULL when it does not open. */
static struct pe_image *open_rebased(struct fixture *f, bool plus, uint64_t new_base)
{
	struct pe_image *img;

	relocs_fixture(f, plus);
	img = open_fixture(f);
	if (!img)
		return NULL;
	CHECK_EQ_INT(pe_rebase(img, new_base, 0x5000), 0);
	CHECK_EQ_INT(img->image_base, new_base);
	return img;
}

static void test_pe32(void)
{
	struct fixture f;
	const uint32_t old = 0x10000000, new = 0x23450000;
	struct pe_image *img = open_rebased(&f, false, new);

	if (!img)
		return;
	CHECK_EQ_INT(fx_get32(img->data + img->optional_offset + 28), new);
	CHECK_EQ_INT(img->timestamp, 0x5000);
	CHECK_EQ_INT(fx_get32(img->data + img->nt_offset + 8), 0x5000);
	CHECK_EQ_INT(img->checksum, pe_checksum(img));
	CHECK_EQ_INT(fx_get32(at(img, 0x1100)), new + 0x1010);                   /* HIGHLOW */
	CHECK_EQ_INT(fx_get16(at(img, 0x1108)), (new + 0x12345) >> 16);          /* HIGH */
	CHECK_EQ_INT(fx_get16(at(img, 0x110c)), (uint16_t)(new + 0x1234));       /* LOW */
	CHECK_EQ_INT(fx_get16(at(img, 0x1110)), (new + 0x18000 + 0x8000) >> 16); /* HIGHADJ */

	/* Back to the old base: the bytes return, but for the headers. */
	CHECK_EQ_INT(pe_rebase(img, old, 0x12345678), 0);
	CHECK_EQ_INT(img->timestamp, 0x12345678);
	CHECK_EQ_INT(pe_rebase(img, old, 0x12345678), 0);
	CHECK_EQ_INT(img->timestamp, 0x12345679); /* same as before: bumped */
	CHECK(memcmp(img->data + 0x200, f.data + 0x200, f.size - 0x200) == 0);

	/* Downwards, with a negative delta (HIGHADJ carries the sign). */
	CHECK_EQ_INT(pe_rebase(img, 0x00ff0000, 1), 0);
	CHECK_EQ_INT(fx_get32(at(img, 0x1100)), 0x00ff0000 + 0x1010);
	CHECK_EQ_INT(fx_get16(at(img, 0x1110)), (0x00ff0000 + 0x18000 + 0x8000) >> 16);
	pe_image_free(img);
}

static void test_pe32plus(void)
{
	struct fixture f;
	const uint64_t new = 0x7ff612340000ull;
	struct pe_image *img = open_rebased(&f, true, new);

	if (!img)
		return;
	CHECK_EQ_INT(fx_get64(img->data + img->optional_offset + 24), new);
	CHECK_EQ_INT(fx_get64(at(img, 0x1100)), new + 0x1010);
	CHECK_EQ_INT(img->checksum, pe_checksum(img));
	pe_image_free(img);
}

static void expect_untouched(struct pe_image *img, uint64_t base, int want, const char *what)
{
	unsigned char *copy = malloc(img->size);
	size_t size = img->size;
	int rc;

	if (!copy)
		return;
	memcpy(copy, img->data, size);
	rc = pe_rebase(img, base, 99);
	if (rc != want)
		fprintf(stderr, "%s: got %d (%s)\n", what, rc, err_message(rc));
	CHECK_EQ_INT(rc, want);
	CHECK(img->size == size && memcmp(copy, img->data, size) == 0);
	free(copy);
}

/* F, opened, refuses to be rebased to 0x20000000 with WANT (untouched). */
static void expect_refused(const struct fixture *f, int want, const char *what)
{
	struct pe_image *img = open_fixture(f);

	if (img)
		expect_untouched(img, 0x20000000, want, what);
	pe_image_free(img);
}

static void test_refusals(void)
{
	struct fixture f;
	struct pe_image *img;

	relocs_fixture(&f, false);
	fx_put32(f.data + f.opt + 56, 0x20000);
	img = open_fixture(&f);
	if (!img)
		return;
	expect_untouched(img, 0x10008000, LL_EINVAL, "unaligned");
	expect_untouched(img, 0xffff0000, LL_ERANGE, "PE32 past 4 GiB");
	pe_image_free(img);

	/* Relocations stripped. */
	fx_put32(f.data + f.opt + 56, 0x4000);
	fx_put16(f.data + 0x40 + 22, fx_get16(f.data + 0x40 + 22) | PE_FILE_RELOCS_STRIPPED);
	expect_refused(&f, LL_EINVAL, "stripped");

	/* A type x86 does not know (ARM_MOV32), and a target past the file. */
	relocs_fixture(&f, false);
	fx_put16(fx_at(&f, 0x3000 + 8 + 2), (uint16_t)(5 << 12 | 0x108));
	expect_refused(&f, LL_EUNSUPPORTED, "ARM_MOV32 on i386");
	relocs_fixture(&f, false);
	fx_put32(fx_at(&f, 0x3000), 0x2000);
	fx_put16(fx_at(&f, 0x3000 + 8), (uint16_t)(3 << 12 | 0x3fe));
	expect_refused(&f, LL_EFORMAT, "target straddles the section end");
}

static void test_arm(void)
{
	struct fixture f;
	struct pe_image *img;
	unsigned char *p;

	/* ARMNT: MOVW/MOVT pairs, ARM (type 5) and Thumb (type 7). */
	fx_init(&f, false, 0x10000000, true, 0, false);
	fx_put16(f.data + 0x44, PE_MACHINE_ARMNT);
	p = fx_at(&f, 0x1100);
	fx_put32(p, 0xe3000000 | (0x1 << 16) | 0x234);     /* movw r0, #0x1234 */
	fx_put32(p + 4, 0xe3400000 | (0x1 << 16) | 0x000); /* movt r0, #0x1000 */
	p = fx_at(&f, 0x1110);
	/* Thumb movw r0, #0x5678: imm4=5 i=0 imm3=6 imm8=0x78; movt #0x1000. */
	fx_put16(p, 0xf240 | 0x5), fx_put16(p + 2, (6 << 12) | 0x78);
	fx_put16(p + 4, 0xf2c0 | 0x1), fx_put16(p + 6, 0x0000);
	p = fx_at(&f, 0x3000);
	fx_put32(p, 0x1000), fx_put32(p + 4, 12);
	fx_put16(p + 8, (uint16_t)(5 << 12 | 0x100)), fx_put16(p + 10, (uint16_t)(7 << 12 | 0x110));
	fx_dir(&f, 5, 0x3000, 12);
	img = open_fixture(&f);
	if (!img)
		return;
	CHECK_EQ_INT(pe_rebase(img, 0x12340000, 7), 0);
	p = (unsigned char *)at(img, 0x1100);
	CHECK_EQ_INT(fx_get32(p), 0xe3000000 | (0x1 << 16) | 0x234);
	CHECK_EQ_INT(fx_get32(p + 4), 0xe3400000 | (0x1 << 16) | 0x234);
	p = (unsigned char *)at(img, 0x1110);
	CHECK_EQ_INT(fx_get16(p), 0xf240 | 0x5);
	CHECK_EQ_INT(fx_get16(p + 2), (6 << 12) | 0x78);
	/* movt #0x1234: imm4=1 i=0 imm3=2 imm8=0x34 */
	CHECK_EQ_INT(fx_get16(p + 4), 0xf2c0 | 0x1);
	CHECK_EQ_INT(fx_get16(p + 6), (2 << 12) | 0x34);
	pe_image_free(img);
}

static void test_plan(void)
{
	struct fixture f;
	struct pe_image *imgs[4] = {NULL, NULL, NULL, NULL};
	uint64_t bases[4] = {0, 0, 0, 0};

	for (int i = 0; i < 4; i++) {
		fx_init(&f, false, 0x10000000, true, i, false); /* sizes 0x4000.. 0x7000 */
		fx_add_relocs(&f);
		if (i == 2)
			fx_put32(f.data + f.opt + 56, 0x12345); /* 2 units of 64 KiB */
		imgs[i] = open_fixture(&f);
		if (!imgs[i])
			goto out;
	}
	CHECK_EQ_INT(pe_rebase_plan(imgs, 4, 0x60000000, false, bases), 0);
	CHECK_EQ_INT(bases[0], 0x60000000);
	CHECK_EQ_INT(bases[1], 0x60010000);
	CHECK_EQ_INT(bases[2], 0x60020000);
	CHECK_EQ_INT(bases[3], 0x60040000);
	CHECK_EQ_INT(pe_rebase_plan(imgs, 4, 0x60000000, true, bases), 0);
	CHECK_EQ_INT(bases[0], 0x5fff0000);
	CHECK_EQ_INT(bases[1], 0x5ffe0000);
	CHECK_EQ_INT(bases[2], 0x5ffc0000);
	CHECK_EQ_INT(bases[3], 0x5ffb0000);
	bases[0] = 1;
	CHECK_EQ_INT(pe_rebase_plan(imgs, 4, 0x60001000, false, bases), LL_EINVAL);
	CHECK_EQ_INT(pe_rebase_plan(imgs, 4, 0xfffe0000, false, bases), LL_ERANGE);
	CHECK_EQ_INT(pe_rebase_plan(imgs, 4, 0x30000, true, bases), LL_ERANGE);
	CHECK_EQ_INT(bases[0], 1); /* untouched */

	CHECK_EQ_INT(pe_rebase_batch(imgs, 4, 0x50000000, false, 77, bases), 0);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ_INT(imgs[i]->image_base, bases[i]);
		CHECK_EQ_INT(imgs[i]->image_base % 0x10000, 0);
		CHECK_EQ_INT(fx_get32(at(imgs[i], 0x1100)), bases[i] + 0x1010);
		CHECK_EQ_INT(imgs[i]->checksum, pe_checksum(imgs[i]));
		for (int j = 0; j < i; j++)
			CHECK(imgs[j]->image_base + imgs[j]->size_of_image <= imgs[i]->image_base);
	}
	/* One image refuses: none changes. */
	fx_put16(imgs[3]->data + 0x40 + 22, fx_get16(imgs[3]->data + 0x40 + 22) | PE_FILE_RELOCS_STRIPPED);
	imgs[3]->characteristics |= PE_FILE_RELOCS_STRIPPED;
	CHECK_EQ_INT(pe_rebase_batch(imgs, 4, 0x70000000, true, 78, NULL), LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL), "Image 4 of 4") != NULL);
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT(imgs[i]->image_base, 0x50000000 + (i == 3 ? 0x40000 : 0x10000 * i));
out:
	for (int i = 0; i < 4; i++)
		pe_image_free(imgs[i]);
}

/* Clearing the ASLR flag: only DllCharacteristics and the checksum change,
 * HIGH_ENTROPY_VA goes with it, and a second call changes nothing. */
static void test_clear_dynamic_base(void)
{
	struct fixture f;
	struct pe_image *img;
	bool changed = false;

	fx_init(&f, true, 0x180000000ull, true, 0, false);
	fx_add_relocs(&f);
	fx_put16(f.data + f.opt + 70, PE_DLLCHAR_DYNAMIC_BASE | PE_DLLCHAR_HIGH_ENTROPY_VA | 0x0100);
	img = open_fixture(&f);
	if (!img)
		return;
	CHECK_EQ_INT(img->dll_characteristics, PE_DLLCHAR_DYNAMIC_BASE | PE_DLLCHAR_HIGH_ENTROPY_VA | 0x0100);
	CHECK_EQ_INT(pe_clear_dynamic_base(img, &changed), 0);
	CHECK(changed);
	CHECK_EQ_INT(img->dll_characteristics, 0x0100);
	CHECK_EQ_INT(fx_get16(img->data + img->optional_offset + 70), 0x0100);
	CHECK_EQ_INT(img->checksum, pe_checksum(img));
	CHECK_EQ_INT(img->image_base, 0x180000000ull);
	CHECK(memcmp(img->data + 0x200, f.data + 0x200, f.size - 0x200) == 0);
	CHECK_EQ_INT(pe_clear_dynamic_base(img, &changed), 0);
	CHECK(!changed);
	CHECK_EQ_INT(img->dll_characteristics, 0x0100);
	pe_image_free(img);
}

int main(void)
{
	test_clear_dynamic_base();
	test_pe32();
	test_pe32plus();
	test_refusals();
	test_arm();
	test_plan();
	return check_finish();
}
