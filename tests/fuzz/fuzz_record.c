/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_record.c - a run's record as `warren show` and `warren policy` read it: result.json or
 * spec.json text (json_loads, as they load it), the rows of show_record, and the policy's
 * answers for a few paths (record_policy_answer, as warren policy and the server ask it).
 * Output goes to /dev/null. */
#include <stdio.h>

#include "cli/cli.h"
#include "fuzz.h"
#include "run/record.h"

static void policy_of(json_t *j)
{
	static const char *const paths[] = { "x", ".git/hooks/pre-commit", "a/../../b", "/etc/passwd", "/tmp/x",
					     "/home/user/.cache/x", "build/fuzz/x", "/proc/self/mem" };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		for (int how = POLICY_READ; how <= POLICY_EXEC; how++) {
			_cleanup_error_ struct error err = { 0 };
			_cleanup_free_ char *why = NULL;
			bool ok;
			if (record_policy_answer("build/fuzz", "run_x", j, paths[i], (enum policy_access)how, &ok, &why, &err) < 0)
				return;
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *out;
	if (!out && !(out = fopen("/dev/null", "w")))
		abort();
	_cleanup_free_ char *text = fuzz_string(data, size);
	json_t *j = json_loads(text, 0, NULL);
	if (!j)
		return 0;
	show_record(out, "run_x", "build/fuzz/runs/run_x", j, j, false);
	show_record(out, "run_x", "build/fuzz/runs/run_x", j, NULL, true);
	policy_of(j);
	json_decref(j);
	return 0;
}
