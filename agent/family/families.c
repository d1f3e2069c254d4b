/* families.c - the families this agent runs (family.h): one entry each. */
#include "family/family.h"
#include "family/pe/pe_family.h"
#include "family/program/program_family.h"

#include <stddef.h>

const struct family *const families[] = {
	&pe_family,
	&program_family,
	NULL,
};
