/* SPDX-License-Identifier: Apache-2.0 */
/* opts.h - the one option parser of every subcommand: getopt_long with warren's rules (whole
 * option names only, the documented short forms only, one clear line for a wrong option). */
#ifndef WARREN_CLI_OPTS_H
#define WARREN_CLI_OPTS_H

#include <getopt.h>

#include "util/error.h"

/* getopt_long(argc, argv, shortopts, opts) for subcommand cmd ("run", "job check"), with
 * optarg and optind as getopt_long leaves them, but stricter: before the first option, every
 * option word is checked, and a prefix of a name (--tim), a short form not in shortopts, a
 * value missing or given to an option that takes none is refused. Returns the option's value,
 * -1 after the last option, or '?' with err set to one line naming the word, a close name
 * when there is one, and the command's help. A leading '+' in shortopts stops at the first
 * operand (what follows is a command's own); without it options may come after operands
 * (`warren show RUN --json`), as with git and docker. -h is --help when opts has a "help" and
 * shortopts no 'h'. Set optind = 1 before the first call. */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *opts, const char *cmd,
	       struct error *err);
/* After cli_getopt returned a long option: its index in opts (getopt_long's longindex), for
 * options that share one value; -1 after a short one. */
extern int cli_longindex;

/* The name of opts closest to word (a prefix of one name, or a likely typo), or NULL. */
const char *cli_closest_option(const char *word, const struct option *opts);

#endif
