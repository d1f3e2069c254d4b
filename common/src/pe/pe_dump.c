/* pe_dump.c - an image as text and as JSON, for `loadlab pe dump`. */
#include "pe_int.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const directory_names[PE_DIR_COUNT] = {
	"export", "import",       "resource",  "exception", "security",    "basereloc",
	"debug",  "architecture", "globalptr", "tls",       "load_config", "bound_import",
	"iat",    "delay_import", "clr",       "reserved",
};

static const char *machine_name(uint16_t m)
{
	switch (m) {
	case PE_MACHINE_I386:
		return "i386";
	case PE_MACHINE_AMD64:
		return "amd64";
	case PE_MACHINE_ARM:
		return "arm";
	case PE_MACHINE_ARMNT:
		return "armnt";
	case PE_MACHINE_ARM64:
		return "arm64";
	case PE_MACHINE_IA64:
		return "ia64";
	case PE_MACHINE_R4000:
		return "r4000";
	case PE_MACHINE_RISCV32:
		return "riscv32";
	case PE_MACHINE_RISCV64:
		return "riscv64";
	case PE_MACHINE_LOONGARCH32:
		return "loongarch32";
	case PE_MACHINE_LOONGARCH64:
		return "loongarch64";
	default:
		return "unknown";
	}
}

/* Everything a dump shows, read once. */
struct dump_parts {
	struct pe_imports imports, delay;
	struct pe_exports exports;
	struct pe_relocs relocs;
	struct pe_bound_imports bound;
	size_t type_counts[16];
};

static void parts_release(struct dump_parts *p)
{
	pe_imports_release(&p->imports);
	pe_imports_release(&p->delay);
	pe_exports_release(&p->exports);
	pe_relocs_release(&p->relocs);
	pe_bound_imports_release(&p->bound);
}

static int parts_read(const struct pe_image *image, struct dump_parts *p)
{
	int rc;

	memset(p, 0, sizeof(*p));
	if ((rc = pe_imports_read(image, false, &p->imports)) < 0 ||
	    (rc = pe_imports_read(image, true, &p->delay)) < 0 ||
	    (rc = pe_exports_read(image, &p->exports)) < 0 || (rc = pe_relocs_read(image, &p->relocs)) < 0 ||
	    (rc = pe_bound_imports_read(image, &p->bound)) < 0) {
		parts_release(p);
		return rc;
	}
	for (size_t i = 0; i < p->relocs.count; i++)
		p->type_counts[p->relocs.entries[i].type & 15]++;
	return 0;
}

static int text_imports(struct buf *out, const struct pe_imports *imports, const char *title)
{
	int rc = buf_printf(out, "%s: %llu modules\n", title, (unsigned long long)imports->module_count);

	for (size_t i = 0; i < imports->module_count && rc == 0; i++) {
		const struct pe_import_module *m = &imports->modules[i];

		rc = buf_printf(out, "  %s  names 0x%x  iat 0x%x  timestamp 0x%08x  forwarder chain 0x%08x\n",
				m->name, m->name_table_rva, m->iat_rva, m->timestamp, m->forwarder_chain);
		for (size_t f = 0; f < m->function_count && rc == 0; f++) {
			const struct pe_import_function *fn = &m->functions[f];

			if (fn->by_ordinal)
				rc = buf_printf(out, "    ordinal %u", fn->ordinal);
			else if (fn->name)
				rc = buf_printf(out, "    %s (hint %u)", fn->name, fn->hint);
			else
				rc = buf_printf(out, "    (bound, no name table)");
			if (rc == 0)
				rc = buf_printf(out, "  iat 0x%x = 0x%" PRIx64 "\n", fn->iat_rva,
						fn->iat_value);
		}
	}
	return rc;
}

