/* pe_bind.c - binding imports (BIND / BindImageEx semantics). */
#include "pe_int.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIND_MAX_MODULES 1024u
#define BOUND_ENTRY_SIZE 8

/* A DLL opened for binding, looked up by the name it was asked for. */
struct bind_module {
	char *name;             /* as asked for, ".dll" added when bare */
	struct pe_image *image; /* NULL: not found or not loadable */
	struct pe_exports exports;
};

struct bind_context {
	const struct pe_image *image;
	const struct pe_bind_options *options;
	struct bind_module **modules; /* each allocated alone: pointers stay valid */
	size_t module_count;
	uint32_t max_depth;
};

/* The modules one import descriptor used: its DLL, then forwarder targets. */
struct bind_uses {
	struct bind_module *list[64];
	size_t count;
	bool overflow;
};

static void bind_context_release(struct bind_context *ctx)
{
	for (size_t i = 0; i < ctx->module_count; i++) {
		free(ctx->modules[i]->name);
		pe_exports_release(&ctx->modules[i]->exports);
		pe_image_free(ctx->modules[i]->image);
		free(ctx->modules[i]);
	}
	free(ctx->modules);
}

static void case_copy(char *dst, const char *src, int mode)
{
	for (; *src; src++, dst++) {
		char c = *src;

		if (mode == 1 && c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		else if (mode == 2 && c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		*dst = c;
	}
	*dst = '\0';
}

/* Opens NAME from the image's folder, then each search folder; a file of
 * another architecture is passed over, as the loader does. */
static struct pe_image *find_dll(const struct bind_context *ctx, const char *name)
{
	size_t ndirs = 1 + ctx->options->search_dir_count;

	if (strchr(name, '/') || strchr(name, '\\'))
		return NULL;
	for (size_t d = 0; d < ndirs; d++) {
		const char *dir = d == 0 ? ctx->options->image_dir : ctx->options->search_dirs[d - 1];
		size_t len;
		char *path;

		if (!dir)
			continue;
		len = strlen(dir) + 1 + strlen(name) + 1;
		path = malloc(len);
		if (!path)
			return NULL;
		for (int mode = 0; mode < 3; mode++) {
			struct pe_image *dll;
			int n = snprintf(path, len, "%s/", dir);

			case_copy(path + n, name, mode);
			if (pe_image_open(path, &dll) < 0)
				continue;
			if (dll->machine == ctx->image->machine && dll->pe32plus == ctx->image->pe32plus) {
				free(path);
				return dll;
			}
			pe_image_free(dll);
		}
		free(path);
	}
	return NULL;
}

/* The module named NAME (case-insensitive), opened on first use. NULL only
 * when out of memory or past the module limit; a module not found has a
 * NULL image. */
static struct bind_module *get_module(struct bind_context *ctx, const char *name, size_t name_len)
{
	struct bind_module *m, **list;
	char *key;
	bool bare;

	bare = memchr(name, '.', name_len) == NULL;
	key = malloc(name_len + 5);
	if (!key)
		return NULL;
	memcpy(key, name, name_len);
	memcpy(key + name_len, bare ? ".dll" : "", bare ? 5 : 1);
	for (size_t i = 0; i < ctx->module_count; i++)
		if (pe_name_casecmp(ctx->modules[i]->name, key) == 0) {
			free(key);
			return ctx->modules[i];
		}
	if (ctx->module_count >= BIND_MAX_MODULES) {
		free(key);
		return NULL;
	}
	list = realloc(ctx->modules, (ctx->module_count + 1) * sizeof(*list));
	if (!list) {
		free(key);
		return NULL;
	}
	ctx->modules = list;
	m = calloc(1, sizeof(*m));
	if (!m) {
		free(key);
		return NULL;
	}
	ctx->modules[ctx->module_count++] = m;
	m->name = key;
	m->image = find_dll(ctx, key);
	if (m->image && pe_exports_read(m->image, &m->exports) < 0) {
		pe_image_free(m->image);
		m->image = NULL;
	}
	return m;
}

static void uses_add(struct bind_uses *uses, struct bind_module *m)
{
	for (size_t i = 0; i < uses->count; i++)
		if (uses->list[i] == m)
			return;
	if (uses->count == sizeof(uses->list) / sizeof(uses->list[0]))
		uses->overflow = true;
	else
		uses->list[uses->count++] = m;
}

/* Resolves one import in M to the VA the loader would find when every
 * module sits at its preferred base, following forwarders. False when it
 * cannot be resolved. */
static bool resolve(struct bind_context *ctx, struct bind_module *m, bool by_ordinal, uint32_t ordinal,
		    const char *name, uint16_t hint, uint32_t depth, struct bind_uses *uses, uint64_t *ret_va)
{
	const struct pe_export *e;
	const char *fwd, *dot;
	struct bind_module *target;

	if (!m || !m->image || depth > ctx->max_depth)
		return false;
	e = by_ordinal ? pe_exports_find_ordinal(&m->exports, ordinal)
		       : pe_exports_find_name(&m->exports, name, hint);
	if (!e || !e->rva)
		return false;
	if (!e->forwarder) {
		*ret_va = m->image->image_base + e->rva;
		return true;
	}
	/* "DLL.Name" or "DLL.#ordinal"; the module part ends at the last dot
	 * and gets ".dll" when it has no extension (as the loader does). */
	fwd = e->forwarder;
	dot = strrchr(fwd, '.');
	if (!dot || dot == fwd || !dot[1])
		return false;
	target = get_module(ctx, fwd, (size_t)(dot - fwd));
	if (!target || !target->image)
		return false;
	uses_add(uses, target);
	if (dot[1] == '#') {
		char *end;
		unsigned long n = strtoul(dot + 2, &end, 10);

		if (*end || end == dot + 2 || n > 0xffff)
			return false;
		return resolve(ctx, target, true, (uint32_t)n, NULL, 0, depth + 1, uses, ret_va);
	}
	return resolve(ctx, target, false, 0, dot + 1, 0, depth + 1, uses, ret_va);
}

/* One bound descriptor's outcome. */
struct bound_plan {
	const struct pe_import_module *import;
	struct bind_uses uses; /* uses.list[0] is the DLL itself */
	uint64_t *values;      /* per function */
	bool ok;
};

/* Appends NAME to the directory's string area unless already there;
 * returns its offset from the directory start, or -1 past 64 KiB. */
static long dir_name(unsigned char *dir, size_t *len, size_t cap, const char *name, size_t strings_start)
{
	size_t n = strlen(name) + 1;

	for (size_t off = strings_start; off < *len; off += strlen((char *)dir + off) + 1)
		if (strcmp((char *)dir + off, name) == 0)
			return (long)off;
	if (*len + n > cap || *len > 0xffff)
		return -1;
	memcpy(dir + *len, name, n);
	*len += n;
	return (long)(*len - n);
}

/* Builds the bound import directory for the bound descriptors. */
static int build_directory(const struct bound_plan *plans, size_t count, unsigned char **ret_dir,
			   size_t *ret_len)
{
	size_t entries = 1, cap, len, strings, pos = 0;
	unsigned char *dir;

	for (size_t i = 0; i < count; i++)
		if (plans[i].ok)
			entries += plans[i].uses.count; /* itself + forwarder refs */
	strings = entries * BOUND_ENTRY_SIZE;
	cap = strings + 0x10000;
	dir = calloc(1, cap);
	if (!dir)
		return LL_ENOMEM;
	len = strings;
	for (size_t i = 0; i < count; i++) {
		const struct bound_plan *p = &plans[i];
		long off;

		if (!p->ok)
			continue;
		off = dir_name(dir, &len, cap, p->import->name, strings);
		if (off < 0)
			goto too_big;
		pe_put32(dir + pos, p->uses.list[0]->image->timestamp);
		pe_put16(dir + pos + 4, (uint16_t)off);
		pe_put16(dir + pos + 6, (uint16_t)(p->uses.count - 1));
		pos += BOUND_ENTRY_SIZE;
		for (size_t f = 1; f < p->uses.count; f++) {
			off = dir_name(dir, &len, cap, p->uses.list[f]->name, strings);
			if (off < 0)
				goto too_big;
			pe_put32(dir + pos, p->uses.list[f]->image->timestamp);
			pe_put16(dir + pos + 4, (uint16_t)off);
			pe_put16(dir + pos + 6, 0);
			pos += BOUND_ENTRY_SIZE;
		}
	}
	len = (len + 3) & ~(size_t)3;
	*ret_dir = dir;
	*ret_len = len;
	return 0;
too_big:
	free(dir);
	return err_set(LL_ETOOBIG, "The bound import directory would exceed 64 KiB.");
}

static bool region_free(const struct pe_image *image, size_t start, size_t end, size_t old_start,
			size_t old_end)
{
	for (size_t i = start; i < end; i++)
		if (image->data[i] && !(i >= old_start && i < old_end))
			return false;
	return true;
}

/* Finds header room for LEN bytes after the section table, growing the
 * headers when needed (see pe_bind() in pe.h). Works on COPY, a private
 * copy of the image. */
static int make_room(struct pe_image *copy, size_t len, uint32_t *ret_offset)
{
	size_t table_end = copy->section_table_offset + (size_t)copy->section_count * PE_SECTION_HEADER_SIZE;
	size_t start = (table_end + 3) & ~(size_t)3;
	size_t soh = copy->size_of_headers, old_start = 0, old_end = 0;
	const struct pe_data_directory *old = &copy->directories[PE_DIR_BOUND_IMPORT];
	uint32_t first_va = UINT32_MAX, fa = copy->file_alignment;
	size_t new_soh, delta;
	unsigned char *data;
	int rc;

	if (old->rva && old->rva < soh) {
		old_start = old->rva;
		old_end = (size_t)old->rva + old->size;
	}
	for (uint32_t i = 0; i < copy->section_count; i++)
		if (copy->sections[i].virtual_address < first_va)
			first_va = copy->sections[i].virtual_address;
	if (soh > copy->size || table_end > soh)
		return err_set(LL_EFORMAT,
			       "Malformed image: SizeOfHeaders 0x%x does not cover the section table.",
			       (unsigned)soh);
	if (!region_free(copy, table_end, soh, old_start, old_end))
		return err_set(LL_ETOOBIG, "The header space after the section table is in use; no room for "
					   "the bound import directory.");
	/* Clear the old directory; it is rewritten below. */
	if (old_end > old_start && old_end <= soh)
		memset(copy->data + old_start, 0, old_end - old_start);
	if (start + len <= soh && start + len <= first_va) {
		*ret_offset = (uint32_t)start;
		return 0;
	}
	/* Grow the headers by whole file-alignment units. */
	if (soh % fa)
		return err_set(LL_ETOOBIG,
			       "SizeOfHeaders is not file-aligned; no room for the bound import directory.");
	new_soh = (start + len + fa - 1) & ~(size_t)(fa - 1);
	if (new_soh > first_va || new_soh > UINT32_MAX)
		return err_set(LL_ETOOBIG,
			       "The headers cannot grow to 0x%llx bytes below the first section at 0x%x; no "
			       "room for the bound import directory.",
			       (unsigned long long)new_soh, first_va);
	for (uint32_t i = 0; i < copy->section_count; i++)
		if (copy->sections[i].raw_size && copy->sections[i].raw_offset < soh)
			return err_set(LL_ETOOBIG, "Section '%s' overlaps the headers; they cannot grow.",
				       copy->sections[i].name);
	delta = new_soh - soh;
	if (copy->size > PE_MAX_FILE_SIZE - delta)
		return err_set(LL_ETOOBIG, "The image would exceed %u bytes.", PE_MAX_FILE_SIZE);
	data = malloc(copy->size + delta);
	if (!data)
		return LL_ENOMEM;
	memcpy(data, copy->data, soh);
	memset(data + soh, 0, delta);
	memcpy(data + new_soh, copy->data + soh, copy->size - soh);
	/* Every file offset past the old headers moves by DELTA. */
	for (uint32_t i = 0; i < copy->section_count; i++) {
		unsigned char *s = data + copy->section_table_offset + i * PE_SECTION_HEADER_SIZE;

		for (int field = 20; field <= 28; field += 4) /* raw data, relocs, line numbers */
			if (pe_le32(s + field) >= soh)
				pe_put32(s + field, (uint32_t)(pe_le32(s + field) + delta));
	}
	if (copy->pointer_to_symbols >= soh)
		pe_put32(data + copy->nt_offset + PE_COFF_SYMBOLS,
			 (uint32_t)(copy->pointer_to_symbols + delta));
	if (copy->directory_count > PE_DIR_SECURITY && copy->directories[PE_DIR_SECURITY].rva >= soh) {
		size_t at = copy->optional_offset + (copy->pe32plus ? 112 : 96) + 8 * PE_DIR_SECURITY;

		pe_put32(data + at, (uint32_t)(copy->directories[PE_DIR_SECURITY].rva + delta));
	}
	if (copy->directory_count > PE_DIR_DEBUG && copy->directories[PE_DIR_DEBUG].rva) {
		/* Debug directory entries, 28 bytes, PointerToRawData at +24
		 * (PE spec, "Debug Directory"). Read through the old layout. */
		const struct pe_data_directory *dbg = &copy->directories[PE_DIR_DEBUG];
		size_t off;

		if (pe_rva_to_offset(copy, dbg->rva, dbg->size, &off) == 0) {
			size_t moved = off >= soh ? off + delta : off;

			for (uint32_t e = 0; e + 28 <= dbg->size; e += 28) {
				unsigned char *p = data + moved + e + 24;

				if (pe_le32(p) >= soh)
					pe_put32(p, (uint32_t)(pe_le32(p) + delta));
			}
		}
	}
	pe_put32(data + copy->optional_offset + PE_OPT_SIZE_OF_HEADERS, (uint32_t)new_soh);
	free(copy->data);
	copy->data = data;
	copy->size += delta;
	rc = pe_image_parse(copy);
	if (rc < 0)
		return rc;
	*ret_offset = (uint32_t)start;
	return 0;
}

int pe_bind(struct pe_image *image, const struct pe_bind_options *options, struct pe_bind_result *ret_result)
{
	struct bind_context ctx = {image, options, NULL, 0,
				   options->max_forwarder_depth ? options->max_forwarder_depth : 16};
	struct pe_imports imports = {0, NULL};
	struct bound_plan *plans = NULL;
	struct pe_bind_result result = {0, 0, 0};
	struct pe_image *copy = NULL;
	unsigned char *dir = NULL;
	size_t dir_len = 0;
	uint32_t dir_offset = 0, ts = pe_thunk_size(image);
	int rc;

	rc = pe_imports_read(image, false, &imports);
	if (rc < 0)
		goto out;
	if (image->directory_count <= PE_DIR_BOUND_IMPORT) {
		rc = err_set(LL_EUNSUPPORTED,
			     "The image has %u data directories; binding needs the bound import entry (12).",
			     image->directory_count);
		goto out;
	}
	plans = calloc(imports.module_count ? imports.module_count : 1, sizeof(*plans));
	if (!plans) {
		rc = LL_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < imports.module_count; i++) {
		const struct pe_import_module *m = &imports.modules[i];
		struct bound_plan *p = &plans[i];
		struct bind_module *dll;

		p->import = m;
		/* Without a name table, binding would lose the names. */
		if (!m->name_table_rva || !m->iat_rva) {
			result.modules_skipped++;
			continue;
		}
		dll = get_module(&ctx, m->name, strlen(m->name));
		if (!dll) {
			rc = LL_ENOMEM;
			goto out;
		}
		if (!dll->image) {
			result.modules_skipped++;
			continue;
		}
		uses_add(&p->uses, dll);
		p->values = calloc(m->function_count ? m->function_count : 1, sizeof(*p->values));
		if (!p->values) {
			rc = LL_ENOMEM;
			goto out;
		}
		p->ok = true;
		for (size_t f = 0; f < m->function_count && p->ok; f++) {
			const struct pe_import_function *fn = &m->functions[f];

			p->ok = resolve(&ctx, dll, fn->by_ordinal, fn->ordinal, fn->name, fn->hint, 0,
					&p->uses, &p->values[f]);
			if (p->ok && !image->pe32plus && p->values[f] > UINT32_MAX)
				p->ok = false;
		}
		if (p->uses.overflow)
			p->ok = false;
		if (p->ok) {
			result.modules_bound++;
			result.functions_bound += m->function_count;
		} else {
			result.modules_skipped++;
		}
	}
	rc = build_directory(plans, imports.module_count, &dir, &dir_len);
	if (rc < 0)
		goto out;
	rc = pe_image_from_memory(image->data, image->size, &copy);
	if (rc < 0)
		goto out;
	if (result.modules_bound) {
		rc = make_room(copy, dir_len, &dir_offset);
		if (rc < 0)
			goto out;
	}
	/* Write the IATs and mark the descriptors (PE spec, "Import Directory
	 * Table": TimeDateStamp -1 means new-style bound). */
	for (size_t i = 0; i < imports.module_count; i++) {
		const struct bound_plan *p = &plans[i];
		unsigned char *desc;

		if (!p->ok)
			continue;
		for (size_t f = 0; f < p->import->function_count; f++) {
			unsigned char *slot = pe_rva_ptr(copy, p->import->functions[f].iat_rva, ts);

			if (image->pe32plus)
				pe_put64(slot, p->values[f]);
			else
				pe_put32(slot, (uint32_t)p->values[f]);
		}
		desc = pe_rva_ptr(copy, p->import->descriptor_rva, 20);
		pe_put32(desc + 4, 0xffffffffu);
		pe_put32(desc + 8, 0xffffffffu);
	}
	{
		size_t at = copy->optional_offset + (copy->pe32plus ? 112 : 96) + 8 * PE_DIR_BOUND_IMPORT;

		if (result.modules_bound) {
			memcpy(copy->data + dir_offset, dir, dir_len);
			pe_put32(copy->data + at, dir_offset);
			pe_put32(copy->data + at + 4, (uint32_t)dir_len);
			copy->directories[PE_DIR_BOUND_IMPORT].rva = dir_offset;
			copy->directories[PE_DIR_BOUND_IMPORT].size = (uint32_t)dir_len;
		}
	}
	pe_checksum_update(copy);
	/* Swap the bound copy in. */
	{
		struct pe_image tmp = *image;

		*image = *copy;
		*copy = tmp;
	}
	if (ret_result)
		*ret_result = result;
out:
	pe_image_free(copy);
	free(dir);
	if (plans)
		for (size_t i = 0; i < imports.module_count; i++)
			free(plans[i].values);
	free(plans);
	pe_imports_release(&imports);
	bind_context_release(&ctx);
	return rc;
}
