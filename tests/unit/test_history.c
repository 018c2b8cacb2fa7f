/* SPDX-License-Identifier: Apache-2.0 */
/* test_history.c - the history (run/history.h): the checks of labels and names, --since, and a
 * real SQLite database: rows written at start and end, filters, paging, retention, pruning; a
 * job's failed step and tolerated failures kept; a database of schema 2 migrated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>

#include "run/history.h"
#include "util/fs.h"

static void labels_checked(void **state)
{
	(void)state;
	static const struct { const char *kv; int ok; } cases[] = {
		{ "team=ci", 1 }, { "a.b/c-d_e=", 1 }, { "k=with spaces and = signs", 1 },
		{ "=v", 0 }, { "novalue", 0 }, { "bad key=v", 0 }, { "k=line\nbreak", 0 },
		{ "0123456789012345678901234567890123456789012345678901234567890123=v", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct error err = { 0 };
		int r = history_check_label(cases[i].kv, &err);
		assert_int_equal(r == 0, cases[i].ok);
		if (!cases[i].ok)
			assert_non_null(err.msg);
		error_clear(&err);
	}
	struct error err = { 0 };
	assert_int_equal(history_check_name("pr-1234", &err), 0);
	assert_int_not_equal(history_check_name("", &err), 0);
	error_clear(&err);
}

static void since_parsed(void **state)
{
	(void)state;
	int64_t t;
	assert_int_equal(history_parse_since("1h", 10000000, &t), 0);
	assert_int_equal(t, 10000000 - 3600000);
	assert_int_equal(history_parse_since("1970-01-01T00:01:00Z", 0, &t), 0);
	assert_int_equal(t, 60000);
	assert_int_equal(history_parse_since("1970-01-02", 0, &t), 0);
	assert_int_equal(t, 86400000);
	assert_int_equal(history_parse_since("1970-01-01T00:00:01.500Z", 0, &t), 0);
	assert_int_equal(t, 1000);
	assert_int_not_equal(history_parse_since("yesterday", 0, &t), 0);
	assert_int_not_equal(history_parse_since("1970-01-01T00:00:00+02:00", 0, &t), 0);
}

static char dir[] = "build/unit-history.XXXXXX";

static struct history *fresh(void)
{
	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *p = xasprintf("%s/history.db", dir);
	struct history *h = NULL;
	struct error err = { 0 };
	assert_int_equal(history_open(&h, p, &err), 0);
	return h;
}

static void add(struct history *h, const char *id, const char *label, int64_t started, const char *end_state)
{
	json_t *cmd = json_pack("[s]", "true");
	json_t *labels = json_pack("{s:s}", "team", label);
	struct history_run r = { .id = id, .state = "running", .command = cmd, .labels = labels, .owner = 1000,
				 .statedir = "/s", .started_ms = started };
	struct error err = { 0 };
	assert_int_equal(history_begin(h, &r, &err), 0);
	if (end_state) {
		struct history_end e = { .state = end_state, .have_exit = true, .ended_ms = started + 2000, .duration_s = -1,
					 .cause_limit = !strcmp(end_state, "limit") ? "time" : NULL };
		assert_int_equal(history_end(h, id, &e, &err), 0);
	}
	json_decref(cmd);
	json_decref(labels);
}

static size_t count(struct history *h, struct history_filter f)
{
	struct error err = { 0 };
	json_t *a = history_query(h, &f, &err);
	assert_non_null(a);
	size_t n = json_array_size(a);
	json_decref(a);
	return n;
}

static void rows_filters_retention(void **state)
{
	(void)state;
	struct history *h = fresh();
	add(h, "run_01000000000000000000000001", "ci", 1000, "exited");
	add(h, "run_01000000000000000000000002", "ci", 2000, "limit");
	add(h, "run_01000000000000000000000003", "dev", 3000, "exited");
	add(h, "run_01000000000000000000000004", "ci", 4000, NULL);
	struct error err = { 0 };
	json_t *r = history_get(h, "run_01000000000000000000000002", &err);
	assert_string_equal(json_string_value(json_object_get(r, "state")), "limit");
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "cause"), "limit")), "time");
	assert_true(json_number_value(json_object_get(r, "duration_s")) > 1.99);
	json_decref(r);
	assert_null(history_get(h, "run_01000000000000000000000009", &err));
	assert_int_equal(err.errnum, ENOENT);
	error_clear(&err);

	char *ci[] = { (char *)"team=ci" };
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true }), 4);
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true, .labels = ci, .nlabels = 1 }), 3);
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true, .state = "live" }), 1);
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true, .state = "exited", .labels = ci, .nlabels = 1 }), 1);
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true, .since_ms = 2500 }), 2);
	assert_int_equal(count(h, (struct history_filter){ .owner = 1001 }), 0);
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true, .limit = 2, .before = "run_01000000000000000000000003" }), 2);

	/* retention: the newest ended run kept; the live one never listed */
	char **ids = history_expired(h, 1, 0, 10000, &err);
	assert_non_null(ids);
	assert_string_equal(ids[0], "run_01000000000000000000000001");
	assert_string_equal(ids[1], "run_01000000000000000000000002");
	assert_null(ids[2]);
	for (char **p = ids; *p; p++)
		assert_int_equal(history_mark_pruned(h, *p, &err), 0);
	history_ids_free(ids);
	ids = history_expired(h, 1, 0, 10000, &err);
	assert_null(ids[0]);  /* pruned rows are not listed again */
	history_ids_free(ids);
	ids = history_expired(h, 0, 1500, 5000, &err);  /* ended before 3500: the third (ended 5000) stays */
	assert_null(ids[0]);
	history_ids_free(ids);
	assert_int_equal(history_delete(h, "run_01000000000000000000000003", &err), 0);
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true }), 3);
	history_close(h);
	rm_tree_at(AT_FDCWD, dir);
}

