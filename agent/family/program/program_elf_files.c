/*
 * program_elf_files.c - an ELF program's files (program_elf.h): each read
 * with elfutils' libelf, as the elf family reads what it builds (the
 * relocation counts and binding flags through elf_read_object(),
 * family/elf/elf_read.c; the dynamic section's names here), the helpers
 * written out, and the variants' folders.
 *
 * Sources: System V gABI, "Dynamic Section" (DT_NEEDED, DT_SONAME,
 * DT_RPATH, DT_RUNPATH as offsets into the string table of the section's
 * sh_link).
 */
#ifdef __linux__

#include "program_elf.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "family/elf/elf_family.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

/* Gives PATH the mode of a program (NAME in the message). */
static int make_executable(const char *path, const char *name)
{
	return chmod(path, 0755) < 0 ? err_set(LL_EIO, "Cannot make %s executable.", name) : 0;
}

/* Appends NAME to LIST (SIZE bytes), ' '-separated; truncates. */
static void list_add(char *list, size_t size, const char *name)
{
	size_t len = strlen(list);

	snprintf(list + len, size - len, "%s%s", len ? " " : "", name ? name : "");
}

/* The dynamic section's names of the ELF file PATH into F; false when
 * libelf does not read it as an ELF file. *RET_DYN: its type is ET_DYN. */
static bool read_dynamic_names(const char *path, struct program_elf_file *f, bool *ret_dyn)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	bool ok = false;
	Elf *elf = NULL;
	int fd;

	if (elf_version(EV_CURRENT) == EV_NONE || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	if (!(elf = elf_begin(fd, ELF_C_READ, NULL)) || elf_kind(elf) != ELF_K_ELF ||
	    !gelf_getehdr(elf, &ehdr))
		goto out;
	ok = true;
	*ret_dyn = ehdr.e_type == ET_DYN;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Dyn dyn;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0;
		     shdr.sh_entsize && k < shdr.sh_size / shdr.sh_entsize && gelf_getdyn(data, (int)k, &dyn);
		     k++) {
			const char *s = dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_SONAME ||
							dyn.d_tag == DT_RPATH || dyn.d_tag == DT_RUNPATH
						? elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val)
						: NULL;
			if (dyn.d_tag == DT_NEEDED)
				list_add(f->needed, sizeof(f->needed), s);
			else if (dyn.d_tag == DT_SONAME)
				snprintf(f->soname, sizeof(f->soname), "%s", s ? s : "");
			else if (dyn.d_tag == DT_RPATH)
				list_add(f->rpath, sizeof(f->rpath), s);
			else if (dyn.d_tag == DT_RUNPATH)
				list_add(f->runpath, sizeof(f->runpath), s);
		}
	}
out:
	elf_end(elf);
	close(fd);
	return ok;
}

void program_elf_use_build(struct program_elf_context *ctx, size_t b)
{
	program_use_build(&ctx->base, b);
	if (ctx->elf_all)
		ctx->elf_files = ctx->elf_all + (ctx->base.builds[b].files - ctx->base.all_files);
}

/* " (build LABEL)" of a job of several builds into OUT, else "". */
static const char *build_named(const struct program_context *base, char *out, size_t size)
{
	const char *label = "";

	for (size_t b = 0; base->build_count > 1 && b < base->build_count; b++)
		if (base->builds[b].files == base->files)
			label = base->builds[b].label;
	snprintf(out, size, label[0] ? " (build %s)" : "", label);
	return out;
}

