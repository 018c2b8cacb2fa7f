/* SPDX-License-Identifier: Apache-2.0 */
/* executor.c - runs inside the cell as the run user (after the same setup as a single job:
 * ids, no capabilities, no_new_privs, the worktree as cwd). It starts each task the
 * supervisor asks for in a session of its own, signals whole sessions, probes TCP ports on
 * the cell's loopback, and reports starts and exits. It holds no privilege: a step that kills
 * it only ends its own job. */
#include "cell/executor.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cell/contract.h"
#include "util/error.h"

/* execve path; a file the kernel cannot execute for want of a "#!" line (ENOEXEC) is run by
 * /bin/sh, as execvp(3) and a shell do. errno is execve's. */
static void exec_file(const char *path, char **argv, char **env)
{
	execve(path, argv, env);
	if (errno != ENOEXEC)
		return;
	size_t n = 0;
	while (argv[n])
		n++;
	char **sh = xcalloc(n + 2, sizeof *sh);
	sh[0] = "/bin/sh";
	sh[1] = (char *)path;
	for (size_t i = 1; i < n; i++)
		sh[i + 1] = argv[i];
	execve("/bin/sh", sh, env);
	free(sh);
	errno = ENOEXEC;
}

const char *exec_path_of(char **env)
{
	for (char **e = env; e && *e; e++)
		if (!strncmp(*e, "PATH=", 5))
			return *e + 5;
	return CELL_PATH_ENV;
}

int exec_search(char **argv, char **env)
{
	const char *cmd = argv[0];
	if (strchr(cmd, '/')) {
		exec_file(cmd, argv, env);
		return errno;
	}
	int err = ENOENT;
	char *copy = xstrdup(exec_path_of(env)), *save = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *full = xasprintf("%s/%s", *dir ? dir : ".", cmd);
		exec_file(full, argv, env);
		free(full);
		if (errno != ENOENT && errno != ENOTDIR)
			err = errno;
	}
	free(copy);
	return err;
}

char *exec_failure(char **argv, char **env, int err, int *status)
{
	const char *cmd = argv[0];
	*status = err == ENOENT || err == ENOTDIR ? 127 : 126;
	if (*status == 126)
		return xasprintf("cannot execute %s in the cell: %s (check that it is an executable file the run user may run)",
				 cmd, strerror(err));
	if (strchr(cmd, '/'))
		return xasprintf("command not found in the cell: %s is not a file there (nor is its interpreter); install it in the image, or give the path it has in the cell",
				 cmd);
	return xasprintf("command not found in the cell: %s (PATH=%s); install it in the image or give its full path", cmd,
			 exec_path_of(env));
}

struct task {
	uint32_t id;
	pid_t pid;
};

static struct task *tasks;
static size_t n_tasks;

static void send_msg(int ctl, uint32_t type, uint32_t task, int a)
{
	struct exec_hdr h = { .type = type, .task = task, .a = a };
	ssize_t w = send(ctl, &h, sizeof h, MSG_NOSIGNAL);
	(void)w;
}

void executor_exec(const char *cwd, char **argv, char **env)
{
	if (*cwd && chdir(cwd) < 0) {
		dprintf(2, "warren: cannot enter the working directory %s: %s\n", cwd, strerror(errno));
		_exit(125);
	}
	int status;
	char *why = exec_failure(argv, env, exec_search(argv, env), &status);
	dprintf(2, "warren: %s\n", why);
	_exit(status);
}

/* The signals the executor ignores (its own four, and what it inherited ignored: the
 * supervisor's SIGPIPE, a caller's nohup): a task gets them back as default. Learned once at
 * its start, not asked again in each task (64 calls a task: a tenth of an exec's cost). */
static sigset_t ignored;

static void ignored_learn(void)
{
	sigemptyset(&ignored);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			sigaddset(&ignored, sig);
	}
}

