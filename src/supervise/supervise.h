/* supervise.h - one run from start to record: run directory, cgroup, cell, the event loop that
 * watches exit, limits and signals, the cause, result.json and the reclaim of the scratch. */
#ifndef WARREN_SUPERVISE_SUPERVISE_H
#define WARREN_SUPERVISE_SUPERVISE_H

#include "cell/spec.h"
#include "run/record.h"
#include "util/error.h"

struct supervise_opts {
	int result_fd;            /* -1, or where to write the result JSON too */
	const char *result_file;  /* NULL, or a file to write the result JSON to */
	bool quiet;               /* no cause line on stderr */
};

/* Run the cell described by s. Returns the exit status warren should exit with (the job's,
 * 128+N, 124, ...) or a negative errno with err filled when warren itself failed before the
 * job could start (nothing is left on the host then). */
int supervise_run(struct cell_spec *s, const struct supervise_opts *o, struct error *err);

#endif
