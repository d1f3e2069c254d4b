/*
 * elf_measure.c - what the driver times for the elf family (elf_timing()):
 * every valid variant's program and the empty program (the floor), run
 * natively in their folders, with the files a cold run evicts and checks
 * for residency (the program and its libraries). Churn is not part of
 * this family.
 */
#ifdef __linux__

#include "elf_family.h"

int elf_timing(struct elf_context *ctx, struct family_timing *ret)
{
	int rc = family_timing(&ctx->base, &elf_names, ctx->variants, ctx->variant_count,
			       sizeof(ctx->variants[0]), ELF_FLOOR_NAME, ret);

	ret->loader_statistics = true;
	return rc;
}

#endif /* __linux__ */
