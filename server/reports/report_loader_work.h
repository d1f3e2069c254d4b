/*
 * report_loader_work.h - the job report's "loader work" table (issue 40):
 * per variant and cell, the loader's own work beside the times, as the
 * agent recorded it in the result's variants[].loader (ELF: glibc's
 * LD_DEBUG=statistics, agent/measure/loader_stats.h; PE: the images
 * counted statically and as the probe saw them placed,
 * agent/family/pe/pe_loader_work.h), and a flag on every row whose counts
 * contradict what its variant's transform promises.
 *
 * The path of the figures: summary.c keeps each variant's loader and
 * knobs in the result's summary (report_loader_work_summary()),
 * report_job.c builds the table from the summaries
 * (report_loader_work_table()) and adds a finding per flagged row,
 * report_markdown.c writes it as Markdown, and the
 * CLI's `loadlab report` prints it (cli/report_table.c).
 *
 * The rules (report_loader_work_flag(); docs/rest-bodies.md, "Loader
 * work"), each applied only where the counts it reads are present:
 *
 *	knobs                    counts                      flagged when
 *	bases "unique"           relocations                 > 0: a rebased DLL
 *	                                                     still moved
 *	bases "same"             images, images_relocated    3+ images, none
 *	                                                     moved
 *	bind true                imports_bound (the static   0: no valid binding
 *	                         count under Wine)
 *	imports "ordinal",       imports_by_ordinal          0
 *	  not bound
 *	bind "now" / bind_now    final_relocations -         > 0: lazy bindings
 *	                         relocations                 after the start
 *	any PE, probe + static   relocations                 differ: the loader
 *	                                                     placed the images
 *	                                                     otherwise than the
 *	                                                     files say
 */
#ifndef LOADLAB_SERVER_REPORT_LOADER_WORK_H
#define LOADLAB_SERVER_REPORT_LOADER_WORK_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* Most bytes of a flag's reason (the terminator included). */
#define REPORT_LOADER_WORK_MAX_REASON 256

/* Adds to OUT, the summary of the result variant VARIANT, "loader": a
 * copy of the variant's "loader" with its "knobs" inside; nothing when
 * the variant has no loader object. */
void report_loader_work_summary(const cJSON *variant, cJSON *out);

/* Whether LOADER (a variants[].loader object) contradicts what KNOBS (the
 * variant's knobs, any family's; may be NULL) promise, by the rules
 * above; when it does, the reason in REASON (SIZE bytes, a sentence
 * without its full stop). A loader with "not_counted" is never flagged. */
bool report_loader_work_flag(const cJSON *knobs, const cJSON *loader, char *reason, size_t size);

/* The report's "loader_work" from TASKS (report_job.c's, each with its
 * "key" and "summary") for the variants VARIANT_NAMES (strings, in table
 * order): {"rows": [{"variant", "cell", "source", "relocations",
 * "relative_relocations", "final_relocations", "lazy_after_start",
 * "imports_by_name", "imports_by_ordinal", "imports_bound",
 * "static_relocations", "static_imports_bound", "startup_time",
 * "time_unit", "not_counted", "cannot_show", "valid" (false only: a
 * variant its verification refused, kept: its counts may say why),
 * "flagged", "flag"}],
 * "flagged": N}, each figure only where the agent recorded it; NULL when
 * no summary has a loader object (or no memory). */
cJSON *report_loader_work_table(const cJSON *tasks, const cJSON *variant_names);

/* One sentence per flagged row of TABLE, appended to FINDINGS. */
void report_loader_work_findings(const cJSON *table, cJSON *findings);

#endif
