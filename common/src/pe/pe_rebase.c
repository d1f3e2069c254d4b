/* pe_rebase.c - giving images new preferred bases (REBASE semantics). */
#include "pe_int.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REBASE_ALIGNMENT 0x10000u /* 64 KiB: the allocation granularity */

static bool machine_is(uint16_t machine, const uint16_t *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == machine)
			return true;
	return false;
}

static bool is_arm(uint16_t m)
{
	static const uint16_t l[] = {PE_MACHINE_ARM, PE_MACHINE_ARMNT, 0x01c2};
	return machine_is(m, l, sizeof(l) / sizeof(l[0]));
}

static bool is_mips(uint16_t m)
{
	static const uint16_t l[] = {PE_MACHINE_R4000, PE_MACHINE_MIPS16, 0x0366, 0x0466, 0x0168, 0x0169};
	return machine_is(m, l, sizeof(l) / sizeof(l[0]));
}

/* Bytes a relocation of TYPE patches on MACHINE, or 0 when this rebaser
 * does not apply that type there. */
static uint32_t reloc_width(uint16_t machine, unsigned type)
{
	switch (type) {
	case PE_REL_HIGH:
	case PE_REL_LOW:
	case PE_REL_HIGHADJ:
		return 2;
	case PE_REL_HIGHLOW:
		return 4;
	case PE_REL_DIR64:
		return 8;
	case PE_REL_MACHINE_5:
		return is_arm(machine) ? 8 : is_mips(machine) ? 4 : 0;
	case PE_REL_MACHINE_7:
		return is_arm(machine) ? 8 : 0;
	default:
		return 0;
	}
}

/* ARM MOVW/MOVT immediates (ARM ARM, A8.8.102 and A8.8.106): imm4:imm12
 * in bits 19-16 and 11-0 of the A1 encoding. */
static uint16_t arm_imm16(uint32_t insn)
{
	return (uint16_t)(((insn >> 4) & 0xf000) | (insn & 0x0fff));
}

static uint32_t arm_set_imm16(uint32_t insn, uint16_t v)
{
	return (insn & 0xfff0f000u) | ((uint32_t)(v & 0xf000) << 4) | (v & 0x0fff);
}

/* Thumb-2 T3/T1 encodings: imm4 (hw1 3-0), i (hw1 10), imm3 (hw2 14-12),
 * imm8 (hw2 7-0). */
static uint16_t thumb_imm16(uint16_t hw1, uint16_t hw2)
{
	return (uint16_t)(((hw1 & 0xf) << 12) | (((hw1 >> 10) & 1) << 11) | (((hw2 >> 12) & 7) << 8) |
			  (hw2 & 0xff));
}

static void thumb_set_imm16(unsigned char *p, uint16_t v)
{
	uint16_t hw1 = pe_le16(p), hw2 = pe_le16(p + 2);

	hw1 = (uint16_t)((hw1 & 0xfbf0) | ((v >> 12) & 0xf) | (((v >> 11) & 1) << 10));
	hw2 = (uint16_t)((hw2 & 0x8f00) | (((v >> 8) & 7) << 12) | (v & 0xff));
	pe_put16(p, hw1);
	pe_put16(p + 2, hw2);
}

static void apply_one(const struct pe_image *image, unsigned char *p, const struct pe_reloc *r,
		      uint64_t delta)
{
	uint32_t d32 = (uint32_t)delta;

	switch (r->type) {
	case PE_REL_HIGH:
		pe_put16(p, (uint16_t)(pe_le16(p) + (d32 >> 16)));
		break;
	case PE_REL_LOW:
		pe_put16(p, (uint16_t)(pe_le16(p) + d32));
		break;
	case PE_REL_HIGHLOW:
		pe_put32(p, pe_le32(p) + d32);
		break;
	case PE_REL_HIGHADJ: {
		/* The full value is high:param; the new high half is rounded
		 * for the sign of the low half. */
		uint32_t v = ((uint32_t)pe_le16(p) << 16) + (uint32_t)(int32_t)(int16_t)r->param;

		v += d32 + 0x8000u;
		pe_put16(p, (uint16_t)(v >> 16));
		break;
	}
	case PE_REL_DIR64:
		pe_put64(p, pe_le64(p) + delta);
		break;
	case PE_REL_MACHINE_5:
		if (is_arm(image->machine)) {
			uint32_t lo = pe_le32(p), hi = pe_le32(p + 4);
			uint32_t v = (uint32_t)arm_imm16(lo) | ((uint32_t)arm_imm16(hi) << 16);

			v += d32;
			pe_put32(p, arm_set_imm16(lo, (uint16_t)v));
			pe_put32(p + 4, arm_set_imm16(hi, (uint16_t)(v >> 16)));
		} else {
			/* MIPS JAL/J: a 26-bit word index in the 256 MiB region. */
			uint32_t insn = pe_le32(p);
			uint32_t target = ((insn & 0x03ffffffu) << 2) + d32;

			pe_put32(p, (insn & 0xfc000000u) | ((target >> 2) & 0x03ffffffu));
		}
		break;
	case PE_REL_MACHINE_7: {
		uint32_t v = (uint32_t)thumb_imm16(pe_le16(p), pe_le16(p + 2)) |
			     ((uint32_t)thumb_imm16(pe_le16(p + 4), pe_le16(p + 6)) << 16);

		v += d32;
		thumb_set_imm16(p, (uint16_t)v);
		thumb_set_imm16(p + 4, (uint16_t)(v >> 16));
		break;
	}
	}
}

