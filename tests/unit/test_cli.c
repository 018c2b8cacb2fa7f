/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli.c - the command line's pure parts: cli_getopt (whole names only, short forms,
 * options after operands), the "did you mean" of closest_word, an env file's lines, and the
 * file names of step logs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"
#include "cli/spec.h"
#include "job/logname.h"
#include "util/words.h"

enum { O_TIME = 256, O_MEMORY, O_CPU_TIME, O_KEEP, O_JSON, O_KEEP_GOING, O_HELP };
static const struct option OPTS[] = {
	{ "time", required_argument, NULL, O_TIME }, { "memory", required_argument, NULL, O_MEMORY },
	{ "cpu-time", required_argument, NULL, O_CPU_TIME }, { "keep", no_argument, NULL, O_KEEP },
	{ "json", no_argument, NULL, O_JSON }, { "keep-going", no_argument, NULL, O_KEEP_GOING }, { NULL, 0, NULL, 0 },
};
/* a command's options with --help, which -h also is */
static const struct option HOPTS[] = {
	{ "time", required_argument, NULL, O_TIME }, { "keep", no_argument, NULL, O_KEEP },
	{ "help", no_argument, NULL, O_HELP }, { NULL, 0, NULL, 0 },
};

/* Parse the words (NULL-ended) with shortopts; the options seen as "T=10s K f ..." in got,
 * then "| operand..." after the options; or "ERR: message". */
static void parse(const char *shortopts, const struct option *opts, char *got, size_t len, const char *const *words)
{
	char *argv[16] = { (char *)"cmd" };
	int argc = 1;
	for (; words[argc - 1]; argc++)
		argv[argc] = (char *)words[argc - 1];
	struct error err = { 0 };
	got[0] = '\0';
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, shortopts, opts, "cmd", &err)) != -1) {
		if (c == '?') {
			snprintf(got, len, "ERR: %s", err.msg);
			error_clear(&err);
			return;
		}
		char one[64];
		snprintf(one, sizeof one, "%s%c%s%s", *got ? " " : "", c == O_TIME ? 'T' : c == O_MEMORY ? 'M' : c == O_KEEP ? 'K' : c == O_JSON ? 'J' : c == O_HELP ? 'H' : c,
			 optarg ? "=" : "", optarg ? optarg : "");
		strncat(got, one, len - strlen(got) - 1);
	}
	strncat(got, *got ? " |" : "|", len - strlen(got) - 1);
	for (int i = optind; i < argc; i++) {
		strncat(got, " ", len - strlen(got) - 1);
		strncat(got, argv[i], len - strlen(got) - 1);
	}
}

#define PARSE_WITH(opts, shortopts, want, ...)                                                          \
	do {                                                                                           \
		const char *const w[] = { __VA_ARGS__, NULL };                                         \
		char got[512];                                                                         \
		parse(shortopts, opts, got, sizeof got, w);                                            \
		if (strcmp(got, want))                                                                 \
			fail_msg("words %s...: got \"%s\", want \"%s\"", w[0], got, want);             \
	} while (0)
#define PARSE(shortopts, want, ...) PARSE_WITH(OPTS, shortopts, want, __VA_ARGS__)

static void test_getopt_whole_names(void **state)
{
	(void)state;
	PARSE("+", "T=10s M=1G K | true", "--time", "10s", "--memory=1G", "--keep", "true");
	PARSE("+", "ERR: cmd: unknown option '--tim'; options are written whole: did you mean --time? (see 'warren cmd --help')",
	      "--tim", "10s", "true");
	PARSE("+", "ERR: cmd: unknown option '--m'; options are written whole: did you mean --memory? (see 'warren cmd --help')",
	      "--m", "1G");
	/* a prefix of two names: the closest, when one is close */
	PARSE("+", "ERR: cmd: unknown option '--kee'; options are written whole: did you mean --keep? (see 'warren cmd --help')", "--kee");
	PARSE("+", "ERR: cmd: unknown option '--k' (see 'warren cmd --help')", "--k");
	PARSE("+", "ERR: cmd: unknown option '--memroy'; did you mean --memory? (see 'warren cmd --help')", "--memroy", "1G");
	PARSE("+", "ERR: cmd: unknown option '--name' (see 'warren cmd --help')", "--name", "x");
	PARSE("+", "ERR: cmd: option --keep takes no value, got '--keep=1' (see 'warren cmd --help')", "--keep=1");
	PARSE("+", "ERR: cmd: option --time needs a value (see 'warren cmd --help')", "--time");
}

