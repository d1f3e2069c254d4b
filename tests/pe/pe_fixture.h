/*
 * pe_fixture.h - tiny PE32 / PE32+ images built byte by byte, for the PE
 * toolkit's unit tests and the fuzzer's seed corpus (in the spirit of
 * Wine's dlls/imagehlp/tests/image.c; no code taken from it).
 *
 * Layout: headers, then three sections .text, .rdata, .reloc (plus
 * EXTRA_SECTIONS empty ones, to crowd the headers). With FLAT, section
 * RVAs equal their file offsets (alignment 0x200), so the headers cannot
 * grow. Every offset below is an RVA relative to a section start.
 */
#ifndef LOADLAB_TEST_PE_FIXTURE_H
#define LOADLAB_TEST_PE_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define FX_SIZE 0xa00
#define FX_TEXT 0
#define FX_RDATA 1
#define FX_RELOC 2

struct fixture {
	unsigned char data[FX_SIZE];
	size_t size;
	bool plus;
	uint64_t base;
	uint32_t opt; /* optional header offset */
	uint32_t va[3], raw[3], rawsize[3];
};

static inline void fx_put16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}
static inline void fx_put32(unsigned char *p, uint32_t v)
{
	fx_put16(p, (uint16_t)v);
	fx_put16(p + 2, (uint16_t)(v >> 16));
}
/* Writes TEXT and its NUL at P (the fixture's own, known-short names). */
static inline void fx_put_text(unsigned char *p, const char *text)
{
	memcpy(p, text, strlen(text) + 1);
}
static inline void fx_put64(unsigned char *p, uint64_t v)
{
	fx_put32(p, (uint32_t)v);
	fx_put32(p + 4, (uint32_t)(v >> 32));
}
static inline uint16_t fx_get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}
static inline uint32_t fx_get32(const unsigned char *p)
{
	return fx_get16(p) | (uint32_t)fx_get16(p + 2) << 16;
}
static inline uint64_t fx_get64(const unsigned char *p)
{
	return fx_get32(p) | (uint64_t)fx_get32(p + 4) << 32;
}

/* File bytes at RVA (which must lie in one of the three sections). */
static inline unsigned char *fx_at(struct fixture *f, uint32_t rva)
{
	for (int i = 0; i < 3; i++)
		if (rva >= f->va[i] && rva < f->va[i] + f->rawsize[i])
			return f->data + f->raw[i] + (rva - f->va[i]);
	return NULL;
}

static inline void fx_dir(struct fixture *f, int index, uint32_t rva, uint32_t size)
{
	unsigned char *d = f->data + f->opt + (f->plus ? 112 : 96) + 8 * index;

	fx_put32(d, rva);
	fx_put32(d + 4, size);
}

static inline void fx_thunk(struct fixture *f, uint32_t rva, uint64_t v)
{
	if (f->plus)
		fx_put64(fx_at(f, rva), v);
	else
		fx_put32(fx_at(f, rva), (uint32_t)v);
}