int pe_dump_text(const struct pe_image *image, bool list_relocs, struct buf *out)
{
	struct dump_parts p;
	int rc = parts_read(image, &p);

	if (rc < 0)
		return rc;
	rc = buf_printf(out,
			"format %s  machine 0x%04x (%s)  %s\n"
			"timestamp 0x%08x  checksum 0x%08x (computed 0x%08x)\n"
			"image base 0x%" PRIx64 "  size of image 0x%x  entry point 0x%x\n"
			"section alignment 0x%x  file alignment 0x%x  size of headers 0x%x\n"
			"characteristics 0x%04x  dll characteristics 0x%04x  subsystem %u\n",
			image->pe32plus ? "PE32+" : "PE32", image->machine, machine_name(image->machine),
			image->characteristics & PE_FILE_DLL ? "dll" : "executable", image->timestamp,
			image->checksum, pe_checksum(image), image->image_base, image->size_of_image,
			image->entry_point, image->section_alignment, image->file_alignment,
			image->size_of_headers, image->characteristics, image->dll_characteristics,
			image->subsystem);
	if (rc == 0)
		rc = buf_printf(out, "sections: %u\n", image->section_count);
	for (uint32_t i = 0; i < image->section_count && rc == 0; i++) {
		const struct pe_section *s = &image->sections[i];

		rc = buf_printf(out, "  %-8s va 0x%08x size 0x%08x  raw 0x%08x size 0x%08x  flags 0x%08x\n",
				s->name, s->virtual_address, s->virtual_size, s->raw_offset, s->raw_size,
				s->characteristics);
	}
	if (rc == 0)
		rc = buf_printf(out, "directories:\n");
	for (uint32_t i = 0; i < image->directory_count && rc == 0; i++)
		if (image->directories[i].rva || image->directories[i].size)
			rc = buf_printf(out, "  %-12s 0x%08x size 0x%x\n", directory_names[i],
					image->directories[i].rva, image->directories[i].size);
	if (rc == 0)
		rc = text_imports(out, &p.imports, "imports");
	if (rc == 0)
		rc = text_imports(out, &p.delay, "delay imports");
	if (rc == 0)
		rc = buf_printf(out, "exports: %s  base %u  %llu functions  %llu names\n",
				p.exports.dll_name ? p.exports.dll_name : "(unnamed)", p.exports.base,
				(unsigned long long)p.exports.count,
				(unsigned long long)p.exports.name_count);
	for (size_t i = 0; i < p.exports.count && rc == 0; i++) {
		const struct pe_export *e = &p.exports.entries[i];

		if (!e->rva)
			continue;
		rc = buf_printf(out, "  %5u 0x%08x %s%s%s\n", e->ordinal, e->rva,
				e->name ? e->name : "(no name)", e->forwarder ? " -> " : "",
				e->forwarder ? e->forwarder : "");
	}
	if (rc == 0)
		rc = buf_printf(out, "relocations: %llu in %llu blocks\n", (unsigned long long)p.relocs.count,
				(unsigned long long)p.relocs.block_count);
	for (unsigned t = 0; t < 16 && rc == 0; t++)
		if (p.type_counts[t])
			rc = buf_printf(out, "  %-12s %llu\n", pe_reloc_type_name(image->machine, t),
					(unsigned long long)p.type_counts[t]);
	for (size_t i = 0; list_relocs && i < p.relocs.count && rc == 0; i++)
		rc = buf_printf(out, "  0x%08x %s\n", p.relocs.entries[i].rva,
				pe_reloc_type_name(image->machine, p.relocs.entries[i].type));
	if (rc == 0)
		rc = buf_printf(out, "bound imports: %llu\n", (unsigned long long)p.bound.count);
	for (size_t i = 0; i < p.bound.count && rc == 0; i++) {
		const struct pe_bound_module *m = &p.bound.modules[i];

		rc = buf_printf(out, "  %s  timestamp 0x%08x\n", m->name, m->timestamp);
		for (size_t f = 0; f < m->forwarder_count && rc == 0; f++)
			rc = buf_printf(out, "    forwarder %s  timestamp 0x%08x\n", m->forwarders[f].name,
					m->forwarders[f].timestamp);
	}
	parts_release(&p);
	return rc;
}

static cJSON *hex64(uint64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "0x%" PRIx64, v);
	return cJSON_CreateString(s);
}

/* Adds to OBJ, remembering a failure in *OK. */
static void add(cJSON *obj, const char *key, cJSON *item, bool *ok)
{
	if (!item || !cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		*ok = false;
	}
}

/* Adds ITEM to OBJ as KEY and returns it; NULL, with *OK false, when
 * that or anything before failed. */
static cJSON *add_child(cJSON *obj, const char *key, cJSON *item, bool *ok)
{
	add(obj, key, item, ok);
	return *ok ? item : NULL;
}

/* Appends a new object to ARR and returns it; NULL, with *OK false, when
 * that fails. */
static cJSON *push_object(cJSON *arr, bool *ok)
{
	cJSON *item = cJSON_CreateObject();

	if (!item || !cJSON_AddItemToArray(arr, item)) {
		cJSON_Delete(item);
		*ok = false;
		return NULL;
	}
	return item;
}

