/*
 * pe.h - the PE/COFF image toolkit: read, rebase and bind Windows images on
 * any platform (PE32 and PE32+).
 *
 * Every file is untrusted. pe_image_open() checks the headers once; every
 * later read goes through a bounds-checked RVA accessor, so a malformed
 * image gives LL_EFORMAT (or LL_ETOOBIG past a documented limit) with a
 * message naming what is wrong, never an out-of-bounds read. Functions
 * return 0 or a negative LL_E* code from err.h (message in err_message());
 * outputs are untouched on failure, and an image a modifying function
 * refused is left exactly as it was.
 *
 * References: "PE Format" (Microsoft Learn, the PE/COFF specification),
 * cited below as "PE spec, <section>".
 *
 *	struct pe_image *img;
 *	if (pe_image_open("a.dll", &img) < 0) ... err_message() ...
 *	pe_rebase(img, 0x60000000, time_stamp);
 *	pe_image_save(img, "a.dll");
 *	pe_image_free(img);
 *
 * Lists returned by the readers (imports, exports, relocations, bound
 * imports) point their strings into the image's bytes: they are *borrowed*
 * from the image and stay valid until the image is modified (rebased,
 * bound) or freed. Release each list with its *_release function.
 *
 * This module uses C11 and stdio only, so the Windows agent build
 * (mingw-w64) compiles it too.
 */
#ifndef LOADLAB_PE_H
#define LOADLAB_PE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest file pe_image_open() reads (a larger one is LL_ETOOBIG). */
#define PE_MAX_FILE_SIZE (1024u * 1024u * 1024u)
/* Most sections accepted (the spec's loader limit was 96; newer loaders
 * allow more, and some toolchains emit more with debug sections). */
#define PE_MAX_SECTIONS 4096u
/* Most import descriptors, and functions per descriptor, accepted. */
#define PE_MAX_IMPORT_MODULES 4096u
#define PE_MAX_IMPORT_FUNCTIONS 65536u
/* Most export address table slots and names accepted. */
#define PE_MAX_EXPORTS 65536u
/* Longest name (import, export, DLL, forwarder) accepted, terminator excluded. */
#define PE_MAX_NAME 4096u

/* Machine types (PE spec, "Machine Types") the toolkit names. */
#define PE_MACHINE_I386 0x014c
#define PE_MACHINE_AMD64 0x8664
#define PE_MACHINE_ARM 0x01c0
#define PE_MACHINE_ARMNT 0x01c4
#define PE_MACHINE_ARM64 0xaa64
#define PE_MACHINE_R4000 0x0166
#define PE_MACHINE_MIPS16 0x0266
#define PE_MACHINE_IA64 0x0200
#define PE_MACHINE_RISCV32 0x5032
#define PE_MACHINE_RISCV64 0x5064
#define PE_MACHINE_LOONGARCH32 0x6232
#define PE_MACHINE_LOONGARCH64 0x6264

/* COFF file header Characteristics bits used here. */
#define PE_FILE_RELOCS_STRIPPED 0x0001
#define PE_FILE_DLL 0x2000

/* Optional header DllCharacteristics bits used here. */
#define PE_DLLCHAR_HIGH_ENTROPY_VA 0x0020
#define PE_DLLCHAR_DYNAMIC_BASE 0x0040 /* ASLR: the loader may move it */
#define PE_DLLCHAR_FORCE_INTEGRITY 0x0080

/* Data directory indexes (PE spec, "Optional Header Data Directories"). */
enum pe_directory {
	PE_DIR_EXPORT = 0,
	PE_DIR_IMPORT = 1,
	PE_DIR_RESOURCE = 2,
	PE_DIR_EXCEPTION = 3,
	PE_DIR_SECURITY = 4, /* a file offset, not an RVA */
	PE_DIR_BASERELOC = 5,
	PE_DIR_DEBUG = 6,
	PE_DIR_ARCHITECTURE = 7,
	PE_DIR_GLOBALPTR = 8,
	PE_DIR_TLS = 9,
	PE_DIR_LOAD_CONFIG = 10,
	PE_DIR_BOUND_IMPORT = 11,
	PE_DIR_IAT = 12,
	PE_DIR_DELAY_IMPORT = 13,
	PE_DIR_CLR = 14,
	PE_DIR_COUNT = 16
};

