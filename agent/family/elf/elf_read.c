/*
 * elf_read.c - what a built library or program holds, read with elfutils'
 * libelf/gelf (not a parser of our own), and how it is checked against a
 * variant's knobs (elf_family.h).
 *
 * Sources of the fields: the System V gABI, "Dynamic Section" (DT_FLAGS
 * with DF_BIND_NOW and DF_SYMBOLIC, DT_FLAGS_1 with DF_1_NOW, DT_SYMBOLIC,
 * DT_RELR/DT_RELRSZ/DT_RELRENT), the x86-64 psABI for relocation types.
 */
#ifdef __linux__

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_family.h"
#include "loadlab/err.h"

/* glibc 2.36's <elf.h> has them; older headers may not. */
#ifndef DT_RELRSZ
#define DT_RELRSZ 35
#endif
#ifndef DT_RELR
#define DT_RELR 36
#endif
#ifndef DT_RELRENT
#define DT_RELRENT 37
#endif

/* The function index of NAME when it is "lt<INDEX>_f<j>" (INDEX < 0: any
 * library), else -1. */
static int function_index(const char *name, int index)
{
	int i, j, n = 0;

	if (!name || sscanf(name, "lt%d_f%d%n", &i, &j, &n) != 2 || name[n] != '\0' || j < 0 ||
	    (index >= 0 && i != index))
		return -1;
	return j;
}

static void count_relocation(struct elf_object_facts *f, unsigned long type)
{
	switch (type) {
	case R_X86_64_RELATIVE:
		f->relative++;
		break;
	case R_X86_64_64:
		f->symbolic_64++;
		break;
	case R_X86_64_GLOB_DAT:
		f->glob_dat++;
		break;
	case R_X86_64_JUMP_SLOT:
		f->jump_slot++;
		break;
	default:
		f->other++;
		break;
	}
}

static int read_dynamic(Elf_Data *data, const GElf_Shdr *shdr, struct elf_object_facts *f)
{
	size_t count = shdr->sh_entsize ? shdr->sh_size / shdr->sh_entsize : 0, relr_size = 0, relr_entry = 0;
	GElf_Dyn dyn;

	for (size_t k = 0; k < count && gelf_getdyn(data, (int)k, &dyn); k++) {
		switch (dyn.d_tag) {
		case DT_FLAGS:
			f->bind_now |= (dyn.d_un.d_val & DF_BIND_NOW) != 0;
			f->symbolic |= (dyn.d_un.d_val & DF_SYMBOLIC) != 0;
			break;
		case DT_FLAGS_1:
			f->bind_now |= (dyn.d_un.d_val & DF_1_NOW) != 0;
			break;
		case DT_BIND_NOW:
			f->bind_now = true;
			break;
		case DT_SYMBOLIC:
			f->symbolic = true;
			break;
		case DT_RELR:
			f->relr = true;
			break;
		case DT_RELRSZ:
			relr_size = dyn.d_un.d_val;
			break;
		case DT_RELRENT:
			relr_entry = dyn.d_un.d_val;
			break;
		default:
			break;
		}
	}
	f->relr_words = relr_entry ? relr_size / relr_entry : 0;
	return 0;
}

static void read_dynsym(Elf *elf, Elf_Data *data, const GElf_Shdr *shdr, struct elf_object_facts *f)
{
	size_t count = shdr->sh_entsize ? shdr->sh_size / shdr->sh_entsize : 0;
	GElf_Sym sym;

	for (size_t k = 1; k < count && gelf_getsym(data, (int)k, &sym); k++) {
		int type = GELF_ST_TYPE(sym.st_info);
		if (sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE)
			continue;
		f->dynsym_defined++;
		if (function_index(elf_strptr(elf, shdr->sh_link, sym.st_name), -1) >= 0)
			f->dynsym_functions++;
	}
}

/* Opens PATH with libelf: an x86-64 ELF file, else LL_EFORMAT. */
static int open_elf(const char *path, int *ret_fd, Elf **ret_elf)
{
	GElf_Ehdr ehdr;
	Elf *elf;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return err_set(LL_EUNSUPPORTED, "libelf is out of date: %s", elf_errmsg(-1));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return err_set(LL_EIO, "Cannot open %s.", path);
	if (!(elf = elf_begin(fd, ELF_C_READ, NULL)) || elf_kind(elf) != ELF_K_ELF ||
	    !gelf_getehdr(elf, &ehdr) || ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    ehdr.e_machine != EM_X86_64) {
		int rc = err_set(LL_EFORMAT, "%s is no x86-64 ELF file libelf reads: %s", path,
				 elf_errmsg(-1));
		elf_end(elf);
		close(fd);
		return rc;
	}
	*ret_fd = fd;
	*ret_elf = elf;
	return 0;
}

