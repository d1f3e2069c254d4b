/*
 * pe_generate.c - writes the column's program as C sources and .def files.
 *
 * Everything written here is data the agent decides from the generator's
 * integer parameters; nothing of the job's text reaches a source file.
 *
 * DLL i has M exported functions; function j stores into its K globals
 * through a table of K absolute pointers kept in writable data, so each
 * table slot is a DIR64 base relocation on x64 (code reaches globals
 * RIP-relative, which needs none). The DLLs are linked without the CRT
 * (-nostdlib, entry DllMain), so these M * K relocations are all a DLL
 * has. Every function sits in a ".text$<key>" section of its own: GNU ld
 * sorts grouped sections by name within .text (PE spec, "Grouped
 * Sections"), which is how trace order is imposed at relink.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "pe_family.h"
#include "programs/programs.h"

#define SOURCE_LIMIT (256u * 1024u * 1024u)

/* The known-effect self-test (job_spec_has_delay): DLL 0's DllMain waits,
 * on DLL_PROCESS_ATTACH, LOADLAB_DELAY_US microseconds (the driver sets
 * it per variant, 0 included) on QueryPerformanceCounter. Every variant
 * reads the clock, 0 included, so that the variants differ by the wait
 * alone: under Wine, with the 0 variant returning before the clock, 200
 * and 400 us read as 112.7 and 110.2 % (1,000 runs), reading it 98.6 and
 * 103.9 % (docs/agent.md, "Calibration"). That DLL then imports three
 * kernel32 functions (pe_build.c links it with kernel32). */
static const char delay_dllmain[] =
	"__declspec(dllimport) int __stdcall QueryPerformanceCounter(long long *now);\n"
	"__declspec(dllimport) int __stdcall QueryPerformanceFrequency(long long *freq);\n"
	"__declspec(dllimport) unsigned long __stdcall GetEnvironmentVariableA(const char *name, char "
	"*value,\n"
	"\t\t\t\t\t\t\t\t     unsigned long size);\n"
	"LL_NI __attribute__((section(\".text$z_main\")))\n"
	"int __stdcall DllMain(void *module, unsigned long reason, void *reserved)\n"
	"{\n\tchar text[16];\n\tlong long us = 0, freq = 0, start, now;\n\tunsigned long n, k;\n"
	"\t(void)module;\n\t(void)reserved;\n"
	"\tif (reason != 1 /* DLL_PROCESS_ATTACH */)\n\t\treturn 1;\n"
	"\tn = GetEnvironmentVariableA(\"LOADLAB_DELAY_US\", text, sizeof(text));\n"
	"\tfor (k = 0; k < n && k < sizeof(text) && text[k] >= '0' && text[k] <= '9'; k++)\n"
	"\t\tus = us * 10 + (text[k] - '0');\n"
	"\t/* The 0 variant reads the clock as well: the variants differ by the wait alone. */\n"
	"\tif (!QueryPerformanceFrequency(&freq) || freq <= 0)\n\t\treturn 1;\n"
	"\tQueryPerformanceCounter(&start);\n"
	"\tdo\n\t\tQueryPerformanceCounter(&now);\n"
	"\twhile ((now - start) * 1000000 / freq < us);\n"
	"\treturn 1;\n}\n";

bool pe_in_startup(const struct pe_context *ctx, int i, int j)
{
	int m = ctx->base.exports, count, stride, offset;

	if (ctx->knobs.startup_share <= 0)
		return family_in_startup(i, j);
	count = (int)(ctx->knobs.startup_share * m + 0.5);
	count = count < 1 ? 1 : count > m ? m : count;
	stride = m / count;
	offset = i % stride;
	/* Function j is the k-th of the set when j = k * m / count + offset. */
	for (int k = (j - offset) * count / m - 1; k <= (j - offset) * count / m + 1; k++)
		if (k >= 0 && k < count && (int)((long long)k * m / count) + offset == j)
			return true;
	return false;
}

/* DLL I's functions into B as family_functions_source() writes them (the
 * trace-ordered ones in ".text$a_<rank>", the rest in ".text$l_<j>"),
 * each also executing CTX's function_bytes NOPs so that its code has that
 * size (GNU as: ".fill N, 1, 0x90"). */
static int functions_source(const struct pe_context *ctx, struct buf *b, int i, const int *rank)
{
	int rc = 0;

	for (int j = 0; j < ctx->base.exports && rc == 0; j++) {
		rc |= family_globals_source(b, i, j, ctx->base.globals);
		if (rank && rank[j] >= 0)
			rc |= buf_printf(b, "__attribute__((section(\".text$a_%06d\")))\n", rank[j]);
		else
			rc |= buf_printf(b, "__attribute__((section(\".text$l_%06d\")))\n", j);
		rc |= buf_printf(b, "void lt%d_f%d(void)\n{\n", i, j);
		for (int k = 0; k < ctx->base.globals; k++)
			rc |= buf_printf(b, "\t*lt%d_p%d[%d] = %d;\n", i, j, k, j * 64 + k + 1);
		if (ctx->knobs.function_bytes > 0)
			rc |= buf_printf(b, "\t__asm__ volatile(\".fill %d, 1, 0x90\");\n",
					 ctx->knobs.function_bytes);
		rc |= buf_printf(b, "}\n\n");
	}
	return rc < 0 ? LL_ETOOBIG : 0;
}