/* SQLite's math functions reach libm through util/lazymath.c (warren does not link libm):
 * each one SQLite names answers as libm does. */
static void math_functions_resolve(void **state)
{
	(void)state;
	sqlite3 *db = NULL;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	const char *sql = "SELECT pow(2, 10) + sqrt(16) + trunc(2.7) + exp(0) + ln(1) + mod(7, 3) + atan2(0, 1)"
			  " + acos(1) + asin(0) + atan(0) + acosh(1) + asinh(0) + atanh(0) + cos(0) + cosh(0)"
			  " + sin(0) + sinh(0) + tan(0) + tanh(0)";
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	/* 1024 + 4 + 2 + 1 + 0 + 1 + 0 + 0 + 0 + 0 + 0 + 0 + 0 + 1 + 1 + 0 + 0 + 0 + 0 */
	assert_true(sqlite3_column_double(st, 0) == 1034.0);
	sqlite3_finalize(st);
	sqlite3_close(db);
}


/* ---- the pending lines: what runs' supervisors write instead of opening the database ---- */

static char *pend_dir(void)
{
	char *d = xstrdup("build/unit-pending.XXXXXX");
	assert_non_null(mkdtemp(d));
	return d;
}

static struct cell_spec spec_of(const char *statedir, const char *id, char **argv, char **labels)
{
	struct cell_spec s = { .argv = argv, .labels = labels, .statedir = (char *)statedir, .rundir = (char *)statedir,
			       .worktree = (char *)"/w", .host_uid = 1000 };
	assert_true(strlen(id) < sizeof s.id);
	memcpy(s.id, id, strlen(id) + 1);
	return s;
}

static json_t *row_of(struct history *h, const char *id)
{
	struct error err = { 0 };
	json_t *r = history_get(h, id, &err);
	if (!r)
		fprintf(stderr, "%s\n", err.msg);
	assert_non_null(r);
	return r;
}

static const char *str_of(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool exists(const char *d, const char *name)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", d, name);
	return access(p, F_OK) == 0;
}

