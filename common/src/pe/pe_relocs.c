/* pe_relocs.c - base relocations (PE spec, "The .reloc Section"). */
#include "pe_int.h"

#include "loadlab/err.h"

#include <stdlib.h>
#include <string.h>

void pe_relocs_release(struct pe_relocs *relocs)
{
	free(relocs->entries);
	memset(relocs, 0, sizeof(*relocs));
}

int pe_relocs_read(const struct pe_image *image, struct pe_relocs *ret_relocs)
{
	const struct pe_data_directory *dir = &image->directories[PE_DIR_BASERELOC];
	struct pe_relocs out;
	const unsigned char *p;
	uint32_t off = 0;
	size_t alloc;

	memset(&out, 0, sizeof(out));
	if (!dir->rva || !dir->size) {
		*ret_relocs = out;
		return 0;
	}
	p = pe_rva_ptr(image, dir->rva, dir->size);
	if (!p)
		return err_set(
			LL_EFORMAT,
			"Malformed image: the relocation directory (0x%x, %u bytes) is not in the file.",
			dir->rva, dir->size);
	/* Upper bound: every 2-byte slot an entry. */
	alloc = dir->size / 2;
	out.entries = malloc((alloc ? alloc : 1) * sizeof(*out.entries));
	if (!out.entries)
		return LL_ENOMEM;
	/* Blocks: page RVA (4), block size (4), then 2-byte entries with the
	 * type in the high 4 bits and the page offset in the low 12. */
	while (dir->size - off >= 8) {
		uint32_t page = pe_le32(p + off), block = pe_le32(p + off + 4);
		uint32_t n;

		if (block < 8 || block > dir->size - off || (block & 1)) {
			pe_relocs_release(&out);
			return err_set(LL_EFORMAT, "Malformed image: relocation block at +0x%x has size %u.",
				       off, block);
		}
		n = (block - 8) / 2;
		for (uint32_t i = 0; i < n; i++) {
			uint16_t e = pe_le16(p + off + 8 + 2 * i);
			unsigned type = e >> 12;
			struct pe_reloc *r;

			if (type == PE_REL_ABSOLUTE)
				continue;
			if ((uint64_t)page + (e & 0xfff) > UINT32_MAX) {
				pe_relocs_release(&out);
				return err_set(LL_EFORMAT, "Malformed image: relocation page 0x%x overflows.",
					       page);
			}
			r = &out.entries[out.count++];
			r->rva = page + (e & 0xfff);
			r->type = (uint8_t)type;
			r->param = 0;
			/* HIGHADJ takes the next slot as the low half of the
			 * 32-bit value (PE spec, "IMAGE_REL_BASED_HIGHADJ"). */
			if (type == PE_REL_HIGHADJ) {
				if (i + 1 >= n) {
					uint32_t at = r->rva;

					pe_relocs_release(&out);
					return err_set(LL_EFORMAT,
						       "Malformed image: HIGHADJ relocation at 0x%x lacks "
						       "its parameter.",
						       at);
				}
				r->param = pe_le16(p + off + 8 + 2 * ++i);
			}
		}
		out.block_count++;
		off += block;
	}
	*ret_relocs = out;
	return 0;
}

const char *pe_reloc_type_name(uint16_t machine, unsigned type)
{
	bool mips = machine == PE_MACHINE_R4000 || machine == PE_MACHINE_MIPS16 || machine == 0x0366 ||
		    machine == 0x0466 || machine == 0x0168 || machine == 0x0169;
	bool arm = machine == PE_MACHINE_ARM || machine == PE_MACHINE_ARMNT || machine == 0x01c2;
	bool riscv = machine == PE_MACHINE_RISCV32 || machine == PE_MACHINE_RISCV64 || machine == 0x5128;
	bool loong = machine == PE_MACHINE_LOONGARCH32 || machine == PE_MACHINE_LOONGARCH64;

	switch (type) {
	case PE_REL_ABSOLUTE:
		return "ABSOLUTE";
	case PE_REL_HIGH:
		return "HIGH";
	case PE_REL_LOW:
		return "LOW";
	case PE_REL_HIGHLOW:
		return "HIGHLOW";
	case PE_REL_HIGHADJ:
		return "HIGHADJ";
	case PE_REL_MACHINE_5:
		return mips ? "MIPS_JMPADDR" : arm ? "ARM_MOV32" : riscv ? "RISCV_HIGH20" : "MACHINE_5";
	case PE_REL_RESERVED_6:
		return "RESERVED_6";
	case PE_REL_MACHINE_7:
		return arm ? "THUMB_MOV32" : riscv ? "RISCV_LOW12I" : "MACHINE_7";
	case PE_REL_MACHINE_8:
		return riscv ? "RISCV_LOW12S" : loong ? "LOONGARCH_MARK_LA" : "MACHINE_8";
	case PE_REL_MACHINE_9:
		return mips ? "MIPS_JMPADDR16" : machine == PE_MACHINE_IA64 ? "IA64_IMM64" : "MACHINE_9";
	case PE_REL_DIR64:
		return "DIR64";
	default:
		return "UNKNOWN";
	}
}
