/*
 * clock.h - wall-clock and monotonic time, and their text form.
 */
#ifndef LOADLAB_CLOCK_H
#define LOADLAB_CLOCK_H

/* Milliseconds since the Unix epoch (wall clock). */
long long clock_now_ms(void);

/* Microseconds from an arbitrary fixed point (monotonic). */
long long clock_monotonic_us(void);

/* Writes MS (epoch milliseconds) as RFC 3339 UTC with milliseconds,
 * "2026-11-30T10:00:00.123Z", into OUT (at least 32 bytes). Returns OUT. */
char *clock_format_rfc3339(long long ms, char *out);

#endif
