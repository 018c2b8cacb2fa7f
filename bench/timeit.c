/* SPDX-License-Identifier: Apache-2.0 */
/* timeit.c - the timer of bench/run: start a command N times by fork+exec (no shell) and
 * report the wall time of each run (CLOCK_MONOTONIC, from the fork to the reap): median,
 * p90, p99, mean; with -j K keep K runs in flight until N have finished and report runs/s.
 *
 *   timeit [-n N] [-w W] [-j K] [-t SEC] [-F] [-e ERRFILE] [-s PREFIX] -- CMD [ARG...] [::: CMD...]
 *
 *   -n N        measured runs of each command (default 200)
 *   -w W        warm-up runs of each command before measuring, not counted (default 5)
 *   -j K        K runs at a time (default 1)
 *   -t SEC      kill a run (SIGKILL) that takes longer than SEC seconds; it counts as
 *               failed (default 0: no limit)
 *   -F          start children with fork() instead of vfork() (see below)
 *   -e FILE     append the children's stderr to FILE (default /dev/null)
 *   -s PREFIX   write each measured run's wall time (ms), one a line, to PREFIX.<i>
 *               for the i-th command (from 0)
 *   -p MS       pause MS milliseconds before each run (-j 1; ignored otherwise): so that
 *               what one run leaves to do in the background (a warm pool's refill) is over
 *               before the next starts (default 0)
 *   -g          also time each run until every process it made is gone (-j 1): timeit is a
 *               child subreaper (PR_SET_CHILD_SUBREAPER), so what a command leaves running
 *               after its own exit is reparented to it, and it waits for that too. A sandbox
 *               whose first process returns while the cell's pid 1 still tears its
 *               namespaces down (bubblewrap) finishes later here than by its exit; one that
 *               returns when its cell is gone (warren) the same. With -j K > 1 the adopted
 *               processes are reaped and not timed.
 *
 * Several commands separated by ":::" are measured interleaved, round-robin (run 1 of
 * each, then run 2 of each, ...), so a change of load on the machine during the
 * measurement falls on every command alike and their ratios stay fair. Each round runs
 * them in an order of its own (a shuffle from a fixed seed: the same orders each time):
 * what a run leaves the machine to do after it has exited (a namespace's teardown on a
 * workqueue, a runc container's cgroup, a warm pool's refill) falls on each of the others
 * alike, not always on the one after it in the list. With -j K > 1 the commands are
 * measured one after the other instead.
 *
 * Any "{}" inside an argument is replaced by "<timeit pid>-<run index>", so that each run
 * can get a unique name (a runc container id). The children's stdin and stdout are
 * /dev/null.
 *
 * Children are started with vfork()+execvp(), as posix_spawn does: the child borrows the
 * parent's memory until the exec, so the harness adds no page-table copy to each measured
 * run (on this VM plain fork() costs ~0.7 ms more). -F uses fork() for comparison.
 *
 * Output: one line per command on stdout, key=value:
 *   cmd=0 n=200 j=1 fail=0 median_ms=.. p90_ms=.. p99_ms=.. mean_ms=.. min_ms=.. max_ms=.. wall_s=.. runs_per_s=.. maxrss_kb=..
 * and with -g (and -j 1) after them: gone_median_ms=.. gone_p90_ms=.. gone_p99_ms=..
 *   left_after_ms=..  (the median of the time from the command's exit to its last process gone)
 * maxrss_kb is the median over the runs of each run's peak RSS: the largest one process of
 * the run's tree (wait4's ru_maxrss: a process's own and its reaped descendants').
 * p90 and p99 are nearest-rank percentiles; wall_s is the time the measured runs took (with
 * interleaving, the sum of this command's runs). Exit status 0 when every run exited 0,
 * 1 when some run failed (counted in fail=), 2 on a usage or system error.
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct cmd {
	char **argv;  /* NULL-terminated, points into main's argv */
	double *ms;   /* measured wall times */
	double *gone; /* -g: until the last process of the run was gone */
	double *rss;  /* each measured run's peak RSS (KiB): its largest process, from wait4 */
	long done;    /* measured runs so far */
	long fail;
	double wall;  /* seconds the measured runs took */
};

