/*
 * store_build_hold.h - a shared build whose cells no enrolled agent can
 * measure is held (queue_build_wanted(), docs/builds.md): the lease skips
 * it, so no builder spends its time on programs nobody would run, and its
 * waiting reason says why. It is leased once an agent that can measure
 * one of its cells enrolls (or is let out of quarantine). Both ask
 * store_build_wanted(), the one reader of the rule.
 */
#ifndef LOADLAB_SERVER_STORE_BUILD_HOLD_H
#define LOADLAB_SERVER_STORE_BUILD_HOLD_H

#include "store_queue_agents.h"

#include <stdbool.h>

struct store;

/* Whether the queued build task BUILD_TASK has a measurer: its queued
 * measuring tasks' cells, read in the caller's transaction (or a read of
 * its own), against AGENTS (store_queue_agents_read(), read once by the
 * caller for all its builds). 0 or a negative LL_E* code; *RET_WANTED set
 * on 0. */
int store_build_wanted(struct store *s, long long build_task, const struct queue_agents *agents,
		       bool *ret_wanted);

#endif
