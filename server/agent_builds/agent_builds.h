/*
 * agent_builds.h - the agent binaries loadlabd serves to its fleet
 * (loadlabd --agent-dir DIR; docs/agent.md, "Updates"), so that agents
 * update themselves by digest.
 *
 * A build is a file of DIR named
 *
 *	loadlab-agent-OS-ARCH[-LABEL][.exe]
 *
 * OS linux or windows (a windows build ends with .exe, a linux one does
 * not), ARCH x86_64, i686 or aarch64, LABEL 1..64 of [A-Za-z0-9._+] (any
 * name the admin likes: a version, a date). Other files are skipped (and
 * logged). Each build's size and SHA-256 are computed when the folder is
 * scanned (at start and on a rescan), and its version read from the
 * marker every loadlab-agent carries ("loadlab-agent-version=V", V 1..64
 * of [A-Za-z0-9._+-]; "" when a file has none).
 *
 * The build an agent of OS/ARCH is told to run ("wanted"): with no pin,
 * the one without LABEL; with a pin, the build of that OS/ARCH whose
 * SHA-256 or version is the pin's, if any. An OS/ARCH with no wanted
 * build is told nothing: its agents keep what they run. The pin is kept
 * in DATA_DIR/agent-builds-pin.json and survives a restart.
 *
 * A build's detached signature (docs/agent.md, "Signed builds") is the
 * file FILE.sig beside it, one line "loadlab-release-sig ed25519 HEX"
 * (loadlab/release_sig.h) that loadlab-agent release-sign writes; it is
 * read with the build and served in the list as the build's "signature"
 * (128 hex digits, null when there is none or it is malformed: logged).
 * The server holds no key and checks no signature: the agents do, each
 * against its own release key.
 *
 * Limits: AGENT_BUILDS_MAX files, each at most AGENT_BUILD_MAX_BYTES
 * (larger ones are skipped and logged). Thread-safe.
 */
#ifndef LOADLAB_SERVER_AGENT_BUILDS_H
#define LOADLAB_SERVER_AGENT_BUILDS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#define AGENT_BUILDS_MAX 64
#define AGENT_BUILD_MAX_BYTES (256LL << 20)
/* The pin's file in the data folder. */
#define AGENT_BUILDS_PIN_FILE "agent-builds-pin.json"

struct agent_builds;

/* Scans DIR (NULL or "": no builds, every OS/ARCH is told nothing) and
 * reads the pin from DATA_DIR. LL_EIO when DIR cannot be read, LL_EFORMAT
 * for a pin file that is not one. */
int agent_builds_open(const char *dir, const char *data_dir, struct agent_builds **ret_builds);

/* Scans the folder again; the builds seen before are replaced whole. */
int agent_builds_rescan(struct agent_builds *builds);

/* {"dir": DIR|null, "pin": {"sha256"|"version": V}|null, "builds": [{"os",
 * "arch", "label" (string|null), "file", "version" (string|null),
 * "sha256", "size", "signature" (HEX|null), "wanted"}...]} in file-name
 * order. "dir" is the folder's path when FULL_PATH (an admin asks), else
 * only its last component: the daemon's paths are not every reader's;
 * "file" is always a file name. */
int agent_builds_list(struct agent_builds *builds, bool full_path, cJSON **ret_list);

/* Opens the wanted build of OS/ARCH for reading: *RET_FD (the caller
 * closes it), its size and SHA-256. LL_ENOTFOUND when OS/ARCH has none. */
int agent_builds_open_wanted(struct agent_builds *builds, const char *os, const char *arch, int *ret_fd,
			     long long *ret_size, char ret_sha256[65]);

/* Pins the fleet to the builds whose SHA-256 (64 lowercase hex digits) or
 * version (1..64 of [A-Za-z0-9._+-]) is VALUE (KEY "sha256" or
 * "version"); KEY NULL removes the pin. Saved before it takes effect.
 * LL_EINVAL for a bad value. */
int agent_builds_pin(struct agent_builds *builds, const char *key, const char *value);

void agent_builds_close(struct agent_builds *builds);

#endif
