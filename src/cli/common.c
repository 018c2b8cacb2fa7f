/* SPDX-License-Identifier: Apache-2.0 */
/* common.c - what the subcommands share: printing errors the one way warren does, opening the
 * state directory and a run in it. */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli.h"

#include <errno.h>
#include <unistd.h>

#include "run/rundir.h"
#include "util/fs.h"

int cli_state_open(const char *opt, struct statedir *sd)
{
	_cleanup_free_ char *state = statedir_default(opt);
	struct error err = { 0 };
	if (statedir_open(sd, state, false, &err) == 0)
		return 0;
	if (err.errnum != ENOENT)
		return cli_fail(&err);
	error_clear(&err);
	*sd = (struct statedir){ .path = abs_path_would_be(state), .fd = -1, .runs = -1, .owner = geteuid() };
	return 0;
}

char *cli_run_open(const char *opt, const char *prefix, int *rfd, char **state, int *rc)
{
	struct statedir sd;
	*rfd = -1;
	if ((*rc = cli_state_open(opt, &sd)))
		return NULL;
	struct error err = { 0 };
	char *id = runs_resolve(&sd, prefix, &err);
	*rfd = id ? rundir_open(&sd, id, &err) : -1;
	if (*rfd < 0) {
		free(id);
		id = NULL;
		*rc = cli_fail(&err);
	} else if (state) {
		*state = sd.path;
		sd.path = NULL;
	}
	statedir_close(&sd);
	return id;
}

int cli_fail(struct error *err)
{
	warn_line("%s", err->msg ? err->msg : "unknown error");
	int st = err->status ? err->status : 125;
	error_clear(err);
	return st;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *m = xvasprintf(fmt, ap);
	va_end(ap);
	warn_line("%s (see 'warren %s --help')", m, cmd);
	return 125;
}