static cJSON *json_imports(const struct pe_imports *imports, bool *ok)
{
	cJSON *arr = cJSON_CreateArray();

	if (!arr) {
		*ok = false;
		return NULL;
	}
	for (size_t i = 0; i < imports->module_count && *ok; i++) {
		const struct pe_import_module *m = &imports->modules[i];
		cJSON *o = push_object(arr, ok), *fns;

		if (!o)
			break;
		add(o, "dll", cJSON_CreateString(m->name), ok);
		add(o, "descriptor_rva", cJSON_CreateNumber(m->descriptor_rva), ok);
		add(o, "name_table_rva", cJSON_CreateNumber(m->name_table_rva), ok);
		add(o, "iat_rva", cJSON_CreateNumber(m->iat_rva), ok);
		add(o, "timestamp", cJSON_CreateNumber(m->timestamp), ok);
		if (!m->delay)
			add(o, "forwarder_chain", cJSON_CreateNumber(m->forwarder_chain), ok);
		else
			add(o, "attributes", cJSON_CreateNumber(m->delay_attributes), ok);
		fns = add_child(o, "functions", cJSON_CreateArray(), ok);
		for (size_t f = 0; fns && f < m->function_count && *ok; f++) {
			const struct pe_import_function *fn = &m->functions[f];
			cJSON *x = push_object(fns, ok);

			if (!x)
				break;
			if (fn->by_ordinal) {
				add(x, "ordinal", cJSON_CreateNumber(fn->ordinal), ok);
			} else if (fn->name) {
				add(x, "name", cJSON_CreateString(fn->name), ok);
				add(x, "hint", cJSON_CreateNumber(fn->hint), ok);
			}
			add(x, "iat_rva", cJSON_CreateNumber(fn->iat_rva), ok);
			add(x, "iat_value", hex64(fn->iat_value), ok);
		}
	}
	return arr;
}

