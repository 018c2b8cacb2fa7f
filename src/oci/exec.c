/* SPDX-License-Identifier: Apache-2.0 */
/* exec.c - `exec --process JSON [--detach] [--pid-file F] [--console-socket S] ID`: a new
 * process in a running container's cell. A keeper process (its pid is what --pid-file names;
 * it ends as the process did, as the supervisor does for the job) joins the cell's
 * namespaces through a pidfd of the job (user, mount, pid, network, ipc, uts, cgroup) and the
 * run's cgroup, then forks the process, which takes the job's defences from the bundle
 * (uid/gid, no_new_privs, rlimits, capabilities, Landlock, warren's seccomp filter and the
 * bundle's) before it executes. It lives in the cell's pid namespace: it ends with the cell.
 * As root the process is in a group of its own below the cell's (cgroup/execgroup.h) that a
 * guard, a host process the keeper leaves behind, empties when the keeper is killed (a shim
 * giving up on an exec kills the pid it was given): the process and all it started go, also
 * what left its session. On a normal end what it left stays, as runc's. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cgroup/cgroup.h"
#include "cgroup/execgroup.h"
#include "oci/internal.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/sys.h"

/* The run's cgroups, as the job's /proc/PID/cgroup names them, opened for writing (host view,
 * before the mount namespace changes): warren's (warren/...) or the bundle's cgroupsPath's,
 * every group but a hierarchy's root; rootless: none. */
static size_t open_cgroups(pid_t job, int *fds, size_t max)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cgroup", (int)job);
	_cleanup_free_ char *text = read_file(path, NULL);
	size_t n = 0;
	for (char *line = text ? strtok(text, "\n") : NULL; line && n < max; line = strtok(NULL, "\n")) {
		char *ctrl = strchr(line, ':'), *p = ctrl ? strchr(ctrl + 1, ':') : NULL;
		if (!p || !strcmp(p, ":/") || strstr(p, ".."))
			continue;
		*p++ = 0;
		ctrl++;
		_cleanup_free_ char *procs = *ctrl ? xasprintf("/sys/fs/cgroup/%s%s/cgroup.procs", strncmp(ctrl, "name=", 5) ? ctrl : ctrl + 5, p)
						   : xasprintf("/sys/fs/cgroup%s/cgroup.procs", p);
		int fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			fds[n++] = fd;
	}
	return n;
}

/* The parent of the exec's group: v2 the job's own group, v1 the cell's freezer group
 * (freezer, state.json's); NULL (rootless, or a host with neither). */
static char *exec_group_parent(pid_t job, const char *freezer, bool *v2)
{
	char *where = NULL, *missing = NULL;
	*v2 = cgroup_host_kind(&where, &missing) == CGROUP_V2;
	free(where);
	free(missing);
	if (!*v2)
		return freezer ? xstrdup(freezer) : NULL;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cgroup", (int)job);
	_cleanup_free_ char *text = read_file(path, NULL);
	char *line = text ? strstr(text, "0::/") : NULL;
	if (!line || (line != text && line[-1] != '\n') || strstr(line, ".."))
		return NULL;
	line[strcspn(line, "\n")] = '\0';
	return xasprintf("/sys/fs/cgroup%s", line + 3);
}

/* The guard of the exec's group g: a host process left behind by the keeper (as root, outside
 * the cell, holding nothing of the caller's but the pipe). When the keeper ends without a word
 * on *said (it was killed: the shim gave up), every process of the group is killed; the group
 * is removed once empty (what a normal end left stays in it, removed with the cell). */
static void start_guard(const struct cgroup_exec *g, int *said)
{
	int p[2];
	*said = -1;
	if (!g->dir || pipe2(p, O_CLOEXEC) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int i = 0; i < 3; i++)
			dup2(null, i);
		if (dup2(p[0], 3) < 0)
			_exit(0);
		close_range(4, ~0U, 0);
		char c;
		ssize_t n;
		while ((n = read(3, &c, 1)) < 0 && errno == EINTR)
			;
		if (n != 1)
			cgroup_exec_kill(g);
		struct cgroup_exec mine = { .dir = g->dir, .v2 = g->v2 };
		for (int i = 0; i < (n == 1 ? 1 : 100) && !cgroup_exec_remove(&mine); i++)
			usleep(10000);
		_exit(0);
	}
	close(p[0]);
	if (pid < 0)
		close(p[1]);
	else
		*said = p[1];
}