/* Base relocation types (PE spec, "Base Relocation Types"). Types 5, 7, 8
 * and 9 mean different things per machine; pe_reloc_type_name() knows. */
enum pe_reloc_type {
	PE_REL_ABSOLUTE = 0,
	PE_REL_HIGH = 1,
	PE_REL_LOW = 2,
	PE_REL_HIGHLOW = 3,
	PE_REL_HIGHADJ = 4,
	PE_REL_MACHINE_5 = 5, /* MIPS_JMPADDR, ARM_MOV32, RISCV_HIGH20 */
	PE_REL_RESERVED_6 = 6,
	PE_REL_MACHINE_7 = 7, /* THUMB_MOV32, RISCV_LOW12I */
	PE_REL_MACHINE_8 = 8, /* RISCV_LOW12S, LOONGARCH32/64_MARK_LA */
	PE_REL_MACHINE_9 = 9, /* MIPS_JMPADDR16 (IA64_IMM64 of old) */
	PE_REL_DIR64 = 10
};

struct pe_data_directory {
	uint32_t rva; /* PE_DIR_SECURITY: a file offset */
	uint32_t size;
};

struct pe_section {
	char name[9]; /* NUL-terminated copy of the 8-byte name */
	uint32_t virtual_address;
	uint32_t virtual_size;
	uint32_t raw_offset; /* PointerToRawData */
	uint32_t raw_size;   /* SizeOfRawData */
	uint32_t characteristics;
	uint32_t readable_size; /* bytes of the section that the file holds
				   * and the loader maps: min(raw size, virtual
				   * size when set, bytes left in the file) */
};

/* An image in memory. Fields are read-only for callers: the toolkit's
 * functions keep them in step with the bytes. */
struct pe_image {
	unsigned char *data; /* the whole file */
	size_t size;
	bool pe32plus; /* optional header magic 0x20b */
	uint16_t machine;
	uint16_t characteristics;
	uint16_t dll_characteristics;
	uint16_t subsystem;
	uint32_t timestamp; /* COFF TimeDateStamp */
	uint32_t checksum;  /* optional header CheckSum as stored */
	uint64_t image_base;
	uint32_t entry_point; /* AddressOfEntryPoint (RVA) */
	uint32_t section_alignment;
	uint32_t file_alignment;
	uint32_t size_of_image;
	uint32_t size_of_headers;
	uint32_t pointer_to_symbols; /* COFF PointerToSymbolTable (file offset) */
	uint32_t nt_offset;          /* offset of "PE\0\0" (e_lfanew) */
	uint32_t optional_offset;    /* offset of the optional header */
	uint32_t optional_size;      /* SizeOfOptionalHeader */
	uint32_t section_table_offset;
	uint32_t directory_count;                           /* NumberOfRvaAndSizes, capped at 16 */
	struct pe_data_directory directories[PE_DIR_COUNT]; /* zero past count */
	uint32_t section_count;
	struct pe_section *sections;
};

/* ---- opening and saving ------------------------------------------------ */

/* Reads the file at PATH (at most PE_MAX_FILE_SIZE bytes) and checks its
 * headers (pe_image_parse). LL_EIO when it cannot be read. */
int pe_image_open(const char *path, struct pe_image **ret_image);

/* Like pe_image_open() on a copy of SIZE bytes at DATA. */
int pe_image_from_memory(const void *data, size_t size, struct pe_image **ret_image);

/* Writes the image's bytes to PATH (replacing it). LL_EIO on failure. */
int pe_image_save(const struct pe_image *image, const char *path);

/* Frees the image; pe_image_free(NULL) is fine. */
void pe_image_free(struct pe_image *image);

