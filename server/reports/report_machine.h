/*
 * report_machine.h - the facts of a result's machine that move load
 * times, and their digest: what the machine-change guard of a series
 * compares (docs/series.md, "The machine-change guard").
 *
 * The facts kept, when the result's facts have them: cpu_model, cores,
 * os, os_version, distro, arch, disk, fs, runner, wine_version, toolchain
 * and toolchains (agent/fleet/facts.h says what each holds). RAM, the
 * agent's name, labels and paths are left out: they do not move a load
 * time, or move with every reinstall.
 */
#ifndef LOADLAB_SERVER_REPORT_MACHINE_H
#define LOADLAB_SERVER_REPORT_MACHINE_H

#include <cjson/cJSON.h>

/* Hex digits of a digest, and its text's size. */
#define REPORT_MACHINE_DIGEST_HEX 16

/* A new object with the kept facts of FACTS (NULL or not an object: an
 * empty one), in the fixed order above; NULL when out of memory. */
cJSON *report_machine_facts(const cJSON *facts);

/* The first REPORT_MACHINE_DIGEST_HEX hex digits of the SHA-256 of the
 * compact JSON text of MACHINE (report_machine_facts()'s) into RET. */
void report_machine_digest(const cJSON *machine, char ret[REPORT_MACHINE_DIGEST_HEX + 1]);

/* A new array of {"fact", "before", "after"} for each kept fact that
 * differs between BEFORE and AFTER (absent: null); NULL out of memory. */
cJSON *report_machine_differences(const cJSON *before, const cJSON *after);

#endif
