/*
 * lease_expiry.c - the lease-expiry tick (lease_expiry.h).
 */
#include "lease_expiry.h"

bool lease_expiry_tick(struct store *store, long long now, bool anyone_waiting, int *ret_expired)
{
	struct store_stats st;
	int expired = 0;

	*ret_expired = 0;
	if (store_expire_leases(store, now, &expired) == 0 && expired > 0) {
		*ret_expired = expired;
		return true;
	}
	return anyone_waiting && store_stats(store, now, &st) == 0 && st.tasks_ready > 0;
}
