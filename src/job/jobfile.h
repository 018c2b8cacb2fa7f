/* SPDX-License-Identifier: Apache-2.0 */
/* jobfile.h - a job file (YAML) read into a job: the cell, its services and its ordered steps.
 * Every mistake is reported with file:line:column before anything starts. */
#ifndef WARREN_JOB_JOBFILE_H
#define WARREN_JOB_JOBFILE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cell/spec.h"
#include "net/net.h"

#define JOB_FILE_MAX (1 << 20) /* bytes of a job file */
#define JOB_DEPTH_MAX 64       /* levels of mappings and lists nested in a job file */
#define JOB_ENTRIES_MAX 1000
#define JOB_SESSION_IDLE_MS (10 * 60 * 1000ULL)     /* session: idle, when not given */
#define JOB_SESSION_MAX_MS (8 * 3600 * 1000ULL)     /* session: max, when not given */   /* entries of one mapping or list (steps, env, ...) */

enum ready_kind { READY_NONE, READY_TCP, READY_RUN };

struct job_service {
	char *name;
	char *run;
	char **env;               /* K=V, NULL-terminated */
	enum ready_kind ready;
	unsigned tcp_port;
	char *ready_run;
	uint64_t ready_timeout_ms;
};

/* When a step runs, as on GitHub Actions: success() when no earlier step failed (the
 * default), failure() when one did, always() also after a failure or a cancel. */
enum step_if { IF_SUCCESS, IF_FAILURE, IF_ALWAYS };

struct job_step {
	char *name;
	char *run;
	char *shell;              /* NULL: the job's shell */
	char **env;
	char *workdir;            /* relative to the worktree, or absolute inside it */
	uint64_t timeout_ms;      /* 0: none (the job's timeout still applies) */
	enum step_if when;        /* if: */
	bool continue_on_error;   /* continue-on-error: its failure does not fail the job */
};

struct job {
	char *path;               /* the job file */
	char *name;
	char *rootfs;             /* absolute or NULL */
	char *work;               /* absolute, or "none" (work: none) */
	char *image;              /* image: NAME of a stored image, or NULL */
	char *shell;              /* default "sh -e" */
	uint64_t timeout_ms;
	struct limits limits;
	struct job_bind { char *arg; bool ro; } *binds; /* binds:, ro-binds: as "SRC:DST", SRC absolute */
	size_t n_binds;
	char *externals;          /* externals: DIR, absolute, or NULL */
	bool work_ro;             /* work-ro: true */
	char *workdir;            /* workdir: PATH in the cell, or NULL */
	char *hostname;           /* hostname: NAME, or NULL */
	char *network;            /* network: none | nat | allow=LIST */
	enum cell_driver driver;  /* driver: container | vm (cell/spec.h) */
	struct net_opts net;      /* parsed; its allow list points into network */
	char **env;
	struct job_service *services;
	size_t n_services;
	struct job_step *steps;
	size_t n_steps;
	enum gate_face face;      /* who wrote it (cell/gate.h): GATE_JOBFILE, or GATE_API for a job
	                             sent to the server */
	bool session;             /* session: the cell stays up for execs after its steps (if any) */
	uint64_t session_idle_ms, session_max_ms; /* its end when no exec came for idle, at max */
	char *anchor;             /* canonical: where its own paths stay (its directory, or an API
	                             job's worktree) */
};

/* Read and check path. On mistakes returns -EINVAL and sets *errors to a heap string of lines
 * "path:line:col: where: what" (one per mistake). A job file is untrusted (it lives in the
 * repository it builds): its work: must stay inside the job file's directory and each step's
 * working-directory inside the worktree, unless work_cli (--work on the command line, an
 * absolute path) names the worktree instead. */
int job_load(const char *path, const char *work_cli, const char *api_work, struct job *job, char **errors);
/* The same for text (len bytes) already read: path names it in messages and anchors its
 * relative paths, or, for a job sent to the server (api_work: the request's worktree), that
 * worktree does: its own paths stay below it (cell/gate.h, GATE_API). More than JOB_FILE_MAX
 * bytes, JOB_DEPTH_MAX levels or JOB_ENTRIES_MAX entries in a mapping or list are refused, and
 * so are aliases (*name). */
int job_parse(const char *path, const char *text, size_t len, const char *work_cli, const char *api_work, struct job *job,
	      char **errors);
/* Does working-directory workdir stay inside worktree (lexically; absolute or relative)? */
bool job_workdir_inside(const char *workdir, const char *worktree);
/* The step script that execs argv as it is, each word quoted for the shell: exec 'a' 'b'
 * (heap): what the server makes a plain command's one step of. */
char *job_exec_line(char *const *argv);
/* The job of a plain command, as the server makes it: one step "main" running job_exec_line(argv)
 * (the request's env, limits, ... are added to it); job_json_text: a job's text as the server
 * writes it, or gives it to a warm cell (heap). */
json_t *job_command_json(char *const *argv);
char *job_json_text(json_t *job);
/* Whether job is the one step job_exec_line made of argv, run as the server makes it (no
 * shell: of the job's or the step's, no step env, workdir, time limit or if:, no services): then
 * argv may be started as the cell's job itself, without the executor and its shell. */
bool job_is_command(const struct job *job, char *const *argv);
void job_free(struct job *job);

#endif
