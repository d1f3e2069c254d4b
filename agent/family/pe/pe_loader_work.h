/*
 * pe_loader_work.h - the Windows loader's work for one variant, counted
 * from its images (issue 40, "loader work"): the base relocations the
 * loader applies, and the imports it resolves by name, by ordinal, or
 * not at all because a valid binding already holds them. The PE side of
 * the result's variants[].loader (the ELF side is glibc's
 * LD_DEBUG=statistics, measure/loader_stats.h); docs/agent.md, "Loader
 * work".
 *
 *	struct pe_loader_image images[] = {{"main.exe", exe}, {"a.dll", a}};
 *	struct pe_loader_work w;
 *	pe_loader_work_count(images, 2, NULL, true, lookup, ctx, &w); // static
 *	pe_loader_work_json(&w, "static", &json);
 *
 * Two sources, one shape:
 *
 *	static  the images as the variant lays them out, with the loader's
 *	        rules: the program first at its preferred base, then each DLL
 *	        in the order given (the import order); a DLL whose preferred
 *	        range [ImageBase, ImageBase + SizeOfImage) overlaps an image
 *	        placed at its own base before it is relocated (PE spec, "The
 *	        .reloc Section"; what XP's loader, and Wine's, do without
 *	        ASLR);
 *	probe   the same counts with each image's placement as the debug
 *	        probe saw it (actual base versus preferred), and bindings
 *	        counted only when the loader uses them (Wine never does).
 *
 * A relocated image costs the loader its .reloc entries (ABSOLUTE padding
 * excluded); one at its preferred base costs 0. An import is "bound" when
 * its descriptor is marked bound (TimeDateStamp non-zero), the image's
 * bound import directory names its module with the TimeDateStamp of the
 * file the loader would load, and that module sits at its preferred base
 * (modules outside IMAGES, system DLLs, are taken to: their placement is
 * not known statically); the loader then keeps the IAT as the file holds
 * it. Every other import is resolved, by name or by ordinal as its lookup
 * entry says. Delay-load imports are resolved on first call, not at load,
 * and are not counted. Functions return 0 or a negative LL_E* code with a
 * message (err.h); outputs are untouched on failure.
 */
#ifndef LOADLAB_AGENT_PE_LOADER_WORK_H
#define LOADLAB_AGENT_PE_LOADER_WORK_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loadlab/pe.h"

struct runner;

/* Most images one count takes (a program and its own DLLs). */
#define PE_LOADER_WORK_MAX_IMAGES 1024

/* One of the program's own images: NAME as imports name it (matched
 * without regard to case), IMAGE borrowed. */
struct pe_loader_image {
	const char *name;
	const struct pe_image *image;
};

/* What the loader does for the program's own images. */
struct pe_loader_work {
	long long relocations;        /* base relocations applied */
	long long images;             /* images counted (the program and its DLLs) */
	long long images_relocated;   /* of them, not at their preferred base */
	long long imports_by_name;    /* resolved by name (hint, then the name) */
	long long imports_by_ordinal; /* resolved by ordinal */
	long long imports_bound;      /* held by a valid binding: not resolved */
};

/* The TimeDateStamp of the file the loader would load for MODULE (one
 * not among the images, a system DLL): true with *RET set, false when it
 * finds none. */
typedef bool pe_loader_timestamp_fn(void *context, const char *module, uint32_t *ret);

/* Counts the loader's work for IMAGES (COUNT of them, 1..
 * PE_LOADER_WORK_MAX_IMAGES; the program first). RELOCATED (COUNT flags,
 * or NULL) says which images the probe saw away from their preferred
 * base; NULL predicts it (static, above). BINDING_USED false counts every
 * import as resolved (a loader that ignores bindings: Wine). TIMESTAMP_OF
 * (may be NULL: no other module's binding is valid) looks up modules
 * outside IMAGES. LL_EINVAL for COUNT out of range; the toolkit's
 * LL_EFORMAT for an image whose relocations or imports cannot be read. */
int pe_loader_work_count(const struct pe_loader_image *images, size_t count, const bool *relocated,
			 bool binding_used, pe_loader_timestamp_fn *timestamp_of, void *context,
			 struct pe_loader_work *ret);

/* W as the result's "loader" object: {"source": SOURCE ("static" or
 * "probe"), "relocations", "images", "images_relocated",
 * "imports_by_name", "imports_by_ordinal", "imports_bound"}. */
int pe_loader_work_json(const struct pe_loader_work *w, const char *source, cJSON **ret);

/* What Wine cannot show of the counts (DESIGN.md, "Known traps"): a
 * variant's "cannot_show" under Wine. */
#define PE_LOADER_WORK_WINE_NOTE                                                                     \
	"Wine ignores bound imports and resolves every import: a valid binding saves nothing here, " \
	"so imports_bound is 0 in what the probe saw; the static count is what Windows would skip."

/* The images of one variant run, as pe_loader_work_variant() counts them. */
struct pe_loader_run {
	const struct pe_loader_image *images;
	size_t count;
	const bool *relocated;       /* as the probe saw them; NULL: no probe */
	const struct runner *runner; /* the variant's; under Wine bindings count for nothing */
	const char *exe_dir;         /* where the loader looks first (family_loader_timestamp()) */
};

/* A variant's "loader" object into *LOADER (the old one deleted): the
 * static count, or with a probe the probe's count leading and the static
 * one under "static"; under Wine PE_LOADER_WORK_WINE_NOTE as
 * "cannot_show". The counts are a fact beside the times: RC, a failure
 * in opening the images (0: none), or a count's failure becomes
 * {"source": "static", "not_counted": its message} instead of failing
 * the task. 0, or LL_ENOMEM. */
int pe_loader_work_variant(const struct pe_loader_run *run, int rc, cJSON **loader);

#endif