/* The bare image: headers and sections, no directories. */
static inline void fx_init(struct fixture *f, bool plus, uint64_t base, bool dll, int extra_sections,
			   bool flat)
{
	static const char *const names[3] = {".text", ".rdata", ".reloc"};
	static const uint32_t chars[3] = {0x60000020, 0xc0000040, 0x42000040};
	unsigned char *p = f->data;
	uint32_t nt = 0x40, opt_size = plus ? 240 : 224, table;
	int nsec = 3 + extra_sections;

	memset(f, 0, sizeof(*f));
	f->plus = plus;
	f->base = base;
	f->size = FX_SIZE;
	f->raw[0] = 0x200, f->rawsize[0] = 0x200;
	f->raw[1] = 0x400, f->rawsize[1] = 0x400;
	f->raw[2] = 0x800, f->rawsize[2] = 0x200;
	for (int i = 0; i < 3; i++)
		f->va[i] = flat ? f->raw[i] : 0x1000u * (uint32_t)(i + 1);
	p[0] = 'M', p[1] = 'Z';
	fx_put32(p + 0x3c, nt);
	memcpy(p + nt, "PE\0\0", 4);
	fx_put16(p + nt + 4, plus ? 0x8664 : 0x014c);
	fx_put16(p + nt + 6, (uint16_t)nsec);
	fx_put32(p + nt + 8, 0x12345678);
	fx_put16(p + nt + 20, (uint16_t)opt_size);
	fx_put16(p + nt + 22, (uint16_t)(0x0002 | (plus ? 0x0020 : 0x0100) | (dll ? 0x2000 : 0)));
	f->opt = nt + 24;
	p += f->opt;
	fx_put16(p, plus ? 0x20b : 0x10b);
	fx_put32(p + 16, f->va[0]);
	if (plus)
		fx_put64(p + 24, base);
	else
		fx_put32(p + 28, (uint32_t)base);
	fx_put32(p + 32, flat ? 0x200 : 0x1000);
	fx_put32(p + 36, 0x200);
	fx_put16(p + 40, 4);
	fx_put16(p + 48, 4);
	fx_put32(p + 56, flat ? 0xa00 : 0x1000u * (uint32_t)(4 + extra_sections));
	fx_put32(p + 60, 0x200);
	fx_put16(p + 68, 3);
	fx_put32(p + (plus ? 108 : 92), 16);
	table = f->opt + opt_size;
	for (int i = 0; i < nsec; i++) {
		unsigned char *s = f->data + table + 40 * i;

		if (i < 3) {
			memcpy(s, names[i], strlen(names[i]));
			fx_put32(s + 8, f->rawsize[i]);
			fx_put32(s + 12, f->va[i]);
			fx_put32(s + 16, f->rawsize[i]);
			fx_put32(s + 20, f->raw[i]);
			fx_put32(s + 36, chars[i]);
		} else {
			memcpy(s, ".bss", 4);
			fx_put32(s + 8, 0x100);
			fx_put32(s + 12, 0x1000u * (uint32_t)(i + 1));
			fx_put32(s + 36, 0xc0000080);
		}
	}
}

/* Imports from "target.dll": "alpha" (hint 0), "beta" (hint 5, wrong on
 * purpose), ordinal 3, and "delta" (forwarded by target.dll to
 * other.dll's "epsilon"). Descriptor at .rdata+0, name table +0x100, IAT
 * +0x140 (also the IAT directory), hint/names from +0x180. */
static inline void fx_add_imports(struct fixture *f)
{
	uint32_t r = f->va[FX_RDATA], ts = f->plus ? 8 : 4;
	uint64_t ord = f->plus ? 0x8000000000000000ull : 0x80000000ull;
	const uint32_t hn[3] = {r + 0x180, r + 0x190, r + 0x1a0};
	unsigned char *d = fx_at(f, r);

	fx_put32(d, r + 0x100);
	fx_put32(d + 12, r + 0x1c0);
	fx_put32(d + 16, r + 0x140);
	fx_put16(fx_at(f, hn[0]), 0), fx_put_text(fx_at(f, hn[0] + 2), "alpha");
	fx_put16(fx_at(f, hn[1]), 5), fx_put_text(fx_at(f, hn[1] + 2), "beta");
	fx_put16(fx_at(f, hn[2]), 2), fx_put_text(fx_at(f, hn[2] + 2), "delta");
	fx_put_text(fx_at(f, r + 0x1c0), "TARGET.dll");
	for (uint32_t table = r + 0x100; table <= r + 0x140; table += 0x40) {
		fx_thunk(f, table, hn[0]);
		fx_thunk(f, table + ts, hn[1]);
		fx_thunk(f, table + 2 * ts, ord | 3);
		fx_thunk(f, table + 3 * ts, hn[2]);
	}
	fx_dir(f, 1, r, 40);
	fx_dir(f, 12, r + 0x140, 5 * ts);
}

/* An export directory for DLL at .rdata+0x200 (PE spec, export directory
 * table): ordinal base 1, FUNCTIONS addresses at +0x30, NAMES name
 * pointers at +0x40 and their ordinals at +0x50, the DLL's name at +0x60.
 * The caller fills the tables and sets the data directory. Returns the
 * directory's RVA. */
static inline uint32_t fx_export_directory(struct fixture *f, const char *dll, uint32_t functions,
					   uint32_t names)
{
	uint32_t r = f->va[FX_RDATA] + 0x200;
	unsigned char *d = fx_at(f, r);

	fx_put32(d + 12, r + 0x60);
	fx_put32(d + 16, 1);
	fx_put32(d + 20, functions);
	fx_put32(d + 24, names);
	fx_put32(d + 28, r + 0x30);
	fx_put32(d + 32, r + 0x40);
	fx_put32(d + 36, r + 0x50);
	fx_put_text(fx_at(f, r + 0x60), dll);
	return r;
}