/* Checks that IMAGE can go to NEW_BASE and reads its relocations. */
static int rebase_prepare(const struct pe_image *image, uint64_t new_base, struct pe_relocs *ret_relocs)
{
	struct pe_relocs relocs;
	int rc;

	if (new_base % REBASE_ALIGNMENT)
		return err_set(LL_EINVAL, "Base 0x%llx is not 64 KiB aligned.", (unsigned long long)new_base);
	if (!image->pe32plus && new_base + image->size_of_image > 0x100000000ull)
		return err_set(LL_ERANGE, "A PE32 image of 0x%x bytes does not fit at 0x%llx.",
			       image->size_of_image, (unsigned long long)new_base);
	if (new_base > UINT64_MAX - image->size_of_image)
		return err_set(LL_ERANGE, "Base 0x%llx leaves no room for the image.",
			       (unsigned long long)new_base);
	if (image->characteristics & PE_FILE_RELOCS_STRIPPED)
		return err_set(LL_EINVAL, "The image's relocations were stripped; it cannot be rebased.");
	rc = pe_relocs_read(image, &relocs);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < relocs.count; i++) {
		const struct pe_reloc *r = &relocs.entries[i];
		uint32_t width = reloc_width(image->machine, r->type);

		if (!width) {
			rc = err_set(LL_EUNSUPPORTED,
				     "Relocation type %s (%u) at 0x%x is not supported for machine 0x%x.",
				     pe_reloc_type_name(image->machine, r->type), r->type, r->rva,
				     image->machine);
			goto fail;
		}
		if (!pe_rva_ptr(image, r->rva, width)) {
			rc = err_set(LL_EFORMAT,
				     "Malformed image: relocation at 0x%x patches bytes outside the file.",
				     r->rva);
			goto fail;
		}
	}
	*ret_relocs = relocs;
	return 0;
fail:
	pe_relocs_release(&relocs);
	return rc;
}

/* Applies prepared relocations; cannot fail. */
static void rebase_apply(struct pe_image *image, const struct pe_relocs *relocs, uint64_t new_base,
			 uint32_t timestamp)
{
	uint64_t delta = new_base - image->image_base;
	const struct pe_section *hit = NULL;

	if (delta) {
		for (size_t i = 0; i < relocs->count; i++) {
			const struct pe_reloc *r = &relocs->entries[i];
			uint32_t width = reloc_width(image->machine, r->type);
			unsigned char *p;

			/* Relocations come in page order: try the last
			 * section first. */
			if (hit && r->rva >= hit->virtual_address &&
			    r->rva - hit->virtual_address <= hit->readable_size &&
			    width <= hit->readable_size - (r->rva - hit->virtual_address))
				p = image->data + hit->raw_offset + (r->rva - hit->virtual_address);
			else {
				p = pe_rva_ptr(image, r->rva, width);
				hit = pe_section_for_rva(image, r->rva);
			}
			apply_one(image, p, r, delta);
		}
	}
	if (image->pe32plus)
		pe_put64(image->data + image->optional_offset + PE_OPT_IMAGE_BASE64, new_base);
	else
		pe_put32(image->data + image->optional_offset + PE_OPT_IMAGE_BASE32, (uint32_t)new_base);
	image->image_base = new_base;
	if (timestamp == image->timestamp)
		timestamp++;
	pe_put32(image->data + image->nt_offset + PE_COFF_TIMESTAMP, timestamp);
	image->timestamp = timestamp;
	pe_checksum_update(image);
}

