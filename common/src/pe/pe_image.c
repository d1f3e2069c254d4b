/* pe_image.c - opening, checking and saving PE images; the RVA accessor. */
#include "pe_int.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_power_of_two(uint32_t v)
{
	return v && !(v & (v - 1));
}

int pe_name_casecmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		int ca = (unsigned char)*a, cb = (unsigned char)*b;

		if (ca >= 'A' && ca <= 'Z')
			ca += 'a' - 'A';
		if (cb >= 'A' && cb <= 'Z')
			cb += 'a' - 'A';
		if (ca != cb || !ca)
			return ca - cb;
	}
}

int pe_image_parse(struct pe_image *image)
{
	const unsigned char *d = image->data;
	size_t size = image->size;
	struct pe_image h;
	uint32_t lfanew, opt, dir_offset, rva_count, table_end;
	uint16_t magic;

	memset(&h, 0, sizeof(h));
	if (size < 64 || d[0] != 'M' || d[1] != 'Z')
		return err_set(LL_EFORMAT, "Not a PE image: no MZ header.");
	lfanew = pe_le32(d + 0x3c);
	/* Signature (4) + COFF file header (20) must fit (PE spec, "MS-DOS Stub"). */
	if (lfanew > size || size - lfanew < 24)
		return err_set(LL_EFORMAT, "Malformed image: e_lfanew 0x%x points past the file.", lfanew);
	if (memcmp(d + lfanew, "PE\0\0", 4) != 0)
		return err_set(LL_EFORMAT, "Not a PE image: no PE signature at 0x%x.", lfanew);
	h.nt_offset = lfanew;
	h.machine = pe_le16(d + lfanew + 4);
	h.section_count = pe_le16(d + lfanew + 6);
	h.timestamp = pe_le32(d + lfanew + PE_COFF_TIMESTAMP);
	h.pointer_to_symbols = pe_le32(d + lfanew + PE_COFF_SYMBOLS);
	h.optional_size = pe_le16(d + lfanew + 20);
	h.characteristics = pe_le16(d + lfanew + 22);
	opt = lfanew + 24;
	h.optional_offset = opt;
	if (h.optional_size < 2 || (size_t)opt + h.optional_size > size)
		return err_set(LL_EFORMAT,
			       "Malformed image: the optional header (%u bytes) does not fit in the file.",
			       h.optional_size);
	magic = pe_le16(d + opt);
	if (magic == 0x20b) {
		h.pe32plus = true;
		dir_offset = 112;
	} else if (magic == 0x10b) {
		dir_offset = 96;
	} else {
		return err_set(LL_EFORMAT, "Malformed image: unknown optional header magic 0x%x.", magic);
	}
	if (h.optional_size < dir_offset)
		return err_set(LL_EFORMAT,
			       "Malformed image: optional header of %u bytes is too short for %s.",
			       h.optional_size, h.pe32plus ? "PE32+" : "PE32");
	h.entry_point = pe_le32(d + opt + 16);
	h.image_base =
		h.pe32plus ? pe_le64(d + opt + PE_OPT_IMAGE_BASE64) : pe_le32(d + opt + PE_OPT_IMAGE_BASE32);
	h.section_alignment = pe_le32(d + opt + 32);
	h.file_alignment = pe_le32(d + opt + 36);
	h.size_of_image = pe_le32(d + opt + 56);
	h.size_of_headers = pe_le32(d + opt + PE_OPT_SIZE_OF_HEADERS);
	h.checksum = pe_le32(d + opt + PE_OPT_CHECKSUM);
	h.subsystem = pe_le16(d + opt + 68);
	h.dll_characteristics = pe_le16(d + opt + 70);
	rva_count = pe_le32(d + opt + dir_offset - 4);
	if (!is_power_of_two(h.section_alignment) || !is_power_of_two(h.file_alignment))
		return err_set(LL_EFORMAT, "Malformed image: alignments 0x%x/0x%x are not powers of two.",
			       h.section_alignment, h.file_alignment);
	h.directory_count = rva_count > PE_DIR_COUNT ? PE_DIR_COUNT : rva_count;
	if (dir_offset + 8 * h.directory_count > h.optional_size)
		return err_set(LL_EFORMAT,
			       "Malformed image: %u data directories do not fit in the optional header.",
			       rva_count);
	for (uint32_t i = 0; i < h.directory_count; i++) {
		h.directories[i].rva = pe_le32(d + opt + dir_offset + 8 * i);
		h.directories[i].size = pe_le32(d + opt + dir_offset + 8 * i + 4);
	}
	h.section_table_offset = opt + h.optional_size;
	if (h.section_count > PE_MAX_SECTIONS)
		return err_set(LL_ETOOBIG, "Image has %u sections; the limit is %u.", h.section_count,
			       PE_MAX_SECTIONS);
	table_end = h.section_table_offset + h.section_count * PE_SECTION_HEADER_SIZE;
	if (table_end > size)
		return err_set(LL_EFORMAT,
			       "Malformed image: the section table (%u sections) runs past the file.",
			       h.section_count);
	if (h.section_count) {
		h.sections = calloc(h.section_count, sizeof(*h.sections));
		if (!h.sections)
			return LL_ENOMEM;
	}
	for (uint32_t i = 0; i < h.section_count; i++) {
		const unsigned char *s = d + h.section_table_offset + i * PE_SECTION_HEADER_SIZE;
		struct pe_section *sec = &h.sections[i];
		uint32_t mapped;

		memcpy(sec->name, s, 8);
		sec->name[8] = '\0';
		sec->virtual_size = pe_le32(s + 8);
		sec->virtual_address = pe_le32(s + 12);
		sec->raw_size = pe_le32(s + 16);
		sec->raw_offset = pe_le32(s + 20);
		sec->characteristics = pe_le32(s + 36);
		if ((uint64_t)sec->virtual_address + sec->virtual_size > UINT32_MAX ||
		    (uint64_t)sec->virtual_address + sec->raw_size > UINT32_MAX) {
			char name[9];

			memcpy(name, sec->name, sizeof(name));
			free(h.sections);
			return err_set(LL_EFORMAT,
				       "Malformed image: section %u ('%s') wraps the address space.", i,
				       name);
		}
		/* The loader maps min(raw, virtual) bytes from the file and
		 * zero-fills the rest (PE spec, "Section Table"). */
		mapped = sec->raw_size;
		if (sec->virtual_size && sec->virtual_size < mapped)
			mapped = sec->virtual_size;
		if (sec->raw_offset >= size)
			mapped = 0;
		else if (mapped > size - sec->raw_offset)
			mapped = (uint32_t)(size - sec->raw_offset);
		sec->readable_size = mapped;
	}
	h.data = image->data;
	h.size = image->size;
	free(image->sections);
	*image = h;
	return 0;
}