/* Exports of "target.dll": base 1; 1 alpha (.text+0x10), 2 beta (+0x20),
 * 3 gamma (+0x30, no name), 4 delta -> "other.epsilon". Directory at
 * .rdata+0x200. */
static inline void fx_add_exports_target(struct fixture *f)
{
	uint32_t r = fx_export_directory(f, "target.dll", 4, 3), t = f->va[FX_TEXT];

	fx_put32(fx_at(f, r + 0x30), t + 0x10);
	fx_put32(fx_at(f, r + 0x34), t + 0x20);
	fx_put32(fx_at(f, r + 0x38), t + 0x30);
	fx_put32(fx_at(f, r + 0x3c), r + 0x90);
	fx_put32(fx_at(f, r + 0x40), r + 0x70);
	fx_put32(fx_at(f, r + 0x44), r + 0x78);
	fx_put32(fx_at(f, r + 0x48), r + 0x80);
	fx_put16(fx_at(f, r + 0x50), 0);
	fx_put16(fx_at(f, r + 0x52), 1);
	fx_put16(fx_at(f, r + 0x54), 3);
	fx_put_text(fx_at(f, r + 0x70), "alpha");
	fx_put_text(fx_at(f, r + 0x78), "beta");
	fx_put_text(fx_at(f, r + 0x80), "delta");
	fx_put_text(fx_at(f, r + 0x90), "other.epsilon");
	fx_dir(f, 0, r, 0xa0);
}

/* Exports of "other.dll": 1 epsilon (.text+0x40). */
static inline void fx_add_exports_other(struct fixture *f)
{
	uint32_t r = fx_export_directory(f, "other.dll", 1, 1), t = f->va[FX_TEXT];

	fx_put32(fx_at(f, r + 0x30), t + 0x40);
	fx_put32(fx_at(f, r + 0x40), r + 0x70);
	fx_put_text(fx_at(f, r + 0x70), "epsilon");
	fx_dir(f, 0, r, 0x80);
}

/* Absolute pointers in .text with their relocations, one block:
 * PE32+: DIR64 at .text+0x100 (-> base + .text+0x10).
 * PE32: HIGHLOW at +0x100, HIGH at +0x108 (high half of base+0x12345),
 * LOW at +0x10c (low half of base+0x1234), HIGHADJ at +0x110 (high half of
 * base+0x18000, param 0x8000), and an ABSOLUTE pad. */
static inline void fx_add_relocs(struct fixture *f)
{
	uint32_t t = f->va[FX_TEXT], r = f->va[FX_RELOC];
	unsigned char *b = fx_at(f, r);
	int n = 0;

	if (f->plus) {
		fx_put64(fx_at(f, t + 0x100), f->base + t + 0x10);
		fx_put16(b + 8 + 2 * n++, (uint16_t)(10 << 12 | 0x100));
		fx_put16(b + 8 + 2 * n++, 0);
	} else {
		uint32_t base = (uint32_t)f->base;

		fx_put32(fx_at(f, t + 0x100), base + t + 0x10);
		fx_put16(fx_at(f, t + 0x108), (uint16_t)((base + 0x12345) >> 16));
		fx_put16(fx_at(f, t + 0x10c), (uint16_t)(base + 0x1234));
		fx_put16(fx_at(f, t + 0x110), (uint16_t)((base + 0x18000 + 0x8000) >> 16));
		fx_put16(b + 8 + 2 * n++, (uint16_t)(3 << 12 | 0x100));
		fx_put16(b + 8 + 2 * n++, (uint16_t)(1 << 12 | 0x108));
		fx_put16(b + 8 + 2 * n++, (uint16_t)(2 << 12 | 0x10c));
		fx_put16(b + 8 + 2 * n++, (uint16_t)(4 << 12 | 0x110));
		fx_put16(b + 8 + 2 * n++, 0x8000);
		fx_put16(b + 8 + 2 * n++, 0);
	}
	fx_put32(b, t);
	fx_put32(b + 4, (uint32_t)(8 + 2 * n));
	fx_dir(f, 5, r, (uint32_t)(8 + 2 * n));
}

#endif
