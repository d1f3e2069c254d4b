/*
 * pe_int.h - helpers shared by the PE toolkit's files (not installed).
 *
 * Fields are read and written through the little-endian helpers below,
 * never by casting a pointer to a struct, so the code is independent of
 * host byte order and alignment.
 */
#ifndef LOADLAB_PE_INT_H
#define LOADLAB_PE_INT_H

#include "loadlab/pe.h"

#include <stdint.h>
#include <stddef.h>

static inline uint16_t pe_le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t pe_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline uint64_t pe_le64(const unsigned char *p)
{
	return (uint64_t)pe_le32(p) | ((uint64_t)pe_le32(p + 4) << 32);
}

static inline void pe_put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void pe_put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline void pe_put64(unsigned char *p, uint64_t v)
{
	pe_put32(p, (uint32_t)v);
	pe_put32(p + 4, (uint32_t)(v >> 32));
}

/* Offsets inside the headers (PE spec, "COFF File Header", "Optional
 * Header Windows-Specific Fields"). Optional header offsets are from its
 * start. */
#define PE_COFF_TIMESTAMP 8 /* from nt_offset: 4 signature + 4 */
#define PE_COFF_SYMBOLS 12
#define PE_OPT_IMAGE_BASE32 28
#define PE_OPT_IMAGE_BASE64 24
#define PE_OPT_SIZE_OF_HEADERS 60
#define PE_OPT_CHECKSUM 64
#define PE_OPT_DLL_CHARACTERISTICS 70
#define PE_SECTION_HEADER_SIZE 40

/* Parses the headers of the image's bytes into its fields (allocating the
 * section array). Used on open and after a change of layout. */
int pe_image_parse(struct pe_image *image);

/* Pointer to RVA and, in *RET_AVAIL, how many bytes from there are
 * file-backed and contiguous; NULL when RVA is not in the file. */
unsigned char *pe_rva_span(const struct pe_image *image, uint32_t rva, uint32_t *ret_avail);

/* Pointer to [RVA, RVA + LEN) or NULL (see pe_rva_to_offset). */
unsigned char *pe_rva_ptr(const struct pe_image *image, uint32_t rva, uint32_t len);

/* Pointer-sized IAT/ILT entries. */
static inline uint32_t pe_thunk_size(const struct pe_image *image)
{
	return image->pe32plus ? 8 : 4;
}

static inline uint64_t pe_read_thunk(const struct pe_image *image, const unsigned char *p)
{
	return image->pe32plus ? pe_le64(p) : pe_le32(p);
}

/* Case-insensitive ASCII comparison of DLL names. */
int pe_name_casecmp(const char *a, const char *b);

#endif
