/* SPDX-License-Identifier: Apache-2.0 */
/* history.h - the options `warren run` and `warren job run` share for the history: --label,
 * --name, --db, and --run-id (the id warren serve gave a queued run). */
#ifndef WARREN_CLI_HISTORY_H
#define WARREN_CLI_HISTORY_H

#include <getopt.h>
#include <stddef.h>

#include "cell/spec.h"
#include "util/error.h"

/* entries of a getopt_long table: values base .. base+3 */
#define HIST_OPTIONS(base)                                                                              \
	{ "label", required_argument, NULL, (base) }, { "name", required_argument, NULL, (base) + 1 },   \
	{ "db", required_argument, NULL, (base) + 2 }, { "run-id", required_argument, NULL, (base) + 3 }

#define HIST_HELP                                                                                       \
	"  --label K=V         a label to find the run by (repeatable; 'warren history --label')\n"      \
	"  --name NAME         a name for the run (in the record and the history)\n"                     \
	"  --db PATH           the history database (default <state>/history.db; 'none': no history)\n"

struct hist_opts {
	char **labels;   /* "k=v", NULL-terminated */
	size_t n;
	const char *name, *db, *run_id;
};

/* Option base+which with its argument, checked. */
int hist_opt_parse(struct hist_opts *h, int which, const char *arg, struct error *err);
/* Before cellspec_finish: move them into spec s (h is empty after). */
void hist_opts_apply(struct hist_opts *h, struct cell_spec *s);
void hist_opts_free(struct hist_opts *h);

#endif
