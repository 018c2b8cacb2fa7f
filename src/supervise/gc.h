/* SPDX-License-Identifier: Apache-2.0 */
/* gc.h - warren gc: the reclaim of what runs left behind once their supervisor is gone (after
 * a crash or kill -9 of warren), the scratch of kept runs, records past their time and the
 * history's retention. One entry point for every face: `warren gc`, the server (the runs a
 * killed server left) and the OCI runtime's delete. */
#ifndef WARREN_SUPERVISE_GC_H
#define WARREN_SUPERVISE_GC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "run/rundir.h"
#include "util/error.h"

struct gc_opts {
	uint64_t older_ms;         /* also delete the records of runs that started longer ago (0: none) */
	uint64_t keep_runs;        /* the history's retention: all but the newest N ended runs (0: none) */
	uint64_t keep_for_ms;      /* ... and those that ended longer ago (0: none) */
	bool housekeeping;         /* a plain gc: also what interrupted image imports left, the vm
	                              driver's stale cache, the idle bridge and tables, the registry
	                              of state directories */
	FILE *out;                 /* where the lines saying what was done go (NULL: nowhere);
	                              failures are warned of on stderr all the same */
};

struct gc_counts {
	int reclaimed, pruned, failed, live;
};

/* Reclaim the runs ids (NULL-terminated, whole ids) of sd, live ones left alone; counts into
 * n, and its line ("gc: reclaimed the scratch of ...") to o->out. 0, or -1 when any failed. */
int gc_runs(const struct statedir *sd, char **ids, const struct gc_opts *o, struct gc_counts *n);
/* gc_runs of the runs ids of the state directory at statedir, nothing but those (the server's
 * and the OCI face's reclaim of runs whose supervisor died). */
int gc_run_ids(const char *statedir, char **ids, FILE *out);
/* gc --orphans (root): remove the empty run cgroups of state directories that are gone, on
 * the whole host; its lines to out. -errno with err (not root), 1 when a removal failed, 0. */
int gc_orphans(FILE *out, struct error *err);

#endif
