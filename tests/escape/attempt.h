/* SPDX-License-Identifier: Apache-2.0 */
/* attempt.h - shared by the escape attempts of tests/escape/ (see README there).
 *
 * Each attempt is a small static program run inside a cell as the job. It tries one way
 * out, in as many variants as it knows, and prints lines "NAME: tried WHAT: RESULT" for
 * each, then one last line: "NAME: held" when every variant failed, or "NAME: ESCAPED"
 * when one got through (each such variant also printed "NAME: ESCAPED: WHAT"). An attempt
 * that could not try what it is about prints "NAME: untested: WHY" instead: not a pass.
 * The attempts never do damage when they succeed: they stop at proof (an fd open for
 * writing, a file created in a scratch place the test removes, a signal 0...). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static const char *a_name = "attempt";
static int a_escapes, a_tries;

static void a_start(const char *name)
{
	a_name = name;
	setvbuf(stdout, NULL, _IOLBF, 0);
}

/* tried(ok, fmt...): a variant; ok = it got through (an escape). Returns ok. */
__attribute__((format(printf, 2, 3))) static bool tried(bool ok, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	a_tries++;
	if (ok) {
		a_escapes++;
		printf("%s: ESCAPED: %s\n", a_name, what);
	} else {
		printf("%s: tried %s\n", a_name, what);
	}
	return ok;
}

/* The errno name of the last failure, for the "tried" lines. */
static const char *en(void)
{
	const char *s = strerrorname_np(errno);
	return s ? s : "?";
}

/* A system call's result as text: "ok" or the errno name. */
__attribute__((unused)) static const char *res(long r)
{
	return r < 0 ? en() : "ok";
}

__attribute__((noreturn)) static void untested(const char *why)
{
	printf("%s: untested: %s\n", a_name, why);
	exit(2);
}

__attribute__((noreturn)) static void finish(void)
{
	if (a_tries == 0)
		untested("nothing was tried");
	printf("%s: %s\n", a_name, a_escapes ? "ESCAPED" : "held");
	exit(a_escapes ? 1 : 0);
}

/* read_contains(path, secret): path can be read and holds secret. Sets errno otherwise. */
__attribute__((unused)) static bool read_contains(const char *path, const char *secret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return false;
	}
	buf[n] = 0;
	if (strstr(buf, secret))
		return true;
	errno = ENODATA; /* read, but not the secret */
	return false;
}

/* The result of read_contains as text. */
__attribute__((unused)) static const char *rc_text(bool ok)
{
	return ok ? "read the secret" : (errno == ENODATA ? "readable, no secret" : en());
}
