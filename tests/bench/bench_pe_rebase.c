/*
 * bench_pe_rebase - rebasing a copy of every DLL in a folder against
 * copying the same files, measured in one run.
 *
 *	bench_pe_rebase [DIR] [ROUNDS]
 *
 * DIR defaults to Wine's x86_64 DLLs. Each round copies every file (read
 * whole, write whole) into one scratch folder and rebases every file
 * (pe_image_open, pe_rebase to 256 MiB above its base, pe_image_save) into
 * another; the two alternate which goes first, and each starts after a
 * sync() so that neither pays for the other's write-back. The fastest
 * round of each is reported, with the ratio rebase / copy. The goal
 * (issue 3) is a ratio of at most 2.
 */
#include "loadlab/err.h"
#include "loadlab/pe.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int copy_file(const char *from, const char *to, size_t *ret_size)
{
	FILE *in = fopen(from, "rb"), *out = NULL;
	char *data = NULL;
	long n;
	int rc = -1;

	if (!in || fseek(in, 0, SEEK_END) || (n = ftell(in)) < 0 || fseek(in, 0, SEEK_SET))
		goto done;
	data = malloc(n ? (size_t)n : 1);
	if (!data || fread(data, 1, (size_t)n, in) != (size_t)n)
		goto done;
	out = fopen(to, "wb");
	if (!out || fwrite(data, 1, (size_t)n, out) != (size_t)n)
		goto done;
	*ret_size = (size_t)n;
	rc = 0;
done:
	if (out && fclose(out))
		rc = -1;
	if (in)
		fclose(in);
	free(data);
	return rc;
}

static int rebase_file(const char *from, const char *to, size_t *ret_relocs)
{
	struct pe_image *img;
	struct pe_relocs rel;
	int rc = pe_image_open(from, &img);

	if (rc < 0)
		return rc;
	if (ret_relocs && pe_relocs_read(img, &rel) == 0) {
		*ret_relocs += rel.count;
		pe_relocs_release(&rel);
	}
	rc = pe_rebase(img, img->image_base + 0x10000000, 1);
	if (rc == 0)
		rc = pe_image_save(img, to);
	pe_image_free(img);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows";
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	char scratch[] = "/tmp/bench_pe_rebase.XXXXXX", from[4096], to[4096], cmd[256];
	char **names = NULL;
	size_t count = 0, bytes = 0, relocs = 0, skipped = 0;
	double best_copy = 1e30, best_rebase = 1e30;
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d || !mkdtemp(scratch)) {
		fprintf(stderr, "bench_pe_rebase: cannot open %s or make a scratch folder\n", dir);
		return 2;
	}
	/* The DLLs the rebaser accepts (the same set is copied). */
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char **grown;

		if (len < 5 || strcmp(e->d_name + len - 4, ".dll") != 0)
			continue;
		snprintf(from, sizeof(from), "%s/%s", dir, e->d_name);
		snprintf(to, sizeof(to), "%s/%s", scratch, e->d_name);
		if (rebase_file(from, to, &relocs) < 0) {
			skipped++;
			continue;
		}
		grown = realloc(names, (count + 1) * sizeof(*names));
		if (!grown || !(grown[count] = strdup(e->d_name)))
			return 2;
		names = grown;
		count++;
	}
	closedir(d);
	for (int r = 0; r < rounds; r++) {
		for (int phase = 0; phase < 2; phase++) {
			bool copying = (phase + r) % 2 == 0;
			double t0;
			size_t total = 0;

			sync();
			t0 = now();
			for (size_t i = 0; i < count; i++) {
				size_t n = 0;

				snprintf(from, sizeof(from), "%s/%s", dir, names[i]);
				snprintf(to, sizeof(to), "%s/%s.%s", scratch, names[i],
					 copying ? "copy" : "rebased");
				if (copying ? copy_file(from, to, &n) < 0 : rebase_file(from, to, NULL) < 0) {
					fprintf(stderr, "bench_pe_rebase: %s failed\n", from);
					return 2;
				}
				total += n;
			}
			t0 = now() - t0;
			if (copying) {
				bytes = total;
				if (t0 < best_copy)
					best_copy = t0;
			} else if (t0 < best_rebase) {
				best_rebase = t0;
			}
		}
	}
	printf("%zu DLLs (%zu skipped), %.1f MiB, %zu relocations, best of %d rounds\n", count, skipped,
	       bytes / 1048576.0, relocs, rounds);
	printf("copy   %8.1f ms\nrebase %8.1f ms\nratio rebase/copy %.2f\n", best_copy * 1e3,
	       best_rebase * 1e3, best_rebase / best_copy);
	printf("BENCH pe_rebase_vs_copy %.1f ms %.1f %.3f -\n", best_rebase * 1e3, best_copy * 1e3,
	       best_rebase / best_copy);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", scratch);
	if (system(cmd) != 0)
		return 2;
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
	return 0;
}
