/*
 * churn_parent.exe: the parent of the Windows churn test (agent/measure/churn.h):
 * starts the children wave by wave, times their creation and destruction
 * with QueryPerformanceCounter and, on a probe thread, the window
 * manager's lock, and writes its figures as JSON. Compiled with mingw-w64
 * when loadlab-agent is built, and shipped inside it (plain C, XP-safe;
 * imports kernel32, user32 and the C runtime).
 */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct phase {
	long long calls;
	double total_ms, max_ms;
};
static struct phase phases[2];
static volatile LONG probe_phase = -1; /* -1 idle, 0 create, 1 destroy */
static HANDLE probe_stop, probe_up, probe_kick;
static LARGE_INTEGER freq;
static int probe_window, probe_window_attempts;
static DWORD probe_window_error;
static char error[512];
/* Tries of one child's CreateProcess before the test fails. */
#define START_TRIES 3
static int start_retries;
static DWORD last_start_error;

static double ms_between(LARGE_INTEGER a, LARGE_INTEGER b)
{
	return (double)(b.QuadPart - a.QuadPart) * 1000.0 / (double)freq.QuadPart;
}

/* Every INTERVAL ms, and at once when a phase starts (PROBE_KICK), times
 * one PeekMessage on a window of its own: the call enters the window
 * manager and waits for its lock. */
static DWORD WINAPI probe_main(void *arg)
{
	WNDCLASSA wc;
	HWND hwnd;
	MSG msg;
	DWORD interval = (DWORD)(size_t)arg;
	HANDLE wait[2];
	int i;

	memset(&wc, 0, sizeof(wc));
	wc.lpfnWndProc = DefWindowProcA;
	wc.hInstance = GetModuleHandleA(NULL);
	wc.lpszClassName = "loadlab_churn_probe";
	RegisterClassA(&wc);
	/* Under Wine the first window of a freshly booted prefix can fail while
	 * its desktop process starts, which took over 5 s on a loaded machine:
	 * up to 15 s of tries, 250 ms apart. */
	for (i = 0; i < 60; i++) {
		hwnd = CreateWindowExA(0, wc.lpszClassName, "loadlab churn probe", WS_OVERLAPPED, 0, 0, 16,
				       16, NULL, NULL, wc.hInstance, NULL);
		probe_window_attempts = i + 1;
		if (hwnd)
			break;
		probe_window_error = GetLastError();
		Sleep(250);
	}
	probe_window = hwnd != NULL;
	SetEvent(probe_up);
	wait[0] = probe_stop;
	wait[1] = probe_kick;
	while (WaitForMultipleObjects(2, wait, FALSE, interval) != WAIT_OBJECT_0) {
		LARGE_INTEGER a, b;
		LONG p = InterlockedCompareExchange(&probe_phase, 0, 0);
		double ms;
		if (p < 0)
			continue;
		QueryPerformanceCounter(&a);
		PeekMessageA(&msg, hwnd, 0, 0, PM_REMOVE);
		QueryPerformanceCounter(&b);
		ms = ms_between(a, b);
		phases[p].calls++;
		phases[p].total_ms += ms;
		if (ms > phases[p].max_ms)
			phases[p].max_ms = ms;
	}
	if (hwnd)
		DestroyWindow(hwnd);
	return 0;
}

static long long us_between(LARGE_INTEGER a, LARGE_INTEGER b)
{
	return (long long)((double)(b.QuadPart - a.QuadPart) * 1e6 / (double)freq.QuadPart);
}

/* Milliseconds left before DEADLINE (a QPC value), at least 0. */
static DWORD left_ms(LARGE_INTEGER deadline)
{
	LARGE_INTEGER now;
	QueryPerformanceCounter(&now);
	if (now.QuadPart >= deadline.QuadPart)
		return 0;
	return (DWORD)((deadline.QuadPart - now.QuadPart) * 1000 / freq.QuadPart) + 1;
}

static void kill_all(HANDLE *h, int n)
{
	int i;
	for (i = 0; i < n; i++)
		TerminateProcess(h[i], 1);
	for (i = 0; i < n; i++) {
		WaitForSingleObject(h[i], 10000);
		CloseHandle(h[i]);
	}
}