const struct pe_section *pe_section_for_rva(const struct pe_image *image, uint32_t rva)
{
	for (uint32_t i = 0; i < image->section_count; i++) {
		const struct pe_section *s = &image->sections[i];
		uint32_t span = s->virtual_size ? s->virtual_size : s->raw_size;

		if (rva >= s->virtual_address && rva - s->virtual_address < span)
			return s;
	}
	return NULL;
}

unsigned char *pe_rva_span(const struct pe_image *image, uint32_t rva, uint32_t *ret_avail)
{
	size_t header_limit;

	for (uint32_t i = 0; i < image->section_count; i++) {
		const struct pe_section *s = &image->sections[i];

		if (rva >= s->virtual_address && rva - s->virtual_address < s->readable_size) {
			*ret_avail = s->readable_size - (rva - s->virtual_address);
			return image->data + s->raw_offset + (rva - s->virtual_address);
		}
	}
	/* The headers are mapped at RVA 0 (PE spec, "SizeOfHeaders"), up to
	 * the first section that claims the address. */
	header_limit = image->size_of_headers < image->size ? image->size_of_headers : image->size;
	if (rva < header_limit && !pe_section_for_rva(image, rva)) {
		uint32_t avail = (uint32_t)(header_limit - rva);

		for (uint32_t i = 0; i < image->section_count; i++) {
			uint32_t va = image->sections[i].virtual_address;

			if (va > rva && va - rva < avail)
				avail = va - rva;
		}
		*ret_avail = avail;
		return image->data + rva;
	}
	return NULL;
}

unsigned char *pe_rva_ptr(const struct pe_image *image, uint32_t rva, uint32_t len)
{
	uint32_t avail;
	unsigned char *p = pe_rva_span(image, rva, &avail);

	return p && len <= avail ? p : NULL;
}

