/*
 * store_build_hold.h - a shared build whose cells no enrolled agent can
 * measure is held (queue_build_wanted(), docs/builds.md): the lease skips
 * it, so no builder spends its time on programs nobody would run, and its
 * waiting reason says why. It is leased once an agent that can measure
 * one of its cells enrolls (or is let out of quarantine).
 */
#ifndef LOADLAB_SERVER_STORE_BUILD_HOLD_H
#define LOADLAB_SERVER_STORE_BUILD_HOLD_H

#include <stdbool.h>

struct store;

/* Whether the queued build task BUILD_TASK has a measurer: its queued
 * measuring tasks' cells against every enrolled agent, read in the
 * caller's transaction (or a read of its own). 0 or a negative LL_E*
 * code; *RET_WANTED set on 0. */
int store_build_wanted(struct store *s, long long build_task, bool *ret_wanted);

#endif