/* ll_startup() (the startup set, each DLL's last function first, so trace
 * order differs from link order) and ll_rest() (every other function). */
static int calls_source(const struct pe_context *ctx, struct buf *b)
{
	int rc = buf_printf(b, "static void ll_startup(void)\n{\n");

	for (int i = 0; i < ctx->base.dlls && rc == 0; i++)
		for (int j = ctx->base.exports - 1; j >= 0; j--)
			if (pe_in_startup(ctx, i, j))
				rc |= buf_printf(b, "\tlt%d_f%d();\n", i, j);
	rc |= buf_printf(b, "}\n\nstatic void ll_rest(void)\n{\n");
	for (int i = 0; i < ctx->base.dlls && rc == 0; i++)
		for (int j = 0; j < ctx->base.exports; j++)
			if (!pe_in_startup(ctx, i, j))
				rc |= buf_printf(b, "\tlt%d_f%d();\n", i, j);
	rc |= buf_printf(b, "}\n\n");
	return rc < 0 ? LL_ETOOBIG : 0;
}

/* RANK[j] >= 0: position of function j in the trace. NULL: link order. */
static int dll_source(const void *family, int i, const int *rank, struct buf *b)
{
	const struct pe_context *ctx = family;
	int rc;

	rc = buf_printf(
		b,
		"/* Generated by loadlab-agent: DLL %d of %d, %d functions, %d globals each. */\n"
		"#ifdef LL_TRACE\n"
		"#define LL_NI __attribute__((no_instrument_function))\n"
		"static void *ll_seen[%d];\n"
		"static int ll_seen_count;\n"
		"LL_NI void __cyg_profile_func_enter(void *fn, void *site)\n"
		"{\n\tint i;\n\t(void)site;\n"
		"\tfor (i = 0; i < ll_seen_count; i++)\n\t\tif (ll_seen[i] == fn)\n\t\t\treturn;\n"
		"\tif (ll_seen_count < %d)\n\t\tll_seen[ll_seen_count++] = fn;\n}\n"
		"LL_NI void __cyg_profile_func_exit(void *fn, void *site)\n"
		"{\n\t(void)fn;\n\t(void)site;\n}\n"
		"LL_NI int lt%d_trace(void ***ret)\n{\n\t*ret = ll_seen;\n\treturn ll_seen_count;\n}\n"
		"#else\n#define LL_NI\n#endif\n\n",
		i, ctx->base.dlls, ctx->base.exports, ctx->base.globals, ctx->base.exports, ctx->base.exports,
		i);
	rc |= functions_source(ctx, b, i, rank);
	if (i == 0 && job_spec_has_delay(ctx->base.task->job))
		rc |= buf_append_str(b, delay_dllmain);
	else
		rc |= buf_printf(b,
				 "LL_NI __attribute__((section(\".text$z_main\")))\n"
				 "int __stdcall DllMain(void *module, unsigned long reason, void *reserved)\n"
				 "{\n\t(void)module;\n\t(void)reason;\n\t(void)reserved;\n\treturn 1;\n}\n");
	return rc < 0 ? err_set(LL_ETOOBIG, "Generated DLL source exceeds %u bytes.", SOURCE_LIMIT) : 0;
}

/* The .def file (PE spec, "The .edata Section"; the .def syntax is the
 * linker's): by name, or by ordinal with NONAME so no name is exported. */
static int dll_def(const struct pe_context *ctx, int i, bool ordinal, bool trace, struct buf *b)
{
	int rc = buf_printf(b, "LIBRARY lt%d.dll\nEXPORTS\n", i), j;

	for (j = 0; j < ctx->base.exports; j++)
		rc |= buf_printf(b, "  lt%d_f%d @%d%s\n", i, j, j + 1, ordinal ? " NONAME" : "");
	if (trace)
		rc |= buf_printf(b, "  lt%d_trace @%d\n", i, ctx->base.exports + 1);
	return rc < 0 ? LL_ETOOBIG : 0;
}

/* main.c: the probe (agent/programs/probe.c, embedded) and then what
 * depends on the job: the imports, the startup scenario and main(). */
