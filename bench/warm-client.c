/* SPDX-License-Identifier: Apache-2.0 */
/* warm-client.c - the client bench/run times for warren serve's runs: one POST /v1/runs?wait=1
 * over the server's unix socket ({"command": [...], "worktree": DIR}), the answer read to its
 * end. Exit status: the run's exit code; 98 when it was not given a warm cell and
 * BENCH_WANT_WARM is set; 99 when the server could not be asked.
 *
 *   warm-client [-x FIELDS] SOCKET WORKTREE CMD [ARG...]   (arguments without quotes or backslashes)
 *
 * -x FIELDS adds the request's own fields, as JSON members ("env":{"K":"V"},"limits":{...}):
 * the "warren claim" row, a warm run that brings its own settings to the claim.
 *
 * The warm figure is "from the request (unix socket) to the job's exit", and timeit
 * times from the fork to the reap: so the client is built without any C library (its own
 * _start, raw system calls; -nostdlib -static), and its start costs what an exec of a static
 * program does (~0.1 ms here), not glibc's start-up (~1 ms on this VM: its probing of the CPU
 * is a VM exit per cpuid), which is no part of the server's answer. bench/run prints the
 * harness's floor beside it (the "no-libc exec" row: the same kind of program, doing nothing).
 * x86_64 only (its system calls are written out); bench/run skips the warm row elsewhere.
 * Build: cc -O2 -static -nostdlib -fno-stack-protector -fno-builtin -o warm-client warm-client.c
 * (with -DFLOOR: a program of the same kind that only exits 0, the "no-libc exec" row) */

#ifndef __x86_64__
#error "warm-client is written for x86_64 (its system calls); bench/run skips the warm row elsewhere"
#endif

typedef unsigned long size_t;
typedef long ssize_t;

static long sys3(long n, long a, long b, long c)
{
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
	return r;
}

enum { SYS_read = 0, SYS_write = 1, SYS_socket = 41, SYS_connect = 42, SYS_exit_group = 231 };

static __attribute__((noreturn)) void quit(int code)
{
	sys3(SYS_exit_group, code, 0, 0);
	for (;;) {
	}
}

/* what gcc may call for a struct copy or an initialiser */
void *memcpy(void *d, const void *s, size_t n)
{
	char *dp = d;
	const char *sp = s;
	while (n--)
		*dp++ = *sp++;
	return d;
}

void *memset(void *d, int c, size_t n)
{
	char *dp = d;
	while (n--)
		*dp++ = (char)c;
	return d;
}

static size_t len(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

/* a buffer that is appended to, never beyond its end (the request is refused then) */
struct buf {
	char *p;
	size_t n, cap;
	int over;
};

static void put(struct buf *b, const char *s)
{
	for (; *s; s++) {
		if (b->n + 1 >= b->cap) {
			b->over = 1;
			return;
		}
		b->p[b->n++] = *s;
	}
	b->p[b->n] = '\0';
}

static void put_num(struct buf *b, size_t v)
{
	char t[24];
	int i = (int)sizeof t - 1;
	t[i] = '\0';
	do
		t[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i > 0);
	put(b, t + i);
}

static const char *find(const char *hay, const char *needle)
{
	size_t n = len(needle);
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] == needle[i])
			i++;
		if (i == n)
			return hay;
	}
	return 0;
}

static void say(const char *s)
{
	sys3(SYS_write, 2, (long)s, (long)len(s));
}

static int atoi_(const char *s)
{
	int neg = *s == '-', v = 0;
	if (neg || *s == '+')
		s++;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return neg ? -v : v;
}

static int run(int argc, char **argv, char **envp)
{
#ifdef FLOOR
	(void)argv, (void)envp;
	return argc < 0;  /* the "no-libc exec" row: the harness's floor, the start of this kind of program */
#endif
	const char *extra = 0;
	if (argc > 2 && argv[1][0] == '-' && argv[1][1] == 'x' && !argv[1][2]) {
		extra = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 4)
		return 99;
	static char body_s[8192], req_s[9216], ans[16384];
	struct buf body = { body_s, 0, sizeof body_s, 0 }, req = { req_s, 0, sizeof req_s, 0 };
	put(&body, "{");
	if (extra) {
		put(&body, extra);
		put(&body, ",");
	}
	put(&body, "\"worktree\":\"");
	put(&body, argv[2]);
	put(&body, "\",\"command\":[");
	for (int i = 3; i < argc; i++) {
		put(&body, i > 3 ? ",\"" : "\"");
		put(&body, argv[i]);
		put(&body, "\"");
	}
	put(&body, "]}");
	put(&req, "POST /v1/runs?wait=1 HTTP/1.1\r\nHost: warren\r\nContent-Type: application/json\r\nContent-Length: ");
	put_num(&req, body.n);
	put(&req, "\r\nConnection: close\r\n\r\n");
	put(&req, body.p);
	if (body.over || req.over) {
		say("warm-client: the request is too long\n");
		return 99;
	}

	struct {
		unsigned short family;
		char path[108];
	} sa = { 1 /* AF_UNIX */, { 0 } };
	size_t pl = len(argv[1]);
	if (pl >= sizeof sa.path)
		return 99;
	memcpy(sa.path, argv[1], pl + 1);
	long fd = sys3(SYS_socket, 1 /* AF_UNIX */, 1 /* SOCK_STREAM */ | 02000000 /* SOCK_CLOEXEC */, 0);
	if (fd < 0 || sys3(SYS_connect, fd, (long)&sa, (long)sizeof sa) < 0 ||
	    sys3(SYS_write, fd, (long)req.p, (long)req.n) != (long)req.n)
		return 99;
	size_t got = 0;
	long r;
	while (got < sizeof ans - 1 && (r = sys3(SYS_read, fd, (long)(ans + got), (long)(sizeof ans - 1 - got))) > 0)
		got += (size_t)r;
	ans[got] = '\0';
	const char *ec = find(ans, "\"exit_code\":");
	if (!ec) {
		say("warm-client: no exit code in the answer: ");
		say(got ? ans : "(none)");
		say("\n");
		return 99;
	}
	int want_warm = 0;
	for (char **e = envp; *e; e++)
		if (find(*e, "BENCH_WANT_WARM=") == *e)
			want_warm = 1;
	if (want_warm && !find(ans, "\"start\":\"warm\"") && !find(ans, "\"start\": \"warm\""))
		return 98;
	ec += 12;
	while (*ec == ' ')
		ec++;
	if (!(*ec == '-' || (*ec >= '0' && *ec <= '9'))) {
		say("warm-client: the answer has no exit code (null: the run did not end)\n");
		return 99;
	}
	return atoi_(ec);
}

/* the kernel's entry: argc, argv..., NULL, envp..., NULL on the stack */
__attribute__((used)) void start_c(long *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);
	quit(run(argc, argv, argv + argc + 1));
}

__asm__(".text\n.global _start\n_start:\n xor %rbp,%rbp\n mov %rsp,%rdi\n and $-16,%rsp\n call start_c\n hlt\n");