static void write_phase(FILE *f, const char *name, const struct phase *p)
{
	fprintf(f,
		"\"%s\": {\"calls\": %lld, \"blocked_total_ms\": %.3f, "
		"\"blocked_max_ms\": %.3f}",
		name, p->calls, p->total_ms, p->max_ms);
}

/* argv: OUT.json CHILD.exe PROCESSES WAVE_SIZE TIMEOUT_MS INTERVAL_MS [DLL...] */
int main(int argc, char **argv)
{
	int total, wave, done = 0, waves = 0, started = 0, i, extra = 0;
	DWORD timeout, interval;
	long long create_us = 0, destroy_us = 0;
	HANDLE *h, thread, go = NULL, ready = NULL;
	char *cmd, go_name[96], ready_name[96];
	size_t cmd_size = 64, used;
	FILE *out;

	if (argc < 7)
		return 2;
	total = atoi(argv[3]);
	wave = atoi(argv[4]);
	timeout = (DWORD)strtoul(argv[5], NULL, 10);
	interval = (DWORD)strtoul(argv[6], NULL, 10);
	if (total < 1 || wave < 1)
		return 2;
	for (i = 2; i < argc; i++)
		cmd_size += strlen(argv[i]) + 3;
	cmd_size += 3 * 96;
	h = calloc((size_t)wave, sizeof(*h));
	cmd = malloc(cmd_size);
	if (!h || !cmd)
		return 2;
	QueryPerformanceFrequency(&freq);
	probe_stop = CreateEventA(NULL, TRUE, FALSE, NULL);
	probe_up = CreateEventA(NULL, TRUE, FALSE, NULL);
	probe_kick = CreateEventA(NULL, FALSE, FALSE, NULL);
	thread = CreateThread(NULL, 0, probe_main, (void *)(size_t)interval, 0, NULL);
	if (!thread) {
		snprintf(error, sizeof(error), "CreateThread failed (%lu)", GetLastError());
		goto fail;
	}
	WaitForSingleObject(probe_up, 30000);

	while (done < total) {
		int n = total - done < wave ? total - done : wave, up = 0;
		LARGE_INTEGER t0, t1, t2, t3, deadline;
		STARTUPINFOA si;
		PROCESS_INFORMATION pi;

		snprintf(go_name, sizeof(go_name), "loadlab_churn_go_%lu_%d", GetCurrentProcessId(), waves);
		snprintf(ready_name, sizeof(ready_name), "loadlab_churn_ready_%lu_%d", GetCurrentProcessId(),
			 waves);
		go = CreateEventA(NULL, TRUE, FALSE, go_name);
		ready = CreateSemaphoreA(NULL, 0, n, ready_name);
		if (!go || !ready) {
			snprintf(error, sizeof(error), "cannot create the shared event (%lu)",
				 GetLastError());
			goto fail;
		}
		used = (size_t)snprintf(cmd, cmd_size, "\"%s\" %lu %s %s", argv[2], GetCurrentProcessId(),
					go_name, ready_name);
		for (i = 7; i < argc && used < cmd_size; i++)
			used += (size_t)snprintf(cmd + used, cmd_size - used, " \"%s\"", argv[i]);
		if (used >= cmd_size) {
			snprintf(error, sizeof(error), "the child's command line is longer than %lu bytes",
				 (unsigned long)cmd_size);
			goto fail;
		}
		InterlockedExchange(&probe_phase, 0);
		SetEvent(probe_kick);
		QueryPerformanceCounter(&t0);
		deadline.QuadPart = t0.QuadPart + (LONGLONG)timeout * freq.QuadPart / 1000;
		for (started = 0; started < n; started++) {
			int tries = 0;
			memset(&si, 0, sizeof(si));
			si.cb = sizeof(si);
			/* Under Wine a start fails now and then (ERROR_INTERNAL_ERROR:
			 * the new process died before it came up): tried again, up to
			 * START_TRIES times, each counted in start_retries; the phase's
			 * time includes the failed tries. */
			while (!CreateProcessA(argv[2], cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
				last_start_error = GetLastError();
				if (++tries == START_TRIES) {
					snprintf(error, sizeof(error),
						 "CreateProcess of child %d failed %d times (last %lu)",
						 started + 1, tries, last_start_error);
					goto fail;
				}
				start_retries++;
			}
			CloseHandle(pi.hThread);
			h[started] = pi.hProcess;
		}
		while (up < n) {
			DWORD left = left_ms(deadline), w;
			w = WaitForSingleObject(ready, left < 100 ? left : 100);
			if (w == WAIT_OBJECT_0) {
				up++;
				continue;
			}
			for (i = 0; i < n; i++) {
				DWORD code = STILL_ACTIVE;
				if (GetExitCodeProcess(h[i], &code) && code != STILL_ACTIVE) {
					snprintf(error, sizeof(error),
						 "child %d exited with %lu before it was ready%s", i + 1,
						 code, code == 3 ? " (a DLL did not load)" : "");
					goto fail;
				}
			}
			if (left == 0) {
				snprintf(error, sizeof(error), "only %d of %d children were ready in time",
					 up, n);
				goto fail;
			}
		}
		QueryPerformanceCounter(&t1);
		InterlockedExchange(&probe_phase, 1);
		QueryPerformanceCounter(&t2);
		deadline.QuadPart = t2.QuadPart + (LONGLONG)timeout * freq.QuadPart / 1000;
		SetEvent(go);
		SetEvent(probe_kick);
		for (i = 0; i < n; i += MAXIMUM_WAIT_OBJECTS) {
			int k = n - i < MAXIMUM_WAIT_OBJECTS ? n - i : MAXIMUM_WAIT_OBJECTS;
			DWORD w = WaitForMultipleObjects((DWORD)k, h + i, TRUE, left_ms(deadline));
			if (w == WAIT_TIMEOUT || w == WAIT_FAILED) {
				snprintf(error, sizeof(error), "the children did not exit in time");
				goto fail;
			}
		}
		QueryPerformanceCounter(&t3);
		InterlockedExchange(&probe_phase, -1);
		create_us += us_between(t0, t1);
		destroy_us += us_between(t2, t3);
		for (i = 0; i < n; i++) {
			DWORD code = 0;
			if (GetExitCodeProcess(h[i], &code) && code != 0)
				extra++;
			CloseHandle(h[i]);
		}
		started = 0;
		CloseHandle(go);
		CloseHandle(ready);
		go = ready = NULL;
		done += n;
		waves++;
	}
	SetEvent(probe_stop);
	WaitForSingleObject(thread, 30000);
	if (extra) {
		snprintf(error, sizeof(error), "%d children exited with a nonzero code", extra);
		goto fail;
	}
	if (!(out = fopen(argv[1], "w")))
		return 1;
	fprintf(out,
		"{\"processes\": %d, \"waves\": %d, \"wave_size\": %d, "
		"\"create_us\": %lld, \"destroy_us\": %lld, \"timer_frequency_hz\": %lld, "
		"\"start_retries\": %d, \"start_error\": %lu, "
		"\"probe\": {\"window\": %s, \"window_attempts\": %d, \"window_error\": %lu, "
		"\"interval_ms\": %lu, ",
		total, waves, wave, create_us, destroy_us, (long long)freq.QuadPart, start_retries,
		last_start_error, probe_window ? "true" : "false", probe_window_attempts, probe_window_error,
		interval);
	write_phase(out, "create", &phases[0]);
	fprintf(out, ", ");
	write_phase(out, "destroy", &phases[1]);
	fprintf(out, "}}\n");
	return fclose(out) == 0 ? 0 : 1;

fail:
	kill_all(h, started);
	if (thread) {
		SetEvent(probe_stop);
		WaitForSingleObject(thread, 30000);
	}
	if ((out = fopen(argv[1], "w"))) {
		fprintf(out, "{\"error\": \"%s\"}\n", error);
		fclose(out);
	}
	return 1;
}
