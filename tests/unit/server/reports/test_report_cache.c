/* The report cache (report_cache.h) on its own, with computations the test
 * makes and holds: a kept answer is a hit, identical requests while one
 * computes wait for it (one computation), past REPORT_CACHE_MAX_QUEUED
 * the next is refused, an error is given to every waiter and never kept,
 * a new revision drops the old answer, and the caps on bytes, answer size
 * and entries hold, least recently used first. */
#include "reports/report_cache.h"
#include "check.h"

#include "loadlab/err.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a computation makes: SIZE bytes of FILL, or the error RC. */
struct args {
	size_t size;
	char fill;
	int rc;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int computations, wakes;
static bool held; /* computations wait while true */

static int compute(struct store *store, const void *arg, struct report_text *ret)
{
	const struct args *a = arg;
	char *text;

	(void)store;
	pthread_mutex_lock(&lock);
	computations++;
	pthread_cond_broadcast(&changed);
	while (held)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
	if (a->rc < 0)
		return err_set(a->rc, "computation refused (%zu)", a->size);
	if (!(text = malloc(a->size + 1)))
		return LL_ENOMEM;
	memset(text, a->fill, a->size);
	text[a->size] = '\0';
	*ret = (struct report_text){text, a->size, "text/plain"};
	return 0;
}

static void wake(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	wakes++;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

static void wait_wakes(int count)
{
	pthread_mutex_lock(&lock);
	while (wakes < count)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

static void wait_computations(int count)
{
	pthread_mutex_lock(&lock);
	while (computations < count)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

static void hold(bool on)
{
	pthread_mutex_lock(&lock);
	held = on;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

/* One request of PREFIX at REVISION, waited for: its outcome (HIT when
 * answered, from the cache or computed), the answer's length in *RET_LEN. */
static int ask(struct report_cache *c, const char *prefix, const char *revision, bool keep, struct args a,
	       size_t *ret_len)
{
	struct report_text text = {0};
	struct report_ticket *ticket = NULL;
	int before, rc;

	pthread_mutex_lock(&lock);
	before = wakes;
	pthread_mutex_unlock(&lock);
	rc = report_cache_get(c, prefix, revision, keep, compute, &a, sizeof(a), wake, NULL, &text, &ticket);
	if (rc == REPORT_CACHE_PENDING) {
		wait_wakes(before + 1);
		rc = report_ticket_answer(ticket, &text);
		if (rc == 0)
			rc = REPORT_CACHE_PENDING; /* computed */
	}
	if (ret_len)
		*ret_len = text.len;
	free(text.text);
	return rc;
}

static struct report_cache_stats stats_of(struct report_cache *c)
{
	struct report_cache_stats s;

	report_cache_stats(c, &s);
	return s;
}

static void test_hit_and_revision(struct report_cache *c)
{
	size_t len = 0;

	CHECK_EQ_INT(ask(c, "ab job=1", "r1", true, (struct args){100, 'a', 0}, &len), REPORT_CACHE_PENDING);
	CHECK_EQ_INT(len, 100);
	CHECK_EQ_INT(ask(c, "ab job=1", "r1", true, (struct args){100, 'a', 0}, &len), REPORT_CACHE_HIT);
	CHECK_EQ_INT(len, 100);
	CHECK_EQ_INT(stats_of(c).hits, 1);
	CHECK_EQ_INT(stats_of(c).entries, 1);
	/* the job changed: computed again, the old answer dropped */
	CHECK_EQ_INT(ask(c, "ab job=1", "r2", true, (struct args){200, 'b', 0}, &len), REPORT_CACHE_PENDING);
	CHECK_EQ_INT(len, 200);
	CHECK_EQ_INT(stats_of(c).entries, 1);
	CHECK_EQ_INT(stats_of(c).bytes, 200);
	CHECK_EQ_INT(stats_of(c).evicted, 1);
	/* not kept: computed each time */
	CHECK_EQ_INT(ask(c, "compare 1 2", "r", false, (struct args){10, 'c', 0}, NULL),
		     REPORT_CACHE_PENDING);
	CHECK_EQ_INT(ask(c, "compare 1 2", "r", false, (struct args){10, 'c', 0}, NULL),
		     REPORT_CACHE_PENDING);
	CHECK_EQ_INT(stats_of(c).entries, 1);
	/* an error: given, never kept */
	CHECK_EQ_INT(ask(c, "ab job=9", "r", true, (struct args){7, 'x', LL_EINVAL}, NULL), LL_EINVAL);
	CHECK_EQ_STR(err_message(LL_EINVAL), "computation refused (7)");
	CHECK_EQ_INT(ask(c, "ab job=9", "r", true, (struct args){7, 'x', LL_EINVAL}, NULL), LL_EINVAL);
	CHECK_EQ_INT(stats_of(c).entries, 1);
	/* a key too long */
	char prefix[REPORT_CACHE_MAX_KEY];
	memset(prefix, 'k', sizeof(prefix) - 1);
	prefix[sizeof(prefix) - 1] = '\0';
	CHECK_EQ_INT(ask(c, prefix, "r", true, (struct args){1, 'a', 0}, NULL), LL_EINVAL);
}

static void test_single_flight_and_busy(struct report_cache *c)
{
	struct report_text text[REPORT_CACHE_MAX_QUEUED + 4] = {0};
	struct report_ticket *tickets[REPORT_CACHE_MAX_QUEUED + 4] = {0};
	struct args a = {1000, 's', 0};
	struct report_cache_stats before = stats_of(c);
	int base_wakes, base_computations, rc;

	pthread_mutex_lock(&lock);
	base_wakes = wakes;
	base_computations = computations;
	pthread_mutex_unlock(&lock);
	hold(true);
	/* three identical requests: one computation */
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(report_cache_get(c, "report job=2", "r", true, compute, &a, sizeof(a), wake,
					      NULL, &text[i], &tickets[i]),
			     REPORT_CACHE_PENDING);
	/* distinct ones up to the limit, then refused */
	for (int i = 3; i < REPORT_CACHE_MAX_QUEUED + 2; i++) {
		char prefix[32];
		snprintf(prefix, sizeof(prefix), "report job=%d", 100 + i);
		CHECK_EQ_INT(report_cache_get(c, prefix, "r", true, compute, &a, sizeof(a), wake, NULL,
					      &text[i], &tickets[i]),
			     REPORT_CACHE_PENDING);
	}
	CHECK_EQ_INT(stats_of(c).computing, REPORT_CACHE_MAX_QUEUED);
	rc = report_cache_get(c, "report job=99", "r", true, compute, &a, sizeof(a), wake, NULL, &text[11],
			      &tickets[11]);
	CHECK_EQ_INT(rc, REPORT_CACHE_BUSY);
	CHECK_EQ_INT(stats_of(c).refused, before.refused + 1);
	/* but joining one in the making is never refused */
	CHECK_EQ_INT(report_cache_get(c, "report job=2", "r", true, compute, &a, sizeof(a), wake, NULL,
				      &text[10], &tickets[10]),
		     REPORT_CACHE_PENDING);
	wait_computations(base_computations + REPORT_CACHE_WORKERS);
	hold(false);
	wait_wakes(base_wakes + REPORT_CACHE_MAX_QUEUED + 3);
	for (int i = 0; i < REPORT_CACHE_MAX_QUEUED + 4; i++) {
		if (!tickets[i])
			continue;
		CHECK_EQ_INT(report_ticket_answer(tickets[i], &text[i]), 0);
		CHECK_EQ_INT(text[i].len, 1000);
		CHECK(text[i].text && text[i].text[999] == 's' && text[i].text[1000] == '\0');
		free(text[i].text);
	}
	pthread_mutex_lock(&lock);
	CHECK_EQ_INT(computations - base_computations, REPORT_CACHE_MAX_QUEUED);
	pthread_mutex_unlock(&lock);
	CHECK_EQ_INT(stats_of(c).joined, before.joined + 3);
	CHECK_EQ_INT(stats_of(c).computing, 0);
	CHECK_EQ_INT(ask(c, "report job=2", "r", true, a, NULL), REPORT_CACHE_HIT);
}

static void test_caps(struct report_cache *c)
{
	const size_t big = REPORT_CACHE_MAX_ENTRY_BYTES - 1024; /* four fit in REPORT_CACHE_MAX_BYTES */
	size_t len;

	/* too large to keep: answered, not kept */
	CHECK_EQ_INT(ask(c, "huge", "r", true, (struct args){REPORT_CACHE_MAX_ENTRY_BYTES + 1, 'h', 0}, &len),
		     REPORT_CACHE_PENDING);
	CHECK_EQ_INT(len, REPORT_CACHE_MAX_ENTRY_BYTES + 1);
	CHECK_EQ_INT(ask(c, "huge", "r", true, (struct args){1, 'h', 0}, NULL), REPORT_CACHE_PENDING);
	for (int i = 0; i < 4; i++) {
		char prefix[16];
		snprintf(prefix, sizeof(prefix), "big %d", i);
		CHECK_EQ_INT(ask(c, prefix, "r", true, (struct args){big, 'b', 0}, NULL),
			     REPORT_CACHE_PENDING);
	}
	CHECK_EQ_INT(ask(c, "big 0", "r", true, (struct args){big, 'b', 0}, NULL), REPORT_CACHE_HIT);
	/* a fifth: the least recently used (big 1, not big 0) goes */
	CHECK_EQ_INT(ask(c, "big 4", "r", true, (struct args){big, 'b', 0}, NULL), REPORT_CACHE_PENDING);
	CHECK(stats_of(c).bytes <= (long long)REPORT_CACHE_MAX_BYTES);
	CHECK_EQ_INT(ask(c, "big 0", "r", true, (struct args){big, 'b', 0}, NULL), REPORT_CACHE_HIT);
	CHECK_EQ_INT(ask(c, "big 1", "r", true, (struct args){big, 'b', 0}, NULL), REPORT_CACHE_PENDING);
	/* the count of answers */
	for (int i = 0; i < REPORT_CACHE_MAX_ENTRIES + 10; i++) {
		char prefix[16];
		snprintf(prefix, sizeof(prefix), "small %d", i);
		ask(c, prefix, "r", true, (struct args){10, 's', 0}, NULL);
	}
	CHECK_EQ_INT(stats_of(c).entries, REPORT_CACHE_MAX_ENTRIES);
	CHECK(stats_of(c).bytes <= (long long)REPORT_CACHE_MAX_BYTES);
}

int main(void)
{
	struct report_cache *c = NULL;

	CHECK_EQ_INT(report_cache_new(NULL, &c), 0);
	if (!c)
		return check_finish();
	test_hit_and_revision(c);
	test_single_flight_and_busy(c);
	test_caps(c);
	report_cache_free(c);
	report_cache_free(NULL);
	return check_finish();
}