/* The section after *SCN (the first when *SCN is NULL) whose header
 * libelf reads, into *SCN and *SHDR; false after the last. */
static bool next_section(Elf *elf, Elf_Scn **scn, GElf_Shdr *shdr)
{
	while ((*scn = elf_nextscn(elf, *scn)))
		if (gelf_getshdr(*scn, shdr))
			return true;
	return false;
}

int elf_read_object(const char *path, struct elf_object_facts *ret)
{
	struct elf_object_facts f = {0};
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf *elf;
	int fd, rc;

	if ((rc = open_elf(path, &fd, &elf)) < 0)
		return rc;
	while (next_section(elf, &scn, &shdr)) {
		Elf_Data *data;
		if (shdr.sh_type == SHT_GNU_HASH)
			f.gnu_hash = true;
		else if (shdr.sh_type == SHT_HASH)
			f.sysv_hash = true;
		if (shdr.sh_type != SHT_DYNAMIC && shdr.sh_type != SHT_RELA && shdr.sh_type != SHT_DYNSYM)
			continue;
		if (!(data = elf_getdata(scn, NULL))) {
			rc = err_set(LL_EFORMAT, "%s: a section libelf cannot read: %s", path,
				     elf_errmsg(-1));
			goto out;
		}
		if (shdr.sh_type == SHT_DYNAMIC) {
			read_dynamic(data, &shdr, &f);
		} else if (shdr.sh_type == SHT_DYNSYM) {
			read_dynsym(elf, data, &shdr, &f);
		} else {
			size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
			GElf_Rela rela;
			for (size_t k = 0; k < count && gelf_getrela(data, (int)k, &rela); k++)
				count_relocation(&f, GELF_R_TYPE(rela.r_info));
		}
	}
	*ret = f;
out:
	elf_end(elf);
	close(fd);
	return rc;
}

static bool contradiction(char *reason, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool contradiction(char *reason, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, size, fmt, ap);
	va_end(ap);
	return false;
}

bool elf_check_object(const struct elf_object_facts *f, const struct job_spec_elf_knobs *knobs, bool program,
		      int exports, int globals, char *reason, size_t size)
{
	size_t m = (size_t)exports, relative = m * (size_t)globals + (knobs->symbolic ? m : 0);

	if (f->bind_now != knobs->bind_now)
		return contradiction(reason, size, "%s binding: DF_BIND_NOW/DF_1_NOW %s.",
				     knobs->bind_now ? "Immediate" : "Lazy", f->bind_now ? "set" : "not set");
	if (knobs->sysv_hash ? (!f->sysv_hash || f->gnu_hash) : (!f->gnu_hash || f->sysv_hash))
		return contradiction(reason, size, "Hash style %s: the file has %s.",
				     knobs->sysv_hash ? "sysv" : "gnu",
				     f->gnu_hash && f->sysv_hash ? ".gnu.hash and .hash"
				     : f->gnu_hash               ? ".gnu.hash only"
				     : f->sysv_hash              ? ".hash only"
								 : "no hash table");
	if (!program && f->symbolic != knobs->symbolic)
		return contradiction(reason, size, "-Bsymbolic %s, but DF_SYMBOLIC/DT_SYMBOLIC %s.",
				     knobs->symbolic ? "asked for" : "not asked for",
				     f->symbolic ? "set" : "not set");
	if (!knobs->relr && f->relr)
		return contradiction(reason, size, "No RELR asked for, but the file has DT_RELR.");
	if (knobs->relr && f->relative > 0)
		return contradiction(reason, size, "RELR: %zu RELATIVE relocations left in .rela.dyn.",
				     f->relative);
	if (program) {
		if (knobs->relr && !f->relr)
			return contradiction(reason, size, "RELR: the program has no DT_RELR.");
		return true;
	}
	if (knobs->relr && relative > 0 && !f->relr)
		return contradiction(reason, size, "RELR: %zu relative relocations expected, no DT_RELR.",
				     relative);
	if (!knobs->relr && f->relative != relative)
		return contradiction(reason, size, "%zu RELATIVE relocations, %zu expected.", f->relative,
				     relative);
	if (f->symbolic_64 != (knobs->symbolic ? 0 : m))
		return contradiction(reason, size,
				     "%zu R_X86_64_64 relocations against functions, %zu expected.",
				     f->symbolic_64, knobs->symbolic ? (size_t)0 : m);
	if (f->dynsym_functions != m)
		return contradiction(reason, size, "%zu of %zu functions exported.", f->dynsym_functions, m);
	if (knobs->hidden && f->dynsym_defined != m)
		return contradiction(
			reason, size,
			"Hidden visibility: %zu symbols exported, only the %zu functions expected.",
			f->dynsym_defined, m);
	if (!knobs->hidden && f->dynsym_defined <= m)
		return contradiction(reason, size,
				     "Default visibility: only %zu symbols exported, the table too expected.",
				     f->dynsym_defined);
	return true;
}

