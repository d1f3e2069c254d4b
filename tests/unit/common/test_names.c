/* names.c: a name's index, the nearest known name for a typo, and the
 * message that suggests it. */
#include "check.h"

#include "loadlab/err.h"
#include "loadlab/names.h"

#include <stdbool.h>

struct preset {
	const char *name;
	int knob;
};

static const struct preset presets[] = {
	{"default", 0}, {"rebase", 1}, {"bind", 2}, {"ordinal", 3}, {"ordinal+rebase", 4}, {"no-rebase", 5},
};
#define PRESETS (sizeof(presets) / sizeof(presets[0]))

static const char *near(const char *word)
{
	return names_nearest(word, &presets[0].name, PRESETS, sizeof(presets[0]));
}

int main(void)
{
	static const char *const families[] = {"pe", "elf", "program"};
	char long_word[NAMES_MAX_LEN + 2];

	/* One edit of each kind, a swap, and case. */
	CHECK_EQ_STR(near("rebse"), "rebase");    /* deletion */
	CHECK_EQ_STR(near("rebasse"), "rebase");  /* insertion */
	CHECK_EQ_STR(near("rebaze"), "rebase");   /* substitution */
	CHECK_EQ_STR(near("erbase"), "rebase");   /* swap of neighbours */
	CHECK_EQ_STR(near("DEFAULT"), "default"); /* case ignored */
	CHECK_EQ_STR(near("ordnial+rebse"), "ordinal+rebase");
	/* Short names take one edit only; far words get nothing. */
	CHECK_EQ_STR(near("bnd"), "bind");
	CHECK(near("bx") == NULL);
	CHECK(near("reorder") == NULL);
	CHECK(near("") == NULL);
	/* A plain array of strings. */
	CHECK_EQ_STR(names_nearest("pf", families, 3, sizeof(families[0])), "pe");
	CHECK_EQ_STR(names_nearest("elx", families, 3, sizeof(families[0])), "elf");
	/* Two names equally near: no guess. */
	{
		static const char *const twins[] = {"abcd", "abce"};
		CHECK(names_nearest("abcf", twins, 2, sizeof(twins[0])) == NULL);
	}
	/* Longer than the bound: never compared. */
	memset(long_word, 'a', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = '\0';
	CHECK(near(long_word) == NULL);

	/* The exact lookup: an index, or the count for a typo or a case change. */
	CHECK_EQ_INT(names_find("bind", &presets[0].name, PRESETS, sizeof(presets[0])), 2);
	CHECK_EQ_INT(names_find("no-rebase", &presets[0].name, PRESETS, sizeof(presets[0])), 5);
	CHECK_EQ_INT(names_find("rebse", &presets[0].name, PRESETS, sizeof(presets[0])), PRESETS);
	CHECK_EQ_INT(names_find("Default", &presets[0].name, PRESETS, sizeof(presets[0])), PRESETS);
	CHECK_EQ_INT(names_find("program", families, 3, sizeof(families[0])), 2);
	CHECK_EQ_INT(names_find("pe", families, 0, sizeof(families[0])), 0);

	/* The message: the suggestion, then every name in order. */
	CHECK_EQ_INT(names_unknown("pe variant", "rebse", &presets[0].name, PRESETS, sizeof(presets[0])),
		     LL_EINVAL);
	CHECK_EQ_STR(err_message(LL_EINVAL),
		     "Unknown pe variant 'rebse' (did you mean 'rebase'? known: default, rebase, "
		     "bind, ordinal, ordinal+rebase, no-rebase).");
	CHECK_EQ_INT(names_unknown("family", "rust", families, 3, sizeof(families[0])), LL_EINVAL);
	CHECK_EQ_STR(err_message(LL_EINVAL), "Unknown family 'rust' (known: pe, elf, program).");
	CHECK_EQ_INT(names_unknown("family", long_word, families, 3, sizeof(families[0])), LL_EINVAL);
	CHECK(strlen(err_message(LL_EINVAL)) < 200);
	return check_finish();
}
