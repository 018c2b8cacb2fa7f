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

static char *json_str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? xstrdup(v) : NULL;
}

int spec_from_record_json(struct cell_spec *s, json_t *j, struct error *err)
{
	s->worktree = json_str(j, "worktree");
	s->rootfs = json_str(j, "rootfs");
	json_t *user = json_object_get(j, "user");
	s->home = json_str(user, "home");
	s->uid = (uid_t)json_integer_value(json_object_get(user, "uid"));
	s->limits.scratch = (uint64_t)json_integer_value(json_object_get(json_object_get(j, "limits"), "scratch"));
	json_t *prot = json_object_get(json_object_get(j, "policy"), "protect");
	size_t i;
	json_t *v;
	json_array_foreach(prot, i, v) {
		if (json_string_value(v) && policy_add_protect(&s->policy, json_string_value(v), err) < 0)
			return -EINVAL;
	}
	if (!json_object_get(j, "worktree"))
		return error_set(err, 0, "%s/spec.json names no worktree", s->rundir);
	s->worktree_ro = json_is_true(json_object_get(j, "worktree_read_only"));
	s->workdir = json_str(j, "workdir");
	json_array_foreach(json_object_get(j, "mounts"), i, v) {
		struct cell_mount m = { .source = json_str(v, "source"), .destination = json_str(v, "destination"),
					.readonly = json_is_true(json_object_get(v, "read_only")), .fd = -1 };
		spec_add_mount(s, m);   /* the spec frees what it holds */
		if (!m.source || !m.destination)
			return error_set(err, 0, "%s/spec.json: mounts[%zu] has no source or destination", s->rundir, i);
	}
	return 0;
}

/* The parts of a cell spec the policy needs, from the run's spec.json. */
static int spec_from_record(struct cell_spec *s, int dir, const char *id, struct error *err)
{
	_cleanup_free_ char *txt = rundir_read(dir, "spec.json");
	json_error_t je;
	json_t *j = txt ? json_loads(txt, 0, &je) : NULL;
	if (!j)
		return error_set(err, 0, "cannot read %s/spec.json: %s", s->rundir, txt ? je.text : "missing or not a file");
	snprintf(s->id, sizeof s->id, "%s", id);
	int rc = spec_from_record_json(s, j, err);
	json_decref(j);
	return rc;
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
	struct cell_spec s = { 0 };
	_cleanup_free_ char *id = cli_run_open(state_opt, prefix, &dir, &s.statedir, &rc);
	if (!id)
		return rc;
	s.rundir = xasprintf("%s/runs/%s", s.statedir, id);
	if (spec_from_record(&s, dir, id, &err) < 0) {
		rc = cli_fail(&err);
	} else {
		char *why = NULL;
		struct policy_ctx pc = spec_policy_ctx(&s);
		bool ok = policy_allows(&pc, operands[1], how, &why);
		puts(ok ? "allowed" : why);
		free(why);
		rc = ok ? 0 : 1;
	}
	policy_opts_free(&s.policy);
	cell_spec_free(&s);
	return rc;
}