/* Frees the COUNT images of the array IMAGES (NULL entries are fine), then
 * the array; IMAGES may be NULL. */
void pe_images_free(struct pe_image **images, size_t count);

/* Translates [RVA, RVA + LEN) to a file offset when the whole range lies in
 * the headers or in the file-backed part of one section. LL_EFORMAT
 * otherwise (including ranges in a section's zero-filled tail). */
int pe_rva_to_offset(const struct pe_image *image, uint32_t rva, uint32_t len, size_t *ret_offset);

/* A NUL-terminated string at RVA of at most PE_MAX_NAME bytes, entirely in
 * the file. *RET_STRING is borrowed from the image. */
int pe_rva_string(const struct pe_image *image, uint32_t rva, const char **ret_string);

/* The section holding RVA (file-backed or not), or NULL. Borrowed. */
const struct pe_section *pe_section_for_rva(const struct pe_image *image, uint32_t rva);

/* ---- imports (PE spec, "The .idata Section", "Delay-Load Import Tables") */

struct pe_import_function {
	bool by_ordinal;
	bool has_name_table; /* false: read from the IAT (no ILT) */
	uint16_t ordinal;    /* by_ordinal */
	uint16_t hint;       /* by name */
	const char *name;    /* by name; NULL when by ordinal, or when the
			       * descriptor has no name table and is bound */
	uint32_t iat_rva;    /* the function's IAT slot */
	uint64_t iat_value;  /* what that slot holds in the file */
};

struct pe_import_module {
	const char *name; /* the DLL name as written */
	bool delay;       /* from the delay-load directory */
	uint32_t descriptor_rva;
	uint32_t name_table_rva; /* OriginalFirstThunk / ImportNameTableRVA; 0: none */
	uint32_t iat_rva;        /* FirstThunk / ImportAddressTableRVA */
	uint32_t timestamp;      /* 0 unbound, 0xFFFFFFFF new-style bound */
	uint32_t forwarder_chain;
	uint32_t delay_attributes;        /* delay only */
	uint32_t delay_module_handle_rva; /* delay only */
	uint32_t delay_bound_iat_rva;     /* delay only */
	uint32_t delay_unload_iat_rva;    /* delay only */
	size_t function_count;
	struct pe_import_function *functions;
};

struct pe_imports {
	size_t module_count;
	struct pe_import_module *modules;
};

/* Reads the import directory (DELAY false) or the delay-load import
 * directory (DELAY true), descriptors in file order. An image without that
 * directory gives an empty list. Old-style (VC6) delay descriptors, whose
 * attributes say the fields are VAs, are converted to RVAs. Names are
 * borrowed from the image. */
int pe_imports_read(const struct pe_image *image, bool delay, struct pe_imports *ret_imports);

/* Frees what pe_imports_read() allocated; the list is empty afterwards. */
void pe_imports_release(struct pe_imports *imports);

/* ---- exports (PE spec, "The .edata Section") --------------------------- */

struct pe_export {
	uint32_t ordinal;      /* Base + index in the export address table */
	uint32_t rva;          /* 0 for an unused slot */
	const char *name;      /* the first name that points at this slot, or NULL */
	const char *forwarder; /* "DLL.Name" or "DLL.#N" when the RVA lies
				 * inside the export directory, else NULL */
};

struct pe_export_name {
	const char *name;
	uint32_t index; /* index into entries (ordinal - base) */
};

struct pe_exports {
	const char *dll_name; /* may be NULL when the directory has none */
	uint32_t base;        /* ordinal base */
	uint32_t timestamp;
	size_t count; /* export address table slots */
	struct pe_export *entries;
	size_t name_count;
	struct pe_export_name *names; /* the name pointer table, in file order */
};

/* Reads the export directory; an image without one gives an empty list. */
int pe_exports_read(const struct pe_image *image, struct pe_exports *ret_exports);

/* The slot named NAME: tries HINT as an index into the name table first,
 * then a binary search (the table is sorted, PE spec), then, for tables a
 * careless tool left unsorted, a linear scan. NULL when absent. */