/* The build in use's files read with libelf into ctx->elf_files. */
static int read_build_files(struct program_elf_context *ctx)
{
	const struct program_context *base = &ctx->base;
	unsigned char magic[4] = {0};
	char path[PLAT_MAX_PATH + 1], build[JOB_SPEC_MAX_BUILD_LABEL + 16];
	int rc, fd;

	build_named(base, build, sizeof(build));
	for (size_t i = 0; i < base->file_count; i++) {
		struct program_elf_file *f = &ctx->elf_files[i];
		struct elf_object_facts facts;
		bool dyn = false;
		if ((rc = program_file_path(base->files_dir, base->files[i].path, false, path)) < 0)
			return rc;
		if (i == base->exe) {
			ssize_t n = (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0 ? read(fd, magic, 4) : -1;
			if (fd >= 0)
				close(fd);
			if (n != 4 || memcmp(magic, "\177ELF", 4) != 0)
				return err_set(LL_EFORMAT,
					       "The program's exe %s%s is not an ELF file (no \\177ELF at "
					       "its start): nothing was run.",
					       base->files[i].path, build);
		}
		if (!read_dynamic_names(path, f, &dyn) || elf_read_object(path, &facts) < 0) {
			err_clear();
			if (i == base->exe)
				return err_set(LL_EFORMAT,
					       "The program's exe %s%s is no x86-64 ELF file libelf reads: "
					       "nothing was run.",
					       base->files[i].path, build);
			memset(f, 0, sizeof(*f));
			continue;
		}
		f->elf = true;
		f->bind_now_flag = facts.bind_now;
		f->jump_slots = facts.jump_slot;
		f->shared = i != base->exe && dyn && (f->soname[0] || strstr(base->files[i].path, ".so"));
		/* A blob is stored without its mode: the loader maps a shared
		 * object without x, but execve needs it on the exe. */
		if ((i == base->exe || f->shared) && (rc = make_executable(path, base->files[i].path)) < 0)
			return rc;
	}
	return 0;
}

int program_elf_read_files(struct program_elf_context *ctx)
{
	int rc = 0;

	if (!(ctx->elf_all = calloc(ctx->base.all_file_count, sizeof(*ctx->elf_all))))
		return LL_ENOMEM;
	for (size_t b = 0; rc == 0 && b < ctx->base.build_count; b++) {
		program_elf_use_build(ctx, b);
		rc = read_build_files(ctx);
	}
	program_elf_use_build(ctx, 0);
	return rc;
}

cJSON *program_elf_files_json(const struct program_elf_context *ctx)
{
	cJSON *list = cJSON_CreateArray();

	for (size_t i = 0; list && i < ctx->base.file_count; i++) {
		const struct program_elf_file *f = &ctx->elf_files[i];
		cJSON *o;
		if (!f->elf)
			continue;
		if (!(o = json_array_add_object(list)) ||
		    !cJSON_AddStringToObject(o, "file", ctx->base.files[i].path) ||
		    !cJSON_AddBoolToObject(o, "exe", i == ctx->base.exe) ||
		    !cJSON_AddBoolToObject(o, "shared", f->shared) ||
		    !cJSON_AddStringToObject(o, "soname", f->soname) ||
		    !cJSON_AddStringToObject(o, "needed", f->needed) ||
		    !cJSON_AddStringToObject(o, "rpath", f->rpath) ||
		    !cJSON_AddStringToObject(o, "runpath", f->runpath) ||
		    !cJSON_AddBoolToObject(o, "bind_now_flag", f->bind_now_flag) ||
		    !cJSON_AddNumberToObject(o, "jump_slots", (double)f->jump_slots)) {
			cJSON_Delete(list);
			return NULL;
		}
	}
	return list;
}

/* The embedded ELF helper NAME written to FOLDER/NAME (its path into OUT),
 * executable, and noted among the context's helpers. */
static int write_helper(struct program_elf_context *ctx, const char *name, const char *folder, char *out)
{
	struct program_context *base = &ctx->base;
	int rc;

	if (!agent_program_native_arch()[0])
		return err_set(LL_EUNSUPPORTED,
			       "This agent carries no ELF helpers: it was not built on Linux.");
	if ((rc = family_path(out, folder, name)) < 0 ||
	    (rc = agent_program_install_arch(name, agent_program_native_arch(), out,
					     &base->helpers[base->helper_count])) < 0)
		return rc;
	base->helper_count++;
	return make_executable(out, name);
}

int program_elf_tools(struct program_elf_context *ctx)
{
	struct program_context *base = &ctx->base;
	int rc;

	if ((rc = family_path(base->tools_dir, base->work, "tools")) < 0 ||
	    (rc = plat_mkdirs(base->tools_dir)) < 0 ||
	    (rc = family_path(base->floor_dir, base->work, "floor")) < 0 ||
	    (rc = plat_mkdirs(base->floor_dir)) < 0 ||
	    (rc = family_path(ctx->probe_dir, base->work, "probe")) < 0 ||
	    (rc = plat_mkdirs(ctx->probe_dir)) < 0 ||
	    (rc = write_helper(ctx, "elf_audit.so", base->tools_dir, ctx->audit_so)) < 0 ||
	    (rc = write_helper(ctx, "elf_launcher", base->tools_dir, ctx->launcher)) < 0 ||
	    (rc = write_helper(ctx, "elf_empty", base->floor_dir, ctx->empty)) < 0)
		return rc;
	return family_progress(base->task, "build", 100);
}

int program_elf_folders(struct program_elf_context *ctx)
{
	const struct program_context *base = &ctx->base; /* the build in use: each variant's own */
	char src[PLAT_MAX_PATH + 1], dst[PLAT_MAX_PATH + 1], sub[32];
	int rc;

	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct program_variant *var = &ctx->variants[v].base;
		program_elf_use_build(ctx, var->build);
		snprintf(sub, sizeof(sub), "v/%02zu", v);
		if ((rc = family_path(var->dir, base->work, sub)) < 0 || (rc = plat_mkdirs(var->dir)) < 0)
			return rc;
		for (size_t i = 0; i < base->file_count; i++) {
			if ((rc = program_file_path(base->files_dir, base->files[i].path, false, src)) < 0 ||
			    (rc = program_file_path(var->dir, base->files[i].path, true, dst)) < 0 ||
			    (rc = plat_link_file(src, dst, NULL)) < 0)
				return rc;
			/* a copy (no hard links here) has no mode of its own */
			if ((i == base->exe || ctx->elf_files[i].shared) &&
			    (rc = make_executable(dst, base->files[i].path)) < 0)
				return rc;
		}
		if ((rc = family_progress(base->task, "transform",
					  (int)(100 * (v + 1) / ctx->variant_count))) < 0)
			return rc;
	}
	return 0;
}

#endif /* __linux__ */
