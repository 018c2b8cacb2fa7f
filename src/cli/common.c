/* common.c - what the subcommands share: printing errors the one way warren does. */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli.h"

int cli_fail(struct error *err)
{
	fprintf(stderr, "warren: %s\n", err->msg ? err->msg : "unknown error");
	int st = err->status ? err->status : 125;
	error_clear(err);
	return st;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("warren: ", stderr);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (see 'warren %s --help')\n", cmd);
	va_end(ap);
	return 125;
}
