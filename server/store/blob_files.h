/*
 * blob_files.h - the daemon's content-addressed file store: DATA_DIR/blobs/,
 * one file per SHA-256, named by it (blobs/ab/cdef... : the first two hex
 * digits are a folder, the other 62 the file name).
 *
 * An upload is streamed: each piece is hashed (SHA-256, incrementally)
 * and written to a temporary file in blobs/tmp/, never held in memory.
 * When it ends the digest must equal the name; the file is then fsynced,
 * linked into place (link(2): an existing blob is never replaced) and its
 * folder fsynced. A failed or abandoned upload leaves nothing behind.
 *
 * Several daemons may share one DATA_DIR (replicas on one PostgreSQL
 * store, README "Scaling out"), so none clears blobs/tmp/ as a whole:
 * each names its temporary files after itself, "HOST+PID+START+HEX.N"
 * (START its opening time in ms, N the process's count of uploads), and blobs_open() and every sweep
 * remove only what no live upload can hold: the files of a process of
 * this host that is gone (or of an earlier one with this PID), and any
 * other file (another host's, or one without an owner) not written for
 * tmp_max_age_s, which is --body-timeout: no upload's body may take longer.
 * A crash's leftovers on one daemon are thus removed at its restart.
 *
 * Limits (flags, config.h): the size of one blob, the total of all blobs
 * (uploads in flight count with the bytes received so far: an upload that
 * announces a size and never sends it holds nothing; an announced size that
 * does not fit at its start is refused at once), and a
 * retention: a blob that no job references and that has not been used
 * (uploaded, asked for, read) for that long is removed by the sweeper.
 *
 * Threads: every function may be called from any thread.
 */
#ifndef LOADLAB_SERVER_BLOB_FILES_H
#define LOADLAB_SERVER_BLOB_FILES_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "loadlab/err.h"

/* Error codes of an upload beyond the usual ones (REST in route_blobs.c):
 * over the size of one blob (413), over the quota (507), content that does
 * not hash to the name (400 hash_mismatch); a full disk, or one that would
 * keep less than min_free_bytes free, is LL_ENOSPACE (507 storage_full). */
#define BLOBS_E_TOO_BIG LL_ETOOBIG
#define BLOBS_E_QUOTA LL_ERANGE
#define BLOBS_E_MISMATCH LL_EFORMAT

struct blob_store;
struct blob_upload;

struct blob_limits {
	long long max_bytes;        /* one blob */
	long long quota_bytes;      /* all blobs */
	long long retention_s;      /* unreferenced and unused this long: removed */
	long long sweep_interval_s; /* the sweeper's period */
	long long min_free_bytes;   /* kept free on the disk: an upload that would not leave it is refused */
	long long tmp_max_age_s;    /* a temporary file of no live process of this host, untouched this
				     * long, is removed (--body-timeout; 0: 3600) */
};

/* The bytes free on the disk that holds the blobs (for /healthz). */
int blobs_disk_free(struct blob_store *store, long long *ret_bytes);

/* Says which blobs jobs reference: *RET_HASHES is a new cJSON array of
 * 64-hex-digit strings (duplicates allowed). */
typedef int (*blobs_references_fn)(void *context, cJSON **ret_hashes);

/* True when HEX is 64 lowercase hex digits. */
bool blobs_name_valid(const char *hex);

/* Opens the store under DATA_DIR (making blobs/ and blobs/tmp/, 0700),
 * removes the leftover temporary files that no live upload holds (above)
 * and counts the stored bytes. */
int blobs_open(const char *data_dir, const struct blob_limits *limits, struct blob_store **ret_store);

/* Stops the sweeper and frees the store. NULL is fine. Uploads must be
 * finished or aborted first. */
void blobs_close(struct blob_store *store);

/* The limits given to blobs_open() (borrowed). */
const struct blob_limits *blobs_limits(const struct blob_store *store);

