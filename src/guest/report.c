/* SPDX-License-Identifier: Apache-2.0 */
/* report.c - the guest init's report to the host: JSON lines on the report port (or the
 * console before it is there), how the job ended or why the cell could not be made; dying
 * (report, then power the VM off) and mounting or dying. */
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell/contract.h"

#include "guest.h"

static int report_fd = -1;

void report_to(int fd)
{
	report_fd = fd;
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A line on the report port (or the console when the port is not there yet). */
void write_line(const char *line)
{
	int fd = report_fd >= 0 ? report_fd : STDERR_FILENO;
	for (size_t off = 0, len = strlen(line); off < len;) {
		ssize_t w = write(fd, line + off, len - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}

/* One JSON line on the report port: how the job ended, or why it could not start. */
void report(const char *error, int errnum, int status)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	if (!f)
		return;
	if (error) {
		fputs("{\"" VM_REPORT_ERROR "\":", f);
		json_str(f, error);
		fprintf(f, ",\"" VM_REPORT_ERRNO "\":%d,\"" VM_REPORT_CODE "\":%d}\n", errnum, status);
	} else {
		fprintf(f, "{\"" VM_REPORT_STATUS "\":%d}\n", status);
	}
	fclose(f);
	write_line(line);
	free(line);
}

void power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

/* Report the failure ("what: strerror") with the exit code the run gets (125: the cell could
 * not be made) and power off; in the job's process, just end it. */
void die_code(int code, int errnum, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	char *full = NULL;
	if (msg && errnum && asprintf(&full, "%s: %s", msg, strerror(errnum)) < 0)
		full = NULL;
	const char *text = full ? full : msg ? msg : "the guest init failed";
	report(text, errnum, code);
	if (getpid() != 1)
		_exit(code); /* the job's process: its stderr is the job's, warren says it */
	fprintf(stderr, "warren-guest-init: %s\n", text); /* the console */
	power_off();
	__builtin_unreachable();
}

void mount_or_die(const char *src, const char *dst, const char *type, unsigned long flags, const char *data)
{
	if (mount(src, dst, type, flags, data) < 0)
		die(errno, "cannot mount %s (%s) on %s", src ? src : "again", type ? type : "bind", dst);
}
