/*
 * plat_measure_win32.c - plat_measure.h on Windows. XP-safe: everything
 * newer than Windows XP (K32GetProcessMemoryInfo, NtSetSystemInformation's
 * memory-list class) is looked up at run time.
 */
#ifdef _WIN32

#include "measure/plat_measure.h"
#include "loadlab/plat_spawn_win32.h"

#include <windows.h>

#include <psapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"

/* NtSetSystemInformation's SYSTEM_INFORMATION_CLASS SystemMemoryListInformation
 * and its command MemoryPurgeStandbyList (Vista and later; not in the SDK
 * headers, documented by the Sysinternals RAMMap usage). */
#define SYSTEM_MEMORY_LIST_INFORMATION 80
#define MEMORY_PURGE_STANDBY_LIST 4

typedef LONG(WINAPI *set_system_information_fn)(INT, PVOID, ULONG);
typedef BOOL(WINAPI *get_process_memory_info_fn)(HANDLE, PPROCESS_MEMORY_COUNTERS, DWORD);
typedef BOOL(WINAPI *query_process_cycle_time_fn)(HANDLE, PULONG64);

static bool under_wine(void)
{
	HMODULE ntdll = GetModuleHandleA("ntdll.dll");
	return ntdll && GetProcAddress(ntdll, "wine_get_version") != NULL;
}

/* The name of priority class C, as <winbase.h> spells it. */
static const char *class_name(DWORD c)
{
#define CLASS(name)         \
	{                   \
		name, #name \
	}
	static const struct {
		DWORD value;
		const char *name;
	} classes[] = {
		CLASS(REALTIME_PRIORITY_CLASS),     CLASS(HIGH_PRIORITY_CLASS),
		CLASS(ABOVE_NORMAL_PRIORITY_CLASS), CLASS(NORMAL_PRIORITY_CLASS),
		CLASS(BELOW_NORMAL_PRIORITY_CLASS), CLASS(IDLE_PRIORITY_CLASS),
	};
#undef CLASS

	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (classes[i].value == c)
			return classes[i].name;
	return "unknown";
}

int plat_measure_begin(struct plat_measure_conditions *ret)
{
	struct plat_measure_conditions c;
	DWORD_PTR process_mask = 0, system_mask = 0;
	LARGE_INTEGER freq;
	DWORD got;

	memset(&c, 0, sizeof(c));
	c.cpu = -1;
	c.saved_priority = (int)GetPriorityClass(GetCurrentProcess());
	if (GetProcessAffinityMask(GetCurrentProcess(), &process_mask, &system_mask)) {
		c.saved_mask = (unsigned long long)process_mask;
		c.saved_affinity_valid = true;
		for (unsigned i = 0; i < sizeof(DWORD_PTR) * 8; i++)
			if (process_mask & ((DWORD_PTR)1 << i))
				c.cpus_available++;
	}
	/* Real-time and pinned only with a CPU to spare (plat_measure.h). */
	if (c.cpus_available >= 2) {
		for (int i = (int)sizeof(DWORD_PTR) * 8 - 1; i >= 0; i--) {
			if (!(process_mask & ((DWORD_PTR)1 << i)))
				continue;
			if (SetProcessAffinityMask(GetCurrentProcess(), (DWORD_PTR)1 << i))
				c.cpu = i;
			break;
		}
	}
	/* Without the increase-base-priority privilege Windows grants HIGH
	 * for REALTIME silently: the class read back says which. */
	if (c.cpu >= 0 && SetPriorityClass(GetCurrentProcess(), REALTIME_PRIORITY_CLASS))
		snprintf(c.priority, sizeof(c.priority), "REALTIME_PRIORITY_CLASS");
	else if (SetPriorityClass(GetCurrentProcess(), HIGH_PRIORITY_CLASS))
		snprintf(c.priority, sizeof(c.priority), "HIGH_PRIORITY_CLASS");
	else
		snprintf(c.priority, sizeof(c.priority), "%s", class_name((DWORD)c.saved_priority));
	got = GetPriorityClass(GetCurrentProcess());
	c.realtime = got == REALTIME_PRIORITY_CLASS;
	snprintf(c.priority_read_back, sizeof(c.priority_read_back), "%s", class_name(got));
	snprintf(c.clock, sizeof(c.clock), "QueryPerformanceCounter");
	if (QueryPerformanceFrequency(&freq) && freq.QuadPart > 0)
		c.timer_resolution_ns = 1e9 / (double)freq.QuadPart;
	snprintf(c.spawn, sizeof(c.spawn), "CreateProcess (with counters: suspended, in a job object)");
	c.counters_reliable = !under_wine();
	plat_measure_counters_source("", c.counters, sizeof(c.counters));
	c.active = true;
	*ret = c;
	return 0;
}

