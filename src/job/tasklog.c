/* SPDX-License-Identifier: Apache-2.0 */
/* tasklog.c - the log of one task of a job, its .times side file and its cut (see tasklog.h). */
#include "job/tasklog.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "run/record.h"
#include "supervise/supervise.h"
#include "util/fs.h"

void task_log_open(struct task_log *l, int logdir_fd, const char *base)
{
	*l = (struct task_log){ .fd = -1, .times_fd = -1 };
	_cleanup_free_ char *p = xasprintf("%s.log", base);
	_cleanup_free_ char *t = xasprintf("%s.times", base);
	l->times_fd = openat(logdir_fd, t, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
	l->fd = openat(logdir_fd, p, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
	/* a service's ready checks share one .times file: its bound holds for all of them */
	off_t at = l->times_fd >= 0 ? lseek(l->times_fd, 0, SEEK_END) : 0;
	l->times_size = at > 0 ? (uint64_t)at : 0;
}

void task_log_flush(struct task_log *l, double now)
{
	struct times_line *p = &l->pending;
	if (!p->size)
		return;
	char st[64], line[96];
	int n = snprintf(line, sizeof line, "%s %llu %llu\n", format_rfc3339(st, sizeof st, &p->at),
			 (unsigned long long)p->offset, (unsigned long long)p->size);
	if (l->times_fd >= 0 && l->times_size + (uint64_t)n <= TASKLOG_TIMES_MAX && write_all(l->times_fd, line, (size_t)n) == 0)
		l->times_size += (uint64_t)n;
	l->last_line = now;
	p->size = 0;
}

/* n more bytes went to the log: add them to the pending line of its .times file. */
static void times_add(struct task_log *l, size_t n, double now)
{
	struct times_line *p = &l->pending;
	if (!p->size) {
		clock_gettime(CLOCK_REALTIME, &p->at);
		p->offset = l->logged;
	}
	p->size += n;
	if (p->size >= TASKLOG_TIMES_BYTES || (now - l->last_line) * 1000 >= TASKLOG_TIMES_MS)
		task_log_flush(l, now);
}

void task_log_write(struct task_log *l, const struct sup *u, const char *b, size_t pass, size_t n, double now)
{
	if (l->fd < 0)
		return;
	if (pass && write_all(l->fd, b, pass) == 0) {
		times_add(l, pass, now);
		l->logged += pass;
		l->midline = b[pass - 1] != '\n';
	}
	if (pass < n && !l->cut) {
		sup_log_mark_cut(u, l->fd, l->midline);
		l->cut = true;
	}
}

void task_log_close(struct task_log *l)
{
	closep(&l->fd);
	closep(&l->times_fd);
}
