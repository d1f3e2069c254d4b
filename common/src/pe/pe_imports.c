/* pe_imports.c - the import and delay-load import directories. */
#include "pe_int.h"

#include "loadlab/err.h"

#include <stdlib.h>
#include <string.h>

/* Import directory entry, 20 bytes (PE spec, "Import Directory Table"). */
#define IMPORT_DESCRIPTOR_SIZE 20
/* Delay-load directory entry, 32 bytes (PE spec, "Delay-Load Directory Table"). */
#define DELAY_DESCRIPTOR_SIZE 32

void pe_imports_release(struct pe_imports *imports)
{
	for (size_t i = 0; i < imports->module_count; i++)
		free(imports->modules[i].functions);
	free(imports->modules);
	imports->modules = NULL;
	imports->module_count = 0;
}

/* Reads the thunks of one descriptor. With a name table, names and
 * ordinals come from it and the IAT is read alongside; without one they
 * come from the IAT, unless the descriptor is bound (the IAT then holds
 * addresses, and the names are gone). */
static int read_functions(const struct pe_image *image, struct pe_import_module *m)
{
	uint32_t ts = pe_thunk_size(image);
	uint64_t ordinal_flag = image->pe32plus ? 0x8000000000000000ull : 0x80000000ull;
	bool bound_no_names = !m->name_table_rva && m->timestamp != 0 && !m->delay;
	uint32_t table = m->name_table_rva ? m->name_table_rva : m->iat_rva;
	struct pe_import_function *fns = NULL;
	size_t n = 0, alloc = 0;

	if (!table) {
		m->functions = NULL;
		m->function_count = 0;
		return 0;
	}
	for (;; n++) {
		const unsigned char *p, *iat;
		uint64_t v;
		struct pe_import_function *f;

		if (n >= PE_MAX_IMPORT_FUNCTIONS) {
			free(fns);
			return err_set(LL_ETOOBIG, "Import of '%s' lists more than %u functions.", m->name,
				       PE_MAX_IMPORT_FUNCTIONS);
		}
		if ((uint64_t)table + (n + 1) * ts > UINT32_MAX ||
		    !(p = pe_rva_ptr(image, table + (uint32_t)(n * ts), ts))) {
			free(fns);
			return err_set(LL_EFORMAT,
				       "Malformed image: the import table of '%s' runs out of the file.",
				       m->name);
		}
		v = pe_read_thunk(image, p);
		if (!v)
			break;
		if (n == alloc) {
			size_t grow = alloc ? alloc * 2 : 16;
			void *q = realloc(fns, grow * sizeof(*fns));

			if (!q) {
				free(fns);
				return LL_ENOMEM;
			}
			fns = q;
			alloc = grow;
		}
		f = &fns[n];
		memset(f, 0, sizeof(*f));
		f->has_name_table = m->name_table_rva != 0;
		f->iat_rva = m->iat_rva + (uint32_t)(n * ts);
		iat = m->iat_rva ? pe_rva_ptr(image, f->iat_rva, ts) : NULL;
		if (m->iat_rva && (!iat || (uint64_t)m->iat_rva + (n + 1) * ts > UINT32_MAX)) {
			free(fns);
			return err_set(LL_EFORMAT, "Malformed image: the IAT of '%s' runs out of the file.",
				       m->name);
		}
		f->iat_value = iat ? pe_read_thunk(image, iat) : 0;
		if (bound_no_names) {
			continue;
		} else if (v & ordinal_flag) {
			f->by_ordinal = true;
			f->ordinal = (uint16_t)v;
		} else {
			/* Hint/name table entry: a 2-byte hint, then the name
			 * (PE spec, "Hint/Name Table"). Bits 30-0 are the RVA. */
			uint32_t rva = (uint32_t)(v & 0x7fffffff);
			const unsigned char *h = pe_rva_ptr(image, rva, 2);
			int rc;

			if (!h || rva > UINT32_MAX - 2) {
				free(fns);
				return err_set(
					LL_EFORMAT,
					"Malformed image: hint/name entry 0x%x of '%s' is not in the file.",
					rva, m->name);
			}
			f->hint = pe_le16(h);
			rc = pe_rva_string(image, rva + 2, &f->name);
			if (rc < 0) {
				free(fns);
				return rc;
			}
		}
	}
	m->functions = fns;
	m->function_count = n;
	return 0;
}