int pe_dump_json(const struct pe_image *image, bool list_relocs, cJSON **ret_json)
{
	struct dump_parts p;
	cJSON *root, *arr, *o;
	bool ok = true;
	int rc = parts_read(image, &p);

	if (rc < 0)
		return rc;
	root = cJSON_CreateObject();
	if (!root) {
		parts_release(&p);
		return LL_ENOMEM;
	}
	add(root, "format", cJSON_CreateString(image->pe32plus ? "PE32+" : "PE32"), &ok);
	add(root, "machine", cJSON_CreateNumber(image->machine), &ok);
	add(root, "machine_name", cJSON_CreateString(machine_name(image->machine)), &ok);
	add(root, "dll", cJSON_CreateBool(image->characteristics & PE_FILE_DLL), &ok);
	add(root, "characteristics", cJSON_CreateNumber(image->characteristics), &ok);
	add(root, "dll_characteristics", cJSON_CreateNumber(image->dll_characteristics), &ok);
	add(root, "subsystem", cJSON_CreateNumber(image->subsystem), &ok);
	add(root, "timestamp", cJSON_CreateNumber(image->timestamp), &ok);
	add(root, "checksum", cJSON_CreateNumber(image->checksum), &ok);
	add(root, "checksum_computed", cJSON_CreateNumber(pe_checksum(image)), &ok);
	add(root, "image_base", hex64(image->image_base), &ok);
	add(root, "size_of_image", cJSON_CreateNumber(image->size_of_image), &ok);
	add(root, "entry_point", cJSON_CreateNumber(image->entry_point), &ok);
	add(root, "section_alignment", cJSON_CreateNumber(image->section_alignment), &ok);
	add(root, "file_alignment", cJSON_CreateNumber(image->file_alignment), &ok);
	add(root, "size_of_headers", cJSON_CreateNumber(image->size_of_headers), &ok);
	add(root, "relocs_stripped", cJSON_CreateBool(image->characteristics & PE_FILE_RELOCS_STRIPPED), &ok);

	arr = add_child(root, "sections", cJSON_CreateArray(), &ok);
	for (uint32_t i = 0; arr && i < image->section_count && ok; i++) {
		const struct pe_section *s = &image->sections[i];

		o = push_object(arr, &ok);
		if (!o)
			break;
		add(o, "name", cJSON_CreateString(s->name), &ok);
		add(o, "virtual_address", cJSON_CreateNumber(s->virtual_address), &ok);
		add(o, "virtual_size", cJSON_CreateNumber(s->virtual_size), &ok);
		add(o, "raw_offset", cJSON_CreateNumber(s->raw_offset), &ok);
		add(o, "raw_size", cJSON_CreateNumber(s->raw_size), &ok);
		add(o, "characteristics", cJSON_CreateNumber(s->characteristics), &ok);
	}
	arr = add_child(root, "directories", cJSON_CreateArray(), &ok);
	for (uint32_t i = 0; arr && i < image->directory_count && ok; i++) {
		if (!image->directories[i].rva && !image->directories[i].size)
			continue;
		o = push_object(arr, &ok);
		if (!o)
			break;
		add(o, "name", cJSON_CreateString(directory_names[i]), &ok);
		add(o, "rva", cJSON_CreateNumber(image->directories[i].rva), &ok);
		add(o, "size", cJSON_CreateNumber(image->directories[i].size), &ok);
	}
	add(root, "imports", json_imports(&p.imports, &ok), &ok);
	add(root, "delay_imports", json_imports(&p.delay, &ok), &ok);

	o = add_child(root, "exports", cJSON_CreateObject(), &ok);
	if (o) {
		add(o, "dll",
		    p.exports.dll_name ? cJSON_CreateString(p.exports.dll_name) : cJSON_CreateNull(), &ok);
		add(o, "base", cJSON_CreateNumber(p.exports.base), &ok);
		add(o, "timestamp", cJSON_CreateNumber(p.exports.timestamp), &ok);
		add(o, "count", cJSON_CreateNumber((double)p.exports.count), &ok);
		arr = add_child(o, "functions", cJSON_CreateArray(), &ok);
		for (size_t i = 0; arr && i < p.exports.count && ok; i++) {
			const struct pe_export *e = &p.exports.entries[i];
			cJSON *x;

			if (!e->rva)
				continue;
			x = push_object(arr, &ok);
			if (!x)
				break;
			add(x, "ordinal", cJSON_CreateNumber(e->ordinal), &ok);
			add(x, "rva", cJSON_CreateNumber(e->rva), &ok);
			if (e->name)
				add(x, "name", cJSON_CreateString(e->name), &ok);
			if (e->forwarder)
				add(x, "forwarder", cJSON_CreateString(e->forwarder), &ok);
		}
		arr = add_child(o, "names", cJSON_CreateArray(), &ok);
		for (size_t i = 0; arr && i < p.exports.name_count && ok; i++) {
			cJSON *x = push_object(arr, &ok);

			if (!x)
				break;
			add(x, "name", cJSON_CreateString(p.exports.names[i].name), &ok);
			add(x, "ordinal",
			    cJSON_CreateNumber((double)p.exports.base + p.exports.names[i].index), &ok);
		}
	}

	o = add_child(root, "relocations", cJSON_CreateObject(), &ok);
	if (o) {
		cJSON *types = cJSON_CreateObject();

		add(o, "count", cJSON_CreateNumber((double)p.relocs.count), &ok);
		add(o, "blocks", cJSON_CreateNumber((double)p.relocs.block_count), &ok);
		add(o, "types", types, &ok);
		for (unsigned t = 0; types && t < 16 && ok; t++)
			if (p.type_counts[t])
				add(types, pe_reloc_type_name(image->machine, t),
				    cJSON_CreateNumber((double)p.type_counts[t]), &ok);
		if (list_relocs) {
			arr = add_child(o, "entries", cJSON_CreateArray(), &ok);
			for (size_t i = 0; arr && i < p.relocs.count && ok; i++) {
				cJSON *x = push_object(arr, &ok);

				if (!x)
					break;
				add(x, "rva", cJSON_CreateNumber(p.relocs.entries[i].rva), &ok);
				add(x, "type",
				    cJSON_CreateString(
					    pe_reloc_type_name(image->machine, p.relocs.entries[i].type)),
				    &ok);
			}
		}
	}

	arr = add_child(root, "bound_imports", cJSON_CreateArray(), &ok);
	for (size_t i = 0; arr && i < p.bound.count && ok; i++) {
		const struct pe_bound_module *m = &p.bound.modules[i];
		cJSON *fw;

		o = push_object(arr, &ok);
		if (!o)
			break;
		add(o, "dll", cJSON_CreateString(m->name), &ok);
		add(o, "timestamp", cJSON_CreateNumber(m->timestamp), &ok);
		fw = add_child(o, "forwarders", cJSON_CreateArray(), &ok);
		for (size_t f = 0; fw && f < m->forwarder_count && ok; f++) {
			cJSON *x = push_object(fw, &ok);

			if (!x)
				break;
			add(x, "dll", cJSON_CreateString(m->forwarders[f].name), &ok);
			add(x, "timestamp", cJSON_CreateNumber(m->forwarders[f].timestamp), &ok);
		}
	}
	parts_release(&p);
	if (!ok) {
		cJSON_Delete(root);
		return LL_ENOMEM;
	}
	*ret_json = root;
	return 0;
}