const struct pe_export *pe_exports_find_name(const struct pe_exports *exports, const char *name,
					     uint16_t hint);

/* The slot with ORDINAL (biased), or NULL when out of range or unused. */
const struct pe_export *pe_exports_find_ordinal(const struct pe_exports *exports, uint32_t ordinal);

void pe_exports_release(struct pe_exports *exports);

/* ---- base relocations (PE spec, "The .reloc Section") ------------------ */

struct pe_reloc {
	uint32_t rva;   /* page RVA + offset */
	uint8_t type;   /* enum pe_reloc_type */
	uint16_t param; /* HIGHADJ: the low 16 bits from the next entry */
};

struct pe_relocs {
	size_t block_count;
	size_t count; /* entries, ABSOLUTE padding excluded */
	struct pe_reloc *entries;
};

/* Reads every base relocation block. Blocks must be 4-byte multiples of at
 * least 8 bytes within the directory; a HIGHADJ entry consumes the next
 * slot as its parameter. */
int pe_relocs_read(const struct pe_image *image, struct pe_relocs *ret_relocs);

void pe_relocs_release(struct pe_relocs *relocs);

/* "HIGHLOW", "DIR64", "ARM_MOV32", ... for TYPE on MACHINE. */
const char *pe_reloc_type_name(uint16_t machine, unsigned type);

/* ---- bound imports (PE spec, "Optional Header Data Directories": Bound
 * Import; winnt.h IMAGE_BOUND_IMPORT_DESCRIPTOR) ------------------------ */

struct pe_bound_forwarder {
	const char *name;
	uint32_t timestamp;
};

struct pe_bound_module {
	const char *name;
	uint32_t timestamp;
	size_t forwarder_count;
	struct pe_bound_forwarder *forwarders;
};

struct pe_bound_imports {
	size_t count;
	struct pe_bound_module *modules;
};

/* Reads the bound import directory; none gives an empty list. */
int pe_bound_imports_read(const struct pe_image *image, struct pe_bound_imports *ret_bound);

void pe_bound_imports_release(struct pe_bound_imports *bound);

/* ---- checksum ---------------------------------------------------------- */

/* The image checksum of SIZE bytes as imagehlp's CheckSumMappedFile and the
 * kernel's image verification compute it: the 16-bit one's-complement sum
 * of the file as little-endian words (an odd last byte padded with zero),
 * with the 4 bytes at CHECKSUM_OFFSET counted as zero, folded to 16 bits,
 * plus the file size. */
uint32_t pe_checksum_compute(const void *data, size_t size, size_t checksum_offset);

/* pe_checksum_compute() over the image, skipping its CheckSum field. */
uint32_t pe_checksum(const struct pe_image *image);

/* Stores pe_checksum() in the optional header. */
void pe_checksum_update(struct pe_image *image);

/* ---- rebasing (REBASE.EXE / ReBaseImage semantics) --------------------- */

/* Gives the image the preferred base NEW_BASE: applies every base
 * relocation for the difference, writes ImageBase, sets TimeDateStamp to
 * TIMESTAMP (or to the old one plus one when they are equal, so that
 * bindings made against the old image are detectably stale) and updates
 * the checksum. NEW_BASE must be 64 KiB aligned and the image must fit
 * below 4 GiB for PE32. Refuses (LL_EINVAL) an image whose relocations were
 * stripped (IMAGE_FILE_RELOCS_STRIPPED) and (LL_EUNSUPPORTED) one with a
 * relocation type this machine's loader would not apply. Rebasing to the
 * current base still updates timestamp and checksum. */
int pe_rebase(struct pe_image *image, uint64_t new_base, uint32_t timestamp);

