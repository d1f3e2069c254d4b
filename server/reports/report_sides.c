/* The two sides of a comparison: see report_sides.h. */
#include "report_sides.h"
#include "summary.h"

#include "loadlab/array.h"
#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* A copy of LEN bytes of DATA followed by MORE_LEN bytes of MORE in
 * SIDE's blocks; NULL when out of memory. */
static void *block_copy(struct compare_side *side, const void *data, size_t len, const void *more,
			size_t more_len)
{
	struct block *b = side->blocks;
	size_t need = (len + more_len + 7) & ~(size_t)7, head = (sizeof(*b) + 7) & ~(size_t)7;
	void *at;

	if (!b || b->size - b->used < need) {
		size_t size = need + head > BLOCK_SIZE ? need + head : BLOCK_SIZE;
		void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED)
			return NULL;
		madvise(map, size, MADV_HUGEPAGE); /* a hint: without it, 4 KiB pages */
		b = map;
		*b = (struct block){.next = side->blocks, .size = size, .used = head};
		side->blocks = b;
	}
	at = (char *)b + b->used;
	memcpy(at, data, len);
	memcpy((char *)at + len, more, more_len);
	b->used += need;
	return at;
}

static size_t *slot_of(struct compare_side *side, const char *key)
{
	size_t i = (size_t)stats_seed_of(key) & (side->capacity - 1);

	while (side->index[i] && strcmp(side->tasks[side->index[i] - 1].key, key) != 0)
		i = (i + 1) & (side->capacity - 1);
	return &side->index[i];
}

struct side_task *report_side_find(struct compare_side *side, const char *key)
{
	size_t at = side->index ? *slot_of(side, key) : 0;

	return at ? &side->tasks[at - 1] : NULL;
}

/* Room for one more task; LL_ENOMEM. */
static int side_grow(struct compare_side *side)
{
	struct side_task *tasks = array_grow(side->tasks, side->count, &side->room, sizeof(*tasks), 64);

	if (!tasks)
		return LL_ENOMEM;
	side->tasks = tasks;
	if ((side->count + 1) * 2 + 2 > side->capacity) {
		size_t capacity = side->capacity ? side->capacity * 2 : 128;
		size_t *index = calloc(capacity, sizeof(*index));
		if (!index)
			return LL_ENOMEM;
		free(side->index);
		side->index = index;
		side->capacity = capacity;
		for (size_t i = 0; i < side->count; i++)
			if (!side->tasks[i].replaced)
				*slot_of(side, side->tasks[i].key) = i + 1;
	}
	return 0;
}

void report_side_release(struct compare_side *side)
{
	for (size_t i = 0; i < side->count; i++) {
		free(side->tasks[i].key);
		free(side->tasks[i].state);
		free(side->tasks[i].last_error);
		free(side->tasks[i].data);
		report_compare_data_release(&side->tasks[i].read);
		report_sample_release(&side->tasks[i].floor);
	}
	free(side->tasks);
	free(side->index);
	while (side->blocks) {
		struct block *b = side->blocks;
		side->blocks = b->next;
		munmap(b, b->size);
	}
}

/* What a side in the role CANDIDATE reads of compare data DATA (LEN
 * bytes, report_compare_data_role()) copied into SIDE's blocks and read
 * into *RET; LL_EFORMAT, LL_ENOMEM. */
static int read_part(struct compare_side *side, bool candidate, const void *data, size_t len,
		     struct report_compare_data *ret)
{
	size_t common, at, section;
	void *copy;

	if (report_compare_data_role(data, len, candidate, &common, &at, &section) < 0)
		return LL_EFORMAT;
	if (!(copy = block_copy(side, data, common, (const char *)data + at, section)))
		return LL_ENOMEM;
	return report_compare_data_read(copy, common + section, candidate, ret);
}

int report_side_collect(void *context, const struct store_report_row *row)
{
	struct collect *c = context;
	struct compare_side *side = c->side;
	struct side_task *t;
	cJSON *cell = NULL;
	size_t *slot;
	char key[512];

	if (side_grow(side) < 0)
		return LL_ENOMEM;
	json_parse_object(row->cell, strlen(row->cell), 0, &cell);
	report_cell_key(cell, key, sizeof(key));
	cJSON_Delete(cell);
	t = &side->tasks[side->count];
	*t = (struct side_task){.key = strdup(key),
				.state = strdup(row->state),
				.last_error = row->last_error ? strdup(row->last_error) : NULL,
				.result_id = row->result_id};
	if (!t->key || !t->state || (row->last_error && !t->last_error)) {
		free(t->key);
		free(t->state);
		free(t->last_error);
		return LL_ENOMEM;
	}
	if (row->result_id && row->compare && row->summary_version == REPORT_SUMMARY_VERSION &&
	    read_part(side, c->candidate, row->compare, row->compare_len, &t->read) == 0) {
		t->has_result = true;
	} else if (row->result_id) {
		/* no usable data: from the text (null: read after the walk) */
		char name[32];
		snprintf(name, sizeof(name), "%zu", side->count);
		cJSON_AddItemToObject(c->bodies, name,
				      row->body ? cJSON_CreateString(row->body) : cJSON_CreateNull());
	}
	slot = slot_of(side, key);
	if (*slot)
		side->tasks[*slot - 1].replaced = true;
	*slot = ++side->count;
	return 0;
}

/* Compare's data of the results whose data was not cached, from their
 * texts, and cached for the next compares (summary.h). */
void report_side_summarize(struct store *store, struct compare_side *side, bool candidate,
			   const cJSON *bodies)
{
	struct report_data_kept kept = {0};
	struct report_sample room = {0};
	const cJSON *b;

	cJSON_ArrayForEach(b, bodies) {
		struct side_task *t = &side->tasks[strtoul(b->string, NULL, 10)];
		cJSON *result = NULL;
		void *data = NULL;
		char *read = NULL;
		const char *text = b->valuestring;
		size_t len = 0;
		if (!text && store_result_get(store, t->result_id, &read) == 0)
			text = read;
		if (text && json_parse_object(text, strlen(text), REPORT_MAX_BODY_DEPTH, &result) == 0 &&
		    report_compare_data(result, t->key, &room, &data, &len) == 0) {
			report_compare_data_release(&t->read);
			free(t->data);
			t->data = data; /* kept whole until stored */
			data = NULL;
			if (read_part(side, candidate, t->data, len, &t->read) == 0)
				t->has_result = true;
			report_data_keep(&kept, t->result_id, t->data, len);
		}
		free(data);
		free(read);
		cJSON_Delete(result);
	}
	report_data_store(&kept, store);
	report_sample_release(&room);
}

/* Every task's floor sorted once (each serves the task's every row). */
void report_side_sort_floors(struct compare_side *side)
{
	for (size_t i = 0; i < side->count; i++) {
		struct side_task *t = &side->tasks[i];
		if (t->has_result && t->read.floor.values)
			report_sample_set(&t->floor, t->read.floor.values, t->read.floor.n);
	}
}