void plat_measure_companion(struct plat_measure_conditions *c, long long pid)
{
	c->companion_pid = pid > 0 ? pid : 0;
	c->companion_pinned = false;
	c->companion_nice = 0;
}

void plat_measure_end(struct plat_measure_conditions *c)
{
	if (!c->active)
		return;
	if (c->saved_priority)
		SetPriorityClass(GetCurrentProcess(), (DWORD)c->saved_priority);
	if (c->saved_affinity_valid)
		SetProcessAffinityMask(GetCurrentProcess(), (DWORD_PTR)c->saved_mask);
	c->active = false;
}

void plat_measure_counters_source(const char *argv0, char *out, size_t size)
{
	(void)argv0;
	if (under_wine())
		snprintf(out, size,
			 "job object accounting + GetProcessMemoryInfo: zeros under Wine "
			 "(measure the wine process from the Linux side)");
	else
		snprintf(out, size,
			 "job object accounting (JobObjectBasicAndIoAccountingInformation) + "
			 "GetProcessMemoryInfo PageFaultCount");
}

static long long page_faults_of(HANDLE process)
{
	static get_process_memory_info_fn fn;
	static bool looked_up;
	PROCESS_MEMORY_COUNTERS pmc;

	if (!looked_up) {
		HMODULE psapi = LoadLibraryA("psapi.dll");
		if (psapi)
			fn = (get_process_memory_info_fn)(void (*)(void))GetProcAddress(
				psapi, "GetProcessMemoryInfo");
		if (!fn)
			fn = (get_process_memory_info_fn)(void (*)(void))GetProcAddress(
				GetModuleHandleA("kernel32.dll"), "K32GetProcessMemoryInfo");
		looked_up = true;
	}
	memset(&pmc, 0, sizeof(pmc));
	pmc.cb = sizeof(pmc);
	if (!fn || !fn(process, &pmc, sizeof(pmc)))
		return -1;
	return (long long)pmc.PageFaultCount;
}

/* kernel32's QueryProcessCycleTime (Vista and later); NULL on XP. */
static query_process_cycle_time_fn cycle_time_fn(void)
{
	static query_process_cycle_time_fn fn;
	static bool looked_up;

	if (!looked_up) {
		fn = (query_process_cycle_time_fn)(void (*)(void))GetProcAddress(
			GetModuleHandleA("kernel32.dll"), "QueryProcessCycleTime");
		looked_up = true;
	}
	return fn;
}

void plat_measure_run_counter_why_not(enum plat_measure_run_counter c, char *out, size_t size)
{
	const char *why = "";

	if (under_wine())
		why = "under Wine the Windows process counters are Wine's, not the program's "
		      "(measure the wine process from the Linux side)";
	else if (c == PLAT_COUNTER_MINOR_FAULTS || c == PLAT_COUNTER_MAJOR_FAULTS)
		why = "Windows does not split page faults into hard and soft (page_faults has both)";
	else if (c == PLAT_COUNTER_VOLUNTARY_SWITCHES || c == PLAT_COUNTER_INVOLUNTARY_SWITCHES)
		why = "Windows counts context switches per thread, not per process";
	else if (c == PLAT_COUNTER_INSTRUCTIONS)
		why = "Windows has no instruction counter for a process without a driver";
	else if (c == PLAT_COUNTER_CYCLES && !cycle_time_fn())
		why = "QueryProcessCycleTime needs Windows Vista or later";
	snprintf(out, size, "%s", why);
}

void plat_measure_run_counters_source(char *out, size_t size)
{
	snprintf(out, size,
		 "GetProcessTimes (CPU time), GetProcessMemoryInfo PageFaultCount, "
		 "QueryProcessCycleTime (cycles, user and kernel; Vista and later) of the measured "
		 "process%s",
		 under_wine() ? ": not counted under Wine" : "");
}

/* The run counters of the exited PROCESS into K (none under Wine). */
static void run_counters_of(HANDLE process, const FILETIME *kernel, const FILETIME *user, bool times,
			    struct plat_measure_counters *k);

/* The CPU time of every measured program so far (plat_noise's "ours"). */
static long long children_cpu_ns;

long long plat_measure_children_cpu_ns(void)
{
	return children_cpu_ns;
}