int pe_rebase(struct pe_image *image, uint64_t new_base, uint32_t timestamp)
{
	struct pe_relocs relocs;
	int rc = rebase_prepare(image, new_base, &relocs);

	if (rc < 0)
		return rc;
	rebase_apply(image, &relocs, new_base, timestamp);
	pe_relocs_release(&relocs);
	return 0;
}

int pe_rebase_plan(struct pe_image *const *images, size_t count, uint64_t address, bool down,
		   uint64_t *ret_bases)
{
	uint64_t limit = 0, cursor = address;
	uint64_t *bases;

	if (address % REBASE_ALIGNMENT)
		return err_set(LL_EINVAL, "Address 0x%llx is not 64 KiB aligned.",
			       (unsigned long long)address);
	for (size_t i = 0; i < count; i++)
		if (!images[i]->pe32plus)
			limit = 0x100000000ull;
	bases = malloc((count ? count : 1) * sizeof(*bases));
	if (!bases)
		return LL_ENOMEM;
	for (size_t i = 0; i < count; i++) {
		uint64_t span = ((uint64_t)images[i]->size_of_image + REBASE_ALIGNMENT - 1) &
				~(uint64_t)(REBASE_ALIGNMENT - 1);

		if (!span)
			span = REBASE_ALIGNMENT;
		if (down) {
			if (cursor < span + REBASE_ALIGNMENT) /* never at 0 */
				goto range;
			cursor -= span;
			bases[i] = cursor;
		} else {
			if (cursor > UINT64_MAX - span || (limit && cursor + span > limit))
				goto range;
			bases[i] = cursor;
			cursor += span;
		}
		if (limit && bases[i] + span > limit)
			goto range;
	}
	memcpy(ret_bases, bases, count * sizeof(*bases));
	free(bases);
	return 0;
range:
	free(bases);
	return err_set(LL_ERANGE, "The %llu images do not fit %s 0x%llx.", (unsigned long long)count,
		       down ? "below" : "above", (unsigned long long)address);
}

int pe_rebase_batch(struct pe_image *const *images, size_t count, uint64_t address, bool down,
		    uint32_t timestamp, uint64_t *ret_bases)
{
	uint64_t *bases = malloc((count ? count : 1) * sizeof(*bases));
	struct pe_relocs *relocs = calloc(count ? count : 1, sizeof(*relocs));
	size_t prepared = 0;
	int rc;

	if (!bases || !relocs) {
		rc = LL_ENOMEM;
		goto out;
	}
	rc = pe_rebase_plan(images, count, address, down, bases);
	if (rc < 0)
		goto out;
	for (; prepared < count; prepared++) {
		rc = rebase_prepare(images[prepared], bases[prepared], &relocs[prepared]);
		if (rc < 0) {
			char why[400];

			snprintf(why, sizeof(why), "%s", err_message(rc));
			err_set(rc, "Image %llu of %llu: %s", (unsigned long long)prepared + 1,
				(unsigned long long)count, why);
			goto out;
		}
	}
	for (size_t i = 0; i < count; i++)
		rebase_apply(images[i], &relocs[i], bases[i], timestamp);
	if (ret_bases)
		memcpy(ret_bases, bases, count * sizeof(*bases));
out:
	if (relocs)
		for (size_t i = 0; i < prepared; i++)
			pe_relocs_release(&relocs[i]);
	free(relocs);
	free(bases);
	return rc;
}

int pe_clear_dynamic_base(struct pe_image *image, bool *ret_changed)
{
	/* DllCharacteristics: optional header offset 70, inside the header
	 * pe_image_parse() checked (at least 96 bytes). */
	uint16_t flags = image->dll_characteristics;
	bool set = (flags & PE_DLLCHAR_DYNAMIC_BASE) != 0;

	if (ret_changed)
		*ret_changed = set;
	if (!set)
		return 0;
	flags &= (uint16_t) ~(PE_DLLCHAR_DYNAMIC_BASE | PE_DLLCHAR_HIGH_ENTROPY_VA);
	pe_put16(image->data + image->optional_offset + PE_OPT_DLL_CHARACTERISTICS, flags);
	image->dll_characteristics = flags;
	pe_checksum_update(image);
	return 0;
}
