/* Heavy answers computed once per job state, on workers: see
 * report_cache.h. */
#include "report_cache.h"

#include "loadlab/array.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum entry_state { ENTRY_QUEUED, ENTRY_RUNNING, ENTRY_DONE };

struct waiter {
	void (*wake)(void *);
	void *arg;
};

/* One answer, kept or in the making. Its REFS: the table's while linked,
 * each ticket's, the worker's while it computes; freed at 0. */
struct report_ticket {
	struct report_cache *cache;
	char prefix[REPORT_CACHE_MAX_KEY / 2], revision[REPORT_CACHE_MAX_KEY / 2];
	bool keep, linked;
	enum entry_state state;
	report_compute_fn compute;
	void *args;
	int refs;
	struct waiter *waiters;
	size_t waiter_count, waiter_room;
	/* the answer, once DONE */
	int rc;
	char *message;
	struct report_text answer;
	/* the table: most recently used first; the queue */
	struct report_ticket *prev, *next, *next_queued;
};

struct report_cache {
	struct store *store;
	pthread_mutex_t lock;
	pthread_cond_t work;
	bool stopping;
	pthread_t workers[REPORT_CACHE_WORKERS];
	int started;
	struct report_ticket *head, *tail;             /* every linked entry */
	struct report_ticket *queue_head, *queue_tail; /* QUEUED ones, oldest first */
	struct report_cache_stats stats;
};

static void entry_free(struct report_ticket *e)
{
	free(e->args);
	free(e->waiters);
	free(e->message);
	free(e->answer.text);
	free(e);
}

/* Drops one reference under the lock; the entry is freed at 0. */
static void entry_unref(struct report_ticket *e)
{
	if (--e->refs == 0)
		entry_free(e);
}

static void unlink_entry(struct report_cache *c, struct report_ticket *e)
{
	if (!e->linked)
		return;
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
	e->linked = false;
	if (e->state == ENTRY_DONE && e->keep) {
		c->stats.entries--;
		c->stats.bytes -= (long long)e->answer.len;
	}
	entry_unref(e);
}

static void link_first(struct report_cache *c, struct report_ticket *e)
{
	e->prev = NULL;
	e->next = c->head;
	if (c->head)
		c->head->prev = e;
	else
		c->tail = e;
	c->head = e;
}

/* Linked E made the table's first. */
static void move_first(struct report_cache *c, struct report_ticket *e)
{
	if (e == c->head)
		return;
	e->prev->next = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	link_first(c, e);
}

/* Kept answers past the limits, least recently used first (entries in
 * the making are not counted and not dropped). */
static void evict(struct report_cache *c)
{
	struct report_ticket *e = c->tail, *prev;

	for (; e && (c->stats.bytes > (long long)REPORT_CACHE_MAX_BYTES ||
		     c->stats.entries > REPORT_CACHE_MAX_ENTRIES);
	     e = prev) {
		prev = e->prev;
		if (e->state == ENTRY_DONE) {
			unlink_entry(c, e);
			c->stats.evicted++;
		}
	}
}

/* A computation ended: its answer kept (or not), its waiters woken. */
static void finish(struct report_cache *c, struct report_ticket *e, int rc, const char *message,
		   struct report_text *answer)
{
	struct waiter *waiters;
	size_t count;

	pthread_mutex_lock(&c->lock);
	e->rc = rc;
	e->message = rc < 0 && message ? strdup(message) : NULL;
	if (rc == 0)
		e->answer = *answer;
	e->state = ENTRY_DONE;
	c->stats.computing--;
	if (rc < 0 || !e->keep || e->answer.len > REPORT_CACHE_MAX_ENTRY_BYTES) {
		e->keep = false;
		unlink_entry(c, e);
	} else {
		/* the answers of the same prefix at other revisions are stale */
		for (struct report_ticket *o = c->head, *next; o; o = next) {
			next = o->next;
			if (o != e && o->state == ENTRY_DONE && strcmp(o->prefix, e->prefix) == 0) {
				unlink_entry(c, o);
				c->stats.evicted++;
			}
		}
		move_first(c, e); /* the most recently used */
		c->stats.entries++;
		c->stats.bytes += (long long)e->answer.len;
		evict(c);
	}
	waiters = e->waiters;
	count = e->waiter_count;
	e->waiters = NULL;
	e->waiter_count = e->waiter_room = 0;
	entry_unref(e); /* the worker's */
	pthread_mutex_unlock(&c->lock);
	/* Each waiter holds its ticket: E lives on. A wake may resume its
	 * request at once, whose handler then takes the lock. */
	for (size_t i = 0; i < count; i++)
		waiters[i].wake(waiters[i].arg);
	free(waiters);
}

static void *worker_main(void *arg)
{
	struct report_cache *c = arg;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct report_ticket *e;
		struct report_text answer = {0};
		int rc;
		while (!c->stopping && !c->queue_head)
			pthread_cond_wait(&c->work, &c->lock);
		if (!c->queue_head)
			break; /* stopping, nothing left */
		e = c->queue_head;
		c->queue_head = e->next_queued;
		if (!c->queue_head)
			c->queue_tail = NULL;
		e->state = ENTRY_RUNNING;
		pthread_mutex_unlock(&c->lock);
		err_clear();
		rc = e->compute(c->store, e->args, &answer);
		finish(c, e, rc, rc < 0 ? err_message(rc) : NULL, &answer);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int report_cache_new(struct store *store, struct report_cache **ret_cache)
{
	struct report_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return LL_ENOMEM;
	c->store = store;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->work, NULL);
	for (; c->started < REPORT_CACHE_WORKERS; c->started++)
		if (pthread_create(&c->workers[c->started], NULL, worker_main, c) != 0)
			break;
	if (!c->started) {
		report_cache_free(c);
		return err_set(LL_ENOMEM, "The report workers could not be started.");
	}
	*ret_cache = c;
	return 0;
}