/* In the cell: the terminal (a master sent to the console socket) or the caller's streams,
 * the user, the job's defences, then exec. */
static void __attribute__((noreturn)) exec_child(struct cell_spec *s, const int *cg, size_t ncg, int console)
{
	for (size_t i = 0; i < ncg; i++)
		if (write(cg[i], "0", 1) != 1)
			_exit(125);
	setsid();
	if (console >= 0) {
		struct error err = { 0 };
		int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
		int sl = m < 0 || unlockpt(m) < 0 ? -1 : ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY);
		if (sl < 0 || oci_console_send(console, m, &err) < 0) {
			warn_line("%s", err.msg ? err.msg : "cannot open a terminal in the cell");
			_exit(125);
		}
		close(m);
		ioctl(sl, TIOCSCTTY, 0);
		for (int i = 0; i < 3; i++)
			dup2(sl, i);
		if (sl > 2)
			close(sl);
	}
	if (setgroups(s->n_groups, s->groups) < 0 && (errno != EPERM || s->n_groups)) {
		warn_line("process.user.additionalGids: cannot set them in the cell: %s", strerror(errno));
		_exit(125);
	}
	/* a non-root process holds nothing, not even in its bounding set (as the job) */
	for (int cap = 0; s->uid != 0 && cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
			break;
	if (setresgid(s->gid, s->gid, s->gid) < 0 || setresuid(s->uid, s->uid, s->uid) < 0) {
		warn_line("cannot become %u:%u in the cell: %s", (unsigned)s->uid, (unsigned)s->gid, strerror(errno));
		_exit(125);
	}
	if (chdir(s->workdir ? s->workdir : "/") < 0) {
		warn_line("process.cwd %s: cannot enter it in the cell: %s", s->workdir, strerror(errno));
		_exit(125);
	}
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	umask(s->has_umask ? s->job_umask : 022);
	struct error perr = { 0 };
	struct policy_ctx pc = spec_policy_ctx(s);
	if (policy_apply_job(&pc, -1, &perr) < 0) {
		warn_line("%s", perr.msg);
		_exit(125);
	}
	execvpe(s->argv[0], s->argv, s->env);
	warn_line("cannot execute %s in the cell: %s", s->argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* The keeper: into the cell, fork the process, wait for it, end as it did. */
static void __attribute__((noreturn)) keeper(struct cell_spec *s, pid_t job, const char *freezer, const char *console_path,
					      int ready)
{
	int cg[17];
	size_t ncg = open_cgroups(job, cg, 16);
	/* the process's own group last (its write moves it there from the cell's), and its guard */
	bool v2;
	_cleanup_free_ char *parent = s->rootless ? NULL : exec_group_parent(job, freezer, &v2);
	_cleanup_free_ char *name = xasprintf("exec-%d", (int)getpid());
	struct cgroup_exec g = { 0 };
	int join = -1, said = -1;
	if (parent && cgroup_exec_make_in(parent, v2, name, &g, &join) == 0) {
		cg[ncg++] = join;
		start_guard(&g, &said);
	}
	/* the console socket is a path of the caller's mount namespace: connected before leaving it */
	struct error err = { 0 };
	int console = console_path ? oci_console_connect(console_path, &err) : -1;
	if (console_path && console < 0) {
		dprintf(ready, "%s", err.msg);
		_exit(OCI_FAIL);
	}
	int pfd = sys_pidfd_open(job, 0);
	if (pfd < 0 || setns(pfd, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
					  CLONE_NEWCGROUP) < 0) {
		dprintf(ready, "cannot enter the container's cell: %s", strerror(errno));
		_exit(OCI_FAIL);
	}
	close(pfd);
	pid_t pid = fork();
	if (pid == 0) {
		close(ready);
		exec_child(s, cg, ncg, console);
	}
	for (size_t i = 0; i < ncg; i++)
		close(cg[i]);
	closep(&console); /* the child's alone: its end tells the caller when it fails */
	ssize_t w = pid < 0 ? write(ready, "cannot fork", 11) : write(ready, "ok", 2);
	(void)w;
	close(ready);
	if (pid < 0)
		_exit(OCI_FAIL);
	signal(SIGINT, SIG_IGN);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* its process ended: what it left in the background stays */
	ssize_t ws = said >= 0 ? write(said, "d", 1) : 0;
	(void)ws;
	if (WIFSIGNALED(st)) {
		struct rlimit z = { 0, 0 };
		setrlimit(RLIMIT_CORE, &z);
		signal(WTERMSIG(st), SIG_DFL);
		raise(WTERMSIG(st));
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

int oci_exec(const struct oci_create *c, const char *process)
{
	_cleanup_error_ struct error err = { 0 };
	_cleanup_free_ char *root = oci_root(false, &err);
	if (!root)
		return oci_fail_err(&err);
	_cleanup_close_ int dfd = oci_dir_open(root, c->id, &err);
	struct oci_state st;
	if (dfd < 0 || oci_state_read(dfd, &st, &err) < 0)
		return oci_fail_err(&err);
	struct oci_bundle b = { 0 };
	struct cell_spec s = { 0 };
	int rc = OCI_FAIL, ready[2] = { -1, -1 };
	pid_t job = 0;
	json_t *p = process ? json_load_file(process, 0, NULL) : NULL;
	if (strcmp(oci_status(&st), "running")) {
		rc = oci_fail("cannot exec in container %s: it is %s", c->id, oci_status(&st));
		goto out;
	}
	if ((job = oci_job_pid_wait(st.init_pid)) <= 0) {
		if (job < 0)
			rc = oci_fail("cannot exec in container %s: its init's children cannot be read: %s", c->id,
				      strerror((int)-job));
		else
			rc = oci_fail("cannot exec in container %s: its process has ended; delete the container "
				      "(warren-runc delete %s) and create a new one", c->id, c->id);
		goto out;
	}
	if (!p) {
		rc = oci_fail("exec: --process %s: not a JSON file of an OCI process", process ? process : "(none)");
		goto out;
	}
	/* the cell's spec as create made it (the same run, the config it read), then the
	 * process's own fields */
	snprintf(s.id, sizeof s.id, "%s", st.run_id);
	if (oci_bundle_load(st.bundle, dfd, c->id, &b, &s, &err) < 0 || oci_process_apply(p, &b, &s, &err) < 0 ||
	    oci_console_check(&b, c->console_socket, &err) < 0 ||
	    (pipe2(ready, O_CLOEXEC) < 0 && error_set(&err, errno, "cannot make a pipe to the exec's keeper") < 0)) {
		rc = oci_fail_err(&err);
		goto out;
	}
	fflush(NULL);
	pid_t k = fork();
	if (k == 0) {
		close(ready[0]);
		if (c->detach)
			setsid();
		oci_apply_rlimits(&b);  /* the process's rlimits and score, inherited by it */
		oci_apply_oom(&b, 0);
		keeper(&s, job, st.freezer, b.terminal ? c->console_socket : NULL, ready[1]);
	}
	closep(&ready[1]);
	char msg[512];
	ssize_t n = k < 0 ? -1 : read(ready[0], msg, sizeof msg - 1);
	msg[n > 0 ? n : 0] = 0;
	if (n != 2 || strcmp(msg, "ok")) {
		rc = oci_fail("%s", n > 0 ? msg : "exec failed");
		if (k > 0)
			waitpid(k, NULL, 0);
		goto out;
	}
	rc = c->pid_file ? oci_write_pid_file(c->pid_file, k) : 0;
	if (rc == 0 && !c->detach) {
		int status = 0;
		while (waitpid(k, &status, 0) < 0 && errno == EINTR)
			;
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
out:
	closep(&ready[0]);
	closep(&ready[1]);
	json_decref(p);
	oci_bundle_free(&b);
	cell_spec_free(&s);
	oci_state_free(&st);
	return rc;
}
