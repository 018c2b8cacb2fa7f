/* SPDX-License-Identifier: Apache-2.0 */
/* runner.h - running a job in one cell: services first (with readiness), then the steps in
 * order, each with its own time limit and log, then the services are stopped. */
#ifndef WARREN_JOB_RUNNER_H
#define WARREN_JOB_RUNNER_H

#include <stdbool.h>

#include "cell/spec.h"
#include "run/record.h"
#include "job/jobfile.h"
#include "util/error.h"

struct job_run_opts {
	bool quiet;    /* no step output on the terminal (it is still in the logs) */
	bool prefix;   /* plain output: prefix each line with the step's name */
	bool json;     /* print result.json on stdout at the end; the view goes to stderr */
	int result_fd;
	const char *result_file;
	/* NULL, or a warm cell's (serve --warm): called once the cell is made and its init waits;
	 * fills s's fields of the run that takes it (cell_spec_shape_diff said it fits) and returns
	 * its job, or NULL to give the cell up (job_run then returns -ECANCELED). A job that is a
	 * plain command (one step, no services) may set *direct to the argv of its step (owned by
	 * ctx): it is started as the cell's job, with the env, cwd and streams the executor would
	 * give it, without the executor and its shell */
	const struct job *(*take)(void *ctx, struct cell_spec *s, char ***direct);
	/* NULL, or a cold start's plain command (a job of one step the server made of it): the
	 * argv of its step, started as the cell's job as a warm cell's take does (*direct above);
	 * a container without a terminal only, else the job path */
	char **direct;
	/* NULL, or told how the run ended as soon as it is known (a plain command's end, reported by
	 * init while the cell is still torn down: gone false), and again once the cell is gone
	 * (gone true), before the record is written */
	void (*ended)(void *ctx, const struct run_result *r, bool gone);
	void *take_ctx;
};

/* Run job in the cell described by s. Returns the job's exit status (the failing step's, 124
 * for a time limit, ...) or a negative errno with err set when warren failed to start it. */
int job_run(const struct job *job, struct cell_spec *s, const struct job_run_opts *o, struct error *err);

#endif
