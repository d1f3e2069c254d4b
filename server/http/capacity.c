#include "capacity.h"

#include "loadlab/err.h"

#include <sys/resource.h>

int capacity_raise_nofile(long long *ret_before, long long *ret_after)
{
	struct rlimit limit;
	long long before;

	if (getrlimit(RLIMIT_NOFILE, &limit) < 0)
		return err_set(LL_EIO, "Cannot read the open-files limit.");
	before = limit.rlim_cur == RLIM_INFINITY ? -1 : (long long)limit.rlim_cur;
	if (limit.rlim_cur != limit.rlim_max) {
		struct rlimit raised = {limit.rlim_max, limit.rlim_max};
		/* An unlimited hard limit may still be above fs.nr_open: then
		 * setrlimit() refuses and the soft limit stays. */
		if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
			limit = raised;
	}
	*ret_before = before;
	*ret_after = limit.rlim_cur == RLIM_INFINITY ? -1 : (long long)limit.rlim_cur;
	return 0;
}

int capacity_plan(const struct config *c, long long nofile, struct capacity *ret)
{
	struct capacity plan = {.nofile = nofile, .connections = c->max_connections};
	long long reserve = CAPACITY_FD_RESERVE_BASE + 4LL * c->threads;
	int other;

	if (nofile >= 0 && nofile - reserve < plan.connections) {
		if (nofile - reserve < CAPACITY_MIN_CONNECTIONS)
			return err_set(LL_ERANGE,
				       "The open-files limit of %lld leaves fewer than %d connections "
				       "(%lld descriptors are kept back); raise it (ulimit -n).",
				       nofile, CAPACITY_MIN_CONNECTIONS, reserve);
		plan.connections = (int)(nofile - reserve);
		plan.connections_lowered = true;
	}
	other = plan.connections / 8;
	if (other < CAPACITY_OTHER_RESERVE_MIN)
		other = CAPACITY_OTHER_RESERVE_MIN;
	plan.long_polls = plan.connections - other;
	if (c->max_long_polls > 0 && c->max_long_polls <= plan.long_polls)
		plan.long_polls = c->max_long_polls;
	else if (c->max_long_polls > plan.long_polls)
		plan.long_polls_lowered = true;
	*ret = plan;
	return 0;
}
