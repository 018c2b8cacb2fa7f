/* SPDX-License-Identifier: Apache-2.0 */
/* exec-client.c - the exec figure of bench/run (issue 32): an exec of a command from a client
 * that is already running, over a session's own socket (<rundir>/session.sock, job/session.h)
 * kept open ("keep": true: one connection for every exec), beside the same client's bare
 * fork + exec + wait of the same command on the host. The two are timed in turns (round i
 * does one of each, in an order that alternates), each from the moment the request is sent
 * (the fork is called) to the moment its answer's line is read (the child is reaped).
 *
 *   exec-client RUNDIR N WARMUP [CMD [ARG...]]       (CMD: /bin/true by default)
 *
 * Prints one line of key=value: exec_median_ms, exec_p90_ms, exec_p99_ms, bare_median_ms,
 * bare_p90_ms, bare_p99_ms, x_median and x_p99 (exec over bare), fail (execs that did not
 * answer exit_code 0). Exit status 0, or 1 when the session could not be used. The command's
 * arguments go into the request as JSON strings as they are (no quotes or backslashes). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Connect to RUNDIR's session socket through a descriptor of the directory (its path may be
 * longer than a socket's). */
static int session_connect(const char *rundir)
{
	int d = open(rundir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return -1;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/session.sock", d);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	close(d);
	return fd;
}

/* The request line: {"op":"exec","command":[...],"keep":true}\n */
static char *request(char **argv)
{
	size_t n = 64;
	for (char **a = argv; *a; a++)
		n += strlen(*a) + 4;
	char *r = malloc(n), *p = r;
	p += sprintf(p, "{\"op\":\"exec\",\"command\":[");
	for (char **a = argv; *a; a++)
		p += sprintf(p, "%s\"%s\"", a == argv ? "" : ",", *a);
	sprintf(p, "],\"keep\":true}\n");
	return r;
}

/* What is read of the connection beyond the last answer's line. */
static char rbuf[1 << 21];
static size_t rlen;

/* Send req and read its answer's line; 0 when it says exit_code 0, 1 when another, -1 when
 * the connection failed. */
static int exec_once(int fd, const char *req, size_t req_len)
{
	if (write(fd, req, req_len) != (ssize_t)req_len)
		return -1;
	for (;;) {
		char *nl = memchr(rbuf, '\n', rlen);
		if (nl) {
			*nl = '\0';
			int ok = strstr(rbuf, "\"exit_code\":0,") != NULL;
			size_t line = (size_t)(nl - rbuf) + 1;
			if (!strstr(rbuf, "\"exit_code\""))
				fprintf(stderr, "exec-client: the session answered: %s\n", rbuf);
			memmove(rbuf, rbuf + line, rlen - line);
			rlen -= line;
			return ok ? 0 : 1;
		}
		if (rlen == sizeof rbuf)
			return -1;
		ssize_t n = read(fd, rbuf + rlen, sizeof rbuf - rlen);
		if (n <= 0)
			return -1;
		rlen += (size_t)n;
	}
}

/* The host's bare fork + exec + wait of argv; 0 when it exited 0. */
static int bare_once(char **argv, char **envp)
{
	pid_t p = fork();
	if (p == 0) {
		execve(argv[0], argv, envp);
		_exit(127);
	}
	int st;
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The q-quantile of the n sorted samples v (nearest rank, as bench/timeit.c). */
static double quantile(const double *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)n + 0.999999);
	return v[i ? i - 1 : 0];
}

int main(int argc, char **argv, char **envp)
{
	if (argc < 4) {
		fprintf(stderr, "usage: exec-client RUNDIR N WARMUP [CMD [ARG...]]\n");
		return 1;
	}
	long n = atol(argv[2]), w = atol(argv[3]);
	char *dflt[] = { "/bin/true", NULL };
	char **cmd = argc > 4 ? argv + 4 : dflt;
	if (n < 1 || w < 0 || cmd[0][0] != '/') {
		fprintf(stderr, "exec-client: N at least 1, WARMUP at least 0, CMD an absolute path\n");
		return 1;
	}
	int fd = session_connect(argv[1]);
	if (fd < 0) {
		fprintf(stderr, "exec-client: cannot connect to %s/session.sock: %s\n", argv[1], strerror(errno));
		return 1;
	}
	char *req = request(cmd);
	size_t req_len = strlen(req);
	double *ex = calloc((size_t)n, sizeof *ex), *bare = calloc((size_t)n, sizeof *bare);
	long fail = 0;
	for (long i = 0; i < n + w; i++) {
		for (int k = 0; k < 2; k++) {
			int which = (int)((i + k) % 2);  /* rounds alternate which goes first */
			double t0 = now_ms();
			int r = which == 0 ? exec_once(fd, req, req_len) : bare_once(cmd, envp);
			double t = now_ms() - t0;
			if (r < 0) {
				fprintf(stderr, "exec-client: %s failed\n", which == 0 ? "the session's connection" : "fork");
				return 1;
			}
			if (i < w)
				continue;
			if (r > 0)
				fail++;
			(which == 0 ? ex : bare)[i - w] = t;
		}
	}
	close(fd);
	qsort(ex, (size_t)n, sizeof *ex, cmp);
	qsort(bare, (size_t)n, sizeof *bare, cmp);
	double em = quantile(ex, (size_t)n, 0.5), bm = quantile(bare, (size_t)n, 0.5);
	double e99 = quantile(ex, (size_t)n, 0.99), b99 = quantile(bare, (size_t)n, 0.99);
	printf("exec_median_ms=%.3f exec_p90_ms=%.3f exec_p99_ms=%.3f bare_median_ms=%.3f bare_p90_ms=%.3f "
	       "bare_p99_ms=%.3f x_median=%.2f x_p99=%.2f fail=%ld\n",
	       em, quantile(ex, (size_t)n, 0.9), e99, bm, quantile(bare, (size_t)n, 0.9), b99, em / bm, e99 / b99, fail);
	free(ex);
	free(bare);
	free(req);
	return 0;
}
