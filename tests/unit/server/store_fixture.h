/*
 * store_fixture.h - the store options the server's unit tests open their
 * stores with: short leases and backoffs, so that expiry and retries can
 * be driven by a test's own clock.
 */
#ifndef LOADLAB_TEST_STORE_FIXTURE_H
#define LOADLAB_TEST_STORE_FIXTURE_H

#include "store.h"

static const struct store_options test_store_options = {
	.lease_ms = 1000,
	.max_attempts = 3,
	.backoff_ms = 500,
	.backoff_max_ms = 1500,
	.offline_after_ms = 60000,
};

#endif