static int read_descriptor(const struct pe_image *image, bool delay, const unsigned char *p, uint32_t rva,
			   struct pe_import_module *m)
{
	uint32_t name_rva;
	int rc;

	memset(m, 0, sizeof(*m));
	m->delay = delay;
	m->descriptor_rva = rva;
	if (!delay) {
		m->name_table_rva = pe_le32(p);
		m->timestamp = pe_le32(p + 4);
		m->forwarder_chain = pe_le32(p + 8);
		name_rva = pe_le32(p + 12);
		m->iat_rva = pe_le32(p + 16);
	} else {
		uint32_t f[8];

		for (int i = 0; i < 8; i++)
			f[i] = pe_le32(p + 4 * i);
		m->delay_attributes = f[0];
		/* Attribute bit 0 clear: the old (VC6) format with VAs. */
		if (!(f[0] & 1)) {
			for (int i = 1; i < 7; i++) {
				if (!f[i])
					continue;
				if (f[i] < image->image_base || f[i] - image->image_base > UINT32_MAX)
					return err_set(LL_EFORMAT,
						       "Malformed image: delay-load descriptor at 0x%x holds "
						       "an address outside the image.",
						       rva);
				f[i] = (uint32_t)(f[i] - image->image_base);
			}
		}
		name_rva = f[1];
		m->delay_module_handle_rva = f[2];
		m->iat_rva = f[3];
		m->name_table_rva = f[4];
		m->delay_bound_iat_rva = f[5];
		m->delay_unload_iat_rva = f[6];
		m->timestamp = f[7];
	}
	rc = pe_rva_string(image, name_rva, &m->name);
	if (rc < 0)
		return rc;
	return read_functions(image, m);
}

int pe_imports_read(const struct pe_image *image, bool delay, struct pe_imports *ret_imports)
{
	enum pe_directory which = delay ? PE_DIR_DELAY_IMPORT : PE_DIR_IMPORT;
	uint32_t size = delay ? DELAY_DESCRIPTOR_SIZE : IMPORT_DESCRIPTOR_SIZE;
	uint32_t rva = image->directories[which].rva;
	struct pe_imports out = {0, NULL};
	size_t alloc = 0;
	int rc;

	if (!rva || !image->directories[which].size) {
		*ret_imports = out;
		return 0;
	}
	/* The table ends with an all-zero entry; the directory size is not
	 * trusted to say where (loaders ignore it). */
	for (size_t i = 0;; i++) {
		const unsigned char *p;
		static const unsigned char zero[DELAY_DESCRIPTOR_SIZE];

		if (i >= PE_MAX_IMPORT_MODULES) {
			rc = err_set(LL_ETOOBIG, "Image imports from more than %u modules.",
				     PE_MAX_IMPORT_MODULES);
			goto fail;
		}
		if ((uint64_t)rva + (i + 1) * size > UINT32_MAX ||
		    !(p = pe_rva_ptr(image, rva + (uint32_t)(i * size), size))) {
			rc = err_set(LL_EFORMAT,
				     "Malformed image: the %simport directory runs out of the file.",
				     delay ? "delay-load " : "");
			goto fail;
		}
		/* Import: the Name and FirstThunk fields zero end the table;
		 * delay: an all-zero entry. */
		if (delay ? memcmp(p, zero, size) == 0 : (!pe_le32(p + 12) && !pe_le32(p + 16)))
			break;
		if (out.module_count == alloc) {
			size_t grow = alloc ? alloc * 2 : 8;
			void *q = realloc(out.modules, grow * sizeof(*out.modules));

			if (!q) {
				rc = LL_ENOMEM;
				goto fail;
			}
			out.modules = q;
			alloc = grow;
		}
		rc = read_descriptor(image, delay, p, rva + (uint32_t)(i * size),
				     &out.modules[out.module_count]);
		if (rc < 0)
			goto fail;
		out.module_count++;
	}
	*ret_imports = out;
	return 0;
fail:
	pe_imports_release(&out);
	return rc;
}
