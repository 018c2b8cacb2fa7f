/* SPDX-License-Identifier: Apache-2.0 */
/* rundir.h - the state directory and the run directories in it: layout, creation of the
 * scratch, the liveness lock, reclaim, lookup by id prefix. */
#ifndef WARREN_RUN_RUNDIR_H
#define WARREN_RUN_RUNDIR_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cell/spec.h"
#include "util/error.h"

/* --state, else $WARREN_STATE, else /var/lib/warren (root) or $XDG_STATE_HOME/warren or
 * ~/.local/state/warren. Returns a heap string. */
char *statedir_default(const char *opt);
/* The state directories a path given to a cell must not hold (cell/gate.h): [0] the run's
 * (given, "" for none; made or not yet), then canonical and existing: $WARREN_STATE's, the
 * caller's default, root's and the OCI face's defaults, and with registered every state
 * directory the caller made (its registry, statedir_registry); NULL-terminated, heap. */
char **statedir_known(const char *given, bool registered);
/* The caller's registry of the state directories it made: one canonical path a line, appended
 * when a state directory gets its mark (root: /var/lib/warren.known; others
 * ~/.local/state/warren.known). */
char *statedir_registry(void);
/* Drop from the caller's registry the names that are no state directory any more (and
 * repeats): how many, or -errno (warren gc). */
int statedir_registry_prune(void);
/* A state directory opened once: every later step works below these descriptors with *at()
 * calls that follow no symlink, whatever happens to the path. */
struct statedir {
	char *path;    /* absolute and symlink-free, for messages and the cell's mask */
	int fd;        /* the state directory (O_PATH) */
	int runs;      /* its runs/ (O_RDONLY | O_DIRECTORY) */
	uid_t owner;   /* who owns it: the caller, or root */
	char tag[9];   /* 8 hex digits of its identity (device, inode): in the runs' cgroup names */
};
/* Open (with create: make, as the caller's alone) the state directory path and its runs/,
 * refusing one that another user could change: it must belong to the caller (or, without
 * create, to root), not be writable by others (mode or ACL), and every directory on its way
 * must belong to root or the caller and be writable by nobody else (group write only for
 * group root, no ACL granting it) unless sticky. */
int statedir_open(struct statedir *sd, const char *path, bool create, struct error *err);
void statedir_close(struct statedir *sd);
/* The run directory <state>/runs/<id>, opened beneath runs/ without following a symlink;
 * refused when it does not belong to the state directory's owner. An fd, or -1 + err. */
int rundir_open(const struct statedir *sd, const char *id, struct error *err);
/* The name of a run's cgroups: the run id and the state's tag, so that a run id alone (which
 * anyone may plant in a state directory of theirs) names no other state's run. */
char *rundir_cgroup_name(const char *tag, const char *id);
/* The tag (8 hex digits) of a run's cgroup name (rundir_cgroup_name), or NULL when name is not
 * one of warren's. */
const char *rundir_cgroup_tag(const char *name);
/* The state directory's tag of st (its device and inode). */
void statedir_tag(const struct stat *st, char tag[9]);
/* gc --orphans: is the run cgroup name (warren's by name) one of a state directory that is
 * gone? owner is the state directory recorded on it (cgroup_mark_owner; NULL: none, so no one
 * can tell: false): gone, or another directory in its place (its tag differs). */
bool rundir_cgroup_orphaned(const char *name, const char *owner);

/* Create spec->rundir (beneath spec->runs_fd; its fd in spec->rundir_fd) with its scratch (tmp 01777, var-tmp 01777, home 0700 owned by the run
 * user, upper, work, root, etc; none of them with a scratch limit: the cell's init makes them
 * in its tmpfs) and take the run's lock. Returns the lock fd (held for the run's life) or
 * -errno. On failure nothing is left behind. */
int rundir_create(struct cell_spec *spec, struct error *err);
/* Remove the scratch of the run directory rfd (named rundir in messages), keeping the record. */
int rundir_reclaim(int rfd, const char *rundir, struct error *err);
/* True when a supervisor holds the run's lock. */
bool rundir_is_live(int rfd);
/* A file of the run directory (regular, not through a link), whole; NULL when none. */
char *rundir_read(int rfd, const char *name);
/* The same file parsed as JSON (spec.json, result.json); NULL when none or not JSON. */
json_t *rundir_load_json(int rfd, const char *name);
/* The supervisor's pid, which it writes into its run's lock file (lock, the fd rundir_create
 * returned) once the cell is being made: one file of the run fewer to make (on ext4 without a
 * journal each new inode of a run costs 30-120 us, see README); 0 when unknown (not written
 * yet, or cut short). A run directory of an older warren has it in a file "pid". */
pid_t rundir_pid(int rfd);
int rundir_write_pid(int lock, pid_t pid);
/* True when any scratch part of the run directory still exists. */
/* A warm cell's directory (serve --warm) holds RUNDIR_WARM until a run takes the cell: one left
 * by a killed server was never a run (warren gc removes it whole, with no record). */
#define RUNDIR_WARM "warm"
void rundir_taken(int rfd);
bool rundir_is_warm(int rfd);
bool rundir_has_scratch(int rfd);
/* Remove the temporary files ("spec.json.tmp.<pid>") a supervisor killed in the middle of
 * writing its record left in the run directory rfd. How many it removed. */
int rundir_remove_stale_tmp(int rfd);

/* Sorted (oldest first) NULL-terminated list of the run ids in <state>/runs. An entry that is
 * not a directory, or not the state owner's, is skipped with a note on stderr. */
char **runs_list(const struct statedir *sd);
void runs_list_free(char **ids);
/* Resolve an id or unique prefix ("run_01J", "01J") to a full id; NULL + err when none or many.
 * An empty or NULL prefix means the latest run. */
char *runs_resolve(const struct statedir *sd, const char *prefix, struct error *err);

#endif
