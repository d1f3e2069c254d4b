/* capacity.c: the connection and long-poll limits planned from the
 * settings and the open-files limit. */
#include "http/capacity.h"

#include "check.h"

#include "loadlab/err.h"

#include <stdbool.h>
#include <string.h>

static struct config settings(int max_connections, int max_long_polls, int threads)
{
	struct config c;

	memset(&c, 0, sizeof(c));
	c.max_connections = max_connections;
	c.max_long_polls = max_long_polls;
	c.threads = threads;
	return c;
}

/* Enough descriptors: the asked limit, an eighth kept from long-polls. */
static void test_fits(void)
{
	struct config c = settings(8000, 0, 8);
	struct capacity cap;

	CHECK_EQ_INT(capacity_plan(&c, 20000, &cap), 0);
	CHECK_EQ_INT(cap.connections, 8000);
	CHECK_EQ_INT(cap.long_polls, 7000);
	CHECK(!cap.connections_lowered);
	CHECK(!cap.long_polls_lowered);
	CHECK_EQ_INT(capacity_plan(&c, -1, &cap), 0); /* unlimited */
	CHECK_EQ_INT(cap.connections, 8000);
}

/* The default 1024 descriptors: connections lowered by the reserve. */
static void test_lowered_to_descriptors(void)
{
	struct config c = settings(8000, 0, 8);
	struct capacity cap;

	CHECK_EQ_INT(capacity_plan(&c, 1024, &cap), 0);
	CHECK_EQ_INT(cap.connections, 1024 - CAPACITY_FD_RESERVE_BASE - 4 * 8);
	CHECK(cap.connections_lowered);
	CHECK(cap.long_polls < cap.connections);
	CHECK_EQ_INT(cap.long_polls, cap.connections - cap.connections / 8);
}

/* --max-long-polls is taken when it leaves the reserve, lowered when not. */
static void test_long_poll_setting(void)
{
	struct config c = settings(1000, 300, 2);
	struct capacity cap;

	CHECK_EQ_INT(capacity_plan(&c, 20000, &cap), 0);
	CHECK_EQ_INT(cap.long_polls, 300);
	c.max_long_polls = 1000;
	CHECK_EQ_INT(capacity_plan(&c, 20000, &cap), 0);
	CHECK_EQ_INT(cap.long_polls, 875);
	CHECK(cap.long_polls_lowered);
	c = settings(16, 0, 1);
	CHECK_EQ_INT(capacity_plan(&c, 20000, &cap), 0);
	CHECK_EQ_INT(cap.long_polls, 16 - CAPACITY_OTHER_RESERVE_MIN);
}

/* Too few descriptors for the minimum: refused with a message. */
static void test_too_few_descriptors(void)
{
	struct config c = settings(8000, 0, 8);
	struct capacity cap = {.connections = -5};

	CHECK_EQ_INT(capacity_plan(&c, 100, &cap), LL_ERANGE);
	CHECK(strstr(err_message(LL_ERANGE), "ulimit") != NULL);
	CHECK_EQ_INT(cap.connections, -5); /* untouched */
}

/* Raising the soft limit never lowers it. */
static void test_raise(void)
{
	long long before, after;

	CHECK_EQ_INT(capacity_raise_nofile(&before, &after), 0);
	CHECK(after == -1 || (before != -1 && after >= before));
}

int main(void)
{
	test_fits();
	test_lowered_to_descriptors();
	test_long_poll_setting();
	test_too_few_descriptors();
	test_raise();
	return check_finish();
}
