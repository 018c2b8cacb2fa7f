/* SPDX-License-Identifier: Apache-2.0 */
/* opts.c - the one option parser of every subcommand: getopt_long, after a check of every
 * option word that getopt_long would take too kindly (abbreviations, unknown short forms). */
#include "cli/opts.h"

#include <stdbool.h>
#include <string.h>

#include "util/words.h"

const char *cli_closest_option(const char *word, const struct option *opts)
{
	size_t n = 0, wl = strlen(word);
	const char *prefix_of = NULL;
	for (const struct option *o = opts; o->name; o++, n++)
		if (wl && !strncmp(o->name, word, wl))
			prefix_of = prefix_of ? "" : o->name;   /* "" when it starts several names */
	if (prefix_of && *prefix_of)
		return prefix_of;
	const char **names = xcalloc(n + 1, sizeof *names);
	for (size_t i = 0; i < n; i++)
		names[i] = opts[i].name;
	const char *near = closest_word(word, names);
	free(names);
	return near;
}

static const struct option *find_long(const struct option *opts, const char *name, size_t len)
{
	for (const struct option *o = opts; o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	return NULL;
}

static int unknown_long(const char *w, const struct option *opts, const char *cmd, struct error *err)
{
	_cleanup_free_ char *name = strndup(w + 2, strcspn(w + 2, "="));
	const char *near = cli_closest_option(name, opts);
	if (near && !strncmp(near, name, strlen(name)))
		return error_set(err, 0, "%s: unknown option '%s'; options are written whole: did you mean --%s? (see 'warren %s --help')",
				 cmd, w, near, cmd);
	if (near)
		return error_set(err, 0, "%s: unknown option '%s'; did you mean --%s? (see 'warren %s --help')", cmd, w, near, cmd);
	return error_set(err, 0, "%s: unknown option '%s' (see 'warren %s --help')", cmd, w, cmd);
}

/* Check the option word argv[*i] (and its value); *i is left on the last word it used. */
static int check_word(int argc, char **argv, int *i, const char *shortopts, const struct option *opts,
		      const char *cmd, struct error *err)
{
	const char *w = argv[*i];
	if (w[1] == '-') {
		size_t len = strcspn(w + 2, "=");
		const struct option *o = find_long(opts, w + 2, len);
		if (!o)
			return unknown_long(w, opts, cmd, err);
		if (o->has_arg == no_argument && w[2 + len] == '=')
			return error_set(err, 0, "%s: option --%s takes no value, got '%s' (see 'warren %s --help')", cmd, o->name, w, cmd);
		if (o->has_arg == required_argument && !w[2 + len] && ++*i >= argc)
			return error_set(err, 0, "%s: option --%s needs a value (see 'warren %s --help')", cmd, o->name, cmd);
		return 0;
	}
	for (const char *c = w + 1; *c; c++) {
		const char *s = *c == ':' || *c == '+' ? NULL : strchr(shortopts, *c);
		if (!s)
			return error_set(err, 0, "%s: unknown option '-%c'%s%s (see 'warren %s --help')", cmd, *c,
					 c[1] || c != w + 1 ? " in " : "", c[1] || c != w + 1 ? w : "", cmd);
		if (s[1] == ':') {
			if (!c[1] && ++*i >= argc)
				return error_set(err, 0, "%s: option -%c needs a value (see 'warren %s --help')", cmd, *c, cmd);
			break;
		}
	}
	return 0;
}

int cli_longindex = -1;

/* The index in opts of --help, or -1 */
static int help_index(const struct option *opts)
{
	for (int i = 0; opts[i].name; i++)
		if (!strcmp(opts[i].name, "help"))
			return i;
	return -1;
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *opts, const char *cmd,
	       struct error *err)
{
	/* getopt_long leaves optind at 1 inside a cluster of short options in argv[1] ("-it") */
	static char **in_cluster;
	/* -h is --help, as for `warren -h` (no command has a -h of its own) */
	static char with_h[16];
	int help = help_index(opts);
	if (help >= 0 && !strchr(shortopts, 'h') && strlen(shortopts) + 2 <= sizeof with_h) {
		snprintf(with_h, sizeof with_h, "%sh", shortopts);
		shortopts = with_h;
	}
	if (optind <= 1 && in_cluster != argv) {
		/* the first call: every option word before getopt_long sees one */
		for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
			if (argv[i][0] != '-' || !argv[i][1]) {
				if (shortopts[0] == '+')
					break;
				continue;
			}
			if (check_word(argc, argv, &i, shortopts, opts, cmd, err) < 0)
				return '?';
		}
		optind = 0;   /* glibc starts afresh (a parse before this one left its state) */
	}
	opterr = 0;
	cli_longindex = -1;
	int c = getopt_long(argc, argv, shortopts, opts, &cli_longindex);
	in_cluster = c != -1 && optind <= 1 ? argv : NULL;
	if (c == 'h' && shortopts == with_h) {
		cli_longindex = help;
		return opts[help].val;   /* (no command's --help sets a flag) */
	}
	if (c == '?' || c == ':') {
		/* not expected after the check; the word getopt_long stopped at, all the same */
		error_set(err, 0, "%s: cannot parse option '%s' (see 'warren %s --help')", cmd, argv[optind - 1], cmd);
		return '?';
	}
	return c;
}
