/*
 * plat_clock_win32.c - clock.h's clocks on Windows with what XP's kernel32
 * has: the performance counter for the monotonic clock and the system time
 * (100 ns ticks since 1601) for the wall clock. Not clock_gettime: mingw-w64
 * has it only in winpthread, whose static library imports GetTickCount64
 * (Vista and later), so an XP agent could not start.
 */
#ifdef _WIN32

#include "loadlab/clock.h"

#include <windows.h>

/* From 1601-01-01 to 1970-01-01 in 100 ns ticks. */
#define FILETIME_UNIX_EPOCH 116444736000000000ULL

long long clock_now_ms(void)
{
	FILETIME ft;
	ULARGE_INTEGER ticks;

	GetSystemTimeAsFileTime(&ft);
	ticks.LowPart = ft.dwLowDateTime;
	ticks.HighPart = ft.dwHighDateTime;
	return (long long)((ticks.QuadPart - FILETIME_UNIX_EPOCH) / 10000ULL);
}

long long clock_monotonic_us(void)
{
	static LARGE_INTEGER frequency;
	LARGE_INTEGER now;

	/* The frequency is fixed at boot; a racing first call writes the
	 * same value. XP and later always have a performance counter. */
	if (!frequency.QuadPart)
		QueryPerformanceFrequency(&frequency);
	QueryPerformanceCounter(&now);
	/* Split to keep the multiplication from overflowing. */
	return (long long)(now.QuadPart / frequency.QuadPart) * 1000000LL +
	       (long long)(now.QuadPart % frequency.QuadPart) * 1000000LL / frequency.QuadPart;
}

#endif /* _WIN32 */