static void test_getopt_short_forms(void **state)
{
	(void)state;
	PARSE("+it", "i t | true", "-it", "true");
	PARSE("+it", "t i | true", "-t", "-i", "true");
	PARSE("+it", "ERR: cmd: unknown option '-x' in -ix (see 'warren cmd --help')", "-ix");
	PARSE("+", "ERR: cmd: unknown option '-i' in -it (see 'warren cmd --help')", "-it");
	PARSE("+", "ERR: cmd: unknown option '-h' (see 'warren cmd --help')", "-h");
	PARSE("f", "f | run", "run", "-f");
}

/* -h is --help where a command has --help and no -h of its own */
static void test_getopt_help(void **state)
{
	(void)state;
	PARSE_WITH(HOPTS, "+", "H |", "-h");
	PARSE_WITH(HOPTS, "+it", "i H | true", "-i", "-h", "true");
	PARSE_WITH(HOPTS, "", "T=1s H | x", "x", "--time", "1s", "-h");
	PARSE_WITH(HOPTS, "+", "| true -h", "true", "-h");        /* the command's own -h */
	PARSE_WITH(HOPTS, "", "| -h", "--", "-h");
	PARSE_WITH(HOPTS, "+", "T=-h |", "--time", "-h");          /* a value */
	PARSE_WITH(HOPTS, "+", "H |", "--help");
	PARSE("+", "ERR: cmd: unknown option '-h' (see 'warren cmd --help')", "-h");   /* no --help: no -h */
}

static void test_getopt_operands(void **state)
{
	(void)state;
	/* without '+': options after operands (warren show RUN --json) */
	PARSE("", "J | run_1", "run_1", "--json");
	PARSE("", "ERR: cmd: unknown option '--jsn'; did you mean --json? (see 'warren cmd --help')", "run_1", "--jsn");
	/* with '+': what follows the first operand is the command's own, unchecked */
	PARSE("+", "T=1s | sh --tim --whatever", "--time", "1s", "sh", "--tim", "--whatever");
	PARSE("", "K | a --json", "--keep", "a", "--", "--json");   /* "--" ends the options */
	PARSE("", "| -", "-");
	/* a value that looks like an option is the value */
	PARSE("+", "T=--keep | x", "--time", "--keep", "x");
}

static void test_closest_word(void **state)
{
	(void)state;
	const char *const names[] = { "time", "memory", "cpu-time", "working-directory", "run", "timeout", NULL };
	assert_string_equal(closest_word("tme", names), "time");
	assert_string_equal(closest_word("memroy", names), "memory");
	assert_string_equal(closest_word("working-directroy", names), "working-directory");
	assert_string_equal(closest_word("runn", names), "run");
	assert_string_equal(closest_word("timout", names), "timeout");
	/* two neighbours swapped: one edit */
	assert_string_equal(closest_word("rnu", names), "run");
	assert_string_equal(closest_word("tmie", names), "time");
	assert_string_equal(closest_word("MEMORY", names), "memory");
	assert_null(closest_word("name", names));   /* two edits in four letters: not a typo of time */
	assert_null(closest_word("x", names));
	assert_null(closest_word("completely", names));
}

