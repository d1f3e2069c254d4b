/* facts.h backend for Windows XP and later, natively or under Wine. */
#ifdef _WIN32

#include "facts.h"
#include "loadlab/plat.h"

#include "loadlab/err.h"

#include <windows.h>
#include <winioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values of winioctl.h's STORAGE_PROPERTY_ID and STORAGE_BUS_TYPE, spelled
 * out because XP-era headers do not have the later ones. */
#define PROPERTY_STORAGE_DEVICE 0
#define PROPERTY_SEEK_PENALTY 7
#define BUS_TYPE_NVME 17

struct property_query { /* STORAGE_PROPERTY_QUERY */
	DWORD property_id;
	DWORD query_type; /* PropertyStandardQuery: 0 */
	BYTE additional[1];
};

struct seek_penalty { /* DEVICE_SEEK_PENALTY_DESCRIPTOR (Windows 7) */
	DWORD version;
	DWORD size;
	BOOLEAN incurs_seek_penalty;
};

struct device_descriptor { /* the start of STORAGE_DEVICE_DESCRIPTOR */
	DWORD version;
	DWORD size;
	BYTE device_type;
	BYTE device_type_modifier;
	BOOLEAN removable_media;
	BOOLEAN command_queueing;
	DWORD vendor_id_offset;
	DWORD product_id_offset;
	DWORD product_revision_offset;
	DWORD serial_number_offset;
	DWORD bus_type;
	DWORD raw_properties_length;
	BYTE raw_device_properties[1];
};

struct os_version_info { /* RTL_OSVERSIONINFOW */
	ULONG size;
	ULONG major;
	ULONG minor;
	ULONG build;
	ULONG platform;
	WCHAR service_pack[128];
};

typedef LONG(WINAPI *rtl_get_version_fn)(struct os_version_info *info);

static HMODULE ntdll(void)
{
	return GetModuleHandleA("ntdll.dll");
}

/* RtlGetVersion tells the truth where GetVersionEx is shimmed (8.1+). */
static void windows_version(ULONG *major, ULONG *minor, ULONG *build)
{
	struct os_version_info info;
	rtl_get_version_fn get = (rtl_get_version_fn)(void (*)(void))GetProcAddress(ntdll(), "RtlGetVersion");
	OSVERSIONINFOA fallback;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (get && get(&info) == 0) {
		*major = info.major, *minor = info.minor, *build = info.build;
		return;
	}
	memset(&fallback, 0, sizeof(fallback));
	fallback.dwOSVersionInfoSize = sizeof(fallback);
	if (GetVersionExA(&fallback)) {
		*major = fallback.dwMajorVersion, *minor = fallback.dwMinorVersion;
		*build = fallback.dwBuildNumber;
		return;
	}
	*major = *minor = *build = 0;
}

static const char *os_name(ULONG major, ULONG minor, ULONG build)
{
	if (major == 5 && minor >= 1)
		return "winxp";
	if (major == 6)
		return minor == 0 ? "vista" : minor == 1 ? "win7" : minor == 2 ? "win8" : "win81";
	if (major == 10)
		return build >= 22000 ? "win11" : "win10";
	return "windows";
}

static const char *arch_name(void)
{
	SYSTEM_INFO si;

	GetNativeSystemInfo(&si);
	switch (si.wProcessorArchitecture) {
	case PROCESSOR_ARCHITECTURE_AMD64:
		return "x86_64";
	case PROCESSOR_ARCHITECTURE_INTEL:
		return "i686";
	case 12:
		return "aarch64"; /* PROCESSOR_ARCHITECTURE_ARM64 */
	default:
		return "unknown";
	}
}

static void cpu_model(char *out, DWORD size)
{
	HKEY key;
	DWORD type = 0, n = size - 1;

	snprintf(out, size, "unknown");
	if (RegOpenKeyExA(HKEY_LOCAL_MACHINE, "HARDWARE\\DESCRIPTION\\System\\CentralProcessor\\0", 0,
			  KEY_READ, &key) != ERROR_SUCCESS)
		return;
	if (RegQueryValueExA(key, "ProcessorNameString", NULL, &type, (BYTE *)out, &n) != ERROR_SUCCESS ||
	    type != REG_SZ)
		snprintf(out, size, "unknown");
	else
		out[n < size ? n : size - 1] = '\0';
	RegCloseKey(key);
	/* Registry strings are often padded with spaces. */
	while (*out == ' ')
		memmove(out, out + 1, strlen(out));
	for (size_t len = strlen(out); len > 0 && out[len - 1] == ' ';)
		out[--len] = '\0';
	if (!*out)
		snprintf(out, size, "unknown");
}

/* "C:\" for the work folder, from GetVolumePathName. */
static bool volume_root(const char *path, char *out, DWORD size)
{
	char full[MAX_PATH];

	if (!GetFullPathNameA(path, sizeof(full), full, NULL))
		return false;
	return GetVolumePathNameA(full, out, size) != 0;
}