static void __attribute__((noreturn)) child(char *cwd, char **argv, char **env, int out, int err, int in, int cg)
{
	/* into the exec's cgroup first: all it starts is born there */
	if (cg >= 0 && write(cg, "0", 1) != 1) {
		dprintf(err, "warren: cannot put the command in its exec's cgroup: %s\n", strerror(errno));
		_exit(125);
	}
	if (cg >= 0)
		close(cg);
	sigset_t none;
	sigemptyset(&none);
	/* (handlers the executor may have are reset by the exec itself; ignored ones are not) */
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&ignored, sig) == 1)
			signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	if (in < 0)
		in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	dup2(in, 0);
	dup2(out, 1);
	dup2(err, 2);
	executor_exec(cwd, argv, env);
}

int exec_start_parse(const struct exec_hdr *h, char *payload, size_t len, char **cwd, char ***argv, char ***env)
{
	size_t nstr = (size_t)h->a + (size_t)h->b + 1;
	char **strs = xcalloc(nstr + 2, sizeof *strs);
	size_t k = 0;
	for (char *p = payload; p < payload + len && k < nstr; p += strlen(p) + 1)
		strs[k++] = p;
	if (k != nstr || h->a < 1) {
		free(strs);
		return -EINVAL;
	}
	*cwd = strs[0];
	*argv = xcalloc((size_t)h->a + 1, sizeof **argv);
	*env = xcalloc((size_t)h->b + 1, sizeof **env);
	memcpy(*argv, strs + 1, (size_t)h->a * sizeof **argv);
	memcpy(*env, strs + 1 + h->a, (size_t)h->b * sizeof **env);
	free(strs);
	return 0;
}

ssize_t exec_start_send(int ctl, uint32_t task, const char *cwd, char **argv, char **env, const int *fds, int nfds,
			int cg, int flags)
{
	char *msg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&msg, &len);
	if (!f)
		return -1;
	size_t argc = 0, envc = 0;
	while (argv[argc])
		argc++;
	while (env[envc])
		envc++;
	struct exec_hdr h = { .type = cg >= 0 ? EXEC_START_CG : EXEC_START, .task = task, .a = (int32_t)argc,
			      .b = (int32_t)envc };
	fwrite(&h, sizeof h, 1, f);
	fwrite(cwd, strlen(cwd) + 1, 1, f);
	for (size_t i = 0; i < argc; i++)
		fwrite(argv[i], strlen(argv[i]) + 1, 1, f);
	for (size_t i = 0; i < envc; i++)
		fwrite(env[i], strlen(env[i]) + 1, 1, f);
	fclose(f);
	int all[EXEC_FDS_MAX];
	memcpy(all, fds, (size_t)nfds * sizeof(int));
	if (cg >= 0)
		all[nfds++] = cg;
	char cbuf[CMSG_SPACE(EXEC_FDS_MAX * sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int)) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), all, (size_t)nfds * sizeof(int));
	ssize_t w = len <= EXEC_MSG_MAX ? sendmsg(ctl, &mh, MSG_NOSIGNAL | flags) : (errno = E2BIG, -1);
	int e = errno;
	free(msg);
	errno = e;
	return w;
}

