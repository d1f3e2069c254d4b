/*
 * queue_build.h - the build tasks' policy as pure functions (docs/builds.md):
 * which build a cell of a `pe` or `elf` job needs, which agent may lease
 * it, and why no agent can.
 *
 * A job of family pe or elf whose spec does not say "build": "each-agent"
 * gets one build task per target its cells need, created before their
 * measuring tasks; a measuring task is leasable once its build is done.
 * A target is {"family", "architecture", "toolchain"}:
 *
 *	pe    architecture "x86_64" or "i686" (the cell's "arch", else the
 *	      pinned agent's fact, else "x86_64"); toolchain
 *	      "<architecture>-w64-mingw32-gcc", one of the agent fact
 *	      "toolchains" (fleet/facts.h)
 *	elf   architecture as the cell or agent says, else "x86_64"; toolchain
 *	      the cell's "toolchain" ("gcc+ld" when none), one of the agent
 *	      fact "toolchain"; a builder of the same "arch" (native code)
 *
 * The store keeps the target as the build task's cell (JSON text).
 */
#ifndef LOADLAB_SERVER_QUEUE_BUILD_H
#define LOADLAB_SERVER_QUEUE_BUILD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "queue.h"

/* Whether a job of normalized SPEC gets build tasks: family pe or elf and
 * "build" "shared", or no "build" and not EACH_AGENT_DEFAULT (loadlabd
 * --each-agent-build). */
bool queue_build_shared(const cJSON *spec, bool each_agent_default);

/* The target (a new object) that a cell CELL of a job of FAMILY needs;
 * FACTS (may be NULL) are those of the agent the cell is pinned to.
 * LL_EINVAL with a message for an architecture the family cannot build. */
int queue_build_target(const char *family, const cJSON *cell, const cJSON *facts, cJSON **ret_target);

/* True when AGENT may lease the build of TARGET: an admin marked it a
 * builder (PATCH /api/v1/agents/{id} {"builder": true}; what an agent
 * reports of itself never suffices: a builder's files run on every
 * measuring agent), it is not quarantined, and its facts list the
 * toolchain (and, for elf, its arch is the target's). */
bool queue_build_matches(const cJSON *target, const struct queue_agent *agent);

/* Whether one of the COUNT AGENTS enrolled can lease the queued build of
 * TARGET now: true when one matches and is online, REASON "". Else false
 * and REASON (QUEUE_WAITING_REASON_SIZE bytes) says why, first of:
 *   "no agent can build pe for i686: needs i686-w64-mingw32-gcc"
 *   "agent lab-linux-1 can build pe for x86_64 but is not marked as a
 *    builder (an admin marks it: loadlab agents --builder 7)" (its id)
 *   "3 agents can build pe for x86_64 but none is marked as a builder
 *    (an admin marks one: loadlab agents --builder NAME)"
 *   "the agents that can build pe for x86_64 are offline or quarantined"
 *   (the marked builders among them). */
bool queue_build_waiting(const cJSON *target, const struct queue_agent *agents, size_t count, char *reason);

/* Whether a queued build is worth leasing: one of the CELL_COUNT queued
 * measuring tasks waiting for it (CELLS[i], pinned to PINNED[i], 0: none)
 * can be run by one of the COUNT AGENTS enrolled, online or not (an
 * agent offline now may come back; queue_task_matches()). A build whose
 * cells no enrolled agent can measure is held: nobody would run what it
 * built (docs/builds.md). */
bool queue_build_wanted(const cJSON *const *cells, const long long *pinned, size_t cell_count,
			const struct queue_agent *agents, size_t count);

#endif