/* Assigns non-overlapping, 64 KiB-aligned bases to COUNT images, in the
 * order given, the way REBASE -b did: bottom-up, the first image at
 * ADDRESS and each next one above the previous; or with DOWN top-down, the
 * first image ending at ADDRESS and each next one below. Each image takes
 * SizeOfImage rounded up to 64 KiB. ADDRESS must be 64 KiB aligned.
 * Writes COUNT bases to RET_BASES; LL_ERANGE when the set does not fit in
 * the address space (4 GiB for PE32 images). */
int pe_rebase_plan(struct pe_image *const *images, size_t count, uint64_t address, bool down,
		   uint64_t *ret_bases);

/* pe_rebase_plan() then pe_rebase() on each image. Every image is checked
 * before any is changed, so on failure all are untouched. RET_BASES (may
 * be NULL) receives the bases. */
int pe_rebase_batch(struct pe_image *const *images, size_t count, uint64_t address, bool down,
		    uint32_t timestamp, uint64_t *ret_bases);

/* Clears PE_DLLCHAR_DYNAMIC_BASE (and PE_DLLCHAR_HIGH_ENTROPY_VA, which
 * means nothing without it) in the image's DllCharacteristics, so Vista
 * and later load it at its preferred base when that is free, as XP does;
 * the checksum is updated. Sets *RET_CHANGED (may be NULL) to whether the
 * flag was set. Leaves the relocations, so the loader can still move the
 * image when its base is taken. Cannot fail on an opened image: returns 0. */
int pe_clear_dynamic_base(struct pe_image *image, bool *ret_changed);

/* ---- binding (BIND.EXE / BindImageEx semantics) ------------------------ */

struct pe_bind_options {
	const char *image_dir;          /* the image's own folder, searched first */
	const char *const *search_dirs; /* then these, in order ("system" folders) */
	size_t search_dir_count;
	uint32_t max_forwarder_depth; /* 0: 16 */
};

struct pe_bind_result {
	size_t modules_bound;   /* import descriptors bound */
	size_t modules_skipped; /* left unbound: DLL not found, a function
				  * not exported, or no name table */
	size_t functions_bound;
};

/* Binds the image: for each import descriptor, finds the DLL the loader
 * would find (IMAGE_DIR, then SEARCH_DIRS; file names tried as written,
 * lower-case and upper-case), resolves every import by name (hint first)
 * or ordinal, following forwarders ("DLL.Name", "DLL.#N") into other DLLs,
 * writes each target's VA (the DLL's preferred base + RVA) into the IAT,
 * keeps the import name table, marks the descriptor new-style bound
 * (TimeDateStamp and ForwarderChain 0xFFFFFFFF) and writes a bound import
 * directory naming each DLL with its TimeDateStamp and the forwarder
 * modules it used. The loader trusts a binding only when every named
 * module has that timestamp and sits at its preferred base; otherwise it
 * resolves through the name table, which binding leaves intact, so a stale
 * binding is harmless.
 *
 * The directory goes after the section table. When the headers have no
 * room, they grow by whole FileAlignment units: section data moves down in
 * the file and every file offset that points past the headers (section
 * PointerToRawData, COFF symbol table, debug directory data, certificate
 * table) moves with it; this needs the new SizeOfHeaders to stay at or
 * below the first section's RVA, else LL_ETOOBIG. Descriptors that cannot
 * be bound (DLL not found, import missing, no name table) are left as they
 * were and counted in RET_RESULT (may be NULL). The checksum is updated. */
int pe_bind(struct pe_image *image, const struct pe_bind_options *options, struct pe_bind_result *ret_result);

/* ---- presentation ------------------------------------------------------ */

struct buf;
struct cJSON;

/* Appends a readable dump (headers, sections, directories, imports, delay
 * imports, exports, relocation summary, bound imports) to OUT. With
 * LIST_RELOCS every relocation is listed, else only per-type counts. */
int pe_dump_text(const struct pe_image *image, bool list_relocs, struct buf *out);

/* The same as a cJSON object (the caller deletes it). Numbers that may
 * exceed 2^53 (addresses, IAT values) are hex strings "0x...". */
int pe_dump_json(const struct pe_image *image, bool list_relocs, struct cJSON **ret_json);

#endif