static void append(const char *d, const char *name, const char *text)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", d, name);
	int fd = open(p, O_WRONLY | O_APPEND | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static struct history *open_db(const char *db)
{
	struct history *h = NULL;
	struct error err = { 0 };
	if (history_open(&h, db, &err) < 0)
		fprintf(stderr, "%s\n", err.msg);
	assert_non_null(h);
	return h;
}

/* A run's start and end go to <db>.pending, not to the database; whoever opens it folds them
 * in: the row is as history_begin/history_end would have made it. */
static void pending_lines_folded(void **state)
{
	(void)state;
	_cleanup_free_ char *d = pend_dir();
	_cleanup_free_ char *db = xasprintf("%s/history.db", d);
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)"exit 3", NULL };
	char *labels[] = { (char *)"team=ci", NULL };
	struct cell_spec s = spec_of(d, "run_01000000000000000000000011", argv, labels);
	s.name = (char *)"n1";
	assert_false(history_exists(db));
	history_note_start(&s);
	struct run_result res = { .status = RUN_EXITED, .exit_code = 3, .wall_s = 1.5 };
	clock_gettime(CLOCK_REALTIME, &res.ended);
	history_note_end(&s, &res, NULL);
	/* the supervisor never made the database */
	assert_false(exists(d, "history.db"));
	assert_true(exists(d, "history.db.pending"));
	assert_true(history_exists(db));

	/* a run that failed before its start was noted: its row says so */
	struct cell_spec f = spec_of(d, "run_01000000000000000000000012", argv, NULL);
	history_note_failed(&f, "cannot do it");

	struct history *h = open_db(db);
	struct error err = { 0 };
	assert_false(exists(d, "history.db.pending"));
	assert_false(exists(d, "history.db.pending.folding"));
	json_t *r = row_of(h, "run_01000000000000000000000011");
	assert_string_equal(str_of(r, "state"), "exited");
	assert_string_equal(str_of(r, "name"), "n1");
	assert_int_equal(json_integer_value(json_object_get(r, "exit_code")), 3);
	assert_true(json_number_value(json_object_get(r, "duration_s")) == 1.5);
	assert_string_equal(str_of(json_object_get(r, "labels"), "team"), "ci");
	assert_string_equal(str_of(r, "via"), "cli");
	json_decref(r);
	r = row_of(h, "run_01000000000000000000000012");
	assert_string_equal(str_of(r, "state"), "error");
	assert_string_equal(str_of(r, "error"), "cannot do it");
	json_decref(r);

	/* a server's queued row, then its supervisor's lines: folded before the server's next
	 * read, the row keeps what the server wrote (via) and ends as the supervisor said */
	json_t *cmd = json_pack("[s]", "true");
	struct history_run q = { .id = "run_01000000000000000000000013", .state = "queued", .command = cmd,
				 .owner = 1000, .statedir = d, .via = "serve", .submitted_ms = 5 };
	assert_int_equal(history_begin(h, &q, &err), 0);
	json_decref(cmd);
	struct cell_spec w = spec_of(d, "run_01000000000000000000000013", argv, NULL);
	w.start = (char *)"warm";
	history_note_start(&w);
	r = row_of(h, "run_01000000000000000000000013");
	assert_string_equal(str_of(r, "state"), "running");
	assert_string_equal(str_of(r, "via"), "serve");
	assert_string_equal(str_of(r, "start"), "warm");
	json_decref(r);
	res.status = RUN_SIGNALED;
	res.signal = 9;
	res.exit_code = 137;
	history_note_end(&w, &res, NULL);
	r = row_of(h, "run_01000000000000000000000013");  /* the same connection: it folds first */
	assert_string_equal(str_of(r, "state"), "signaled");
	assert_string_equal(str_of(r, "signal"), "SIGKILL");
	json_decref(r);
	history_close(h);
	rm_tree_at(AT_FDCWD, d);
}

/* A line that is not one of ours (garbage, a line cut short by a full disk) is skipped with a
 * warning; the others go in. Lines a fold left (a crash, a failure) go in before newer ones:
 * a run whose start is in the old file and whose end is in the new one ends. */
