/* The blob cache's trimming rule (agent/blobs/blob_trim.h): a pure
 * function, checked on a table of caches and limits. */
#include "check.h"
#include "blobs/blob_trim.h"

#include <stdio.h>
#include <string.h>

#define MIB (1ll << 20)
#define NO_CAP (1ll << 50)
#define MAX_CASE_ENTRIES 6

struct trim_case {
	const char *what;
	struct blob_trim_entry entries[MAX_CASE_ENTRIES];
	size_t count;
	struct blob_trim_limits limits;
	const char *removed; /* the indexes removed, in order, as digits */
	bool enough;
};

static const struct trim_case cases[] = {
	{"within every limit: nothing goes",
	 {{MIB, 1, false}, {MIB, 2, false}},
	 2,
	 {NO_CAP, 100, 10 * MIB, 8 * MIB},
	 "",
	 true},
	{"no free-space rule (0) and under the cap: nothing goes",
	 {{MIB, 1, false}},
	 1,
	 {NO_CAP, 100, 0, 0},
	 "",
	 true},
	{"least recently used first, until the free space is reached",
	 {{MIB, 5, false}, {MIB, 2, false}, {MIB, 9, false}, {MIB, 1, false}},
	 4,
	 {NO_CAP, 100, 6 * MIB, 8 * MIB},
	 "31",
	 true},
	{"a pinned blob never goes, however old",
	 {{MIB, 1, true}, {MIB, 2, false}, {MIB, 3, false}},
	 3,
	 {NO_CAP, 100, 7 * MIB, 8 * MIB},
	 "1",
	 true},
	{"all pinned: nothing goes, not enough",
	 {{4 * MIB, 1, true}, {4 * MIB, 2, true}},
	 2,
	 {NO_CAP, 100, MIB, 8 * MIB},
	 "",
	 false},
	{"every unpinned blob goes and still not enough",
	 {{MIB, 3, false}, {5 * MIB, 1, true}, {MIB, 2, false}},
	 3,
	 {NO_CAP, 100, 0, 16 * MIB},
	 "20",
	 false},
	{"one big old blob is enough on its own",
	 {{10 * MIB, 1, false}, {MIB, 2, false}, {MIB, 3, false}},
	 3,
	 {NO_CAP, 100, 0, 4 * MIB},
	 "0",
	 true},
	{"the cap alone: the oldest go until the rest fit",
	 {{1000, 4, false}, {1000, 1, false}, {1000, 3, false}, {1000, 2, false}},
	 4,
	 {2500, 100, 0, 0},
	 "13",
	 true},
	{"the cap with the newest pinned: the pinned one stays past the cap",
	 {{3000, 9, true}, {1000, 1, false}},
	 2,
	 {2500, 100, 0, 0},
	 "1",
	 false},
	{"the count of entries: the oldest go",
	 {{1, 3, false}, {1, 1, false}, {1, 2, false}},
	 3,
	 {NO_CAP, 2, 0, 0},
	 "1",
	 true},
	{"cap and free space together: the stricter decides",
	 {{MIB, 1, false}, {MIB, 2, false}, {MIB, 3, false}, {MIB, 4, false}},
	 4,
	 {3 * MIB, 100, 0, 2 * MIB},
	 "01",
	 true},
	{"equal use (blobs adopted from the folder): the lower index first",
	 {{MIB, 0, false}, {MIB, 0, false}, {MIB, 0, false}},
	 3,
	 {NO_CAP, 100, 0, 2 * MIB},
	 "01",
	 true},
	{"an empty cache that cannot reach the free space",
	 {{0, 0, false}},
	 0,
	 {NO_CAP, 100, MIB, 2 * MIB},
	 "",
	 false},
};

static void check_case(const struct trim_case *c)
{
	size_t order[MAX_CASE_ENTRIES];
	struct blob_trim_plan plan;
	char removed[MAX_CASE_ENTRIES + 1] = "";
	long long freed = 0;

	memset(order, 0xff, sizeof(order));
	CHECK_EQ_INT(blob_trim_plan(c->entries, c->count, &c->limits, order, &plan), 0);
	for (size_t k = 0; k < plan.count && k < MAX_CASE_ENTRIES; k++) {
		removed[k] = (char)('0' + order[k]);
		removed[k + 1] = '\0';
		freed += c->entries[order[k]].size;
	}
	if (strcmp(removed, c->removed) != 0 || plan.enough != c->enough)
		fprintf(stderr, "case: %s\n", c->what);
	CHECK_EQ_STR(removed, c->removed);
	CHECK_EQ_INT(plan.enough, c->enough);
	CHECK_EQ_INT(plan.freed_bytes, freed);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i]);
	return check_finish();
}
