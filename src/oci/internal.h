/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - what the files of the OCI runtime face share: the global options, the one way
 * to fail (stderr and --log, as runc writes them), the container's state directory, the
 * bundle's config.json as a cell spec, and the detached supervisor. */
#ifndef WARREN_OCI_INTERNAL_H
#define WARREN_OCI_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/un.h>

#include "cell/spec.h"
#include "util/error.h"

/* runc's exit status for a failure of the runtime itself */
#define OCI_FAIL 1
#define OCI_SPEC_VERSION "1.1.0"
/* the annotation naming warren's state directory for the run's record */
#define OCI_STATE_ANNOTATION "warren.state"

/* the global options: --root, --log, --log-format, --systemd-cgroup, --debug */
struct oci_globals {
	const char *root;
	const char *log;
	bool log_json;
	bool systemd_cgroup;
	bool debug;
};
extern struct oci_globals oci_g;

/* One line "warren: MSG" on stderr and in --log ({"level":"error","msg":...} with
 * --log-format json: the last line's msg is what go-runc shows); returns OCI_FAIL. */
int oci_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An error value, the same way. */
int oci_fail_err(struct error *err);
/* A signal by name (TERM, SIGTERM, sigterm) or number; -1 when it is none. */
int oci_parse_signal(const char *s);
/* A note (level warning) in --log only. */
void oci_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- the state of one container: <root>/<id>/ (state.c) ---- */

struct oci_state {
	char *id;
	char *bundle;
	char *run_id;         /* warren's run */
	char *statedir;       /* warren's state directory holding the run's record */
	char *created;        /* RFC 3339 */
	pid_t pid;            /* the supervisor: what --pid-file names */
	unsigned long long start_time; /* its start in clock ticks after boot (/proc/PID/stat) */
	pid_t init_pid;       /* the cell's init (its first child is the job) */
	char *freezer;        /* v1: the cell's freezer group (cgroup/freezer.h), or NULL */
	bool cgroup;          /* the supervisor is in the container's groups (cgroup_enter_self) */
	json_t *annotations;
	char *status;         /* what the supervisor last wrote: created, running, stopped */
};

/* The root directory (--root, or the default), made when missing with make (create, run):
 * its path (heap). */
char *oci_root(bool make, struct error *err);
/* A container id as runc allows: [A-Za-z0-9_+.-], 1-1024 characters, not "." or "..". */
bool oci_valid_id(const char *id);
/* Open <root>/<id> (O_DIRECTORY), -1 + err ("container ID does not exist"). */
int oci_dir_open(const char *root, const char *id, struct error *err);
/* Take the container's lock (flock on its directory; blocks). */
int oci_lock(int dfd);
int oci_state_read(int dfd, struct oci_state *st, struct error *err);
int oci_state_write(int dfd, const struct oci_state *st);
void oci_state_free(struct oci_state *st);
/* created, running or stopped, from the supervisor's word and whether it still lives. */
const char *oci_status(const struct oci_state *st);
bool oci_pid_alive(pid_t pid, unsigned long long start_time);
/* The job: the first child of the cell's init (0: none). */
pid_t oci_job_pid(pid_t init);
/* The same for a running container: start returns once init is told to go, and its job may
 * be a moment from being made (an exec or ps at once after start, a kubelet's probe): up to
 * 2 s for it. */
pid_t oci_job_pid_wait(pid_t init);
unsigned long long oci_pid_start_time(pid_t pid);
/* The control socket's address, <dir>/ctl through /proc/self/fd (any length of --root). */
void oci_ctl_addr(int dfd, struct sockaddr_un *a);
/* Ask the container's supervisor (cmd: "start", "kill SIG ALL", "pause", "resume"); 0, or
 * -1 + err with the supervisor's answer. */
int oci_ctl(int dfd, const char *id, const char *cmd, struct error *err);

/* ---- config.json (config.c) ---- */

