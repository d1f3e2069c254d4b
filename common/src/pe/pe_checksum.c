/* pe_checksum.c - the image checksum (optional header CheckSum). */
#include "pe_int.h"

/* Adds the little-endian 16-bit words of [P, P + N) (N even) to SUM. Two
 * words are taken at a time as one 32-bit value: a one's-complement sum
 * only depends on the total modulo 0xFFFF, and 2^16 = 1 there. */
static uint64_t add_words(uint64_t sum, const unsigned char *p, size_t n)
{
	size_t i = 0;

	for (; i + 4 <= n; i += 4)
		sum += pe_le32(p + i);
	if (i < n)
		sum += pe_le16(p + i);
	return sum;
}

static uint32_t fold16(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint32_t)sum;
}

uint32_t pe_checksum_compute(const void *data, size_t size, size_t checksum_offset)
{
	const unsigned char *p = data;
	size_t even = size & ~(size_t)1;
	uint64_t sum = 0;
	size_t skip_start, skip_end;

	/* The field's bytes count as zero: sum the words around it, and the
	 * words it straddles with its own bytes cleared. */
	if (checksum_offset >= size) {
		skip_start = skip_end = even;
	} else {
		skip_start = checksum_offset & ~(size_t)1;
		skip_end = (checksum_offset + 4 + 1) & ~(size_t)1;
		if (skip_end > even)
			skip_end = even;
	}
	sum = add_words(sum, p, skip_start);
	for (size_t i = skip_start; i < skip_end; i += 2) {
		unsigned char w[2] = {p[i], p[i + 1]};

		for (size_t b = 0; b < 2; b++)
			if (i + b >= checksum_offset && i + b < checksum_offset + 4)
				w[b] = 0;
		sum += pe_le16(w);
	}
	sum = add_words(sum, p + skip_end, even - skip_end);
	if (size & 1) {
		/* The odd last byte, unless it belongs to the field. */
		size_t last = size - 1;

		if (!(last >= checksum_offset && last < checksum_offset + 4))
			sum += p[last];
	}
	return fold16(sum) + (uint32_t)size;
}

uint32_t pe_checksum(const struct pe_image *image)
{
	return pe_checksum_compute(image->data, image->size, image->optional_offset + PE_OPT_CHECKSUM);
}

void pe_checksum_update(struct pe_image *image)
{
	image->checksum = pe_checksum(image);
	pe_put32(image->data + image->optional_offset + PE_OPT_CHECKSUM, image->checksum);
}