int elf_check_order(const char *path, int index, const int *trace, size_t trace_count, bool *ret_ok,
		    char *reason, size_t size)
{
	GElf_Addr *address = NULL, text_start = 0, lowest_other = (GElf_Addr)-1;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t functions = 0;
	bool ok = true, *traced = NULL;
	Elf *elf;
	int fd, rc;

	if ((rc = open_elf(path, &fd, &elf)) < 0)
		return rc;
	while (next_section(elf, &scn, &shdr)) {
		size_t shstrndx;
		if (elf_getshdrstrndx(elf, &shstrndx) == 0 && shdr.sh_type == SHT_PROGBITS &&
		    strcmp(elf_strptr(elf, shstrndx, shdr.sh_name) ? elf_strptr(elf, shstrndx, shdr.sh_name)
								   : "",
			   ".text") == 0)
			text_start = shdr.sh_addr;
		if (shdr.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
		GElf_Sym sym;
		if (!data || count == 0)
			continue;
		functions = count;
		if (!(address = calloc(count, sizeof(*address)))) {
			rc = LL_ENOMEM;
			goto out;
		}
		for (size_t k = 1; k < count && gelf_getsym(data, (int)k, &sym); k++) {
			int j = function_index(elf_strptr(elf, shdr.sh_link, sym.st_name), index);
			if (j >= 0 && (size_t)j < count && sym.st_shndx != SHN_UNDEF)
				address[j] = sym.st_value;
		}
	}
	if (!address) {
		rc = err_set(LL_EFORMAT, "%s has no dynamic symbols.", path);
		goto out;
	}
	/* Traced functions: from the start of .text, ascending in trace order. */
	for (size_t r = 0; r < trace_count && ok; r++) {
		int j = trace[r];
		if (j < 0 || (size_t)j >= functions || !address[j])
			ok = contradiction(reason, size, "lt%d_f%d is not among the exports.", index, j);
		else if (r == 0 && address[j] != text_start)
			ok = contradiction(
				reason, size,
				"The first traced function lt%d_f%d is at 0x%llx, .text starts at 0x%llx.",
				index, j, (unsigned long long)address[j], (unsigned long long)text_start);
		else if (r > 0 && address[j] <= address[trace[r - 1]])
			ok = contradiction(reason, size, "lt%d_f%d (trace rank %zu) is not after lt%d_f%d.",
					   index, j, r, index, trace[r - 1]);
		else if (!(traced = traced ? traced : calloc(functions, sizeof(*traced))))
			rc = LL_ENOMEM, ok = false;
		else
			traced[j] = true;
	}
	/* ...and before every function not traced. */
	for (size_t j = 0; j < functions && ok && rc == 0; j++)
		if (address[j] && !(traced && traced[j]) && address[j] < lowest_other)
			lowest_other = address[j];
	if (ok && rc == 0 && trace_count > 0 && address[trace[trace_count - 1]] >= lowest_other)
		ok = contradiction(reason, size, "lt%d_f%d (traced last) lies after a function not traced.",
				   index, trace[trace_count - 1]);
	if (rc < 0)
		goto out;
	*ret_ok = ok;
out:
	free(traced);
	free(address);
	elf_end(elf);
	close(fd);
	return rc;
}

#endif /* __linux__ */