ssize_t exec_msg_recv(int ctl, char *buf, int fds[EXEC_FDS_MAX])
{
	char cbuf[CMSG_SPACE(EXEC_FDS_MAX * sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = EXEC_MSG_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
	for (int i = 0; i < EXEC_FDS_MAX; i++)
		fds[i] = -1;
	ssize_t n = recvmsg(ctl, &mh, MSG_CMSG_CLOEXEC);
	for (struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (k >= 1 && k <= EXEC_FDS_MAX)  /* (1: an EXEC_FILE's memfd) */
			memcpy(fds, CMSG_DATA(cm), k * sizeof(int));
		else if (k) {
			/* not ours to keep: closed */
			int x[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };
			memcpy(x, CMSG_DATA(cm), (k < 8 ? k : 8) * sizeof(int));
			for (size_t i = 0; i < k && i < 8; i++)
				closep(&x[i]);
		}
	}
	return n;
}

void exec_start_fds(const struct exec_hdr *h, int fds[EXEC_FDS_MAX], int *cg)
{
	*cg = -1;
	for (int i = EXEC_FDS_MAX - 1; h->type == EXEC_START_CG && i >= 2 && *cg < 0; i--)
		if (fds[i] >= 0) {
			*cg = fds[i];
			fds[i] = -1;
		}
}

static void start(int ctl, const struct exec_hdr *h, char *payload, size_t len, int fds[EXEC_FDS_MAX])
{
	char *cwd, **argv, **env;
	_cleanup_close_ int cg = -1;
	exec_start_fds(h, fds, &cg);
	if (exec_start_parse(h, payload, len, &cwd, &argv, &env) < 0) {
		send_msg(ctl, EXEC_FAILED, h->task, EINVAL);
		return;
	}
	pid_t pid = fork();
	if (pid == 0)
		child(cwd, argv, env, fds[0], fds[1], fds[2], cg);
	if (pid < 0) {
		send_msg(ctl, EXEC_FAILED, h->task, errno);
	} else {
		tasks = xrealloc(tasks, (n_tasks + 1) * sizeof *tasks);
		tasks[n_tasks++] = (struct task){ .id = h->task, .pid = pid };
		send_msg(ctl, EXEC_STARTED, h->task, pid);
	}
	free(argv);
	free(env);
}

/* Signal every process of the session a task leads (its descendants, unless they left it). */
static void signal_session(pid_t sid, int sig)
{
	kill(-sid, sig);
	DIR *d = opendir("/proc");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t pid = (pid_t)atoi(e->d_name);
		if (pid <= 1)
			continue;
		pid_t s = getsid(pid);
		if (s == sid)
			kill(pid, sig);
	}
	closedir(d);
}

static int probe_tcp(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	close(fd);
	return ok;
}

static void on_control(int ctl)
{
	/* one buffer for every message: one of its size each time was an mmap, its pages faulted
	 * in by the receive, and an munmap, for every exec of a session */
	static char *buf;
	if (!buf)
		buf = xmalloc(EXEC_MSG_MAX);
	int fds[EXEC_FDS_MAX];
	ssize_t n = exec_msg_recv(ctl, buf, fds);
	if (n <= 0) {
		/* the supervisor is done with us (or gone): end, and the cell with us */
		_exit(0);
	}
	struct exec_hdr h;
	if ((size_t)n >= sizeof h) {
		memcpy(&h, buf, sizeof h);
		if ((h.type == EXEC_START || h.type == EXEC_START_CG) && fds[0] >= 0)
			start(ctl, &h, buf + sizeof h, (size_t)n - sizeof h, fds);
		else if (h.type == EXEC_SIGNAL) {
			for (size_t i = 0; i < n_tasks; i++)
				if (tasks[i].id == h.task)
					signal_session(tasks[i].pid, h.a);
		} else if (h.type == EXEC_PROBE_TCP) {
			send_msg(ctl, EXEC_PROBED, h.task, probe_tcp(h.a));
		} else if (h.type == EXEC_FILE) {
			executor_file(ctl, &h, buf + sizeof h, (size_t)n - sizeof h, fds[0]);
		}
	}
	for (int i = 0; i < EXEC_FDS_MAX; i++)
		closep(&fds[i]);
}

void executor_main(const struct cell_spec *s, int ctl)
{
	(void)s;
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	/* a stop of the cell (SIGTERM to every process) is for the tasks: the executor stays to
	 * report how they ended, and leaves when the supervisor closes the socket (or SIGKILL) */
	/* not ptrace-able nor readable through /proc by the steps (same uid when rootless):
	 * they must not reach the control socket. What a step leaves running in the background
	 * stays for later steps, as in GitHub Actions (a server started with & in one step) */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	ignored_learn();
	int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	struct pollfd pf[2] = { { .fd = ctl, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
	for (;;) {
		if (poll(pf, 2, -1) < 0)
			continue;
		if (pf[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
				;
			int st;
			pid_t p;
			while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
				for (size_t i = 0; i < n_tasks; i++) {
					if (tasks[i].pid != p)
						continue;
					uint32_t id = tasks[i].id;
					tasks[i] = tasks[--n_tasks];
					send_msg(ctl, EXEC_EXITED, id, st);
					break;
				}
			}
		}
		if (pf[0].revents & (POLLIN | POLLHUP))
			on_control(ctl);
	}
}
