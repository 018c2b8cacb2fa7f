/* SPDX-License-Identifier: Apache-2.0 */
/* outlog.c - a plain run's output kept: what the relay passes on to the caller also goes to
 * log/output.log of the run directory, stdout and stderr (or the job's terminal, its raw
 * stream) in the order the supervisor read them, within the output limit; where the limit cut
 * it, a line says so, the same line a job's step logs get. The file is made at the first byte:
 * a run that writes nothing makes none and costs nothing more; one that writes costs a write
 * per chunk the relay reads. */
#include "supervise/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/units.h"

void sup_log_mark_cut(const struct sup *u, int fd, bool midline)
{
	char v[32];
	format_size(v, sizeof v, u->s->limits.output);
	_cleanup_free_ char *m = xasprintf("%s[warren: output limit %s reached; the rest of the output was not kept]\n",
					   midline ? "\n" : "", v);
	(void)write_all(fd, m, strlen(m));
}

/* log/ and its output.log, beneath the run directory (a directory of the supervisor's: the
 * cell never sees it). */
static int log_open(const struct cell_spec *s)
{
	if (mkdirat(s->rundir_fd, "log", 0755) < 0 && errno != EEXIST)
		return -1;
	return openat(s->rundir_fd, SUP_LOG_OUTPUT, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
}

void sup_log_keep(struct sup *u, const char *b, size_t pass, size_t n)
{
	struct sup_log *l = &u->log;
	if (!l->on || l->failed || l->cut || !n)
		return;
	if (l->fd < 0) {
		l->fd = log_open(u->s);
		l->made = l->fd >= 0;
		l->failed = !l->made;  /* (the run goes on: its output still reaches the caller) */
		if (l->failed)
			return;
	}
	if (pass && write_all(l->fd, b, pass) < 0) {
		closep(&l->fd);
		l->failed = true;
		return;
	}
	if (pass)
		l->midline = b[pass - 1] != '\n';
	if (pass < n) {
		sup_log_mark_cut(u, l->fd, l->midline);
		l->cut = true;
		closep(&l->fd);
	}
}

void sup_log_record(struct sup *u, json_t **extra)
{
	closep(&u->log.fd);
	if (!u->log.made)
		return;
	if (!*extra)
		*extra = json_object();
	json_object_set_new(*extra, "log", json_string(SUP_LOG_OUTPUT));
	json_object_set_new(*extra, "log_cut", json_boolean(u->log.cut));
}
