/* The result spool (agent/fleet/spool.h): results kept as
 * DATA_DIR/spool/TASK-ATTEMPT.json are handed back oldest task first, each
 * body as stored; a removed one is gone, other files are left alone, and
 * the first non-zero answer of DELIVER stops the walk and is returned. */
#include "check.h"
#include "fleet/spool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct seen {
	int count;
	long long task[8], attempt[8];
	char body[8][64];
	int stop_at; /* answer 5 at this call (1-based); 0: never */
};

static int deliver(void *context, long long task_id, long long attempt, const char *body)
{
	struct seen *s = context;

	if (s->count < 8) {
		s->task[s->count] = task_id;
		s->attempt[s->count] = attempt;
		snprintf(s->body[s->count], sizeof(s->body[0]), "%s", body);
	}
	s->count++;
	return s->count == s->stop_at ? 5 : 0;
}

int main(void)
{
	char dir[] = "/tmp/loadlab-spool-XXXXXX";
	char path[160], command[160];
	struct seen s = {0};
	FILE *f;

	if (!mkdtemp(dir))
		return 1;
	CHECK_EQ_INT(spool_put(dir, 12, 1, "{\"task\":12}"), 0);
	CHECK_EQ_INT(spool_put(dir, 3, 2, "{\"task\":3}"), 0);
	CHECK_EQ_INT(spool_put(dir, 7, 1, "{\"task\":7}"), 0);
	snprintf(path, sizeof(path), "%s/spool/notes.txt", dir);
	if ((f = fopen(path, "w"))) {
		fputs("not a result", f);
		fclose(f);
	}

	CHECK_EQ_INT(spool_each(dir, deliver, &s), 0);
	CHECK_EQ_INT(s.count, 3);
	CHECK_EQ_INT(s.task[0], 3);
	CHECK_EQ_INT(s.attempt[0], 2);
	CHECK_EQ_STR(s.body[0], "{\"task\":3}");
	CHECK_EQ_INT(s.task[1], 7);
	CHECK_EQ_INT(s.task[2], 12);
	CHECK_EQ_STR(s.body[2], "{\"task\":12}");

	/* A removed result is not handed back; the stray file stays. */
	CHECK_EQ_INT(spool_remove(dir, 7, 1), 0);
	memset(&s, 0, sizeof(s));
	CHECK_EQ_INT(spool_each(dir, deliver, &s), 0);
	CHECK_EQ_INT(s.count, 2);
	CHECK_EQ_INT(s.task[0], 3);
	CHECK_EQ_INT(s.task[1], 12);
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (f)
		fclose(f);

	/* DELIVER's first non-zero answer stops the walk. */
	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	CHECK_EQ_INT(spool_each(dir, deliver, &s), 5);
	CHECK_EQ_INT(s.count, 1);

	snprintf(command, sizeof(command), "rm -rf %s", dir);
	if (system(command) != 0)
		return 1;
	return check_finish();
}