int pe_rva_to_offset(const struct pe_image *image, uint32_t rva, uint32_t len, size_t *ret_offset)
{
	unsigned char *p = pe_rva_ptr(image, rva, len);

	if (!p)
		return err_set(LL_EFORMAT, "Malformed image: RVA range 0x%x+%u is not in the file.", rva,
			       len);
	*ret_offset = (size_t)(p - image->data);
	return 0;
}

int pe_rva_string(const struct pe_image *image, uint32_t rva, const char **ret_string)
{
	uint32_t avail;
	const unsigned char *p = pe_rva_span(image, rva, &avail);

	if (!p)
		return err_set(LL_EFORMAT, "Malformed image: string at RVA 0x%x is not in the file.", rva);
	if (avail > PE_MAX_NAME + 1)
		avail = PE_MAX_NAME + 1;
	if (!memchr(p, 0, avail))
		return err_set(LL_EFORMAT,
			       "Malformed image: string at RVA 0x%x is unterminated or longer than %u bytes.",
			       rva, PE_MAX_NAME);
	*ret_string = (const char *)p;
	return 0;
}

int pe_image_from_memory(const void *data, size_t size, struct pe_image **ret_image)
{
	struct pe_image *image;
	int rc;

	if (size > PE_MAX_FILE_SIZE)
		return err_set(LL_ETOOBIG, "Image of %llu bytes exceeds the limit of %u bytes.",
			       (unsigned long long)size, PE_MAX_FILE_SIZE);
	image = calloc(1, sizeof(*image));
	if (!image)
		return LL_ENOMEM;
	image->data = malloc(size ? size : 1);
	if (!image->data) {
		free(image);
		return LL_ENOMEM;
	}
	if (size)
		memcpy(image->data, data, size);
	image->size = size;
	rc = pe_image_parse(image);
	if (rc < 0) {
		pe_image_free(image);
		return rc;
	}
	*ret_image = image;
	return 0;
}

int pe_image_open(const char *path, struct pe_image **ret_image)
{
	struct pe_image *image = NULL;
	unsigned char *data = NULL;
	FILE *f;
	long end;
	int rc;

	f = fopen(path, "rb");
	if (!f)
		return err_set(LL_EIO, "Cannot open '%s'.", path);
	if (fseek(f, 0, SEEK_END) != 0 || (end = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		rc = err_set(LL_EIO, "Cannot read '%s'.", path);
		goto out;
	}
	if ((unsigned long)end > PE_MAX_FILE_SIZE) {
		rc = err_set(LL_ETOOBIG, "'%s' is larger than the limit of %u bytes.", path,
			     PE_MAX_FILE_SIZE);
		goto out;
	}
	data = malloc(end ? (size_t)end : 1);
	if (!data) {
		rc = LL_ENOMEM;
		goto out;
	}
	if (fread(data, 1, (size_t)end, f) != (size_t)end) {
		rc = err_set(LL_EIO, "Cannot read '%s'.", path);
		goto out;
	}
	image = calloc(1, sizeof(*image));
	if (!image) {
		rc = LL_ENOMEM;
		goto out;
	}
	image->data = data;
	image->size = (size_t)end;
	data = NULL;
	rc = pe_image_parse(image);
	if (rc < 0) {
		char why[400];

		snprintf(why, sizeof(why), "%s", err_message(rc));
		err_set(rc, "%s: %s", path, why);
		pe_image_free(image);
		goto out;
	}
	*ret_image = image;
out:
	free(data);
	fclose(f);
	return rc;
}

int pe_image_save(const struct pe_image *image, const char *path)
{
	FILE *f = fopen(path, "wb");
	int bad;

	if (!f)
		return err_set(LL_EIO, "Cannot write '%s'.", path);
	bad = fwrite(image->data, 1, image->size, f) != image->size;
	bad |= fclose(f) != 0;
	if (bad)
		return err_set(LL_EIO, "Cannot write '%s'.", path);
	return 0;
}

void pe_image_free(struct pe_image *image)
{
	if (!image)
		return;
	free(image->sections);
	free(image->data);
	free(image);
}

void pe_images_free(struct pe_image **images, size_t count)
{
	for (size_t i = 0; images && i < count; i++)
		pe_image_free(images[i]);
	free(images);
}