void report_cache_free(struct report_cache *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < c->started; i++)
		pthread_join(c->workers[i], NULL);
	while (c->head)
		unlink_entry(c, c->head);
	pthread_cond_destroy(&c->work);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static struct report_ticket *find(struct report_cache *c, const char *prefix, const char *revision)
{
	for (struct report_ticket *e = c->head; e; e = e->next)
		if (strcmp(e->prefix, prefix) == 0 && strcmp(e->revision, revision) == 0)
			return e;
	return NULL;
}

static int copy_answer(const struct report_text *from, struct report_text *to)
{
	char *text = malloc(from->len + 1);

	if (!text)
		return LL_ENOMEM;
	memcpy(text, from->text, from->len);
	text[from->len] = '\0';
	*to = (struct report_text){text, from->len, from->content_type};
	return 0;
}

/* Adds a waiter to E (under the lock); LL_ENOMEM. */
static int add_waiter(struct report_ticket *e, void (*wake)(void *), void *arg)
{
	struct waiter *w = array_grow(e->waiters, e->waiter_count, &e->waiter_room, sizeof(*w), 4);

	if (!w)
		return LL_ENOMEM;
	e->waiters = w;
	e->waiters[e->waiter_count++] = (struct waiter){wake, arg};
	e->refs++;
	return 0;
}

int report_cache_get(struct report_cache *c, const char *prefix, const char *revision, bool keep,
		     report_compute_fn compute, const void *args, size_t args_size, void (*wake)(void *),
		     void *wake_arg, struct report_text *ret_text, struct report_ticket **ret_ticket)
{
	struct report_ticket *e;
	int rc;

	if (strlen(prefix) >= sizeof(e->prefix) || strlen(revision) >= sizeof(e->revision))
		return err_set(LL_EINVAL, "A report's cache key is longer than %d bytes.",
			       REPORT_CACHE_MAX_KEY / 2 - 1);
	pthread_mutex_lock(&c->lock);
	if ((e = find(c, prefix, revision)) && e->state == ENTRY_DONE) {
		move_first(c, e); /* kept: made the most recently used */
		if ((rc = copy_answer(&e->answer, ret_text)) == 0) {
			c->stats.hits++;
			rc = REPORT_CACHE_HIT;
		}
		goto out;
	}
	if (e) {
		/* being computed: wait for it */
		if ((rc = add_waiter(e, wake, wake_arg)) == 0) {
			c->stats.joined++;
			*ret_ticket = e;
			rc = REPORT_CACHE_PENDING;
		}
		goto out;
	}
	if (c->stats.computing >= REPORT_CACHE_MAX_QUEUED) {
		c->stats.refused++;
		rc = REPORT_CACHE_BUSY;
		goto out;
	}
	if (!(e = calloc(1, sizeof(*e))) || !(e->args = malloc(args_size ? args_size : 1)) ||
	    add_waiter(e, wake, wake_arg) < 0) {
		if (e)
			entry_free(e);
		rc = LL_ENOMEM;
		goto out;
	}
	memcpy(e->args, args, args_size);
	e->cache = c;
	snprintf(e->prefix, sizeof(e->prefix), "%s", prefix);
	snprintf(e->revision, sizeof(e->revision), "%s", revision);
	e->keep = keep;
	e->compute = compute;
	e->state = ENTRY_QUEUED;
	e->refs += 2; /* the table's, the worker's */
	e->linked = true;
	link_first(c, e);
	if (c->queue_tail)
		c->queue_tail->next_queued = e;
	else
		c->queue_head = e;
	c->queue_tail = e;
	c->stats.computed++;
	c->stats.computing++;
	pthread_cond_signal(&c->work);
	*ret_ticket = e;
	rc = REPORT_CACHE_PENDING;
out:
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int report_ticket_answer(struct report_ticket *t, struct report_text *ret_text)
{
	struct report_cache *c = t->cache;
	int rc;

	pthread_mutex_lock(&c->lock);
	rc = t->rc < 0 ? err_set(t->rc, "%s", t->message ? t->message : err_name(t->rc))
		       : copy_answer(&t->answer, ret_text);
	entry_unref(t);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void report_ticket_release(struct report_ticket *t)
{
	struct report_cache *c;

	if (!t)
		return;
	c = t->cache;
	pthread_mutex_lock(&c->lock);
	entry_unref(t);
	pthread_mutex_unlock(&c->lock);
}

void report_cache_stats(struct report_cache *c, struct report_cache_stats *ret)
{
	pthread_mutex_lock(&c->lock);
	*ret = c->stats;
	pthread_mutex_unlock(&c->lock);
}

int report_cache_job_revision(struct store *store, long long job_id, char *out, size_t size)
{
	cJSON *job = NULL;
	char *text;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a, 64 bits */
	int rc;

	if ((rc = store_job_get(store, job_id, &job)) < 0)
		return rc;
	/* The job as GET /api/v1/jobs/{id} gives it: its state, spec and
	 * updated_at, every task's state, attempt and latest result id. */
	text = cJSON_PrintUnformatted(job);
	cJSON_Delete(job);
	if (!text)
		return LL_ENOMEM;
	for (const char *p = text; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	free(text);
	snprintf(out, size, "%016llx", (unsigned long long)h);
	return 0;
}
