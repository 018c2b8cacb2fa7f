/* SPDX-License-Identifier: Apache-2.0 */
/* warm.h - the worker half of a warm cell: `warren job run --warm-fd N` (cli/job.c) hands these
 * to job_run (job/runner.h) as its take and its end. */
#ifndef WARREN_CLI_WARM_H
#define WARREN_CLI_WARM_H

#include <stdbool.h>

#include "cell/spec.h"
#include "cli/spec.h"
#include "job/jobfile.h"
#include "job/runner.h"
#include "util/error.h"

/* ---- a warm cell (`job run --warm-fd N`, started by `warren serve --warm`) ----
 * Over the server's socket (one JSON datagram each): we say {"ready": true, "digest"} once the
 * cell waits; the server sends the run that takes it {"job": FILE, "job_text": its text (then
 * FILE is only its name: not written), "work": DIR, "labels": ["k=v"...], "name", "command"},
 * with a socket for the run's end (SCM_RIGHTS); we start it (nothing said: a word here woke
 * the server's loop for nothing while the job was starting), or say {"cold": WHY} and start
 * it cold ourselves (same run id); then {"exit_code", "status", "start"} as soon as the
 * job's end is known on that socket (the waiting connection's), and on the server's once the
 * cell is gone (at once when no connection took it). */
struct warm {
	int fd;
	const struct job_args *a;
	const char *run_id, *db;
	struct job job;
	struct cell_spec s;       /* the run's, built as for a cold start */
	bool loaded;
	struct error err;         /* why its spec could not be made (the run fails with it) */
	const char *why;          /* why it is cold */
	char **command;           /* a plain command's argv (the server's "command"), or NULL */
	bool ended;               /* its end was said to the server's loop (before the record) */
	int end_fd;               /* the socket of the connection waiting for the run's end, sent with
	                             the run (-1: none): told first, without the server's loop between */
};

/* job_run_opts.take with ctx a struct warm: say the cell waits, then take the run the server
 * sends into the cell's spec s (its job, and *direct for a plain command); NULL when the server
 * is gone, or the run does not fit (said: it starts cold, warm_cold). */
const struct job *warm_take(void *ctx, struct cell_spec *s, char ***direct);
/* job_run_opts.ended with ctx a struct warm: the run's end, to the connection waiting for it,
 * then to the server's loop. */
void warm_ended(void *ctx, const struct run_result *r, bool gone);
/* A warm cell that was given up: its run (if one came) starts cold, under the same id; 0 when
 * none came. */
int warm_cold(struct warm *w, struct job_run_opts *o, struct error *err);
/* What w holds of the run it was sent (not w->a, nor its descriptors but the run's end's). */
void warm_free(struct warm *w);

#endif