static long long filetime_ns(const FILETIME *t)
{
	return (long long)(((unsigned long long)t->dwHighDateTime << 32) | t->dwLowDateTime) * 100;
}

int plat_measure_run(const struct plat_spawn_options *options, long long timeout_ms, bool with_counters,
		     struct plat_measure_counters *ret)
{
	FILETIME created, exited, kernel, user;
	struct plat_measure_counters k = plat_measure_counters_unknown();
	STARTUPINFOA si;
	PROCESS_INFORMATION pi = {0};
	HANDLE in = INVALID_HANDLE_VALUE, out = INVALID_HANDLE_VALUE, err = INVALID_HANDLE_VALUE, job = NULL;
	LARGE_INTEGER start, end, freq;
	char *line = NULL, *env = NULL;
	DWORD flags, r, code = 0, priority;
	bool started = false, times;
	int rc;

	if (!options->argv || !options->argv[0])
		return err_set(LL_EINVAL, "No program to start.");
	if (timeout_ms <= 0)
		return err_set(LL_EINVAL, "A measured run needs a timeout.");
	if (!(line = malloc(PLAT_MAX_COMMAND_LINE + 1))) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	if ((rc = plat_win32_start_info(options, line, &env, &in, &out, &err, &si)) < 0)
		goto out;
	if (with_counters && !(job = CreateJobObjectA(NULL, NULL))) {
		rc = err_set(LL_EIO, "Cannot create a job object (error %lu).",
			     (unsigned long)GetLastError());
		goto out;
	}
	/* A child gets NORMAL unless told: give it the agent's class. */
	priority = GetPriorityClass(GetCurrentProcess());
	flags = CREATE_NO_WINDOW | (priority ? priority : 0) | (with_counters ? CREATE_SUSPENDED : 0);
	QueryPerformanceCounter(&start);
	if (!CreateProcessA(options->argv[0], line, NULL, NULL, TRUE, flags, env, options->cwd, &si, &pi)) {
		rc = err_set(LL_EIO, "Cannot start %s (error %lu).", options->argv[0],
			     (unsigned long)GetLastError());
		goto out;
	}
	started = true;
	if (with_counters) {
		/* Fails when the agent's own job forbids nesting (before
		 * Windows 8): then only the page faults are counted. */
		if (!AssignProcessToJobObject(job, pi.hProcess)) {
			CloseHandle(job);
			job = NULL;
		}
		ResumeThread(pi.hThread);
	}
	r = WaitForSingleObject(pi.hProcess, timeout_ms > 0x7ffffffeLL ? 0x7ffffffe : (DWORD)timeout_ms);
	QueryPerformanceCounter(&end);
	if (r == WAIT_TIMEOUT) {
		TerminateProcess(pi.hProcess, 255);
		WaitForSingleObject(pi.hProcess, 10000);
		rc = err_set(LL_ERANGE, "%s was still running after %lld ms and was killed.",
			     options->argv[0], timeout_ms);
		goto out;
	}
	if (r != WAIT_OBJECT_0) {
		TerminateProcess(pi.hProcess, 255);
		rc = err_set(LL_EIO, "Waiting for %s failed (error %lu).", options->argv[0],
			     (unsigned long)GetLastError());
		goto out;
	}
	GetExitCodeProcess(pi.hProcess, &code);
	times = GetProcessTimes(pi.hProcess, &created, &exited, &kernel, &user) != 0;
	if (times)
		children_cpu_ns += filetime_ns(&kernel) + filetime_ns(&user);
	run_counters_of(pi.hProcess, &kernel, &user, times, &k);
	QueryPerformanceFrequency(&freq);
	k.wall_ns =
		freq.QuadPart
			? (long long)((double)(end.QuadPart - start.QuadPart) * 1e9 / (double)freq.QuadPart)
			: 0;
	k.exit_code = (int)code;
	k.pid = (long long)pi.dwProcessId;
	if (with_counters) {
		JOBOBJECT_BASIC_AND_IO_ACCOUNTING_INFORMATION info;
		memset(&info, 0, sizeof(info));
		k.page_faults = page_faults_of(pi.hProcess);
		if (job && QueryInformationJobObject(job, JobObjectBasicAndIoAccountingInformation, &info,
						     sizeof(info), NULL)) {
			k.read_ops = (long long)info.IoInfo.ReadOperationCount;
			k.read_bytes = (long long)info.IoInfo.ReadTransferCount;
			if (k.page_faults < 0)
				k.page_faults = (long long)info.BasicInfo.TotalPageFaultCount;
		}
	}
	*ret = k;
	rc = 0;
out:
	if (started) {
		CloseHandle(pi.hThread);
		CloseHandle(pi.hProcess);
	}
	if (job)
		CloseHandle(job);
	plat_win32_close_std_handles(in, out, err);
	free(env);
	free(line);
	return rc;
}

