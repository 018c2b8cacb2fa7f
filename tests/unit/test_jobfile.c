/* SPDX-License-Identifier: Apache-2.0 */
/* test_jobfile.c - the job-file parser (job/jobfile.h): a good file read into every field of
 * the job; each mistake reported as "FILE:LINE:COL: where: what" at its own place (tabs,
 * YAML syntax, unknown and repeated keys, types, durations, limits, env names, steps and
 * their names, services and ready checks, network, driver, image and rootfs, binds,
 * workdir, hostname, work:), several at once; and the limits of size, depth, entries and
 * aliases. The job file's directory is a scratch directory under $TEST_SCRATCH (or
 * build/test-scratch), never /tmp. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/jobfile.h"

static char dir[PATH_MAX];    /* the job file's directory (symlinks resolved) */
static char path[PATH_MAX + 16];   /* DIR/job.yaml (never written: the text is given) */

static void parse_ok(const char *text, struct job *job)
{
	char *errors = NULL;
	if (job_parse(path, text, strlen(text), NULL, NULL, job, &errors) < 0)
		fail_msg("refused a good file:\n%s", errors ? errors : "(no message)");
	assert_null(errors);
}

/* Does a line of errors begin with line? */
static bool has_line(const char *errors, const char *line)
{
	for (const char *p = errors; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
		if (!strncmp(p, line, strlen(line)))
			return true;
	return false;
}

/* text is refused with a line that begins "PATH:want" (want: "LINE:COL: where: what"), and n
 * lines in all. */
static void parse_bad(const char *text, const char *want, int n)
{
	struct job job;
	char *errors = NULL;
	if (job_parse(path, text, strlen(text), NULL, NULL, &job, &errors) != -EINVAL)
		fail_msg("accepted:\n%s", text);
	char *line = NULL;
	if (asprintf(&line, "%s:%s", path, want) < 0)
		fail();
	int lines = 0;
	for (const char *p = errors; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
		lines++;
	if (!has_line(errors, line) || lines != n)
		fail_msg("for:\n%s\nwanted %d line(s), one beginning\n  %s\ngot:\n%s", text, n, line, errors ? errors : "(none)");
	free(line);
	free(errors);
	job_free(&job);
}

/* ---------- a good file ---------- */

static const char good[] = "name: build\n"
			   "shell: bash -e\n"
			   "timeout: 10m\n"
			   "env:\n"
			   "  A: \"1\"\n"
			   "  B_2: two words\n"
			   "limits: { memory: 2G, pids: 512, scratch: 4G, output: 10M, cpu-time: 1m, grace: 2s }\n"
			   "network: nat,lan,allow=10.1.2.3:5432\n"
			   "driver: vm\n"
			   "hostname: builder-1\n"
			   "workdir: /src\n"
			   "work-ro: true\n"
			   "image: debian-12.slim\n"
			   "binds: [ \"cache:/opt/cache\" ]\n"
			   "ro-binds:\n"
			   "  - cache\n"
			   "externals: cache\n"
			   "services:\n"
			   "  db:\n"
			   "    run: postgres\n"
			   "    ready: { tcp: 5432, timeout: 30s }\n"
			   "    env: { PGDATA: /tmp/pg }\n"
			   "  web:\n"
			   "    run: ./serve\n"
			   "    ready: { run: curl -f localhost }\n"
			   "steps:\n"
			   "  - name: with space/slash\n"
			   "    run: make\n"
			   "    timeout: 30s\n"
			   "    env: { CC: gcc }\n"
			   "    working-directory: cache\n"
			   "    if: always()\n"
			   "    continue-on-error: true\n"
			   "    shell: sh -x\n"
			   "  - run: |\n"
			   "      make test\n"
			   "      echo done\n"
			   "    timeout-minutes: 2\n"
			   "    if: failure\n";

static void good_file(void **state)
{
	(void)state;
	struct job j;
	parse_ok(good, &j);
	assert_string_equal(j.name, "build");
	assert_string_equal(j.shell, "bash -e");
	assert_int_equal(j.timeout_ms, 600000);
	assert_string_equal(j.env[0], "A=1");
	assert_string_equal(j.env[1], "B_2=two words");
	assert_null(j.env[2]);
	assert_int_equal(j.limits.memory, 2ull << 30);
	assert_int_equal(j.limits.pids, 512);
	assert_int_equal(j.limits.scratch, 4ull << 30);
	assert_int_equal(j.limits.output, 10ull << 20);
	assert_int_equal(j.limits.cpu_ms, 60000);
	assert_int_equal(j.limits.grace_ms, 2000);
	assert_string_equal(j.network, "nat,lan,allow=10.1.2.3:5432");
	assert_int_equal(j.net.mode, NET_NAT);
	assert_true(j.net.lan);
	assert_string_equal(j.net.allow, "10.1.2.3:5432");
	assert_int_equal(j.driver, CELL_DRIVER_VM);
	assert_string_equal(j.hostname, "builder-1");
	assert_string_equal(j.workdir, "/src");
	assert_true(j.work_ro);
	assert_string_equal(j.image, "debian-12.slim");
	assert_null(j.rootfs);
	char *work = realpath(j.work, NULL);   /* "DIR/." */
	assert_non_null(work);
	assert_string_equal(work, dir);
	free(work);
	char want[2 * PATH_MAX + 64];
	assert_int_equal(j.n_binds, 2);
	snprintf(want, sizeof want, "%s/cache:/opt/cache", dir);
	assert_string_equal(j.binds[0].arg, want);
	assert_false(j.binds[0].ro);
	snprintf(want, sizeof want, "%s/cache:%s/cache", dir, dir);
	assert_string_equal(j.binds[1].arg, want);
	assert_true(j.binds[1].ro);
	snprintf(want, sizeof want, "%s/cache", dir);
	assert_string_equal(j.externals, want);
	assert_int_equal(j.n_services, 2);
	assert_string_equal(j.services[0].name, "db");
	assert_string_equal(j.services[0].run, "postgres");
	assert_int_equal(j.services[0].ready, READY_TCP);
	assert_int_equal(j.services[0].tcp_port, 5432);
	assert_int_equal(j.services[0].ready_timeout_ms, 30000);
	assert_string_equal(j.services[0].env[0], "PGDATA=/tmp/pg");
	assert_int_equal(j.services[1].ready, READY_RUN);
	assert_string_equal(j.services[1].ready_run, "curl -f localhost");
	assert_int_equal(j.n_steps, 2);
	assert_string_equal(j.steps[0].name, "with space/slash");   /* kept as written */
	assert_string_equal(j.steps[0].run, "make");
	assert_int_equal(j.steps[0].timeout_ms, 30000);
	assert_string_equal(j.steps[0].env[0], "CC=gcc");
	assert_string_equal(j.steps[0].workdir, "cache");
	assert_int_equal(j.steps[0].when, IF_ALWAYS);
	assert_true(j.steps[0].continue_on_error);
	assert_string_equal(j.steps[0].shell, "sh -x");
	assert_string_equal(j.steps[1].name, "step2");   /* a step without a name */
	assert_string_equal(j.steps[1].run, "make test\necho done\n");
	assert_int_equal(j.steps[1].timeout_ms, 120000);
	assert_int_equal(j.steps[1].when, IF_FAILURE);
	assert_false(j.steps[1].continue_on_error);
	assert_null(j.steps[1].shell);
	job_free(&j);
}

/* The least a job is: steps with run; the defaults. */
static void defaults(void **state)
{
	(void)state;
	struct job j;
	parse_ok("steps: [ { run: \"true\" } ]\n", &j);
	assert_string_equal(j.name, "job.yaml");   /* the file's name */
	assert_int_equal(j.driver, CELL_DRIVER_CONTAINER);
	assert_int_equal(j.net.mode, NET_NONE);
	assert_null(j.network);
	assert_int_equal(j.limits.grace_ms, 5000);
	assert_int_equal(j.limits.memory, 0);
	assert_null(j.image);
	assert_false(j.work_ro);
	assert_int_equal(j.steps[0].when, IF_SUCCESS);
	assert_string_equal(j.steps[0].name, "step1");
	job_free(&j);
	parse_ok("work: none\ndriver: container\nlimits: { memory: none }\nsteps: [ { run: x } ]\n", &j);
	assert_string_equal(j.work, "none");
	job_free(&j);
}

/* ---------- each mistake at its place ---------- */

/* if: as a bare name, a call, or either in GitHub's ${{ }} */
static void conditions(void **state)
{
	(void)state;
	static const struct { const char *cond; enum step_if want; } t[] = {
		{ "failure", IF_FAILURE },           { "failure()", IF_FAILURE },          { "${{ failure() }}", IF_FAILURE },
		{ "\"${{failure()}}\"", IF_FAILURE }, { "${{ always }}", IF_ALWAYS },        { "'${{  success()  }}'", IF_SUCCESS },
		{ "${{ always() }}", IF_ALWAYS },
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		char *text = NULL;
		if (asprintf(&text, "steps:\n  - run: x\n    if: %s\n", t[i].cond) < 0)
			fail();
		struct job j;
		parse_ok(text, &j);
		if (j.steps[0].when != t[i].want)
			fail_msg("if: %s: got %d, want %d", t[i].cond, (int)j.steps[0].when, (int)t[i].want);
		job_free(&j);
		free(text);
	}
	parse_bad("steps:\n  - run: x\n    if: ${{ failure() && true }}\n", "3:9: steps[0].if: \"${{ failure() && true }}\" is not a condition", 1);
	parse_bad("steps:\n  - run: x\n    if: ${{ }}\n", "3:9: steps[0].if: \"${{ }}\" is not a condition", 1);
	parse_bad("steps:\n  - run: x\n    if: ${{ failure()\n", "3:9: steps[0].if: \"${{ failure()\" is not a condition", 1);
	parse_bad("steps:\n  - run: x\n    if: failure( )\n", "3:9: steps[0].if: \"failure( )\" is not a condition", 1);
}

static void syntax(void **state)
{
	(void)state;
	parse_bad("steps:\n\t- run: x\n", "2:1: tabs are not allowed for indentation in YAML; indent with spaces", 1);
	parse_bad("name: a\nsteps:\n  - run: x\n\t  name: b\n", "4:1: tabs are not allowed for indentation in YAML", 1);
	parse_bad("steps: [ { run: x }\n", "2:1: not valid YAML: did not find expected ',' or ']'", 1);
	parse_bad("", "1:1: the job file is empty", 1);
	parse_bad("- run: x\n", "1:1: the job file must be a mapping (name:, steps:, ...)", 1);
	parse_bad("just words\n", "1:1: the job file must be a mapping", 1);
}

/* session: its defaults, its durations, its shape; a session needs no steps. */
static void sessions(void **state)
{
	(void)state;
	struct job job;
	parse_ok("session: {}\n", &job);
	assert_true(job.session);
	assert_int_equal(job.n_steps, 0);
	assert_int_equal(job.session_idle_ms, JOB_SESSION_IDLE_MS);
	assert_int_equal(job.session_max_ms, JOB_SESSION_MAX_MS);
	job_free(&job);
	parse_ok("session: { idle: 30s, max: 2h }\nsteps: [ { run: make deps } ]\n", &job);
	assert_int_equal(job.session_idle_ms, 30000);
	assert_int_equal(job.session_max_ms, 2 * 3600 * 1000);
	assert_int_equal(job.n_steps, 1);
	job_free(&job);
	parse_ok("steps: [ { run: x } ]\n", &job);
	assert_false(job.session);
	job_free(&job);
	parse_bad("session: 10m\n", "1:10: session: must be a mapping { idle: D, max: D }", 1);
	parse_bad("session: { idle: soon }\n", "1:18: session.idle: \"soon\" is not a duration", 1);
	parse_bad("driver: vm\nsession: {}\n", "2:10: session: a session needs the container driver", 1);
	parse_bad("session: { idel: 1m }\n", "1:12: session.idel: unknown key; did you mean 'idle'?", 1);
}

static void keys(void **state)
{
	(void)state;
	parse_bad("step:\n  - run: x\n", "1:1: step: unknown key; did you mean 'steps'?", 2);
	parse_bad("step:\n  - run: x\n", "1:1: steps: the job has no steps (a list of { name, run })", 2);
	parse_bad("zzzzzz: 1\nsteps: [ { run: x } ]\n",
		  "1:1: zzzzzz: unknown key (known: name, rootfs, work, timeout, limits, env, services, steps, shell, network, "
		  "binds, ro-binds, externals, work-ro, workdir, hostname, image, driver, publish, session)",
		  1);
	parse_bad("name: a\nname: b\nsteps: [ { run: x } ]\n", "2:1: name: given twice (first at line 1); keep one", 1);
	parse_bad("? [ a ]\n: 1\nsteps: [ { run: x } ]\n", "1:3: keys must be plain words", 1);
	parse_bad("steps:\n  - run: x\n    shel: y\n", "3:5: steps[0].shel: unknown key; did you mean 'shell'?", 1);
	parse_bad("limits: { memroy: 1G }\nsteps: [ { run: x } ]\n", "1:11: limits.memroy: unknown key; did you mean 'memory'?",
		  1);
	parse_bad("services: { db: { run: x, redy: { tcp: 1 } } }\nsteps: [ { run: x } ]\n",
		  "1:27: services.db.redy: unknown key; did you mean 'ready'?", 1);
}

static void types(void **state)
{
	(void)state;
	parse_bad("name: [ a ]\nsteps: [ { run: x } ]\n", "1:7: name: must be a string", 1);
	parse_bad("steps:\n  - run: [ a ]\n", "2:10: steps[0].run: must be a string", 1);
	parse_bad("steps: x\n", "1:8: steps: must be a list of { name: ..., run: ... }", 1);
	parse_bad("steps: []\n", "1:8: steps: the list is empty", 1);
	parse_bad("steps:\n  - make\n", "2:5: steps[0]: must be a mapping with at least 'run'", 1);
	parse_bad("steps:\n  - name: x\n", "2:5: steps[0]: has no 'run' (the script of the step)", 1);
	parse_bad("timeout: soon\nsteps: [ { run: x } ]\n", "1:10: timeout: \"soon\" is not a duration (e.g. 30s, 10m, 1h30m)", 1);
	parse_bad("steps:\n  - run: x\n    timeout: 5 min\n", "3:14: steps[0].timeout: \"5 min\" is not a duration", 1);
	parse_bad("steps:\n  - run: x\n    timeout-minutes: ten\n", "3:22: steps[0].timeout-minutes: \"ten\" is not a number of minutes",
		  1);
	parse_bad("steps:\n  - run: x\n    timeout: 1m\n    timeout-minutes: 2\n",
		  "4:22: steps[0].timeout-minutes: give either timeout or timeout-minutes, not both", 1);
	parse_bad("steps:\n  - run: x\n    if: sometimes\n",
		  "3:9: steps[0].if: \"sometimes\" is not a condition this job file knows (always(), success() or failure())", 1);
	parse_bad("steps:\n  - run: x\n    continue-on-error: yes\n", "3:24: steps[0].continue-on-error: \"yes\" is not true or false",
		  1);
	parse_bad("work-ro: 1\nsteps: [ { run: x } ]\n", "1:10: work-ro: \"1\" is not true or false", 1);
	parse_bad("env: [ A ]\nsteps: [ { run: x } ]\n", "1:6: env: must be a mapping of NAME: value", 1);
	parse_bad("env: { 1A: x }\nsteps: [ { run: x } ]\n", "1:8: env: '1A' is not a variable name (letters, digits and _)", 1);
	parse_bad("env: { A-B: x }\nsteps: [ { run: x } ]\n", "1:8: env: 'A-B' is not a variable name", 1);
	parse_bad("env: { A: [ 1 ] }\nsteps: [ { run: x } ]\n", "1:11: env: the value of A must be a string", 1);
	parse_bad("steps:\n  - run: x\n    env: { =: y }\n", "3:12: steps[0].env: '=' is not a variable name", 1);
}

static void limits(void **state)
{
	(void)state;
	parse_bad("limits: 1G\nsteps: [ { run: x } ]\n", "1:9: limits: must be a mapping, e.g. { memory: 2G, pids: 512, scratch: 4G }", 1);
	parse_bad("limits: { memory: lots }\nsteps: [ { run: x } ]\n", "1:19: limits.memory: \"lots\" is not", 1);
	parse_bad("limits: { pids: many }\nsteps: [ { run: x } ]\n", "1:17: limits.pids: \"many\" is not", 1);
	parse_bad("limits: { cpu-time: fast }\nsteps: [ { run: x } ]\n", "1:21: limits.cpu-time: \"fast\" is not", 1);
	parse_bad("limits: { memory: 0 }\nsteps: [ { run: x } ]\n", "1:19: limits.memory: ", 1);
	parse_bad("limits: { memory: 1K }\nsteps: [ { run: x } ]\n", "1:19: limits.memory: ", 1);
	parse_bad("limits: { grace: later }\nsteps: [ { run: x } ]\n", "1:18: limits.grace: \"later\" is not a duration", 1);
}

static void steps_and_services(void **state)
{
	(void)state;
	parse_bad("steps:\n  - { name: a, run: x }\n  - { name: a, run: y }\n",
		  "3:13: steps[1].name: \"a\" is already the name of steps[0]; names must differ", 1);
	parse_bad("steps:\n  - run: x\n  - { name: step1, run: y }\n",
		  "3:13: steps[1].name: \"step1\" is already the name of steps[0]; names must differ", 1);
	parse_bad("steps:\n  - run: x\n    working-directory: ../elsewhere\n", "3:24: steps[0].working-directory: ../elsewhere leaves the worktree ",
		  1);
	parse_bad("services: [ db ]\nsteps: [ { run: x } ]\n", "1:11: services: must be a mapping of NAME: { run: ..., ready: ... }", 1);
	parse_bad("services: { [ a ]: { run: x } }\nsteps: [ { run: x } ]\n", "1:13: services: service names must be plain words", 1);
	parse_bad("services: { db: postgres }\nsteps: [ { run: x } ]\n", "1:17: services.db: must be a mapping with at least 'run'", 1);
	parse_bad("services: { db: { ready: { tcp: 5432 } } }\nsteps: [ { run: x } ]\n",
		  "1:17: services.db: has no 'run' (the command that starts it)", 1);
	parse_bad("services: { db: { run: x, ready: 5432 } }\nsteps: [ { run: x } ]\n",
		  "1:34: services.db.ready: must be { tcp: PORT, timeout: D } or { run: COMMAND, timeout: D }", 1);
	parse_bad("services: { db: { run: x, ready: { tcp: 70000 } } }\nsteps: [ { run: x } ]\n",
		  "1:41: services.db.ready.tcp: \"70000\" is not a TCP port (1-65535)", 1);
	parse_bad("services: { db: { run: x, ready: { tcp: 1, run: y } } }\nsteps: [ { run: x } ]\n",
		  "1:34: services.db.ready: give either tcp or run, not both", 1);
	parse_bad("services: { db: { run: x, ready: { timeout: 1s } } }\nsteps: [ { run: x } ]\n",
		  "1:34: services.db.ready: needs tcp: PORT or run: COMMAND", 1);
}

static void cell_keys(void **state)
{
	(void)state;
	struct job pj;
	char *perr = NULL;
	static const char pub[] = "network: none\npublish: [ \"8080:4096\", \"127.0.0.1:8081:80\" ]\nsteps: [ { run: x } ]\n";
	if (job_parse(path, pub, strlen(pub), NULL, NULL, &pj, &perr) != 0)
		fail_msg("publish: refused: %s", perr);
	assert_int_equal(pj.net.npublish, 2);
	assert_int_equal(pj.net.publish[0].host_port, 8080);
	assert_int_equal(pj.net.publish[0].cell_port, 4096);
	assert_int_equal(pj.net.publish[1].cell_port, 80);
	assert_true(pj.net.mode_given);
	assert_int_equal(net_publish_mode(pj.net.mode, pj.net.mode_given, pj.net.npublish), NET_PUBLISHED);
	job_free(&pj);
	parse_bad("network: bogus\nsteps: [ { run: x } ]\n", "1:10: network: 'bogus' is not a network mode (none, nat, ", 1);
	parse_bad("network: [ nat ]\nsteps: [ { run: x } ]\n", "1:10: network: must be none, nat, nat,lan, nat,allow=ADDRS or allow=LIST",
		  1);
	parse_bad("network: nat,allow=web.test\nsteps: [ { run: x } ]\n", "1:10: network: nat,allow=web.test: 'web.test' is a name; ", 1);
	parse_bad("driver: qemu\nsteps: [ { run: x } ]\n", "1:9: driver: 'qemu' is not a driver; give container or vm", 1);
	parse_bad("publish: \"8080:80\"\nsteps: [ { run: x } ]\n", "1:10: publish: must be a list of \"[ADDR:]HOSTPORT:CELLPORT\"", 1);
	parse_bad("publish: [ \"8080:80\", \"x:80\" ]\nsteps: [ { run: x } ]\n",
		  "1:23: publish[1]: 'x:80' is not [ADDR:]HOSTPORT:CELLPORT with ports 1-65535 (e.g. 8080:80)", 1);
	parse_bad("publish: [ \"8080:80\", \"8080:81\" ]\nsteps: [ { run: x } ]\n", "1:23: publish[1]: host port 8080 is given twice", 1);
	parse_bad("publish: [ { a: 1 } ]\nsteps: [ { run: x } ]\n", "1:12: publish[0]: must be a string", 1);
	parse_bad("image: \"-bad\"\nsteps: [ { run: x } ]\n", "1:8: image: an image name starts with a letter or a digit", 1);
	parse_bad("image: a/b\nsteps: [ { run: x } ]\n", "1:8: image: an image name has only letters, digits, '.', '_' and '-'", 1);
	parse_bad("image: a\nrootfs: cache\nsteps: [ { run: x } ]\n", "1:8: image: give image or rootfs, not both", 1);
	parse_bad("rootfs: nothere\nsteps: [ { run: x } ]\n", "1:9: rootfs: ", 1);
	/* a job file's root stays below its directory (cell/gate.h): .. or / is its caller's to give */
	parse_bad("rootfs: ..\nsteps: [ { run: x } ]\n", "1:9: rootfs: ", 1);
	parse_bad("rootfs: /usr\nsteps: [ { run: x } ]\n",
		  "1:9: rootfs: /usr: it is outside the job file's directory: a job file may only name paths below its own; "
		  "import the image (warren image import) and give image: NAME, or pass --rootfs /usr on the command line of warren job run",
		  1);
	parse_bad("binds: cache\nsteps: [ { run: x } ]\n", "1:8: binds: must be a list of SRC[:DST]", 1);
	parse_bad("binds: [ \":/opt\" ]\nsteps: [ { run: x } ]\n", "1:10: binds[0]: must be SRC[:DST], e.g. cache:/opt/cache", 1);
	parse_bad("ro-binds: [ nothere ]\nsteps: [ { run: x } ]\n", "1:13: ro-binds[0]: ", 1);
	parse_bad("binds: [ /etc ]\nsteps: [ { run: x } ]\n",
		  "1:10: binds[0]: /etc: it is outside the job file's directory: a job file may only name paths below its own; "
		  "pass --bind /etc on the command line of warren job run if you mean it",
		  1);
	parse_bad("binds: [ \"cache:opt\" ]\nsteps: [ { run: x } ]\n", "1:10: binds[0]: the destination opt: ", 1);
	parse_bad("externals: /usr\nsteps: [ { run: x } ]\n", "1:12: externals: /usr: it is outside the job file's directory", 1);
	parse_bad("workdir: src\nsteps: [ { run: x } ]\n", "1:10: workdir: src is not an absolute path in the cell", 1);
	parse_bad("hostname: -x\nsteps: [ { run: x } ]\n",
		  "1:11: hostname: '-x' is not a host name (1-63 letters, digits and '-', not starting or ending with '-')", 1);
	parse_bad("work: /\nsteps: [ { run: x } ]\n", "1:7: work: /: it is outside the job file's directory", 1);
	parse_bad("work: nothere\nsteps: [ { run: x } ]\n", "1:7: work: ", 1);
}

/* Several mistakes: each reported, in the file's order. */
static void several(void **state)
{
	(void)state;
	parse_bad("timeout: x\ndriver: y\nsteps: [ { run: z, if: w } ]\n", "1:10: timeout: \"x\" is not a duration", 3);
	parse_bad("timeout: x\ndriver: y\nsteps: [ { run: z, if: w } ]\n", "2:9: driver: 'y' is not a driver", 3);
	parse_bad("timeout: x\ndriver: y\nsteps: [ { run: z, if: w } ]\n", "3:24: steps[0].if: \"w\" is not a condition", 3);
}

/* ---------- the limits of a job file ---------- */

static void size_limits(void **state)
{
	(void)state;
	parse_bad("a: &x 1\nb: *x\nsteps: [ { run: x } ]\n",
		  "2:4: an alias (*name) repeats a part of the file; write the part out instead", 1);
	/* JOB_DEPTH_MAX levels are taken (the file's own mapping is one), one more is not */
	char *deep = malloc(4 * JOB_DEPTH_MAX + 64);
	char *p = deep + sprintf(deep, "steps: [ { run: x } ]\nname: ");
	for (int i = 1; i < JOB_DEPTH_MAX; i++)
		*p++ = '[';
	for (int i = 1; i < JOB_DEPTH_MAX; i++)
		*p++ = ']';
	strcpy(p, "\n");
	struct job j;
	char *errors = NULL;
	assert_int_equal(job_parse(path, deep, strlen(deep), NULL, NULL, &j, &errors), -EINVAL);   /* a name must be a string */
	assert_null(strstr(errors, "nested"));
	free(errors);
	job_free(&j);
	p = deep + sprintf(deep, "steps: [ { run: x } ]\nname: ");
	for (int i = 0; i < JOB_DEPTH_MAX; i++)
		*p++ = '[';
	for (int i = 0; i < JOB_DEPTH_MAX; i++)
		*p++ = ']';
	strcpy(p, "\n");
	parse_bad(deep, "2:70: mappings and lists nested more than 64 deep; a job file needs a few levels, flatten this one", 1);
	free(deep);
	/* JOB_ENTRIES_MAX entries in a mapping are taken, one more is not */
	size_t cap = 32 * (JOB_ENTRIES_MAX + 2) + 64;
	char *many = malloc(cap);
	for (int extra = 0; extra < 2; extra++) {
		p = many + sprintf(many, "steps: [ { run: x } ]\nenv:\n");
		for (int i = 0; i < JOB_ENTRIES_MAX + extra; i++)
			p += sprintf(p, "  V%d: x\n", i);
		if (!extra) {
			parse_ok(many, &j);
			job_free(&j);
		} else {
			parse_bad(many, "1003:3: more than 1000 entries in one mapping or list; a job file needs far fewer, split it into smaller jobs", 1);
		}
	}
	free(many);
	/* more than JOB_FILE_MAX bytes */
	char *big = malloc(JOB_FILE_MAX + 2);
	memset(big, '#', JOB_FILE_MAX + 1);
	big[JOB_FILE_MAX + 1] = '\0';
	errors = NULL;
	assert_int_equal(job_parse(path, big, JOB_FILE_MAX + 1, NULL, NULL, &j, &errors), -EINVAL);
	char want[PATH_MAX + 128];
	snprintf(want, sizeof want, "%s: the job file is larger than 1 MiB, the most a job file may be; split it into smaller jobs\n", path);
	assert_string_equal(errors, want);
	free(errors);
	job_free(&j);
	free(big);
}

/* job_load: a directory, a file that is not there. */
static void load(void **state)
{
	(void)state;
	struct job j;
	char *errors = NULL;
	assert_int_equal(job_load(dir, NULL, NULL, &j, &errors), -EINVAL);
	char want[PATH_MAX + 128];
	snprintf(want, sizeof want, "%s: is a directory, not a job file; give the path of a job file (YAML)\n", dir);
	assert_string_equal(errors, want);
	free(errors);
	assert_int_equal(job_load(path, NULL, NULL, &j, &errors), -EINVAL);
	snprintf(want, sizeof want, "%s: cannot read the job file: No such file or directory\n", path);
	assert_string_equal(errors, want);
	free(errors);
}

static void rm_rf(const char *d)
{
	char sub[PATH_MAX + 16];
	snprintf(sub, sizeof sub, "%s/cache", d);
	rmdir(sub);
	rmdir(d);
}

static int setup(void **state)
{
	(void)state;
	const char *base = getenv("TEST_SCRATCH");
	if (!base || !*base)
		base = "build/test-scratch";
	mkdir(base, 0755);
	char tmpl[PATH_MAX];
	snprintf(tmpl, sizeof tmpl, "%s/test_jobfile.XXXXXX", base);
	if (!mkdtemp(tmpl) || !realpath(tmpl, dir))
		return -1;
	snprintf(path, sizeof path, "%s/job.yaml", dir);
	char sub[PATH_MAX + 16];
	snprintf(sub, sizeof sub, "%s/cache", dir);
	return mkdir(sub, 0755);
}

static int teardown(void **state)
{
	(void)state;
	rm_rf(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_file), cmocka_unit_test(defaults),           cmocka_unit_test(syntax),
		cmocka_unit_test(keys),      cmocka_unit_test(sessions),      cmocka_unit_test(types),              cmocka_unit_test(limits),
		cmocka_unit_test(steps_and_services), cmocka_unit_test(cell_keys), cmocka_unit_test(several),
		cmocka_unit_test(size_limits), cmocka_unit_test(load),             cmocka_unit_test(conditions),
	};
	return cmocka_run_group_tests_name("jobfile", tests, setup, teardown);
}
