/* SPDX-License-Identifier: Apache-2.0 */
/* error.c - filling and printing struct error; allocation helpers that never return NULL. */
#include "util/error.h"

#include <string.h>

static char *vformat(const char *fmt, va_list ap)
{
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0) {
		fputs("warren: out of memory\n", stderr);
		abort();
	}
	return s;
}

static int error_vset(struct error *err, int status, int errnum, const char *fmt, va_list ap)
{
	char *m = vformat(fmt, ap);
	if (err) {
		free(err->msg);
		if (errnum > 0) {
			err->msg = xasprintf("%s: %s", m, strerror(errnum));
			free(m);
		} else {
			err->msg = m;
		}
		err->errnum = errnum;
		err->status = status;
	} else {
		free(m);
	}
	return errnum > 0 ? -errnum : -EINVAL;
}

int error_set(struct error *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = error_vset(err, 125, errnum, fmt, ap);
	va_end(ap);
	return r;
}

int error_set_status(struct error *err, int status, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = error_vset(err, status, errnum, fmt, ap);
	va_end(ap);
	return r;
}

void error_prefix(struct error *err, const char *fmt, ...)
{
	if (!err || !err->msg)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *p = vformat(fmt, ap);
	va_end(ap);
	char *m = xasprintf("%s: %s", p, err->msg);
	free(p);
	free(err->msg);
	err->msg = m;
}

static void (*warn_handler)(const char *msg, void *data);
static void *warn_data;

void warn_set_handler(void (*handler)(const char *msg, void *data), void *data)
{
	warn_handler = handler;
	warn_data = data;
}

void warn_vline(const char *fmt, va_list ap)
{
	char *m = vformat(fmt, ap);
	if (warn_handler)
		warn_handler(m, warn_data);
	else
		fprintf(stderr, "warren: %s\n", m);
	free(m);
}

void warn_line(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	warn_vline(fmt, ap);
	va_end(ap);
}

void error_clear(struct error *err)
{
	if (!err)
		return;
	free(err->msg);
	err->msg = NULL;
	err->errnum = 0;
	err->status = 0;
}

static void *check(void *p)
{
	if (!p) {
		fputs("warren: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *xmalloc(size_t n) { return check(malloc(n ? n : 1)); }
void *xcalloc(size_t n, size_t m) { return check(calloc(n ? n : 1, m ? m : 1)); }
void *xrealloc(void *p, size_t n) { return check(realloc(p, n ? n : 1)); }
char *xstrdup(const char *s) { return check(strdup(s)); }

char *xvasprintf(const char *fmt, va_list ap)
{
	return vformat(fmt, ap);
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = vformat(fmt, ap);
	va_end(ap);
	return s;
}
