/* SPDX-License-Identifier: Apache-2.0 */
/* policy.c - `warren policy RUN PATH [--write|--read|--exec]`: would the run be allowed to
 * do this? For an agent harness that asks before it acts. Prints "allowed" (exit 0) or
 * "denied: <why, and where the run may write instead>" (exit 1). The answer is
 * policy_allows(), the check the supervisor uses too. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "policy/policy.h"
#include "run/record.h"
#include "run/rundir.h"
#include "util/fs.h"

int cmd_policy(int argc, char **argv);

static const char POLICY_HELP[] =
	"usage: warren policy RUN PATH [--write|--read|--exec] [--state DIR]\n"
	"\n"
	"May run RUN (an id or a unique prefix; '-' or '' for the latest) write (the default),\n"
	"read or execute PATH, a path inside its cell (relative: from its worktree)? Prints\n"
	"'allowed' and exits 0, or 'denied: ...' with where the run may write instead and exits 1.\n"
	"The answer is the policy's (Landlock, read-only mounts, protected worktree paths), from\n"
	"the run's record; symlinks are not followed.\n";

/* The run's spec.json, or NULL with err saying why. */
static json_t *spec_json(int dir, const char *statedir, const char *id, struct error *err)
{
	_cleanup_free_ char *txt = rundir_read(dir, "spec.json");
	json_error_t je;
	json_t *j = txt ? json_loads(txt, 0, &je) : NULL;
	if (!j)
		error_set(err, 0, "cannot read %s/runs/%s/spec.json: %s", statedir, id, txt ? je.text : "missing or not a file");
	return j;
}

int cmd_policy(int argc, char **argv)
{
	enum { O_STATE = 256, O_WRITE, O_READ, O_EXEC, O_HELP };
	static const struct option opts[] = {
		{ "state", required_argument, NULL, O_STATE }, { "write", no_argument, NULL, O_WRITE },
		{ "read", no_argument, NULL, O_READ }, { "exec", no_argument, NULL, O_EXEC },
		{ "help", no_argument, NULL, O_HELP }, { NULL, 0, NULL, 0 },
	};
	const char *state_opt = NULL;
	enum policy_access how = POLICY_WRITE;
	const char *operands[2];
	int nop = 0;
	_cleanup_error_ struct error perr = { 0 };
	optind = 1;
	/* options may come after the operands: getopt_long permutes them to the end */
	int c;
	while ((c = cli_getopt(argc, argv, "", opts, "policy", &perr)) != -1) {
		switch (c) {
		case O_STATE: state_opt = optarg; break;
		case O_WRITE: how = POLICY_WRITE; break;
		case O_READ: how = POLICY_READ; break;
		case O_EXEC: how = POLICY_EXEC; break;
		case O_HELP: fputs(POLICY_HELP, stdout); return 0;
		default:
			return cli_fail(&perr);
		}
	}
	for (; optind < argc; optind++) {
		if (nop == 2)
			return cli_usage_error("policy", "policy takes RUN and PATH, got also '%s'", argv[optind]);
		operands[nop++] = argv[optind];
	}
	if (nop != 2)
		return cli_usage_error("policy", "policy needs RUN and PATH (e.g. warren policy run_01J /tmp/x --write)");
	_cleanup_error_ struct error err = { 0 };
	int rc;
	const char *prefix = strcmp(operands[0], "-") ? operands[0] : "";
	_cleanup_close_ int dir = -1;
	_cleanup_free_ char *statedir = NULL;
	_cleanup_free_ char *id = cli_run_open(state_opt, prefix, &dir, &statedir, &rc);
	if (!id)
		return rc;
	json_t *spec = spec_json(dir, statedir, id, &err);
	bool ok = false;
	_cleanup_free_ char *why = NULL;
	if (!spec || record_policy_answer(statedir, id, spec, operands[1], how, &ok, &why, &err) < 0) {
		rc = cli_fail(&err);
	} else {
		puts(ok ? "allowed" : why);
		rc = ok ? 0 : 1;
	}
	json_decref(spec);
	return rc;
}