static void file_system(const char *root, char *out, size_t size)
{
	char name[MAX_PATH + 1] = "";

	snprintf(out, size, "unknown");
	if (!GetVolumeInformationA(root, NULL, 0, NULL, NULL, NULL, name, sizeof(name)))
		return;
	for (char *p = name; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	if (strcmp(name, "fat") == 0)
		snprintf(out, size, "fat16");
	else if (*name)
		snprintf(out, size, "%s", name);
}

/* From the volume's device: NVMe by bus type, else the seek penalty
 * (Windows 7 and later); "unknown" where neither is answered (XP, Wine). */
static const char *disk_kind(const char *root)
{
	char device[16];
	HANDLE volume;
	struct property_query query;
	struct seek_penalty penalty;
	BYTE buffer[1024];
	struct device_descriptor *descriptor = (struct device_descriptor *)buffer;
	DWORD returned = 0;
	const char *kind = "unknown";

	if (!((root[0] >= 'A' && root[0] <= 'Z') || (root[0] >= 'a' && root[0] <= 'z')) || root[1] != ':')
		return kind;
	snprintf(device, sizeof(device), "\\\\.\\%c:", root[0]);
	volume = CreateFileA(device, 0, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING, 0, NULL);
	if (volume == INVALID_HANDLE_VALUE)
		return kind;
	memset(&query, 0, sizeof(query));
	query.property_id = PROPERTY_STORAGE_DEVICE;
	memset(buffer, 0, sizeof(buffer));
	if (DeviceIoControl(volume, IOCTL_STORAGE_QUERY_PROPERTY, &query, sizeof(query), buffer,
			    sizeof(buffer), &returned, NULL) &&
	    returned >= offsetof(struct device_descriptor, raw_properties_length) &&
	    descriptor->bus_type == BUS_TYPE_NVME) {
		kind = "nvme";
	} else {
		query.property_id = PROPERTY_SEEK_PENALTY;
		memset(&penalty, 0, sizeof(penalty));
		if (DeviceIoControl(volume, IOCTL_STORAGE_QUERY_PROPERTY, &query, sizeof(query), &penalty,
				    sizeof(penalty), &returned, NULL) &&
		    returned >= sizeof(penalty))
			kind = penalty.incurs_seek_penalty ? "hdd" : "ssd";
	}
	CloseHandle(volume);
	return kind;
}

int facts_os_collect(const char *work_dir, cJSON *facts)
{
	ULONG major, minor, build;
	char text[256], root[MAX_PATH] = "";
	SYSTEM_INFO si;
	MEMORYSTATUSEX memory;
	DWORD attributes;
	bool ok = true;

	windows_version(&major, &minor, &build);
	snprintf(text, sizeof(text), "%lu.%lu.%lu", (unsigned long)major, (unsigned long)minor,
		 (unsigned long)build);
	ok = ok && cJSON_AddStringToObject(facts, "os", os_name(major, minor, build));
	ok = ok && cJSON_AddStringToObject(facts, "os_version", text);
	ok = ok && cJSON_AddStringToObject(facts, "arch", arch_name());
	cpu_model(text, sizeof(text));
	ok = ok && cJSON_AddStringToObject(facts, "cpu_model", text);
	GetSystemInfo(&si);
	ok = ok && cJSON_AddNumberToObject(facts, "cores", (double)si.dwNumberOfProcessors);
	memset(&memory, 0, sizeof(memory));
	memory.dwLength = sizeof(memory);
	if (GlobalMemoryStatusEx(&memory))
		ok = ok &&
		     cJSON_AddNumberToObject(facts, "ram_mb", (double)(memory.ullTotalPhys / (1024 * 1024)));
	if (!volume_root(work_dir, root, sizeof(root)))
		root[0] = '\0';
	ok = ok && cJSON_AddStringToObject(facts, "disk", *root ? disk_kind(root) : "unknown");
	if (*root)
		file_system(root, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "unknown");
	ok = ok && cJSON_AddStringToObject(facts, "fs", text);
	/* Compressed NTFS is a cell of the lab's matrix of its own. */
	attributes = GetFileAttributesA(work_dir);
	ok = ok && cJSON_AddBoolToObject(facts, "fs_compressed",
					 attributes != INVALID_FILE_ATTRIBUTES &&
						 (attributes & FILE_ATTRIBUTE_COMPRESSED));
	return ok ? 0 : err_set(LL_ENOMEM, "Out of memory.");
}

/* Wine's ntdll exports wine_get_version; Windows' does not. */
static bool under_wine(void)
{
	return GetProcAddress(ntdll(), "wine_get_version") != NULL;
}

const char *facts_os_runner(void)
{
	return under_wine() ? "wine" : "native";
}

char *facts_os_find_program(const char *name)
{
	char found[MAX_PATH], unix_path[MAX_PATH];
	const char *names[2] = {name, strcmp(name, "lld") == 0 ? "ld.lld" : NULL};
	DWORD n;

	for (int i = 0; i < 2 && names[i]; i++) {
		n = SearchPathA(NULL, names[i], ".exe", sizeof(found), found, NULL);
		if (n > 0 && n < sizeof(found))
			return strdup(found);
		/* Under Wine, CreateProcess starts a Unix program given by its
		 * Unix path on drive Z:, so the host's toolchain is usable. */
		if (under_wine()) {
			snprintf(unix_path, sizeof(unix_path), "Z:\\usr\\bin\\%s", names[i]);
			if (plat_file_exists(unix_path))
				return strdup(unix_path);
		}
	}
	return NULL;
}

#endif
