/*
 * check.h - the assertions of loadlab's unit tests.
 *
 * CHECK(cond) records a failure with file and line and goes on;
 * CHECK_EQ_INT/CHECK_EQ_STR print both sides. A test's main() ends with
 * `return check_finish();`, which prints "N passed, N failed" and returns
 * non-zero when any check failed, or when no check ran at all (a test that
 * asserted nothing has not passed).
 */
#ifndef LOADLAB_TEST_CHECK_H
#define LOADLAB_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (cond) {                                                                      \
			check_passed++;                                                          \
		} else {                                                                         \
			check_failed++;                                                          \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                                \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                                             \
	do {                                                                                           \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b);                        \
		if (check_a_ == check_b_) {                                                            \
			check_passed++;                                                                \
		} else {                                                                               \
			check_failed++;                                                                \
			fprintf(stderr, "%s:%d: %s == %s: %lld != %lld\n", __FILE__, __LINE__, #a, #b, \
				check_a_, check_b_);                                                   \
		}                                                                                      \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                                                 \
	do {                                                                                               \
		const char *check_a_ = (a), *check_b_ = (b);                                               \
		if (check_a_ && check_b_ && strcmp(check_a_, check_b_) == 0) {                             \
			check_passed++;                                                                    \
		} else {                                                                                   \
			check_failed++;                                                                    \
			fprintf(stderr, "%s:%d: %s == %s: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, #b, \
				check_a_ ? check_a_ : "(null)", check_b_ ? check_b_ : "(null)");           \
		}                                                                                          \
	} while (0)

/* FOLDER/NAME opened with MODE (fopen's), or NULL and a failed check when it
 * cannot be; the caller closes it. */
static inline FILE *check_fopen(const char *folder, const char *name, const char *mode)
{
	char path[4096 + 256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", folder, name);
	f = fopen(path, mode);
	CHECK(f != NULL);
	return f;
}

#ifndef _WIN32
/* What a printing function writes, caught in memory: check_output_open()
 * gives the stream to print to (NULL and a failed check when there is no
 * memory), check_output_text() closes it and returns the text (free()).
 * POSIX only (open_memstream): the unit tests that tests/plat/ builds for
 * Windows do not use it. */
struct check_output {
	FILE *stream;
	char *text;
	size_t len;
};

static inline FILE *check_output_open(struct check_output *o)
{
	o->text = NULL;
	o->stream = open_memstream(&o->text, &o->len);
	CHECK(o->stream != NULL);
	return o->stream;
}

static inline char *check_output_text(struct check_output *o)
{
	if (o->stream)
		fclose(o->stream);
	o->stream = NULL;
	return o->text;
}
#endif /* _WIN32 */

static inline int check_finish(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	if (check_passed + check_failed == 0) {
		fprintf(stderr, "no check ran: the test asserted nothing\n");
		return 1;
	}
	return check_failed ? 1 : 0;
}

#endif