struct blob_usage {
	long long used_bytes;     /* stored blobs */
	long long reserved_bytes; /* received by uploads in flight */
	long long uploads_open;   /* uploads begun and not yet finished or aborted */
};

/* What the store holds now (for /metrics). */
void blobs_usage(struct blob_store *store, struct blob_usage *ret_usage);

/* The size of blob HEX, marking it used now; LL_ENOTFOUND when absent. */
int blobs_stat(struct blob_store *store, const char *hex, long long *ret_size);

/* Blob HEX opened for reading, marking it used now: *RET_FD (the caller
 * closes it) and *RET_SIZE. LL_ENOTFOUND when absent. */
int blobs_open_read(struct blob_store *store, const char *hex, int *ret_fd, long long *ret_size);

/* Starts the upload of blob HEX. DECLARED_SIZE is the announced size, or
 * -1 when unknown (chunked). BLOBS_E_TOO_BIG / BLOBS_E_QUOTA when the
 * announced size is over a limit (or does not fit the quota's free part
 * now; nothing is reserved for it). When the blob exists already the body is
 * only hashed, not written. */
int blobs_upload_begin(struct blob_store *store, const char *hex, long long declared_size,
		       struct blob_upload **ret_upload);

/* Hashes and writes the next LEN bytes. BLOBS_E_TOO_BIG / BLOBS_E_QUOTA
 * when the bytes so far pass a limit (or the announced size), LL_EIO when
 * the disk refuses; the upload must then be aborted. */
int blobs_upload_write(struct blob_upload *upload, const void *data, size_t len);

/* Ends the upload: checks the digest and the announced size, fsyncs and
 * links the file into place. *RET_CREATED is false when the blob was
 * there already. BLOBS_E_MISMATCH (nothing kept), LL_EIO. The upload is
 * freed in every case. */
int blobs_upload_finish(struct blob_upload *upload, bool *ret_created);

/* Drops the upload and its temporary file. NULL is fine. */
void blobs_upload_abort(struct blob_upload *upload);

/* Of the HEXES (a cJSON array of strings), those not stored, as a new
 * cJSON array in *RET_MISSING (empty when all are there); *RET_FOUND_BYTES
 * (may be NULL) gets the sizes of those stored added up, once per time
 * HEXES names them. Each blob found is marked used now. */
int blobs_missing(struct blob_store *store, const cJSON *hexes, cJSON **ret_missing,
		  long long *ret_found_bytes);

/* Holds off the sweeper while a caller checks blobs and then records a
 * job that references them (route_jobs.c). */
void blobs_refs_lock(struct blob_store *store);
void blobs_refs_unlock(struct blob_store *store);

/* Removes every blob unused since NOW_S - retention that REFERENCES does
 * not list; *RET_REMOVED says how many. Holds the refs lock. */
int blobs_sweep(struct blob_store *store, long long now_s, blobs_references_fn references, void *context,
		int *ret_removed);

/* Runs blobs_sweep() every sweep_interval_s in a thread of its own, until
 * blobs_close(). */
int blobs_sweeper_start(struct blob_store *store, blobs_references_fn references, void *context);

/* What blobs_copy_folder() did: blobs copied (and their bytes), blobs
 * the target held already (same name and size). */
struct blob_copy_counts {
	long long copied, bytes, kept;
};

/* Copies every blob of the folder FROM_ROOT (laid out as DATA_DIR/blobs:
 * ab/cdef...) into TO_ROOT (made 0700 when missing), each checked against
 * its SHA-256 as it is read (a damaged blob is BLOBS_E_MISMATCH and stops
 * the copy), written to a temporary name, synced and renamed. A blob
 * TO_ROOT holds already with the same size is kept (an interrupted copy
 * is resumed, a second backup to the same folder copies only what is
 * new). FROM_ROOT missing: nothing to copy. For backup and restore
 * (server/admin/backup.c); the daemon need not be stopped. */
int blobs_copy_folder(const char *from_root, const char *to_root, struct blob_copy_counts *ret_counts);

#endif