static void run_counters_of(HANDLE process, const FILETIME *kernel, const FILETIME *user, bool times,
			    struct plat_measure_counters *k)
{
	query_process_cycle_time_fn cycles = cycle_time_fn();
	ULONG64 n;

	if (under_wine())
		return;
	if (times) {
		k->cpu_user_ns = filetime_ns(user);
		k->cpu_system_ns = filetime_ns(kernel);
	}
	if (k->page_faults < 0)
		k->page_faults = page_faults_of(process);
	if (cycles && cycles(process, &n))
		k->cycles = (long long)n;
}

int plat_measure_residency(const char *path, long long *ret_resident, long long *ret_pages)
{
	(void)path;
	(void)ret_resident;
	(void)ret_pages;
	return err_set(LL_EUNSUPPORTED, "Windows cannot tell which pages of a file are cached.");
}

/* Enables SeProfileSingleProcessPrivilege in the agent's token; false when
 * the token does not hold it. */
static bool enable_purge_privilege(void)
{
	HANDLE token;
	TOKEN_PRIVILEGES tp;
	bool ok;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_ADJUST_PRIVILEGES | TOKEN_QUERY, &token))
		return false;
	memset(&tp, 0, sizeof(tp));
	tp.PrivilegeCount = 1;
	tp.Privileges[0].Attributes = SE_PRIVILEGE_ENABLED;
	ok = LookupPrivilegeValueA(NULL, "SeProfileSingleProcessPrivilege", &tp.Privileges[0].Luid) &&
	     AdjustTokenPrivileges(token, FALSE, &tp, 0, NULL, NULL) && GetLastError() == ERROR_SUCCESS;
	CloseHandle(token);
	return ok;
}

int plat_measure_evict(const char *const *files, struct plat_measure_eviction *ret)
{
	struct plat_measure_eviction e;
	OSVERSIONINFOA version;
	set_system_information_fn set_info;
	INT command = MEMORY_PURGE_STANDBY_LIST;
	LONG status;

	memset(&e, 0, sizeof(e));
	e.resident_pages = -1;
	for (size_t i = 0; files && files[i]; i++) {
		HANDLE h = CreateFileA(files[i], GENERIC_READ,
				       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
				       OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
		if (h == INVALID_HANDLE_VALUE)
			return err_set(LL_EIO, "Cannot open %s to evict it (error %lu).", files[i],
				       (unsigned long)GetLastError());
		CloseHandle(h);
	}
	snprintf(e.method, sizeof(e.method), "unavailable");
	memset(&version, 0, sizeof(version));
	version.dwOSVersionInfoSize = sizeof(version);
	if (under_wine()) {
		snprintf(e.note, sizeof(e.note),
			 "Under Wine a standby-list purge would pretend to succeed; "
			 "evict from the Linux side.");
	} else if (!GetVersionExA(&version) || version.dwMajorVersion < 6) {
		snprintf(e.note, sizeof(e.note), "The standby list can be purged on Vista and later only.");
	} else if (!enable_purge_privilege()) {
		snprintf(e.note, sizeof(e.note),
			 "The agent lacks SeProfileSingleProcessPrivilege "
			 "(run it as an administrator).");
	} else if (!(set_info = (set_system_information_fn)(void (*)(void))GetProcAddress(
			     GetModuleHandleA("ntdll.dll"), "NtSetSystemInformation"))) {
		snprintf(e.note, sizeof(e.note), "ntdll has no NtSetSystemInformation.");
	} else if ((status = set_info(SYSTEM_MEMORY_LIST_INFORMATION, &command, sizeof(command))) < 0) {
		snprintf(e.note, sizeof(e.note),
			 "NtSetSystemInformation(MemoryPurgeStandbyList) failed: "
			 "NTSTATUS 0x%08lx.",
			 (unsigned long)status);
	} else {
		/* Dirty pages are not on the standby list: files the agent
		 * just wrote may stay cached. Not checkable here. */
		snprintf(e.method, sizeof(e.method), "standby-list purge (NtSetSystemInformation)");
		snprintf(e.note, sizeof(e.note),
			 "Windows cannot tell which pages stayed cached: not verified.");
		e.done = true;
	}
	*ret = e;
	return 0;
}

#endif
