/*
 * probe.c - the fixed part of the pe family's generated main.c (agent/
 * family/pe/pe_generate.c puts it first and appends the part that depends
 * on the job: the imports, the startup scenario and main()). Embedded in
 * loadlab-agent; compiled with mingw-w64 on the lab machine.
 *
 * `main.exe probe FILE` calls ll_probe(): for the program and each DLL,
 * the preferred base read from its file's headers (PE spec, "Optional
 * Header Standard Fields": ImageBase at offset 28 in PE32, 24 in PE32+),
 * the actual base, and for every import of the program the IAT value next
 * to what GetProcAddress gives, as JSON (agent/family/pe/pe_verify.c reads
 * it). ll_out is also where the trace build writes (the generated part).
 */
#include <windows.h>
#include <stdio.h>
#include <string.h>

static FILE *ll_out;

static void ll_hex(unsigned long long v)
{
	char t[24];
	int n = 0;
	do {
		t[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	fputs("\"0x", ll_out);
	while (n)
		fputc(t[--n], ll_out);
	fputc('"', ll_out);
}

static unsigned long long ll_file_base(HMODULE h, unsigned long *stamp)
{
	char path[MAX_PATH + 1];
	unsigned char hdr[4096];
	DWORD n = GetModuleFileNameA(h, path, MAX_PATH), lfanew;
	unsigned long long base = 0;
	size_t got;
	WORD magic;
	FILE *f;

	if (n == 0 || n >= MAX_PATH || !(f = fopen(path, "rb")))
		return 0;
	got = fread(hdr, 1, sizeof(hdr), f);
	fclose(f);
	if (got < 64)
		return 0;
	memcpy(&lfanew, hdr + 0x3c, 4);
	if (lfanew > got - 24 - 32)
		return 0;
	memcpy(stamp, hdr + lfanew + 8, 4);
	memcpy(&magic, hdr + lfanew + 24, 2);
	if (magic == 0x20b)
		memcpy(&base, hdr + lfanew + 24 + 24, 8);
	else
		memcpy(&base, hdr + lfanew + 24 + 28, 4);
	return base;
}

static void ll_module(const char *name, HMODULE h, int comma)
{
	unsigned long stamp = 0;
	unsigned long long pref = h ? ll_file_base(h, &stamp) : 0;
	fprintf(ll_out, "%s{\"name\":\"%s\",\"loaded\":%s,\"preferred\":", comma ? "," : "", name,
		h ? "true" : "false");
	ll_hex(pref);
	fputs(",\"actual\":", ll_out);
	ll_hex((unsigned long long)(ULONG_PTR)h);
	fprintf(ll_out, ",\"relocated\":%s,\"file_timestamp\":%lu}",
		(h && pref != (unsigned long long)(ULONG_PTR)h) ? "true" : "false", stamp);
}

static void ll_imports(void)
{
	BYTE *base = (BYTE *)GetModuleHandleA(NULL);
	IMAGE_NT_HEADERS *nt = (IMAGE_NT_HEADERS *)(base + ((IMAGE_DOS_HEADER *)base)->e_lfanew);
	IMAGE_DATA_DIRECTORY *d = &nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_IMPORT];
	IMAGE_IMPORT_DESCRIPTOR *imp = (IMAGE_IMPORT_DESCRIPTOR *)(base + d->VirtualAddress);
	int first = 1;

	fputs("\"imports\":[", ll_out);
	for (; d->VirtualAddress && imp->Name; imp++) {
		const char *dll = (const char *)(base + imp->Name);
		HMODULE h = GetModuleHandleA(dll);
		IMAGE_THUNK_DATA *names =
			(IMAGE_THUNK_DATA *)(base + (imp->OriginalFirstThunk ? imp->OriginalFirstThunk
									     : imp->FirstThunk));
		IMAGE_THUNK_DATA *iat = (IMAGE_THUNK_DATA *)(base + imp->FirstThunk);

		for (; names->u1.AddressOfData; names++, iat++) {
			FARPROC p;
			fprintf(ll_out, "%s{\"dll\":\"%s\",", first ? "" : ",", dll);
			first = 0;
			if (IMAGE_SNAP_BY_ORDINAL(names->u1.Ordinal)) {
				WORD ord = (WORD)IMAGE_ORDINAL(names->u1.Ordinal);
				p = h ? GetProcAddress(h, MAKEINTRESOURCEA(ord)) : NULL;
				fprintf(ll_out, "\"ordinal\":%u,", (unsigned)ord);
			} else {
				IMAGE_IMPORT_BY_NAME *n =
					(IMAGE_IMPORT_BY_NAME *)(base + names->u1.AddressOfData);
				p = h ? GetProcAddress(h, (const char *)n->Name) : NULL;
				fprintf(ll_out, "\"name\":\"%s\",", (const char *)n->Name);
			}
			fputs("\"iat\":", ll_out);
			ll_hex((unsigned long long)(ULONG_PTR)iat->u1.Function);
			fputs(",\"resolved\":", ll_out);
			ll_hex((unsigned long long)(ULONG_PTR)p);
			fputc('}', ll_out);
		}
	}
	fputc(']', ll_out);
}

/* Writes the probe report for main.exe and DLLS[0..COUNT) to PATH: 0, or
 * 2 when PATH cannot be created, 3 when it cannot be written. */
int ll_probe(const char *path, const char *const *dlls, int count)
{
	int i;

	if (!(ll_out = fopen(path, "w")))
		return 2;
	fputs("{\"pointer_bits\":", ll_out);
	fprintf(ll_out, "%u,\"modules\":[", (unsigned)(8 * sizeof(void *)));
	ll_module("main.exe", GetModuleHandleA(NULL), 0);
	for (i = 0; i < count; i++)
		ll_module(dlls[i], GetModuleHandleA(dlls[i]), 1);
	fputs("],", ll_out);
	ll_imports();
	fputs("}\n", ll_out);
	return fclose(ll_out) == 0 ? 0 : 3;
}
