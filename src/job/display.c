/* SPDX-License-Identifier: Apache-2.0 */
/* display.c - the live view of a job's steps (see display.h). */
#include "job/display.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "supervise/supervise.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/units.h"

static const char *const MARKS[] = { "○", "▶", "✔", "✖", "⊘", "■" };

void display_init(struct display *d, int fd, bool tty, bool quiet, bool prefix)
{
	memset(d, 0, sizeof *d);
	d->out = fd;
	d->tty = tty;
	d->quiet = quiet;
	d->prefix = prefix;
}

static void put(struct display *d, const char *s, size_t n)
{
	if (!d->sink) {
		write_all(d->out, s, n);
		return;
	}
	sup_sink_put(d->sink, s, n);
}

bool display_blocked(const struct display *d)
{
	return d->sink && d->sink->len;
}
static void puts_(struct display *d, const char *s) { put(d, s, strlen(s)); }

static void clear_live(struct display *d)
{
	if (d->tty && d->live) {
		puts_(d, "\r\033[2K");
		d->live = false;
	}
}

static void end_midline(struct display *d)
{
	if (d->tty && d->pending_len) {
		clear_live(d);
		put(d, d->pending, d->pending_len);
		puts_(d, "\n");
		d->pending_len = 0;
	}
	if (d->midline) {
		puts_(d, "\n");
		d->midline = false;
	}
}

static char *stamp(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
	return buf;
}

void display_line(struct display *d, const char *fmt, ...)
{
	end_midline(d);
	clear_live(d);
	va_list ap;
	va_start(ap, fmt);
	char *m = NULL;
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	if (!m)
		return;
	if (d->tty) {
		puts_(d, m);
	} else {
		char t[16];
		char *l = xasprintf("%s %s", stamp(t, sizeof t), m);
		puts_(d, l);
		free(l);
	}
	puts_(d, "\n");
	free(m);
}

void display_start(struct display *d, const char *kind, const char *name, uint64_t limit_ms)
{
	char lim[48] = "";
	if (limit_ms) {
		char v[32];
		snprintf(lim, sizeof lim, " (limit %s)", format_duration_ms(v, sizeof v, limit_ms));
	}
	if (d->tty && d->quiet)
		return; /* the live line says it */
	display_line(d, "%s %s%s%s%s", MARKS[MARK_RUNNING], kind, *kind ? " " : "", name, lim);
}

void display_output(struct display *d, const char *name, const char *buf, size_t len)
{
	if (d->quiet || !len)
		return;
	if (!d->tty) {
		if (!d->prefix) {
			put(d, buf, len);
			d->midline = buf[len - 1] != '\n';
			return;
		}
		/* "name | line" for each line */
		for (size_t i = 0; i < len;) {
			if (!d->midline) {
				puts_(d, name);
				puts_(d, " | ");
			}
			const char *nl = memchr(buf + i, '\n', len - i);
			size_t n = nl ? (size_t)(nl - (buf + i)) + 1 : len - i;
			put(d, buf + i, n);
			d->midline = !nl;
			i += n;
		}
		return;
	}
	/* terminal: whole lines go above the live line; a partial one waits for its end */
	clear_live(d);
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		if (!nl) {
			d->pending = xrealloc(d->pending, d->pending_len + len - i);
			memcpy(d->pending + d->pending_len, buf + i, len - i);
			d->pending_len += len - i;
			break;
		}
		size_t n = (size_t)(nl - (buf + i)) + 1;
		if (d->pending_len) {
			put(d, d->pending, d->pending_len);
			d->pending_len = 0;
		}
		put(d, buf + i, n);
		i += n;
	}
}

void display_tick(struct display *d, const char *name, double elapsed_s, uint64_t limit_ms)
{
	if (!d->tty || display_blocked(d))
		return;  /* (a live line no one sees yet is not queued) */
	char e[32], l[32] = "";
	format_seconds(e, sizeof e, elapsed_s);
	if (limit_ms) {
		char v[32];
		snprintf(l, sizeof l, " / %s", format_duration_ms(v, sizeof v, limit_ms));
	}
	/* one row, never wrapped: a wrapped line could not be redrawn in place */
	struct winsize ws;
	size_t cols = ioctl(d->out, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 8 ? ws.ws_col : 80;
	size_t tail = strlen(e) + strlen(l) + 4; /* marker, spaces */
	size_t room = cols > tail + 4 ? cols - tail - 1 : 4;
	char line[512];
	if (strlen(name) > room)
		snprintf(line, sizeof line, "\r\033[2K%s %.*s…  %s%s", MARKS[MARK_RUNNING], (int)(room - 1), name, e, l);
	else
		snprintf(line, sizeof line, "\r\033[2K%s %s  %s%s", MARKS[MARK_RUNNING], name, e, l);
	puts_(d, line);
	d->live = true;
}

void display_end(struct display *d, enum step_mark m, const char *name, double duration_s, const char *cause)
{
	char e[32];
	format_seconds(e, sizeof e, duration_s);
	if (cause)
		display_line(d, "%s %s: %s", MARKS[m], name, cause);
	else if (m == MARK_SKIPPED)
		display_line(d, "%s %s skipped", MARKS[m], name);
	else
		display_line(d, "%s %s %s", MARKS[m], name, e);
}

void display_free(struct display *d)
{
	end_midline(d);
	clear_live(d);
	free(d->pending);
	d->pending = NULL;
}
