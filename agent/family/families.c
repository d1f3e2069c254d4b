/* families.c - the families this agent runs (family.h): one entry each. */
#include "family/family.h"
#include "family/elf/elf_family.h"
#include "family/pe/pe_family.h"
#include "family/program/program_elf.h"
#include "family/program/program_family.h"

#include <stddef.h>

const struct family *const families[] = {
	&pe_family,
#ifdef __linux__
	&elf_family,         /* Linux shared objects, run natively: Linux only */
	&program_elf_family, /* a program job whose program is ELF: Linux only */
#endif
	&program_family, /* the other program jobs: Windows builds (PE) */
	NULL,
};
