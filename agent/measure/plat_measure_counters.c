/*
 * plat_measure_counters.c - the run counters' names and values
 * (plat_measure.h), the same on every OS; what each OS counts is in its
 * backend (plat_measure_run_counter_why_not()).
 */
#include "measure/plat_measure.h"

const char *const plat_measure_run_counter_names[PLAT_COUNTER_COUNT] = {
	[PLAT_COUNTER_CPU_USER_US] = "cpu_user_us",
	[PLAT_COUNTER_CPU_SYSTEM_US] = "cpu_system_us",
	[PLAT_COUNTER_PAGE_FAULTS] = "page_faults",
	[PLAT_COUNTER_MINOR_FAULTS] = "minor_faults",
	[PLAT_COUNTER_MAJOR_FAULTS] = "major_faults",
	[PLAT_COUNTER_VOLUNTARY_SWITCHES] = "voluntary_switches",
	[PLAT_COUNTER_INVOLUNTARY_SWITCHES] = "involuntary_switches",
	[PLAT_COUNTER_INSTRUCTIONS] = "instructions",
	[PLAT_COUNTER_CYCLES] = "cycles",
};

static double us_or_unknown(long long ns)
{
	return ns < 0 ? -1 : (double)ns / 1000.0;
}

double plat_measure_run_counter(const struct plat_measure_counters *k, enum plat_measure_run_counter c)
{
	switch (c) {
	case PLAT_COUNTER_CPU_USER_US:
		return us_or_unknown(k->cpu_user_ns);
	case PLAT_COUNTER_CPU_SYSTEM_US:
		return us_or_unknown(k->cpu_system_ns);
	case PLAT_COUNTER_PAGE_FAULTS:
		return (double)k->page_faults;
	case PLAT_COUNTER_MINOR_FAULTS:
		return (double)k->soft_faults;
	case PLAT_COUNTER_MAJOR_FAULTS:
		return (double)k->hard_faults;
	case PLAT_COUNTER_VOLUNTARY_SWITCHES:
		return (double)k->voluntary_switches;
	case PLAT_COUNTER_INVOLUNTARY_SWITCHES:
		return (double)k->involuntary_switches;
	case PLAT_COUNTER_INSTRUCTIONS:
		return (double)k->instructions;
	case PLAT_COUNTER_CYCLES:
		return (double)k->cycles;
	case PLAT_COUNTER_COUNT:
		break;
	}
	return -1;
}