static int main_source(const void *family, struct buf *b)
{
	const struct pe_context *ctx = family;
	size_t probe_len;
	const char *probe = agent_program_source("probe.c", &probe_len);
	/* The trace run takes the whole path with main "call" and "startup":
	 * the startup set first, then the rest. */
	bool trace_rest = ctx->base.main_call || ctx->knobs.main_startup;
	int rc, i, j;

	if (!probe)
		return err_set(LL_ENOTFOUND, "This agent has no embedded probe.c.");
	rc = buf_append(b, probe, probe_len);
	rc |= buf_printf(b, "\nstatic const char *const ll_dlls[] = {\n");
	for (i = 0; i < ctx->base.dlls; i++)
		rc |= buf_printf(b, "\t\"lt%d.dll\",\n", i);
	rc |= buf_printf(b, "};\n\n");

	for (i = 0; i < ctx->base.dlls; i++) {
		for (j = 0; j < ctx->base.exports; j++)
			rc |= buf_printf(b, "void lt%d_f%d(void);\n", i, j);
		rc |= buf_printf(b, "#ifdef LL_TRACE\nint lt%d_trace(void ***ret);\n#endif\n", i);
	}
	/* Referencing every import keeps each in the import table. */
	rc |= buf_printf(b, "\nvoid (*const ll_refs[])(void) = {\n");
	for (i = 0; i < ctx->base.dlls; i++)
		for (j = 0; j < ctx->base.exports; j++)
			rc |= buf_printf(b, "\tlt%d_f%d,\n", i, j);
	rc |= buf_printf(b, "};\n\n");
	rc |= calls_source(ctx, b);
	rc |= buf_printf(b, "#ifdef LL_TRACE\nstatic void ll_trace(void)\n{\n"
			    "\tvoid **seen;\n\tint n, k;\n\tHMODULE h;\n\n"
			    "\tfputs(\"{\\\"modules\\\":[\", ll_out);\n");
	for (i = 0; i < ctx->base.dlls; i++)
		rc |= buf_printf(b,
				 "\th = GetModuleHandleA(\"lt%d.dll\");\n"
				 "\tn = lt%d_trace(&seen);\n"
				 "\tfprintf(ll_out, \"%s{\\\"dll\\\":\\\"lt%d.dll\\\",\\\"rvas\\\":[\");\n"
				 "\tfor (k = 0; k < n; k++)\n"
				 "\t\tfprintf(ll_out, \"%%s%%lu\", k ? \",\" : \"\", "
				 "(unsigned long)((BYTE *)seen[k] - (BYTE *)h));\n"
				 "\tfputs(\"]}\", ll_out);\n",
				 i, i, i ? "," : "", i);
	rc |= buf_printf(b, "\tfputs(\"]}\\n\", ll_out);\n}\n#endif\n\n");
	rc |= buf_printf(
		b,
		"int main(int argc, char **argv)\n{\n"
		"\tif (argc == 3 && strcmp(argv[1], \"probe\") == 0)\n"
		"\t\treturn ll_probe(argv[2], ll_dlls, %d);\n"
		"#ifdef LL_TRACE\n"
		"\tif (argc == 3 && strcmp(argv[1], \"trace\") == 0) {\n"
		"\t\tif (!(ll_out = fopen(argv[2], \"w\")))\n\t\t\treturn 2;\n"
		"\t\tll_startup();\n%s\t\tll_trace();\n"
		"\t\treturn fclose(ll_out) == 0 ? 0 : 3;\n\t}\n"
		"#endif\n"
		"%s"
		"\t/* The column's timed program: imports resolved, then gone\n"
		"\t * without DLL_PROCESS_DETACH. */\n"
		"\tTerminateProcess(GetCurrentProcess(), 0);\n\treturn (int)(ULONG_PTR)ll_refs[0];\n}\n",
		ctx->base.dlls, trace_rest ? "\t\tll_rest();\n" : "",
		ctx->knobs.main_startup ? "\tll_startup();\n"
		: ctx->base.main_call   ? "\tll_startup();\n\tll_rest();\n"
					: "");
	return rc < 0 ? err_set(LL_ETOOBIG, "Generated program source exceeds %u bytes.", SOURCE_LIMIT) : 0;
}

static const char empty_source[] =
	"/* Generated by loadlab-agent: the timing floor, the same CRT and exit as main.exe. */\n"
	"#include <windows.h>\n\n"
	"int main(void)\n{\n\tTerminateProcess(GetCurrentProcess(), 0);\n\treturn 0;\n}\n";

int pe_generate(struct pe_context *ctx)
{
	static const char *const suffix[3] = {"", "_ordinal", "_trace"};
	struct buf b;
	char name[64];
	int rc = 0;

	buf_init(&b, SOURCE_LIMIT);
	for (int i = 0; i < ctx->base.dlls && rc == 0; i++)
		for (int kind = 0; kind < 3 && rc == 0; kind++) {
			buf_reset(&b);
			snprintf(name, sizeof(name), "lt%d%s.def", i, suffix[kind]);
			if ((rc = dll_def(ctx, i, kind == 1, kind == 2, &b)) == 0)
				rc = family_write_source(&ctx->base, name, &b);
		}
	buf_release(&b);
	if (rc < 0)
		return rc;
	return family_generate(&ctx->base, dll_source, main_source, empty_source, ctx);
}

int pe_generate_order(struct pe_context *ctx)
{
	return family_generate_order(&ctx->base, dll_source, ctx);
}
