/* SPDX-License-Identifier: Apache-2.0 */
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
/* --env's word: NAME=VALUE, or NAME alone for the caller's NAME (nothing when it is unset, as
 * docker does). */
int env_add_arg(struct envb *e, const char *arg, const char *what, struct error *err);
/* One line of an env file: NAME=VALUE after an optional "export", the value bare (up to a
 * comment after a blank; trailing blanks dropped), "double-quoted" (\" \\ \$ \` \n escaped)
 * or 'single-quoted' (as it is). 0 with *kv "NAME=VALUE" or "NAME" alone (heap), 1 for a blank
 * line or a comment, -1 with *why (what is wrong with the line). */
int env_file_line(const char *line, char **kv, const char **why);
/* --env-file FILE: each line as env_file_line reads it, as --env would take it. */
int env_add_file(struct envb *e, const char *file, struct error *err);

/* --result FILE (or NULL) can be written at the end: its directory exists and is writable.
 * Checked before the run starts, not found out after it. */
int result_file_check(const char *file, struct error *err);

/* The run user from --user (or NULL for the default) and the mode (root or rootless). */
int cellspec_user(struct cell_spec *s, const char *user, struct error *err);
/* rootfs (or NULL) and the worktree (NULL: the current directory; CELLSPEC_WORK_NONE: none),
 * checked; needs s->statedir. Set s->worktree_ro before, for --work-ro. */
#define CELLSPEC_WORK_NONE "none"
int cellspec_paths(struct cell_spec *s, const char *rootfs, const char *work, struct error *err);
/* A bind of the host's src on dst in the cell (opt: --bind, --ro-bind, --externals, for
 * messages), read-only when ro: dst checked (cell/mounts.h), src opened once and checked as
 * the worktree is (symlinks owned by others refused; system trees refused read-write; never
 * /proc, /run...). Needs the worktree, home and state directory in s (after cellspec_paths). */
int cellspec_add_bind(struct cell_spec *s, enum gate_face face, const char *opt, const char *src, const char *dst, bool ro,
		      struct error *err);
/* A regular file with one name under /run or /var/run (src; fd its O_PATH): what a --ro-bind
 * may show of those trees, which hold no socket then. */
bool run_plain_file(const char *src, int fd);
/* For a bind of src refused at dst (normalised) in the cell's scratch (/tmp, /var/tmp and
 * below): the same below the run's home instead, where a mount point can always be made
 * (/var/tmp/pip -> HOME/pip; /var/tmp itself -> HOME/<src's last name>); NULL for any other
 * dst, or without a home. Heap. */
char *bind_dst_instead(const char *dst, const char *src, const char *home);
/* The same from "SRC[:DST]" (DST defaults to SRC). */
int cellspec_add_bind_arg(struct cell_spec *s, enum gate_face face, const char *opt, const char *arg, bool ro, struct error *err);
/* The cell options of `warren run` and `warren job run` beyond the worktree: --bind and
 * --ro-bind in the order given, --externals, --workdir, --hostname. */
struct cell_opts {
	struct cell_opts_bind { const char *arg; const char *opt; bool ro; enum gate_face face; } *binds;
	size_t n_binds;
	const char *externals, *workdir, *hostname;
	enum gate_face externals_face;   /* who named the externals (cell/gate.h; 0: the command line) */
};
/* Take one of the options above (name without "--", value); false when it is not one. */
bool cell_opts_take(struct cell_opts *o, const char *name, const char *value);
/* Apply o to s (after cellspec_paths): binds checked and opened, then the externals. */
int cellspec_cell_opts(struct cell_spec *s, const struct cell_opts *o, struct error *err);
void cell_opts_free(struct cell_opts *o);
/* What the caller gave, which an image's config (image/config.h) only fills in. */
struct image_given {
	const char *user;          /* --user (NULL: none): else the image's User, if allowed */
	bool commands;             /* a run's command: Entrypoint and Cmd make s->argv (a job's steps
	                              are shell scripts: only Env, WorkingDir and User apply) */
	const char *entrypoint;    /* --entrypoint (NULL: the image's; "": none) */
	char *const *command;      /* the command given, n words (n 0: none, the image's Cmd) */
	size_t n;
};
/* --image NAME (or NULL): the stored image as the root, locked for the run's life; after
 * cellspec_finish (needs the state directory) and after --workdir; refused together with
 * --rootfs. Its config gives the defaults g leaves open: Env (under the caller's, in
 * s->image_env), WorkingDir (when no --workdir), User (numeric or in the image's passwd, and
 * only one this caller may choose: else a note), and with g->commands the command. */
int cellspec_image(struct cell_spec *s, const char *image, const struct image_given *g, struct error *err);
/* The job's environment: the clean defaults, the image's Env, then late (in order), then
 * TMPDIR=/tmp last. */
void cellspec_env(struct cell_spec *s, struct envb *late);
/* Prepare the state directory, make the run id and the run directory's path. */
int cellspec_finish(struct cell_spec *s, struct error *err);
/* --driver NAME (a job file's driver:): container or vm. */
int cellspec_driver(enum cell_driver *d, const char *name, struct error *err);

/* The limit options of warren run and warren submit, one table: each named as its limit
 * (run/limits.h) or --grace, all with the option value code (getopt's struct option). */
#define LIMIT_OPTIONS(code)                                                                             \
	{ "time", required_argument, NULL, (code) }, { "cpu-time", required_argument, NULL, (code) },    \
	{ "memory", required_argument, NULL, (code) }, { "pids", required_argument, NULL, (code) },      \
	{ "output", required_argument, NULL, (code) }, { "scratch", required_argument, NULL, (code) },   \
	{ "grace", required_argument, NULL, (code) }, { "cpus", required_argument, NULL, (code) },        \
	{ "cpuset", required_argument, NULL, (code) }
/* --NAME V of LIMIT_OPTIONS into l: a limit's value (or none), the grace's duration, the CPU
 * bandwidth (--cpus N) or the CPU list (--cpuset LIST). */
int cellspec_limit_option(const char *name, const char *v, struct limits *l, struct error *err);

/* ---- a job's cell spec: `warren job run` (cli/job.c) and a warm cell's run (cli/warm.c) ---- */
struct job;
struct hist_opts;
/* Load the job file (its text when given, already read: a warm cell's run from the server;
 * work: --work or NULL; api: sent to a server, its paths below work), saying each mistake on a
 * line of its own in the file's order. 0, or -1 after those lines. */
int cli_job_load_text(const char *file, const char *text, const char *work, bool api, struct job *job);
int cli_job_load(const char *file, const char *work, bool api, struct job *job);
/* What `job run` takes from its command line to make a job's cell spec. */
struct job_args {
	struct cell_opts co;
	bool work_ro, keep;
	bool api;                 /* --api (warren serve's): the job was sent to the server (cell/gate.h) */
	const char *state, *user, *work;
	const char *rootfs, *image;   /* --rootfs, --image: the command line's root wins over the file's */
};
void job_args_free(struct job_args *a);
/* The cell spec of job, as `job run` makes it (the command line's options over the job file's);
 * hist is moved into it. */
int job_cell_spec(const struct job_args *a, const struct job *job, struct hist_opts *hist, struct cell_spec *s,
		  struct error *err);
/* command, to start as the cell's job itself (no executor, no shell), when job is the one
 * step the server made of it (job_is_command); else NULL. */
char **job_plain_command(const struct job *j, char **command);
/* The server's --command-json: its run's plain command, a JSON array of strings; NULL when it
 * is not one. */
char **command_json_argv(const char *text);

#endif