struct oci_bundle {
	json_t *config;
	char *path;           /* absolute */
	bool terminal;
	bool kept;            /* the config is create's copy (an exec's) */
	bool has_oom;
	int oom_score_adj;
	struct { int resource; const char *name; struct rlimit lim; } rlimits[2 * RLIM_NLIMITS]; /* the bundle's, an exec's */
	size_t n_rlimits;
};
/* the copy of the bundle's config.json that create keeps in the container's state directory:
 * what exec reads (the bundle may have changed since) */
#define OCI_KEPT_CONFIG "config.json"
/* Read bundle/config.json (kept >= 0: the copy kept in that container's state directory) and
 * fill s (a whole cell spec, ready for the supervisor) from it; what warren cannot honour is
 * refused with one line naming the field. */
int oci_bundle_load(const char *bundle, int kept, const char *id, struct oci_bundle *b, struct cell_spec *s, struct error *err);
/* linux.resources.cpu (quota, period, shares, cpus, mems) into l; one line for what is out
 * of range or names CPUs the host does not have. */
int oci_take_cpu(json_t *cpu, struct limits *l, struct error *err);
/* update's resources (runtime-spec linux.resources): memory.limit, pids.limit and cpu into l
 * (0 where not given); one line for what is not a number or not supported. */
int oci_update_limits(json_t *r, struct limits *l, struct error *err);
/* linux.namespaces (ns.c) into s->ns: a pod's namespaces to join (their paths judged by the
 * gate, opened), the host's where the bundle leaves one out and the operator allows it; the
 * rest refused in one line. kept (an exec's copy of the config): the types checked alone. */
int oci_take_namespaces(json_t *ns, bool kept, struct cell_spec *s, struct error *err);
/* Keep b's config in the container's state directory dfd (OCI_KEPT_CONFIG); 0 or -errno. */
int oci_bundle_keep(int dfd, const struct oci_bundle *b);
/* A terminal asked (process.terminal) goes to --console-socket: refused without one. */
int oci_console_check(const struct oci_bundle *b, const char *console_socket, struct error *err);
void oci_bundle_free(struct oci_bundle *b);
/* exec's process JSON (args, env, cwd, user, terminal, capabilities, rlimits) over the cell
 * spec of the bundle. */
int oci_process_apply(json_t *p, struct oci_bundle *b, struct cell_spec *s, struct error *err);

/* ---- seccomp and capabilities (seccomp.c) ---- */
struct policy_opts;
/* linux.seccomp into p->extra_bpf (a second filter, after warren's). */
int oci_seccomp(json_t *seccomp, struct policy_opts *p, struct error *err);
/* process.capabilities: what of warren's root set the bundle's bounding/effective sets lack
 * goes into p->caps_drop. */
int oci_caps(json_t *caps, struct policy_opts *p, struct error *err);

/* ---- the supervisor (daemon.c) ---- */

struct oci_create {
	const char *id, *bundle, *pid_file, *console_socket;
	int preserve_fds;
	bool detach;          /* run: return after start */
	bool foreground;      /* run: stay in the caller's session and wait */
};
/* create (and with run, start and wait): the supervisor is forked, prepares the cell, writes
 * the state and answers; returns the exit status of the command. */
int oci_create(const struct oci_create *c, bool run);

/* Connect to the console socket at path (in the caller's mount namespace); -1 + err. */
int oci_console_connect(const char *path, struct error *err);
/* Send the terminal's master over the connected console socket (as runc: SCM_RIGHTS). */
int oci_console_send(int sock, int master, struct error *err);
/* Write pid to --pid-file path (atomically); 0, or OCI_FAIL after one line. */
int oci_write_pid_file(const char *path, pid_t pid);
/* process.rlimits of b on this process (inherited by what it starts), and its oomScoreAdj on
 * pid (0: this process): they take away, never give (a hard limit above the caller's, a score
 * below this process's, are kept at the caller's, with a warning in --log). */
void oci_apply_rlimits(const struct oci_bundle *b);
void oci_apply_oom(const struct oci_bundle *b, pid_t pid);
/* exec (exec.c): a new process in the running container c->id. */
int oci_exec(const struct oci_create *c, const char *process);

/* ---- features, spec, --version (info.c) ---- */
int oci_features(void);
int oci_spec(int argc, char **argv);
int oci_version(void);

#endif
