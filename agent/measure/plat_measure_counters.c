/*
 * plat_measure_counters.c - the run counters' names and values
 * (plat_measure.h), the same on every OS; what each OS counts is in its
 * backend (plat_measure_run_counter_why_not()).
 */
#include "measure/plat_measure.h"

#include <stdbool.h>
#include <stddef.h>

/* Each run counter (plat_measure.h): its enum name, its name in results,
 * its field of struct plat_measure_counters, and whether that field is in
 * nanoseconds, given in microseconds. */
#define RUN_COUNTERS(X)                                                              \
	X(CPU_USER_US, "cpu_user_us", cpu_user_ns, true)                             \
	X(CPU_SYSTEM_US, "cpu_system_us", cpu_system_ns, true)                       \
	X(PAGE_FAULTS, "page_faults", page_faults, false)                            \
	X(MINOR_FAULTS, "minor_faults", soft_faults, false)                          \
	X(MAJOR_FAULTS, "major_faults", hard_faults, false)                          \
	X(VOLUNTARY_SWITCHES, "voluntary_switches", voluntary_switches, false)       \
	X(INVOLUNTARY_SWITCHES, "involuntary_switches", involuntary_switches, false) \
	X(INSTRUCTIONS, "instructions", instructions, false)                         \
	X(CYCLES, "cycles", cycles, false)

#define COUNTER_NAME(id, name, field, ns) [PLAT_COUNTER_##id] = name,
#define COUNTER_FIELD(id, name, field, ns) \
	[PLAT_COUNTER_##id] = {offsetof(struct plat_measure_counters, field), ns},

const char *const plat_measure_run_counter_names[PLAT_COUNTER_COUNT] = {RUN_COUNTERS(COUNTER_NAME)};

static const struct {
	size_t offset; /* of a long long */
	bool ns;
} counter_fields[PLAT_COUNTER_COUNT] = {RUN_COUNTERS(COUNTER_FIELD)};

double plat_measure_run_counter(const struct plat_measure_counters *k, enum plat_measure_run_counter c)
{
	long long v;

	if ((unsigned)c >= PLAT_COUNTER_COUNT)
		return -1;
	v = *(const long long *)((const char *)k + counter_fields[c].offset);
	if (counter_fields[c].ns)
		return v < 0 ? -1 : (double)v / 1000.0;
	return (double)v;
}
