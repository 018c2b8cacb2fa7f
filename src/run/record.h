/* SPDX-License-Identifier: Apache-2.0 */
/* record.h - the run's record: spec.json (what was asked) and result.json (how it ended),
 * written atomically; the same JSON goes to --result FILE / --result-fd N. */
#ifndef WARREN_RUN_RECORD_H
#define WARREN_RUN_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cell/spec.h"
#include "util/error.h"

/* The exit status of a run a limit other than time stopped when the job's own status was 0:
 * such a run never passes (time and CPU time: 124, as timeout(1)). */
#define EXIT_LIMIT 123

enum run_status { RUN_EXITED, RUN_SIGNALED, RUN_LIMIT, RUN_INTERRUPTED, RUN_ERROR };

struct run_result {
	enum run_status status;
	int exit_code;              /* what warren exits with */
	int signal;                 /* the signal that ended the job, 0 if none */
	char *cause_limit;          /* "time", "cpu-time", "memory", "pids", "output", "scratch", "signal" or NULL */
	char *cause_value;          /* "30s", "512 MiB", ... */
	char *cause_message;        /* the one line shown to the user (without "warren: <id> stopped: ") */
	char *error;                /* warren's own failure, for status error */
	struct timespec started, ended; /* CLOCK_REALTIME */
	double wall_s;
	bool have_cpu, have_memory, have_pids;
	double cpu_user_s, cpu_sys_s;
	uint64_t peak_memory, pids_peak, output_bytes, scratch_bytes;
	bool have_output;
	bool have_throttle;         /* a CPU bandwidth limit (--cpus): how often, how long it held the run */
	uint64_t nr_throttled, throttled_us;
	json_t *failed_step;        /* a job: the step that failed it, {number, name, status, exit_code,
	                               cause} (the record's "failed_step"), or NULL */
	unsigned tolerated;         /* a job: its steps that failed under continue-on-error */
};

const char *run_status_name(enum run_status s);
/* RFC 3339 UTC with milliseconds into buf (>= 32 bytes). */
char *format_rfc3339(char *buf, size_t len, const struct timespec *ts);

int record_write_spec(const struct cell_spec *s, struct error *err);
/* What `warren policy` and the server's GET /v1/runs/{id}/policy answer, from the record: may
 * run id of the state directory statedir, whose spec.json is spec, access path (in its cell)
 * this way (policy_allows())? 0 with *allowed, and *why (heap) saying why and where the run
 * may write when it is denied; -EINVAL with err when spec lacks what the policy needs. */
int record_policy_answer(const char *statedir, const char *id, json_t *spec, const char *path, enum policy_access how,
			 bool *allowed, char **why, struct error *err);
/* Serialise the result (heap string, pretty JSON, trailing newline). */
char *record_result_json(const struct cell_spec *s, const struct run_result *r, json_t *extra);
int record_write_result(const struct cell_spec *s, const char *json, struct error *err);
void run_result_free(struct run_result *r);
/* --label "k=v" strings (NULL-terminated) as a JSON object of strings. */
json_t *record_labels_json(char **labels);

#endif
