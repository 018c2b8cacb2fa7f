/* spec.h - building a cell spec from a user's words, shared by `warren run` and `warren job`. */
#ifndef WARREN_CLI_SPEC_H
#define WARREN_CLI_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "cell/spec.h"
#include "util/error.h"

/* A growing environment list; setting a name again replaces it. */
struct envb {
	char **v;
	size_t n, cap;
};

void env_set(struct envb *e, const char *kv);
void envb_free(struct envb *e);
void env_setkv(struct envb *e, const char *k, const char *v);
bool valid_env_name(const char *s, size_t len);
/* Add NAME=VALUE after checking it; TMPDIR is refused with a note (it is always /tmp). */
int env_add_checked(struct envb *e, const char *kv, const char *what, struct error *err);
int env_add_file(struct envb *e, const char *file, struct error *err);

/* The run user from --user (or NULL for the default) and the mode (root or rootless). */
int cellspec_user(struct cell_spec *s, const char *user, struct error *err);
/* rootfs (or NULL) and the worktree (NULL: the current directory), checked; needs s->statedir. */
int cellspec_paths(struct cell_spec *s, const char *rootfs, const char *work, struct error *err);
/* The job's environment: the clean defaults, then late (in order), then TMPDIR=/tmp last. */
void cellspec_env(struct cell_spec *s, struct envb *late);
/* Prepare the state directory, make the run id and the run directory's path. */
int cellspec_finish(struct cell_spec *s, struct error *err);
/* --driver NAME (a job file's driver:): container or vm. */
int cellspec_driver(enum cell_driver *d, const char *name, struct error *err);

#endif
