/* rundir.h - the state directory and the run directories in it: layout, creation of the
 * scratch, the liveness lock, reclaim, lookup by id prefix. */
#ifndef WARREN_RUN_RUNDIR_H
#define WARREN_RUN_RUNDIR_H

#include <stdbool.h>
#include <sys/types.h>

#include "cell/spec.h"
#include "util/error.h"

/* --state, else $WARREN_STATE, else /var/lib/warren (root) or $XDG_STATE_HOME/warren or
 * ~/.local/state/warren. Returns a heap string. */
char *statedir_default(const char *opt);
/* Create <state>/runs if needed, check it is ours and not writable by others. */
int statedir_prepare(const char *state, struct error *err);

/* Create spec->rundir with its scratch (tmp 01777, var-tmp 01777, home 0700 owned by the run
 * user, upper, work, root, etc) and take the run's lock. Returns the lock fd (held for the
 * run's life) or -errno. On failure nothing is left behind. */
int rundir_create(const struct cell_spec *spec, struct error *err);
/* Remove the scratch of a run directory, keeping the record. */
int rundir_reclaim(const char *rundir, struct error *err);
/* True when a supervisor holds the run's lock. */
bool rundir_is_live(const char *rundir);
/* The supervisor's pid written at start (0 when unknown). */
pid_t rundir_pid(const char *rundir);
int rundir_write_pid(const char *rundir, pid_t pid);
/* True when any scratch part of the run directory still exists. */
bool rundir_has_scratch(const char *rundir);

/* Sorted (oldest first) NULL-terminated list of run ids in <state>/runs. */
char **runs_list(const char *state);
void runs_list_free(char **ids);
/* Resolve an id or unique prefix ("run_01J", "01J") to a full id; NULL + err when none or many.
 * An empty or NULL prefix means the latest run. */
char *runs_resolve(const char *state, const char *prefix, struct error *err);

#endif
