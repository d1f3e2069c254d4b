/* pe_bound.c - the bound import directory (winnt.h
 * IMAGE_BOUND_IMPORT_DESCRIPTOR and IMAGE_BOUND_FORWARDER_REF, both 8
 * bytes: TimeDateStamp, OffsetModuleName, then NumberOfModuleForwarderRefs
 * or Reserved). Module names are at offsets from the directory's start. */
#include "pe_int.h"

#include "loadlab/err.h"

#include <stdlib.h>
#include <string.h>

#define BOUND_ENTRY_SIZE 8
#define BOUND_MAX_MODULES 4096u

void pe_bound_imports_release(struct pe_bound_imports *bound)
{
	for (size_t i = 0; i < bound->count; i++)
		free(bound->modules[i].forwarders);
	free(bound->modules);
	bound->modules = NULL;
	bound->count = 0;
}

static int bound_name(const struct pe_image *image, uint32_t dir_rva, uint16_t offset, const char **ret_name)
{
	return pe_rva_string(image, dir_rva + offset, ret_name);
}

int pe_bound_imports_read(const struct pe_image *image, struct pe_bound_imports *ret_bound)
{
	const struct pe_data_directory *dir = &image->directories[PE_DIR_BOUND_IMPORT];
	struct pe_bound_imports out = {0, NULL};
	uint32_t pos = 0;
	int rc;

	if (!dir->rva || !dir->size) {
		*ret_bound = out;
		return 0;
	}
	if (dir->rva > UINT32_MAX - 0x20000u)
		return err_set(LL_EFORMAT, "Malformed image: bound import directory at 0x%x.", dir->rva);
	for (;;) {
		const unsigned char *p = pe_rva_ptr(image, dir->rva + pos, BOUND_ENTRY_SIZE);
		struct pe_bound_module *m;
		uint16_t nfwd;

		if (!p || pos > 0xffff) {
			rc = err_set(LL_EFORMAT,
				     "Malformed image: the bound import directory runs out of the file.");
			goto fail;
		}
		if (!pe_le32(p) && !pe_le16(p + 4) && !pe_le16(p + 6))
			break;
		if (out.count >= BOUND_MAX_MODULES) {
			rc = err_set(LL_ETOOBIG, "Bound import directory names more than %u modules.",
				     BOUND_MAX_MODULES);
			goto fail;
		}
		m = realloc(out.modules, (out.count + 1) * sizeof(*out.modules));
		if (!m) {
			rc = LL_ENOMEM;
			goto fail;
		}
		out.modules = m;
		m = &out.modules[out.count];
		memset(m, 0, sizeof(*m));
		out.count++;
		m->timestamp = pe_le32(p);
		nfwd = pe_le16(p + 6);
		rc = bound_name(image, dir->rva, pe_le16(p + 4), &m->name);
		if (rc < 0)
			goto fail;
		pos += BOUND_ENTRY_SIZE;
		if (nfwd) {
			m->forwarders = calloc(nfwd, sizeof(*m->forwarders));
			if (!m->forwarders) {
				rc = LL_ENOMEM;
				goto fail;
			}
		}
		for (uint16_t i = 0; i < nfwd; i++) {
			const unsigned char *f = pe_rva_ptr(image, dir->rva + pos, BOUND_ENTRY_SIZE);

			if (!f || pos > 0xffff) {
				rc = err_set(
					LL_EFORMAT,
					"Malformed image: the bound import directory runs out of the file.");
				goto fail;
			}
			m->forwarders[i].timestamp = pe_le32(f);
			rc = bound_name(image, dir->rva, pe_le16(f + 4), &m->forwarders[i].name);
			if (rc < 0)
				goto fail;
			m->forwarder_count++;
			pos += BOUND_ENTRY_SIZE;
		}
	}
	*ret_bound = out;
	return 0;
fail:
	pe_bound_imports_release(&out);
	return rc;
}