static void pending_order_and_bad_lines(void **state)
{
	(void)state;
	_cleanup_free_ char *d = pend_dir();
	_cleanup_free_ char *db = xasprintf("%s/history.db", d);
	append(d, "history.db.pending.folding",
	       "{\"op\":\"begin\",\"id\":\"run_01000000000000000000000021\",\"state\":\"running\",\"owner\":7,\"started_ms\":1000}\n"
	       "not json at all\n"
	       "{\"op\":\"rename\",\"id\":\"x\",\"state\":\"y\"}\n");
	append(d, "history.db.pending",
	       "{\"op\":\"end\",\"id\":\"run_01000000000000000000000021\",\"state\":\"exited\",\"exit_code\":0,\"ended_ms\":3000,\"duration_s\":-1}\n"
	       "{\"op\":\"begin\",\"id\":\"run_01000000000000000000000022\",\"state\":\"running\",\"owner\":7}\n"
	       "{\"op\":\"end\",\"id\":\"run_0100000000000000000");
	/* a line written after one cut short is a line of its own */
	char *argv[] = { (char *)"true", NULL };
	struct cell_spec after = spec_of(d, "run_01000000000000000000000023", argv, NULL);
	history_note_start(&after);
	struct history *h = open_db(db);
	json_t *a = row_of(h, "run_01000000000000000000000023");
	assert_string_equal(str_of(a, "state"), "running");
	json_decref(a);
	json_t *r = row_of(h, "run_01000000000000000000000021");
	assert_string_equal(str_of(r, "state"), "exited");
	assert_true(json_number_value(json_object_get(r, "duration_s")) == 2.0);
	json_decref(r);
	r = row_of(h, "run_01000000000000000000000022");
	assert_string_equal(str_of(r, "state"), "running");
	json_decref(r);
	assert_false(exists(d, "history.db.pending"));
	assert_false(exists(d, "history.db.pending.folding"));
	history_close(h);
	rm_tree_at(AT_FDCWD, d);
}

/* Writers appending while folders fold (the server's reads, `warren history`): no line is
 * lost, none is folded twice out of order: every run ends in the state its last line says. */
static void pending_concurrent(void **state)
{
	(void)state;
	_cleanup_free_ char *d = pend_dir();
	_cleanup_free_ char *db = xasprintf("%s/history.db", d);
	enum { WRITERS = 4, FOLDERS = 2, RUNS = 150 };
	char *argv[] = { (char *)"true", NULL };
	pid_t kids[WRITERS + FOLDERS];
	for (int k = 0; k < WRITERS + FOLDERS; k++) {
		kids[k] = fork();
		assert_true(kids[k] >= 0);
		if (kids[k])
			continue;
		if (k < WRITERS) {
			for (int i = 0; i < RUNS; i++) {
				char id[64];
				snprintf(id, sizeof id, "run_0100000000000000000%02d%05d", k, i);
				struct cell_spec s = spec_of(d, id, argv, NULL);
				history_note_start(&s);
				struct run_result res = { .status = RUN_EXITED, .exit_code = i % 7, .wall_s = 0.1 };
				history_note_end(&s, &res, NULL);
			}
		} else {
			for (int i = 0; i < 60; i++) {
				struct history *h = NULL;
				struct error err = { 0 };
				if (history_open(&h, db, &err) < 0) {
					fprintf(stderr, "folder: %s\n", err.msg);
					_exit(2);
				}
				history_close(h);
			}
		}
		_exit(0);
	}
	for (int k = 0; k < WRITERS + FOLDERS; k++) {
		int st;
		assert_int_equal(waitpid(kids[k], &st, 0), kids[k]);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fprintf(stderr, "child %d: status %#x\n", k, st);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	struct history *h = open_db(db);
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true }), WRITERS * RUNS);
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true, .state = "live" }), 0);
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true, .state = "exited" }), WRITERS * RUNS);
	json_t *r = row_of(h, "run_01000000000000000000300149");
	assert_int_equal(json_integer_value(json_object_get(r, "exit_code")), 149 % 7);
	json_decref(r);
	history_close(h);
	rm_tree_at(AT_FDCWD, d);
}

/* An end the server or gc concluded (if_live) never overwrites the run's own; a start folded
 * in again (a folder killed between its commit and the file's removal) never reopens an ended
 * row. */
static void pending_ends_and_replays(void **state)
{
	(void)state;
	_cleanup_free_ char *d = pend_dir();
	_cleanup_free_ char *db = xasprintf("%s/history.db", d);
	char *argv[] = { (char *)"true", NULL };
	struct cell_spec s = spec_of(d, "run_01000000000000000000000031", argv, NULL);
	history_note_start(&s);
	struct run_result res = { .status = RUN_EXITED, .exit_code = 0, .wall_s = 0.5 };
	history_note_end(&s, &res, NULL);
	struct history *h = open_db(db);
	struct error err = { 0 };
	struct history_end made = { .state = "error", .error = "the supervisor died", .ended_ms = 9, .duration_s = -1,
				    .if_live = true };
	assert_int_equal(history_end(h, s.id, &made, &err), 0);
	json_t *r = row_of(h, s.id);
	assert_string_equal(str_of(r, "state"), "exited");
	assert_true(json_is_null(json_object_get(r, "error")) || !json_object_get(r, "error"));
	json_decref(r);
	/* the same start line again */
	append(d, "history.db.pending.folding",
	       "{\"op\":\"begin\",\"id\":\"run_01000000000000000000000031\",\"state\":\"running\",\"owner\":1000}\n");
	r = row_of(h, s.id);
	assert_string_equal(str_of(r, "state"), "exited");
	json_decref(r);
	/* a live row is ended by a concluded end */
	struct cell_spec l = spec_of(d, "run_01000000000000000000000032", argv, NULL);
	history_note_start(&l);
	assert_int_equal(history_end(h, l.id, &made, &err), 0);
	r = row_of(h, l.id);
	assert_string_equal(str_of(r, "state"), "error");
	json_decref(r);
	history_close(h);
	rm_tree_at(AT_FDCWD, d);
}