/* A bind refused in the cell's scratch: where it may go instead */
static void test_bind_dst_instead(void **state)
{
	(void)state;
	static const struct { const char *dst, *src, *want; } t[] = {
		{ "/var/tmp", "/home/u/cache", "/home/warren/cache" },   { "/var/tmp", "/home/u/cache/", "/home/warren/cache" },
		{ "/var/tmp", "cache", "/home/warren/cache" },           { "/var/tmp/pip", "/home/u/pip", "/home/warren/pip" },
		{ "/var/tmp/a/b", "/srv/x", "/home/warren/a/b" },        { "/tmp", "/srv/data", "/home/warren/data" },
		{ "/tmp/sock", "/run/user/1/s", "/home/warren/sock" },   { "/var/tmp", ".", "/home/warren/data" },
		{ "/var/tmp", "..", "/home/warren/data" },               { "/var/tmp", "/", "/home/warren/data" },
		{ "/var/tmp", "../x/", "/home/warren/x" },               { "/var/tmp", "..x", "/home/warren/..x" },
		{ "/proc", "/srv/x", NULL },                             { "/var/tmpx", "/srv/x", NULL },
		{ "/var", "/srv/x", NULL },                              { "/dev/shm", "/srv/x", NULL },
	};
	assert_null(bind_dst_instead("/var/tmp", "/srv/x", NULL));
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		char *got = bind_dst_instead(t[i].dst, t[i].src, "/home/warren");
		if (t[i].want ? !got || strcmp(got, t[i].want) : got != NULL)
			fail_msg("bind_dst_instead(%s, %s): got %s, want %s", t[i].dst, t[i].src, got ? got : "NULL",
				 t[i].want ? t[i].want : "NULL");
		free(got);
	}
}

/* env_file_line: want "NAME=VALUE", "NAME", "skip" or "ERR" */
static void env_line(const char *line, const char *want)
{
	char *kv = NULL;
	const char *why = NULL;
	int r = env_file_line(line, &kv, &why);
	const char *got = r == 1 ? "skip" : r < 0 ? "ERR" : kv;
	if (!got || strcmp(got, want))
		fail_msg("env_file_line(\"%s\"): got \"%s\" (%s), want \"%s\"", line, got ? got : "(null)", why ? why : "", want);
	free(kv);
}

static void test_env_file_line(void **state)
{
	(void)state;
	env_line("", "skip");
	env_line("   ", "skip");
	env_line("# a comment", "skip");
	env_line("  # indented comment", "skip");
	env_line("X=1", "X=1");
	env_line("export Y=\"quoted value\"", "Y=quoted value");
	env_line("export\tY='single'", "Y=single");
	env_line("Z='as $it is # here'", "Z=as $it is # here");
	env_line("A=bare value # comment", "A=bare value");
	env_line("A=bare value   ", "A=bare value");
	env_line("A=x#y", "A=x#y");
	env_line("A=", "A=");
	env_line("A=\"\"", "A=");
	env_line("C=\"esc \\\"q\\\" \\$x \\\\ \\n\"", "C=esc \"q\" $x \\ \n");
	env_line("D=\"a\\tb\"", "D=a\\tb");
	env_line("E=\"quoted\" # comment", "E=quoted");
	env_line("W=x\r", "W=x");
	env_line("NAME", "NAME");
	env_line("export NAME", "NAME");
	env_line("X=\"open", "ERR");
	env_line("X='open", "ERR");
	env_line("X=\"a\" b", "ERR");
	env_line("X = 1", "ERR");
}

static void test_logname(void **state)
{
	(void)state;
	static const char *const names[] = { "build", "with space/slash", "a.b", "../x", "%41", "ünï", "tab\there", "service-db.ready" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char *e = logname_encode(names[i]);
		if (strchr(e, '/') || strchr(e, '.') || strchr(e, ' ') || strchr(e, '\t'))
			fail_msg("logname_encode(\"%s\") = \"%s\": not a safe file name", names[i], e);
		char *d = logname_decode(e, strlen(e));
		assert_string_equal(d, names[i]);
		free(d);
		free(e);
	}
	char *e = logname_encode("with space/slash");
	assert_string_equal(e, "with%20space%2Fslash");
	free(e);
	char long_name[1000];
	memset(long_name, '/', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	e = logname_encode(long_name);
	assert_true(strlen(e) <= LOGNAME_MAX && strlen(e) % 3 == 0);
	free(e);
	char *d = logname_decode("50%", 3);   /* not an escape: as it is */
	assert_string_equal(d, "50%");
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_getopt_whole_names), cmocka_unit_test(test_getopt_short_forms),
		cmocka_unit_test(test_getopt_operands),    cmocka_unit_test(test_getopt_help),    cmocka_unit_test(test_closest_word),
		cmocka_unit_test(test_env_file_line),      cmocka_unit_test(test_logname),
		cmocka_unit_test(test_bind_dst_instead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
