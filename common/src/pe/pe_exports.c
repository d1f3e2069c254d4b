/* pe_exports.c - the export directory (PE spec, "The .edata Section"). */
#include "pe_int.h"

#include "loadlab/err.h"

#include <stdlib.h>
#include <string.h>

void pe_exports_release(struct pe_exports *exports)
{
	free(exports->entries);
	free(exports->names);
	memset(exports, 0, sizeof(*exports));
}

int pe_exports_read(const struct pe_image *image, struct pe_exports *ret_exports)
{
	const struct pe_data_directory *dir = &image->directories[PE_DIR_EXPORT];
	struct pe_exports out;
	const unsigned char *d, *eat, *names = NULL, *ordinals = NULL;
	uint32_t count, name_count;
	int rc;

	memset(&out, 0, sizeof(out));
	if (!dir->rva || !dir->size) {
		*ret_exports = out;
		return 0;
	}
	/* Export directory table, 40 bytes. */
	d = pe_rva_ptr(image, dir->rva, 40);
	if (!d)
		return err_set(LL_EFORMAT,
			       "Malformed image: the export directory at 0x%x is not in the file.", dir->rva);
	out.timestamp = pe_le32(d + 4);
	out.base = pe_le32(d + 16);
	count = pe_le32(d + 20);
	name_count = pe_le32(d + 24);
	if (pe_le32(d + 12)) {
		rc = pe_rva_string(image, pe_le32(d + 12), &out.dll_name);
		if (rc < 0)
			return rc;
	}
	if (count > PE_MAX_EXPORTS || name_count > PE_MAX_EXPORTS)
		return err_set(LL_ETOOBIG,
			       "Export directory lists %u functions and %u names; the limit is %u.", count,
			       name_count, PE_MAX_EXPORTS);
	if (count && (uint64_t)out.base + count - 1 > UINT32_MAX)
		return err_set(LL_EFORMAT,
			       "Malformed image: export ordinals overflow (base %u, %u functions).", out.base,
			       count);
	eat = count ? pe_rva_ptr(image, pe_le32(d + 28), count * 4) : NULL;
	if (count && !eat)
		return err_set(LL_EFORMAT, "Malformed image: the export address table is not in the file.");
	if (name_count) {
		names = pe_rva_ptr(image, pe_le32(d + 32), name_count * 4);
		ordinals = pe_rva_ptr(image, pe_le32(d + 36), name_count * 2);
		if (!names || !ordinals)
			return err_set(
				LL_EFORMAT,
				"Malformed image: the export name or ordinal table is not in the file.");
	}
	out.count = count;
	out.name_count = name_count;
	out.entries = calloc(count ? count : 1, sizeof(*out.entries));
	out.names = calloc(name_count ? name_count : 1, sizeof(*out.names));
	if (!out.entries || !out.names) {
		rc = LL_ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < count; i++) {
		struct pe_export *e = &out.entries[i];

		e->ordinal = out.base + i;
		e->rva = pe_le32(eat + 4 * i);
		/* An RVA inside the export directory is a forwarder string
		 * (PE spec, "Export Address Table"). */
		if (e->rva && e->rva >= dir->rva && e->rva - dir->rva < dir->size) {
			rc = pe_rva_string(image, e->rva, &e->forwarder);
			if (rc < 0)
				goto fail;
		}
	}
	for (uint32_t i = 0; i < name_count; i++) {
		struct pe_export_name *n = &out.names[i];
		uint16_t index = pe_le16(ordinals + 2 * i);

		rc = pe_rva_string(image, pe_le32(names + 4 * i), &n->name);
		if (rc < 0)
			goto fail;
		if (index >= count) {
			rc = err_set(LL_EFORMAT, "Malformed image: export name '%s' points at slot %u of %u.",
				     n->name, index, count);
			goto fail;
		}
		n->index = index;
	}
	/* The first name in the table names its slot (several may). */
	for (uint32_t i = name_count; i-- > 0;)
		out.entries[out.names[i].index].name = out.names[i].name;
	*ret_exports = out;
	return 0;
fail:
	pe_exports_release(&out);
	return rc;
}

const struct pe_export *pe_exports_find_name(const struct pe_exports *exports, const char *name,
					     uint16_t hint)
{
	size_t lo = 0, hi = exports->name_count;

	if (hint < exports->name_count && strcmp(exports->names[hint].name, name) == 0)
		return &exports->entries[exports->names[hint].index];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(exports->names[mid].name, name);

		if (c == 0)
			return &exports->entries[exports->names[mid].index];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = 0; i < exports->name_count; i++)
		if (strcmp(exports->names[i].name, name) == 0)
			return &exports->entries[exports->names[i].index];
	return NULL;
}

const struct pe_export *pe_exports_find_ordinal(const struct pe_exports *exports, uint32_t ordinal)
{
	const struct pe_export *e;

	if (ordinal < exports->base || ordinal - exports->base >= exports->count)
		return NULL;
	e = &exports->entries[ordinal - exports->base];
	return e->rva ? e : NULL;
}