/* What is not a pending file of ours is never waited on: a FIFO in the folding file's place is
 * refused at once; a lock another process holds (stopped) is given up after 5 s; the database
 * answers all the same. */
static void pending_never_hangs(void **state)
{
	(void)state;
	_cleanup_free_ char *d = pend_dir();
	_cleanup_free_ char *db = xasprintf("%s/history.db", d);
	_cleanup_free_ char *fifo = xasprintf("%s/history.db.pending.folding", d);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	alarm(30);  /* a hang fails the test instead of stopping it */
	struct history *h = open_db(db);
	struct error err = { 0 };
	history_close(h);
	unlink(fifo);
	/* a writer's line waits; another process holds the fold lock */
	char *argv[] = { (char *)"true", NULL };
	struct cell_spec s = spec_of(d, "run_01000000000000000000000041", argv, NULL);
	history_note_start(&s);
	_cleanup_free_ char *lock = xasprintf("%s/history.db.pending.lock", d);
	int lk = open(lock, O_RDWR | O_CREAT, 0644);
	assert_true(lk >= 0);
	assert_int_equal(flock(lk, LOCK_EX), 0);
	pid_t holder = fork();
	if (holder == 0) {
		pause();  /* holds the lock (inherited) until killed */
		_exit(0);
	}
	close(lk);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	h = open_db(db);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(waited >= 4.5 && waited < 15);
	assert_null(history_get(h, s.id, &err));  /* not folded in: the lock was not got */
	error_clear(&err);
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	json_t *r = row_of(h, s.id);  /* the next use folds it in */
	assert_string_equal(str_of(r, "state"), "running");
	json_decref(r);
	alarm(0);
	history_close(h);
	rm_tree_at(AT_FDCWD, d);
}

/* Runs only, no reader for a long while: the run whose end makes the pending file longer than
 * 1 MiB folds it in itself, so that the file stays short. */
static void pending_folds_itself_when_long(void **state)
{
	(void)state;
	_cleanup_free_ char *d = pend_dir();
	_cleanup_free_ char *db = xasprintf("%s/history.db", d);
	_cleanup_free_ char *pending = xasprintf("%s/history.db.pending", d);
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)"a command line long enough to make the file grow", NULL };
	struct run_result res = { .status = RUN_EXITED, .wall_s = 0.1 };
	int i;
	struct stat st;
	for (i = 0; i < 20000; i++) {
		char id[64];
		snprintf(id, sizeof id, "run_0100000000000000000000%04d", i);
		struct cell_spec s = spec_of(d, id, argv, NULL);
		history_note_start(&s);
		history_note_end(&s, &res, NULL);
		if (stat(pending, &st) < 0)
			break;  /* folded */
		assert_true(st.st_size <= (1 << 20) + 4096);
	}
	assert_true(i > 1000 && i < 20000);
	assert_true(exists(d, "history.db"));
	struct history *h = open_db(db);
	assert_int_equal(count(h, (struct history_filter){ .any_owner = true, .state = "exited" }), (size_t)i + 1);
	history_close(h);
	rm_tree_at(AT_FDCWD, d);
}

/* A job's end names the step that failed it and counts its tolerated failures: through the
 * pending lines into the row (issue 34). */