struct slot {
	pid_t pid;
	double start;
};

static int null_fd = -1, err_fd = -1, use_fork, until_gone;
static long timeout_s;

/* With -t, SIGALRM every second interrupts waitpid() so overdue runs can be killed. */
static void on_alarm(int sig)
{
	(void)sig;
	alarm(1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "timeit: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);
	if (!p)
		die("calloc");
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* s with each "{}" replaced by tag: a new string, or s itself when it has none. */
static char *subst(char *s, const char *tag)
{
	if (!strstr(s, "{}"))
		return s;
	size_t n = strlen(s) + 1, tl = strlen(tag);
	for (const char *p = s; (p = strstr(p, "{}")); p += 2)
		n += tl;
	char *out = xcalloc(n, 1), *o = out;
	for (const char *p = s; *p;) {
		if (p[0] == '{' && p[1] == '}') {
			memcpy(o, tag, tl);
			o += tl;
			p += 2;
		} else {
			*o++ = *p++;
		}
	}
	return out;
}

/* In the child after a failed exec: "timeit: cannot exec PATH: errno N" on stderr, exit
 * 127. Async-signal-safe (after vfork the memory is the parent's): write() only. */
static _Noreturn void exec_failed(const char *path, int err)
{
	char num[16];
	int i = (int)sizeof num;
	do
		num[--i] = (char)('0' + err % 10);
	while ((err /= 10) > 0 && i > 0);
	const char *parts[] = { "timeit: cannot exec ", path, ": errno " };
	for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
		if (write(2, parts[k], strlen(parts[k])) < 0)
			_exit(127);
	if (write(2, num + i, sizeof num - (size_t)i) < 0 || write(2, "\n", 1) < 0)
		_exit(127);
	_exit(127);
}

/* fork or vfork, then exec av in the child; no local of the caller lives across the
 * vfork (kept out of line for that reason). */
static __attribute__((noinline)) pid_t start_child(char **av)
{
	pid_t pid = use_fork ? fork() : vfork();
	if (pid == 0) {
		/* only async-signal-safe calls here: the memory is the parent's */
		dup2(null_fd, 0);
		dup2(null_fd, 1);
		dup2(err_fd >= 0 ? err_fd : null_fd, 2);
		execvp(av[0], av);
		exec_failed(av[0], errno);
	}
	return pid;
}

/* Start one run of argv (its "{}" made unique by idx); returns the pid. */
static pid_t spawn(char **argv, long idx, double *start)
{
	char tag[64];
	size_t argc = 0;
	while (argv[argc])
		argc++;
	snprintf(tag, sizeof tag, "%ld-%ld", (long)getpid(), idx);
	char **av = xcalloc(argc + 1, sizeof *av);
	for (size_t i = 0; i < argc; i++)
		av[i] = subst(argv[i], tag);

	*start = now_s();
	pid_t pid = start_child(av);
	if (pid < 0)
		die("fork");
	for (size_t i = 0; i < argc; i++)
		if (av[i] != argv[i])
			free(av[i]);
	free(av);
	return pid;
}

/* Run c total times, j at a time, numbering runs from first. When record is set, store
 * each wall time in c->ms and count failures. Returns the seconds the batch took. */
/* -g: the processes a run left, reparented to timeit, reaped; returns when none is left. Those
 * still there past the -t limit (counted from the run's start) are killed. */
static void reap_left(double start)
{
	for (;;) {
		pid_t p = waitpid(-1, NULL, 0);
		if (p > 0)
			continue;
		if (errno == ECHILD)
			return;
		if (errno != EINTR)
			die("waitpid");
		if (timeout_s && now_s() - start > (double)timeout_s) {
			char path[64];
			snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
			FILE *f = fopen(path, "r");
			if (!f)
				continue;
			long pid;
			while (fscanf(f, "%ld", &pid) == 1)
				kill((pid_t)pid, SIGKILL);
			fclose(f);
		}
	}
}

static double run_batch(struct cmd *c, long first, long total, int j, int record)
{
	struct slot *slots = xcalloc((size_t)j, sizeof *slots);
	long started = 0, done = 0;
	int live = 0;
	double t_begin = now_s();

	while (done < total) {
		while (live < j && started < total) {
			int k = 0;
			while (slots[k].pid)
				k++;
			slots[k].pid = spawn(c->argv, first + started, &slots[k].start);
			started++;
			live++;
		}
		int status;
		struct rusage ru;
		pid_t pid = wait4(-1, &status, 0, &ru);
		double t = now_s();
		if (pid < 0) {
			if (errno != EINTR)
				die("waitpid");
			for (int k = 0; k < j; k++)
				if (slots[k].pid && t - slots[k].start > (double)timeout_s)
					kill(slots[k].pid, SIGKILL);
			continue;
		}
		int k = 0;
		while (k < j && slots[k].pid != pid)
			k++;
		if (k == j)
			continue; /* not one of ours */
		slots[k].pid = 0;
		live--;
		done++;
		if (until_gone && j == 1) {
			reap_left(slots[k].start);
			if (record)
				c->gone[c->done] = (now_s() - slots[k].start) * 1e3;
		}
		if (record) {
			c->rss[c->done] = (double)ru.ru_maxrss;
			c->ms[c->done++] = (t - slots[k].start) * 1e3;
			if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
				c->fail++;
		}
	}
	free(slots);
	return now_s() - t_begin;
}

static double median_of(const double *v, long m)
{
	return m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
}

static void report(int i, struct cmd *c, int j, const char *prefix)
{
	long m = c->done;
	double sum = 0;

	if (prefix) {
		char *path;
		if (asprintf(&path, "%s.%d", prefix, i) < 0)
			die("asprintf");
		FILE *f = fopen(path, "w");
		if (!f)
			die(path);
		for (long k = 0; k < m; k++)
			fprintf(f, "%.4f\n", c->ms[k]);
		fclose(f);
		free(path);
	}
	for (long k = 0; k < m; k++)
		sum += c->ms[k];
	/* -g: the time each run's processes outlived its command, before the sorts */
	double *after = NULL;
	if (until_gone && j == 1) {
		after = xcalloc((size_t)m, sizeof *after);
		for (long k = 0; k < m; k++)
			after[k] = c->gone[k] - c->ms[k];
		qsort(after, (size_t)m, sizeof *after, cmp_double);
		qsort(c->gone, (size_t)m, sizeof *c->gone, cmp_double);
	}
	qsort(c->ms, (size_t)m, sizeof *c->ms, cmp_double);
	qsort(c->rss, (size_t)m, sizeof *c->rss, cmp_double);
	long r90 = (90 * m + 99) / 100 - 1, r99 = (99 * m + 99) / 100 - 1; /* nearest rank: ceil(p m) - 1 */
	printf("cmd=%d n=%ld j=%d fail=%ld median_ms=%.3f p90_ms=%.3f p99_ms=%.3f mean_ms=%.3f "
	       "min_ms=%.3f max_ms=%.3f wall_s=%.3f runs_per_s=%.1f maxrss_kb=%.0f",
	       i, m, j, c->fail, median_of(c->ms, m), c->ms[r90], c->ms[r99], sum / (double)m, c->ms[0],
	       c->ms[m - 1], c->wall, (double)m / c->wall, median_of(c->rss, m));
	if (after)
		printf(" gone_median_ms=%.3f gone_p90_ms=%.3f gone_p99_ms=%.3f left_after_ms=%.3f", median_of(c->gone, m),
		       c->gone[r90], c->gone[r99], median_of(after, m));
	printf("\n");
	free(after);
}

static void usage(void)
{
	fprintf(stderr, "usage: timeit [-n N] [-w W] [-j K] [-t SEC] [-F] [-g] [-p MS] [-e ERRFILE] [-s PREFIX] "
			"-- CMD [ARG...] [::: CMD [ARG...]]...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long n = 200, warm = 5, pause_ms = 0;
	int j = 1, opt, ncmd = 0;
	const char *errfile = NULL, *prefix = NULL;

	while ((opt = getopt(argc, argv, "+n:w:j:t:Fge:s:p:")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'w': warm = atol(optarg); break;
		case 'j': j = atoi(optarg); break;
		case 't': timeout_s = atol(optarg); break;
		case 'F': use_fork = 1; break;
		case 'g': until_gone = 1; break;
		case 'e': errfile = optarg; break;
		case 's': prefix = optarg; break;
		case 'p': pause_ms = atol(optarg); break;
		default: usage();
		}
	}
	if (optind >= argc || n < 1 || warm < 0 || j < 1 || timeout_s < 0 || pause_ms < 0)
		usage();
	if (timeout_s > 0) {
		struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGALRM, &sa, NULL) < 0)
			die("sigaction");
		alarm(1);
	}

	/* split the rest at ":::" into commands */
	struct cmd *cmds = xcalloc((size_t)(argc - optind), sizeof *cmds);
	for (int i = optind; i < argc; i++) {
		if (strcmp(argv[i], ":::") == 0) {
			argv[i] = NULL;
			continue;
		}
		if (i == optind || argv[i - 1] == NULL) {
			cmds[ncmd].argv = &argv[i];
			cmds[ncmd].ms = xcalloc((size_t)n, sizeof(double));
			cmds[ncmd].gone = xcalloc((size_t)n, sizeof(double));
			cmds[ncmd].rss = xcalloc((size_t)n, sizeof(double));
			ncmd++;
		}
	}
	if (ncmd == 0)
		usage();

	if (until_gone && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die("prctl(PR_SET_CHILD_SUBREAPER)");
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd < 0)
		die("/dev/null");
	if (errfile) {
		err_fd = open(errfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (err_fd < 0)
			die(errfile);
	}

	if (j == 1 && (ncmd > 1 || pause_ms)) {
		int *order = xcalloc((size_t)ncmd, sizeof *order);
		uint64_t seed = 0x9e3779b97f4a7c15ULL;
		for (long r = 0; r < warm + n; r++) {
			/* this round's order: Fisher-Yates over xorshift64 */
			for (int k = 0; k < ncmd; k++)
				order[k] = k;
			for (int k = ncmd - 1; k > 0; k--) {
				seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
				int x = (int)(seed % (uint64_t)(k + 1)), t = order[k];
				order[k] = order[x], order[x] = t;
			}
			for (int k = 0; k < ncmd; k++) {
				int i = order[k];
				if (pause_ms) {
					struct timespec p = { .tv_sec = pause_ms / 1000, .tv_nsec = (pause_ms % 1000) * 1000000 };
					while (nanosleep(&p, &p) < 0 && errno == EINTR) {
					}
				}
				double w = run_batch(&cmds[i], r, 1, 1, r >= warm);
				if (r >= warm)
					cmds[i].wall += w;
			}
		}
		free(order);
	} else {
		for (int i = 0; i < ncmd; i++) {
			if (warm)
				run_batch(&cmds[i], 0, warm, j, 0);
			cmds[i].wall = run_batch(&cmds[i], warm, n, j, 1);
		}
	}

	int failed = 0;
	for (int i = 0; i < ncmd; i++) {
		report(i, &cmds[i], j, prefix);
		failed |= cmds[i].fail > 0;
		free(cmds[i].ms);
		free(cmds[i].gone);
		free(cmds[i].rss);
	}
	free(cmds);
	return failed ? 1 : 0;
}
