/* SPDX-License-Identifier: Apache-2.0 */
/* report.c - what the cell's init tells the supervisor, on the report pipe (struct cell_report
 * and its message, cell/container.h): a setup that failed (die), and, from init.c, the job's
 * end, its scratch's use and init's timings. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Append one report to buf (*n bytes used; room for sizeof(struct cell_report) +
 * REPORT_MSG_MAX more): the caller writes it, with what else it has to say, in one write
 * below PIPE_BUF (atomic, and one wake-up of the supervisor). */
void report_put(char *buf, size_t *n, uint32_t type, int status, int errnum, const char *msg)
{
	struct cell_report r = { .type = type, .status = status, .errnum = errnum,
				 .len = msg ? (uint32_t)strlen(msg) : 0 };
	if (r.len > REPORT_MSG_MAX)
		r.len = REPORT_MSG_MAX;
	memcpy(buf + *n, &r, sizeof r);
	if (r.len)
		memcpy(buf + *n + sizeof r, msg, r.len);
	*n += sizeof r + r.len;
}

void report(struct cell_ctx *x, uint32_t type, int status, int errnum, const char *msg)
{
	char buf[sizeof(struct cell_report) + REPORT_MSG_MAX];
	size_t n = 0;
	report_put(buf, &n, type, status, errnum, msg);
	ssize_t w = write(x->report, buf, n);
	(void)w;
}

void die_status(struct cell_ctx *x, int status, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = NULL;
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	char *full = NULL;
	if (m && errnum > 0 && asprintf(&full, "%s: %s", m, strerror(errnum)) >= 0)
		m = full;
	report(x, CELL_REPORT_ERROR, status, errnum, m);
	_exit(status);
}