static void failed_step_kept(void **state)
{
	(void)state;
	_cleanup_free_ char *d = pend_dir();
	_cleanup_free_ char *db = xasprintf("%s/history.db", d);
	char *argv[] = { (char *)"warren-job", (char *)"/w/ci.yaml", NULL };
	struct cell_spec s = spec_of(d, "run_01000000000000000000000031", argv, NULL);
	history_note_start(&s);
	struct run_result res = { .status = RUN_EXITED, .exit_code = 1, .wall_s = 2.0, .tolerated = 2,
				  .failed_step = json_pack("{s:i,s:s,s:s,s:i,s:s}", "number", 3, "name", "test", "status", "failed",
							   "exit_code", 1, "cause", "exit 1") };
	clock_gettime(CLOCK_REALTIME, &res.ended);
	history_note_end(&s, &res, NULL);
	struct cell_spec p = spec_of(d, "run_01000000000000000000000032", argv, NULL);
	history_note_start(&p);
	struct run_result ok = { .status = RUN_EXITED, .exit_code = 0, .wall_s = 1.0 };
	clock_gettime(CLOCK_REALTIME, &ok.ended);
	history_note_end(&p, &ok, NULL);
	struct history *h = open_db(db);
	json_t *r = row_of(h, "run_01000000000000000000000031");
	json_t *f = json_object_get(r, "failed_step");
	assert_true(json_is_object(f));
	assert_string_equal(str_of(f, "name"), "test");
	assert_string_equal(str_of(f, "cause"), "exit 1");
	assert_int_equal(json_integer_value(json_object_get(f, "number")), 3);
	assert_int_equal(json_integer_value(json_object_get(r, "tolerated_failures")), 2);
	json_decref(r);
	r = row_of(h, "run_01000000000000000000000032");
	assert_true(json_is_null(json_object_get(r, "failed_step")));
	assert_true(json_is_null(json_object_get(r, "tolerated_failures")));
	json_decref(r);
	history_close(h);
	run_result_free(&res);
	rm_tree_at(AT_FDCWD, d);
}

/* A database of schema 2 (before issue 34) is migrated: its rows stay, the new columns come. */
static void migrated_from_v2(void **state)
{
	(void)state;
	_cleanup_free_ char *d = pend_dir();
	_cleanup_free_ char *db = xasprintf("%s/history.db", d);
	sqlite3 *raw = NULL;
	assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
	const char *v2 =
		"CREATE TABLE runs (id TEXT PRIMARY KEY, name TEXT, state TEXT NOT NULL, kind TEXT, exit_code INTEGER,"
		" signal TEXT, cause_limit TEXT, cause TEXT, error TEXT, command TEXT, worktree TEXT, statedir TEXT,"
		" owner INTEGER NOT NULL, submitted_ms INTEGER, started_ms INTEGER, ended_ms INTEGER, duration_s REAL,"
		" labels TEXT, pruned INTEGER NOT NULL DEFAULT 0, via TEXT, start TEXT, start_why TEXT);"
		"CREATE TABLE labels (run TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, key TEXT NOT NULL,"
		" value TEXT NOT NULL, PRIMARY KEY (run, key));"
		"INSERT INTO runs (id, state, owner, exit_code) VALUES ('run_01000000000000000000000041', 'exited', 0, 4);"
		"PRAGMA user_version = 2;";
	assert_int_equal(sqlite3_exec(raw, v2, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	struct history *h = open_db(db);
	json_t *r = row_of(h, "run_01000000000000000000000041");
	assert_int_equal(json_integer_value(json_object_get(r, "exit_code")), 4);
	assert_true(json_is_null(json_object_get(r, "failed_step")));
	json_decref(r);
	history_close(h);
	assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
	sqlite3_stmt *st = NULL;
	assert_int_equal(sqlite3_prepare_v2(raw, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), HISTORY_SCHEMA_VERSION);
	sqlite3_finalize(st);
	sqlite3_close(raw);
	rm_tree_at(AT_FDCWD, d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(labels_checked),
		cmocka_unit_test(since_parsed),
		cmocka_unit_test(rows_filters_retention),
		cmocka_unit_test(math_functions_resolve),
		cmocka_unit_test(pending_lines_folded),
		cmocka_unit_test(pending_order_and_bad_lines),
		cmocka_unit_test(pending_concurrent),
		cmocka_unit_test(pending_ends_and_replays),
		cmocka_unit_test(pending_never_hangs),
		cmocka_unit_test(pending_folds_itself_when_long),
		cmocka_unit_test(failed_step_kept),
		cmocka_unit_test(migrated_from_v2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
