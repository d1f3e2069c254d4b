/* The lease-expiry tick (schedules/lease_expiry.h): a lease not renewed
 * expires at its deadline and the tick says to wake the long-polls; a
 * tick with nothing expired wakes them only when someone waits and a task
 * is ready. The fixture's leases last 1 s. */
#include "check.h"
#include "schedules/lease_expiry.h"
#include "server/store_fixture.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	char dir[FIXTURE_DIR_SIZE];
	char path[128];
	struct store *s = NULL;
	cJSON *lease = NULL;
	long long t = 1000000, agent;
	int expired = -1;

	fixture_dir_make("expiry", dir);
	snprintf(path, sizeof(path), "%s/store.db", dir);
	CHECK_EQ_INT(store_open(path, &test_store_options, &s), 0);
	if (!s)
		return check_finish();
	agent = fixture_enroll(s, "a", "{\"os\":\"win10\"}", t);
	CHECK(fixture_submit(s,
			     "{\"name\":\"j\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
			     "\"variants\":[\"default\"],\"matrix\":{\"cells\":{\"os\":[\"win10\"]}}}",
			     t) > 0);

	/* Nothing leased, nothing ready to anyone who does not wait. */
	CHECK(!lease_expiry_tick(s, t, false, &expired));
	CHECK_EQ_INT(expired, 0);
	/* A queued task is ready: a waiting long-poll should look. */
	CHECK(lease_expiry_tick(s, t, true, &expired));
	CHECK_EQ_INT(expired, 0);

	CHECK_EQ_INT(store_task_lease(s, agent, t, &lease), 0);
	CHECK(lease != NULL);
	cJSON_Delete(lease);
	/* Leased, within its second: nothing to do, nothing ready. */
	CHECK(!lease_expiry_tick(s, t + 500, true, &expired));
	CHECK_EQ_INT(expired, 0);
	/* Past its deadline: expired, and the long-polls are woken. */
	CHECK(lease_expiry_tick(s, t + 1001, false, &expired));
	CHECK_EQ_INT(expired, 1);
	/* Once only; the task is queued again, ready for whoever waits. */
	CHECK(!lease_expiry_tick(s, t + 1002, false, &expired));
	CHECK_EQ_INT(expired, 0);
	CHECK(lease_expiry_tick(s, t + 1003, true, &expired));
	CHECK_EQ_INT(expired, 0);

	store_close(s);
	return fixture_dir_finish(dir);
}
