/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_jobfile.c - the job file parser (job_parse) on any text: its YAML, its keys, the
 * durations, sizes and network words in it, and the bounds on its size and shape. The job
 * file is named as if under build/fuzz/, so its relative paths resolve there. */
#include "fuzz.h"
#include "job/jobfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct job job;
	char *errors = NULL;
	job_parse("build/fuzz/job.yaml", (const char *)data, size, NULL, NULL, &job, &errors);
	free(errors);
	job_free(&job);
	return 0;
}
