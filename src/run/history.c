/* SPDX-License-Identifier: Apache-2.0 */
/* history.c - the history of runs in SQLite: schema (versioned with PRAGMA user_version),
 * the row a run writes at its start and end, queries with filters and paging, retention. */
#include "run/history.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "run/rundir.h"
#include "util/fs.h"
#include "util/units.h"
#include "util/words.h"
#include "util/strv.h"

/* A statement kept prepared for the life of its connection (the server's connections run the
 * same few statements for every run: preparing one cost ~0.2 ms of CPU each time). */
struct kept_stmt {
	const char *sql;       /* a string literal of a call site: its address is the key */
	sqlite3_stmt *st;
};
#define KEPT_MAX 16

struct history {
	sqlite3 *db;
	char *path;
	struct kept_stmt kept[KEPT_MAX];
	size_t n_kept;
};

#define BUSY_MS 30000

/* A run's supervisor does not open the database: the row's start and its end are lines
 * appended to <db>.pending (one write each, O_APPEND, under a shared flock: see
 * pending_append), and whoever uses the database next folds them in, in order, in one
 * transaction (fold): the CLI when it opens it, the server before each of its reads
 * and writes. SQLite's cost per run (the open, the schema read, the WAL's index rebuilt from
 * the whole WAL by the first connection, a write lock shared by every run at once, whose
 * busy waits sleep a millisecond at least) leaves the run: with 8 runs at once that lock had
 * cost a quarter of the runs per second. A reader never sees less than before: every line
 * written before it opened is folded in first. */
#define PENDING ".pending"          /* <db>.pending: the lines waiting */
#define FOLDING ".pending.folding"  /* the lines being folded (left for the next fold when it failed) */
#define FOLD_LOCK ".pending.lock"   /* one folder at a time, so that lines go in in order */
#define PENDING_TRIES 16
#define LOCK_WAIT_MS 5000           /* a lock held longer (a stopped process) is given up on */
#define FOLD_AT_BYTES (1 << 20)     /* a run whose end makes the file longer folds it itself */
static char noted_id[RUN_ID_LEN + 1]; /* the run whose start this process wrote, until its end */
static void note_end_line(const struct cell_spec *s, const struct history_end *e);
static void fold(struct history *h);

static const char SCHEMA_V1[] =
	"CREATE TABLE IF NOT EXISTS runs ("
	" id TEXT PRIMARY KEY, name TEXT, state TEXT NOT NULL, kind TEXT, exit_code INTEGER, signal TEXT,"
	" cause_limit TEXT, cause TEXT, error TEXT, command TEXT, worktree TEXT, statedir TEXT,"
	" owner INTEGER NOT NULL, submitted_ms INTEGER, started_ms INTEGER, ended_ms INTEGER,"
	" duration_s REAL, labels TEXT, pruned INTEGER NOT NULL DEFAULT 0, via TEXT);"
	"CREATE INDEX IF NOT EXISTS runs_state ON runs(state);"
	"CREATE INDEX IF NOT EXISTS runs_ended ON runs(ended_ms);"
	"CREATE TABLE IF NOT EXISTS labels (run TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	" key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run, key));"
	"CREATE INDEX IF NOT EXISTS labels_kv ON labels(key, value);";
static const char SCHEMA_V2[] = "ALTER TABLE runs ADD COLUMN start TEXT; ALTER TABLE runs ADD COLUMN start_why TEXT;";
/* v3: what failed a job (its record's failed_step, as JSON) and the failures it let pass */
static const char SCHEMA_V3[] = "ALTER TABLE runs ADD COLUMN failed_step TEXT; ALTER TABLE runs ADD COLUMN tolerated INTEGER;";

void history_note_failed(const struct cell_spec *s, const char *msg)
{
	if (strcmp(noted_id, s->id))
		history_note_start(s);  /* it failed before the row was written: the row says so */
	struct history_end e = { .state = "error", .error = msg ? msg : "warren failed before the job ran",
				 .ended_ms = history_now_ms(), .duration_s = -1 };
	note_end_line(s, &e);
}

int64_t history_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *history_path(const char *statedir, const char *opt)
{
	if (opt && !strcmp(opt, HISTORY_NONE))
		return NULL;
	if (opt)
		return abs_path_would_be(opt);
	return xasprintf("%s/%s", statedir, HISTORY_FILE);
}

static int db_error(struct history *h, struct error *err, const char *what)
{
	int code = sqlite3_extended_errcode(h->db);
	return error_set(err, 0, "history %s: cannot %s: %s (sqlite error %d)", h->path, what,
			 sqlite3_errmsg(h->db), code);
}

static int exec(struct history *h, const char *sql, struct error *err)
{
	if (sqlite3_exec(h->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_error(h, err, "update the database");
	return 0;
}

/* The schema, made once by whoever opens a new database first (inside one IMMEDIATE
 * transaction, so that many first runs at once do not race), and WAL mode. */
static int schema_version(struct history *h)
{
	sqlite3_stmt *st = NULL;
	int version = -1;
	if (sqlite3_prepare_v2(h->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return version;
}

static bool has_column(struct history *h, const char *name)
{
	sqlite3_stmt *st = NULL;
	bool has = sqlite3_prepare_v2(h->db, "SELECT 1 FROM pragma_table_info('runs') WHERE name = ?1", -1, &st, NULL) == SQLITE_OK &&
		   sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return has;
}

static int migrate(struct history *h, struct error *err)
{
	/* the common case, a database made before: one read, no write lock */
	if (schema_version(h) == HISTORY_SCHEMA_VERSION)
		return exec(h, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA journal_size_limit = 0", err);
	if (exec(h, "BEGIN IMMEDIATE", err) < 0)
		return -EIO;
	int version = schema_version(h);
	int r = 0;
	if (version < 0) {
		r = db_error(h, err, "read the schema version");
	} else if (version > HISTORY_SCHEMA_VERSION) {
		r = error_set(err, 0, "history %s has schema version %d, newer than this warren's %d; use a newer warren or another --db",
			      h->path, version, HISTORY_SCHEMA_VERSION);
	} else {
		/* v2: how a server's run got its cell (serve --warm); v3: what failed a job. Their
		 * columns looked for, not only the version: two first opens at once once read version
		 * 0 after the other had made v2, and the second ALTER failed ("duplicate column name") */
		_cleanup_free_ char *sql = xasprintf("%s%s%sPRAGMA user_version = %d;", version < 1 ? SCHEMA_V1 : "",
						     has_column(h, "start") ? "" : SCHEMA_V2,
						     has_column(h, "failed_step") ? "" : SCHEMA_V3, HISTORY_SCHEMA_VERSION);
		r = exec(h, sql, err);
	}
	sqlite3_exec(h->db, r < 0 ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
	if (r < 0)
		return r;
	/* WAL: readers never block the writer; NORMAL: no fsync per commit (WAL keeps it intact) */
	for (int i = 0; i < 100; i++) {
		int rc = sqlite3_exec(h->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			break;
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			return db_error(h, err, "set WAL mode");
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	return exec(h, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA journal_size_limit = 0", err);
}

static char *db_file(const char *db, const char *suffix)
{
	return xasprintf("%s%s", db, suffix);
}

/* Narrow path to its owner's alone if it is a regular file of ours (never a link, a FIFO or a
 * device); with create, make it when missing, and give the owner read and write (a umask of
 * 0222 took them: SQLite could not write it). */
static void make_private(const char *path, bool create)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | (create ? O_CREAT : 0) | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return;
	mode_t want = (st.st_mode & 0700) | (create ? 0600 : 0);
	if (want != (st.st_mode & 07777))
		(void)fchmod(fd, want);
}

/* The history holds every run's command line, worktree and labels: its files are its owner's
 * alone (0600), whatever the state directory's mode (0755 when others reach a server's socket
 * in it). The database is made 0600 before SQLite opens it, which gives its -wal and -shm the
 * database's mode; files of an older warren (0644) are narrowed. */
static void history_private(const char *db)
{
	static const char *const sides[] = { "-wal", "-shm", PENDING, FOLDING, FOLD_LOCK };
	make_private(db, true);
	for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
		_cleanup_free_ char *p = db_file(db, sides[i]);
		make_private(p, false);
	}
}

int history_open(struct history **out, const char *path, struct error *err)
{
	struct history *h = xcalloc(1, sizeof *h);
	h->path = xstrdup(path);
	history_private(path);
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;
	struct stat st;
	if (stat(path, &st) == 0 && st.st_uid != geteuid() && access(path, R_OK) < 0 && errno == EACCES) {
		history_close(h);
		return error_set(err, 0, "the history %s is uid %u's alone; ask its server (GET /v1/runs) for your runs, or give another --db",
				 path, (unsigned)st.st_uid);
	}
	if (sqlite3_open_v2(path, &h->db, flags, NULL) != SQLITE_OK) {
		int r = error_set(err, 0, "cannot open the history %s: %s; check the directory, or give another --db",
				  path, h->db ? sqlite3_errmsg(h->db) : "out of memory");
		history_close(h);
		return r;
	}
	sqlite3_busy_timeout(h->db, BUSY_MS);
	/* the WAL file is kept (empty) when the last connection closes, not made and removed
	 * per run */
	int persist = 1;
	sqlite3_file_control(h->db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
	if (migrate(h, err) < 0) {
		history_close(h);
		return -EIO;
	}
	fold(h);
	*out = h;
	return 0;
}

void history_close(struct history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_kept; i++)
		sqlite3_finalize(h->kept[i].st);
	sqlite3_close_v2(h->db);
	free(h->path);
	free(h);
}

/* ---- binding ---- */

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_ms(sqlite3_stmt *st, int i, int64_t ms)
{
	if (ms)
		sqlite3_bind_int64(st, i, ms);
	else
		sqlite3_bind_null(st, i);
}

static void bind_json(sqlite3_stmt *st, int i, json_t *j)
{
	char *t = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	if (t)
		sqlite3_bind_text(st, i, t, -1, free);
	else
		sqlite3_bind_null(st, i);
}

/* Prepare sql (made at run time: not kept); the statement, or NULL + err. */
static sqlite3_stmt *prepare(struct history *h, const char *sql, struct error *err)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_error(h, err, "prepare a query");
		return NULL;
	}
	return st;
}

/* The statement of sql, a string literal, prepared once per connection and kept (stmt_done
 * resets it); or NULL + err. */
static sqlite3_stmt *prepare_kept(struct history *h, const char *sql, struct error *err)
{
	for (size_t i = 0; i < h->n_kept; i++)
		if (h->kept[i].sql == sql)
			return h->kept[i].st;
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v3(h->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
		db_error(h, err, "prepare a query");
		return NULL;
	}
	if (h->n_kept < KEPT_MAX)
		h->kept[h->n_kept++] = (struct kept_stmt){ .sql = sql, .st = st };
	return st;
}

/* Done with st: a kept statement is reset (its read or write ends, its bindings go) for its
 * next use, any other finalized. */
static void stmt_done(struct history *h, sqlite3_stmt *st)
{
	for (size_t i = 0; i < h->n_kept; i++)
		if (h->kept[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return;
		}
	sqlite3_finalize(st);
}

/* Step a statement that returns no rows, and be done with it. */
static int run_stmt(struct history *h, sqlite3_stmt *st, const char *what, struct error *err)
{
	int rc = sqlite3_step(st);
	int r = rc == SQLITE_DONE ? 0 : db_error(h, err, what);
	stmt_done(h, st);
	return r;
}

/* Run sql, one statement of no rows (a string literal: kept prepared). */
static int exec_kept(struct history *h, const char *sql, struct error *err)
{
	sqlite3_stmt *st = prepare_kept(h, sql, err);
	return st ? run_stmt(h, st, "update the database", err) : -EIO;
}

static int write_labels(struct history *h, const char *id, json_t *labels, struct error *err)
{
	const char *k;
	json_t *v;
	json_object_foreach(labels, k, v) {
		sqlite3_stmt *st = prepare_kept(h, "INSERT OR REPLACE INTO labels(run, key, value) VALUES (?1, ?2, ?3)", err);
		if (!st)
			return -EIO;
		bind_text(st, 1, id);
		bind_text(st, 2, k);
		bind_text(st, 3, json_string_value(v) ?: "");
		if (run_stmt(h, st, "record a label", err) < 0)
			return -EIO;
	}
	return 0;
}

/* The row of r inserted, or (a queued row starting) updated; inside the caller's transaction. */
static int begin_row(struct history *h, const struct history_run *r, struct error *err)
{
	sqlite3_stmt *st = prepare_kept(h,
		"INSERT INTO runs(id, name, state, kind, command, worktree, statedir, owner, submitted_ms, started_ms, labels, via,"
		" start, start_why) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
		" ON CONFLICT(id) DO UPDATE SET state = CASE WHEN state IN ('queued', 'running') THEN excluded.state ELSE state END,"
		" kind = COALESCE(kind, excluded.kind),"
		" command = COALESCE(command, excluded.command), worktree = COALESCE(excluded.worktree, worktree),"
		" statedir = COALESCE(excluded.statedir, statedir), started_ms = COALESCE(excluded.started_ms, started_ms),"
		" name = COALESCE(excluded.name, name), labels = COALESCE(excluded.labels, labels),"
		" start = COALESCE(excluded.start, start), start_why = COALESCE(excluded.start_why, start_why)", err);
	if (!st)
		return -EIO;
	bind_text(st, 1, r->id);
	bind_text(st, 2, r->name);
	bind_text(st, 3, r->state);
	bind_text(st, 4, r->kind);
	bind_json(st, 5, r->command);
	bind_text(st, 6, r->worktree);
	bind_text(st, 7, r->statedir);
	sqlite3_bind_int64(st, 8, (sqlite3_int64)r->owner);
	bind_ms(st, 9, r->submitted_ms);
	bind_ms(st, 10, r->started_ms);
	bind_json(st, 11, r->labels && json_object_size(r->labels) ? r->labels : NULL);
	bind_text(st, 12, r->via ? r->via : "cli");
	bind_text(st, 13, r->start);
	bind_text(st, 14, r->start_why);
	int rc = run_stmt(h, st, "record the run", err);
	if (rc == 0 && r->labels)
		rc = write_labels(h, r->id, r->labels, err);
	return rc;
}

static int end_row(struct history *h, const char *id, const struct history_end *e, struct error *err)
{
	sqlite3_stmt *st = prepare_kept(h,
		"UPDATE runs SET state = ?2, exit_code = ?3, signal = ?4, cause_limit = ?5, cause = ?6, error = ?7,"
		" ended_ms = ?8, duration_s = CASE WHEN ?9 >= 0 THEN ?9 WHEN started_ms IS NOT NULL"
		" THEN (?8 - started_ms) / 1000.0 END, failed_step = ?11, tolerated = ?12"
		" WHERE id = ?1 AND (?10 = 0 OR state IN ('queued', 'running'))", err);
	if (!st)
		return -EIO;
	bind_text(st, 1, id);
	bind_text(st, 2, e->state);
	if (e->have_exit)
		sqlite3_bind_int(st, 3, e->exit_code);
	else
		sqlite3_bind_null(st, 3);
	bind_text(st, 4, e->signal);
	bind_text(st, 5, e->cause_limit);
	bind_text(st, 6, e->cause);
	bind_text(st, 7, e->error);
	bind_ms(st, 8, e->ended_ms);
	sqlite3_bind_double(st, 9, e->duration_s);
	sqlite3_bind_int(st, 10, e->if_live);
	bind_json(st, 11, json_is_object(e->failed_step) ? e->failed_step : NULL);
	if (e->tolerated)
		sqlite3_bind_int(st, 12, (int)e->tolerated);
	else
		sqlite3_bind_null(st, 12);
	return run_stmt(h, st, "record the end of the run", err);
}

/* ---- the pending lines ---- */

bool history_exists(const char *path)
{
	_cleanup_free_ char *pending = db_file(path, PENDING), *folding = db_file(path, FOLDING);
	return access(path, F_OK) == 0 || access(pending, F_OK) == 0 || access(folding, F_OK) == 0;
}

/* flock(fd, op) waiting at most LOCK_WAIT_MS: a process stopped while it holds the lock (a
 * writer between its open and its write, a folder while it reads) does not stop everyone
 * else. 0, or -EWOULDBLOCK when it was not got in time, or -errno. */
static int lock_within(int fd, int op)
{
	for (int waited = 0;; waited += 2) {
		if (flock(fd, op | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (waited >= LOCK_WAIT_MS)
			return -EWOULDBLOCK;
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
}

/* Open path (a pending file) as flags allow, never a link, a FIFO or a device, nor a file of
 * another user's but root's: fd, or -errno (-EPERM: not a regular file of ours). */
static int open_pending(const char *path, int flags, struct stat *st)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	if (!S_ISREG(st->st_mode) || (st->st_uid != geteuid() && st->st_uid != 0)) {
		close(fd);
		return -EPERM;
	}
	/* the owner's alone (history_private), also a file of an older warren's (0644); and made
	 * under a caller's umask that takes the owner's write (0222), the next run could not
	 * append */
	mode_t want = (st->st_mode & 0700) | ((flags & O_CREAT) ? 0600 : 0);
	if (st->st_uid == geteuid() && want != (st->st_mode & 07777))
		(void)fchmod(fd, want);
	return fd;
}

/* Append line (one JSON object) to db's pending file as one write, under a shared flock that a
 * folder's exclusive one waits for; when the file was folded away between our open and our
 * lock, again into the new one. Each line begins with a newline too, so that a line cut short
 * (a full disk, a writer killed) never swallows the next one. The file's length after it, or
 * -errno. */
static off_t pending_append(const char *db, json_t *line, struct error *err)
{
	_cleanup_free_ char *path = db_file(db, PENDING);
	_cleanup_free_ char *json = json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(9));
	if (!json)
		return error_set(err, ENOMEM, "cannot make its line (out of memory)");
	_cleanup_free_ char *text = xasprintf("\n%s\n", json);
	size_t n = strlen(text);
	for (int i = 0; i < PENDING_TRIES; i++) {
		struct stat ours, now;
		_cleanup_close_ int fd = open_pending(path, O_WRONLY | O_APPEND | O_CREAT, &ours);
		if (fd == -EPERM)
			return error_set(err, 0, "%s is not a regular file of this user's (remove it)", path);
		if (fd < 0)
			return error_set(err, -fd, "cannot open %s", path);
		int r = lock_within(fd, LOCK_SH);
		if (r < 0)
			return error_set(err, -r, "cannot lock %s", path);
		if (fstat(fd, &ours) < 0)
			return error_set(err, errno, "cannot read %s", path);
		if (ours.st_nlink == 0 || lstat(path, &now) < 0 || now.st_ino != ours.st_ino || now.st_dev != ours.st_dev)
			continue;  /* folded away between our open and our lock: the new file */
		if ((r = write_all(fd, text, n)) < 0)
			return error_set(err, -r, "cannot write %s", path);
		return ours.st_size + (off_t)n;
	}
	return error_set(err, EAGAIN, "%s was folded away %d times while we wrote", path, PENDING_TRIES);
}

static void json_set_str(json_t *o, const char *k, const char *v)
{
	if (!v)
		return;
	json_t *j = json_string(v);
	if (!j) {  /* not UTF-8 (a path's bytes): its odd bytes as \xNN, not the field dropped */
		_cleanup_free_ char *p = printable_name(v);
		j = json_string(p);
	}
	json_object_set_new(o, k, j);
}

static void json_set_ms(json_t *o, const char *k, int64_t ms)
{
	if (ms)
		json_object_set_new(o, k, json_integer(ms));
}

static void note_line(const struct cell_spec *s, json_t *line, bool last)
{
	_cleanup_free_ char *path = history_path(s->statedir, s->history_db);
	if (!path) {
		json_decref(line);
		return;
	}
	_cleanup_error_ struct error err = { 0 };
	off_t len = pending_append(path, line, &err);
	json_decref(line);
	static char warned_id[RUN_ID_LEN + 1];  /* one warning a run, not one for its start and its end */
	if (len < 0 && strcmp(warned_id, s->id)) {
		snprintf(warned_id, sizeof warned_id, "%s", s->id);
		warn_line("%s: cannot write to the history %s: %s (check the directory, or give another --db); the run's "
			  "record is in %s all the same", s->id, path, err.msg, s->rundir);
	}
	/* no reader for a long while (runs only, nobody asks): the run's end folds them in
	 * itself, once in some 2 000 runs, so that the file stays short */
	if (last && len > FOLD_AT_BYTES) {
		struct history *h = NULL;
		if (history_open(&h, path, &err) == 0)
			history_close(h);
	}
}

static json_t *begin_json(const struct history_run *r)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:I}", "op", "begin", "id", r->id, "state", r->state, "owner",
			      (json_int_t)r->owner);
	json_set_str(o, "name", r->name);
	json_set_str(o, "kind", r->kind);
	json_set_str(o, "worktree", r->worktree);
	json_set_str(o, "statedir", r->statedir);
	json_set_str(o, "via", r->via);
	json_set_str(o, "start", r->start);
	json_set_str(o, "start_why", r->start_why);
	json_set_ms(o, "submitted_ms", r->submitted_ms);
	json_set_ms(o, "started_ms", r->started_ms);
	if (r->command)
		json_object_set(o, "command", r->command);
	if (r->labels)
		json_object_set(o, "labels", r->labels);
	return o;
}

static json_t *end_json(const char *id, const struct history_end *e)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:f}", "op", "end", "id", id, "state", e->state, "duration_s", e->duration_s);
	if (e->have_exit)
		json_object_set_new(o, "exit_code", json_integer(e->exit_code));
	json_set_str(o, "signal", e->signal);
	json_set_str(o, "cause_limit", e->cause_limit);
	json_set_str(o, "cause", e->cause);
	json_set_str(o, "error", e->error);
	json_set_ms(o, "ended_ms", e->ended_ms);
	if (json_is_object(e->failed_step))
		json_object_set(o, "failed_step", e->failed_step);
	if (e->tolerated)
		json_object_set_new(o, "tolerated", json_integer(e->tolerated));
	return o;
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* One pending line into the database (inside the fold's transaction): 0, 1 when the line is
 * not one of ours (skipped), or -EIO + err. */
static int fold_line(struct history *h, json_t *o, struct error *err)
{
	const char *op = jstr(o, "op"), *id = jstr(o, "id"), *state = jstr(o, "state");
	if (!op || !id || !state)
		return 1;
	if (!strcmp(op, "begin")) {
		json_t *cmd = json_object_get(o, "command"), *labels = json_object_get(o, "labels");
		struct history_run r = { .id = id, .name = jstr(o, "name"), .state = state, .kind = jstr(o, "kind"),
					 .worktree = jstr(o, "worktree"), .statedir = jstr(o, "statedir"), .via = jstr(o, "via"),
					 .start = jstr(o, "start"), .start_why = jstr(o, "start_why"),
					 .command = json_is_array(cmd) ? cmd : NULL, .labels = json_is_object(labels) ? labels : NULL,
					 .owner = (uid_t)json_integer_value(json_object_get(o, "owner")),
					 .submitted_ms = json_integer_value(json_object_get(o, "submitted_ms")),
					 .started_ms = json_integer_value(json_object_get(o, "started_ms")) };
		return begin_row(h, &r, err);
	}
	if (!strcmp(op, "end")) {
		json_t *code = json_object_get(o, "exit_code");
		struct history_end e = { .state = state, .have_exit = json_is_integer(code),
					 .exit_code = (int)json_integer_value(code), .signal = jstr(o, "signal"),
					 .cause_limit = jstr(o, "cause_limit"), .cause = jstr(o, "cause"), .error = jstr(o, "error"),
					 .failed_step = json_object_get(o, "failed_step"),
					 .tolerated = (unsigned)json_integer_value(json_object_get(o, "tolerated")),
					 .ended_ms = json_integer_value(json_object_get(o, "ended_ms")),
					 .duration_s = json_number_value(json_object_get(o, "duration_s")) };
		return end_row(h, id, &e, err);
	}
	return 1;
}

/* Fold the lines of the file path (the folding one) into the database, in one transaction. */
static int fold_file(struct history *h, const char *path, struct error *err)
{
	struct stat st;
	_cleanup_close_ int fd = open_pending(path, O_RDONLY, &st);
	if (fd == -ENOENT)
		return 0;
	if (fd == -EPERM)
		return error_set(err, 0, "history %s: %s is not a regular file of this user's (remove it)", h->path, path);
	if (fd < 0)
		return error_set(err, -fd, "history %s: cannot open %s", h->path, path);
	/* a writer that opened it before it was renamed finishes its line first; one that locks
	 * it after finds it renamed and writes to the new file */
	int r = lock_within(fd, LOCK_EX);
	if (r < 0)
		return error_set(err, -r, "history %s: a writer of %s holds it (stopped?)", h->path, path);
	size_t len = 0;
	_cleanup_free_ char *text = read_fd(fd, &len);
	if (!text)
		return error_set(err, errno, "history %s: cannot read %s", h->path, path);
	flock(fd, LOCK_UN);
	if (exec_kept(h, "BEGIN IMMEDIATE", err) < 0)
		return -EIO;
	size_t skipped = 0;
	for (char *line = text, *end; r >= 0 && line < text + len; line = end + 1) {
		end = memchr(line, '\n', (size_t)(text + len - line));
		if (!end)
			end = text + len;
		if (end == line)
			continue;  /* (each line begins with a newline: see pending_append) */
		/* a line cut short (a writer's disk full, a writer killed) is not JSON */
		json_t *o = json_loadb(line, (size_t)(end - line), 0, NULL);
		r = o ? fold_line(h, o, err) : 1;
		json_decref(o);
		if (r == 1) {
			skipped++;
			r = 0;
		}
	}
	if (r < 0 || exec_kept(h, "COMMIT", err) < 0) {
		sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
		return -EIO;
	}
	if (skipped)
		warn_line("history %s: %zu unreadable line%s of %s skipped", h->path, skipped, skipped == 1 ? "" : "s", path);
	return 0;
}

/* A warning of fold's, not repeated while it stays the same (the server folds before each of
 * its reads). */
static void fold_warn(const char *fmt, ...)
{
	static char last[512];
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (!strcmp(line, last))
		return;
	snprintf(last, sizeof last, "%s", line);
	warn_line("%s", line);
}

/* The pending lines into the database, the older ones (a fold that failed) first; each
 * reader and writer of the database calls it first. A failure is a warning: the lines stay
 * for the next fold, and the database answers as it is. */
static void fold(struct history *h)
{
	_cleanup_free_ char *pending = db_file(h->path, PENDING), *folding = db_file(h->path, FOLDING);
	struct stat st;
	/* pending first: a folder that renames it meanwhile leaves the folding file, seen next */
	if ((lstat(pending, &st) < 0 || st.st_size == 0) && lstat(folding, &st) < 0)
		return;  /* (the common case of the server's reads: nothing new) */
	_cleanup_free_ char *lock = db_file(h->path, FOLD_LOCK);
	_cleanup_close_ int lk = open_pending(lock, O_RDWR | O_CREAT, &st);
	if (lk == -EACCES || lk == -EPERM || lk == -EROFS) {
		fold_warn("history %s: runs wait in %s that this user cannot fold in (%s); they are listed once the "
			  "history's owner reads it (warren history)", h->path, pending, strerror(-lk));
		return;
	}
	/* after a lock not got in time, the next folds of the next 30 s do not wait: a stuck
	 * folder must not make each of the server's reads wait 5 s */
	static int64_t gave_up_ms;
	bool wait = history_now_ms() - gave_up_ms > 30000;
	int r = lk < 0 ? lk : wait ? lock_within(lk, LOCK_EX) : flock(lk, LOCK_EX | LOCK_NB) < 0 ? -errno : 0;
	if (r == -EWOULDBLOCK && wait)
		gave_up_ms = history_now_ms();
	if (r < 0) {
		fold_warn("history %s: cannot lock %s: %s", h->path, lock,
			  r == -EWOULDBLOCK ? "another process holds it (for 5 s and more)" : strerror(-r));
		return;
	}
	_cleanup_error_ struct error err = { 0 };
	for (int round = 0; round < 4; round++) {
		/* (under the lock: another folder may have taken them meanwhile) */
		if (lstat(folding, &st) < 0) {
			if (lstat(pending, &st) < 0 || st.st_size == 0)
				return;
			if (rename(pending, folding) < 0) {
				if (errno != ENOENT)
					fold_warn("history %s: cannot take %s: %s", h->path, pending, strerror(errno));
				return;
			}
		}
		if (fold_file(h, folding, &err) < 0) {
			fold_warn("%s; its lines are kept for the next fold", err.msg);
			return;
		}
		if (unlink(folding) < 0 && errno != ENOENT) {
			fold_warn("history %s: cannot remove %s (%s); its lines would be folded in again", h->path, folding,
				  strerror(errno));
			return;
		}
	}
}

int history_begin(struct history *h, const struct history_run *r, struct error *err)
{
	fold(h);
	if (exec_kept(h, "BEGIN IMMEDIATE", err) < 0)
		return -EIO;
	int rc = begin_row(h, r, err);
	if (rc == 0)
		return exec_kept(h, "COMMIT", err);
	sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int history_end(struct history *h, const char *id, const struct history_end *e, struct error *err)
{
	fold(h);
	return end_row(h, id, e, err);
}

static int by_id(struct history *h, const char *sql, const char *id, const char *what, struct error *err)
{
	sqlite3_stmt *st = prepare_kept(h, sql, err);  /* sql: a literal of each caller */
	if (!st)
		return -EIO;
	bind_text(st, 1, id);
	return run_stmt(h, st, what, err);
}

int history_mark_pruned(struct history *h, const char *id, struct error *err)
{
	fold(h);
	return by_id(h, "UPDATE runs SET pruned = 1 WHERE id = ?1", id, "mark the run pruned", err);
}

int history_delete(struct history *h, const char *id, struct error *err)
{
	fold(h);
	if (by_id(h, "DELETE FROM labels WHERE run = ?1", id, "delete the run's labels", err) < 0)
		return -EIO;
	return by_id(h, "DELETE FROM runs WHERE id = ?1", id, "delete the run", err);
}

/* ---- reading ---- */

#define ROW_COLUMNS                                                                                  \
	"id, name, state, kind, exit_code, signal, cause_limit, cause, error, command, worktree, statedir," \
	" owner, submitted_ms, started_ms, ended_ms, duration_s, labels, pruned, via, start, start_why," \
	" failed_step, tolerated"

static json_t *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? json_string((const char *)t) : json_null();
}

static json_t *col_json(sqlite3_stmt *st, int i, json_t *dflt)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	json_t *j = t ? json_loads((const char *)t, 0, NULL) : NULL;
	if (j) {
		json_decref(dflt);
		return j;
	}
	return dflt;
}

static json_t *col_time(sqlite3_stmt *st, int i)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	int64_t ms = sqlite3_column_int64(st, i);
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L };
	char b[64];
	return json_string(format_rfc3339(b, sizeof b, &ts));
}

static json_t *col_num(sqlite3_stmt *st, int i, bool real)
{
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return json_null();
	return real ? json_real(sqlite3_column_double(st, i)) : json_integer(sqlite3_column_int64(st, i));
}

/* One row of ROW_COLUMNS as the JSON the CLI and the API show. */
static json_t *row_json(sqlite3_stmt *st)
{
	json_t *cause = json_null();
	if (sqlite3_column_type(st, 6) != SQLITE_NULL || sqlite3_column_type(st, 7) != SQLITE_NULL)
		cause = json_pack("{s:o,s:o}", "limit", col_text(st, 6), "message", col_text(st, 7));
	json_t *j = json_object();
	json_object_set_new(j, "id", col_text(st, 0));
	json_object_set_new(j, "name", col_text(st, 1));
	json_object_set_new(j, "state", col_text(st, 2));
	json_object_set_new(j, "kind", col_text(st, 3));
	json_object_set_new(j, "exit_code", col_num(st, 4, false));
	json_object_set_new(j, "signal", col_text(st, 5));
	json_object_set_new(j, "cause", cause);
	json_object_set_new(j, "error", col_text(st, 8));
	json_object_set_new(j, "command", col_json(st, 9, json_array()));
	json_object_set_new(j, "worktree", col_text(st, 10));
	json_object_set_new(j, "statedir", col_text(st, 11));
	json_object_set_new(j, "owner", col_num(st, 12, false));
	json_object_set_new(j, "submitted_at", col_time(st, 13));
	json_object_set_new(j, "started_at", col_time(st, 14));
	json_object_set_new(j, "ended_at", col_time(st, 15));
	json_object_set_new(j, "started_ms", col_num(st, 14, false));
	json_object_set_new(j, "duration_s", col_num(st, 16, true));
	json_object_set_new(j, "labels", col_json(st, 17, json_object()));
	json_object_set_new(j, "pruned", json_boolean(sqlite3_column_int(st, 18)));
	json_object_set_new(j, "via", col_text(st, 19));
	json_object_set_new(j, "start", col_text(st, 20));
	json_object_set_new(j, "start_why", col_text(st, 21));
	/* a job's: the step that failed it ({number, name, status, exit_code, cause}), and how
	 * many steps failed under continue-on-error (the job went on) */
	json_object_set_new(j, "failed_step", col_json(st, 22, json_null()));
	json_object_set_new(j, "tolerated_failures", col_num(st, 23, false));
	return j;
}

/* The WHERE clause of f, its words bound from index 1 on by bind_filter in the same order. */
static char *filter_sql(const struct history_filter *f)
{
	char *w = xstrdup(" WHERE 1");
#define AND(cond) do { char *n = xasprintf("%s AND %s", w, cond); free(w); w = n; } while (0)
	if (f->state && !strcmp(f->state, "live"))
		AND("state IN ('queued', 'running')");
	else if (f->state)
		AND("state = ?");
	for (size_t i = 0; i < f->nlabels; i++)
		AND("EXISTS (SELECT 1 FROM labels l WHERE l.run = runs.id AND l.key = ? AND l.value = ?)");
	if (f->since_ms)
		AND("COALESCE(started_ms, submitted_ms) >= ?");
	if (f->before)
		AND("id < ?");
	if (!f->any_owner)
		AND("owner = ?");
#undef AND
	return w;
}

static void bind_filter(sqlite3_stmt *st, const struct history_filter *f)
{
	int i = 1;
	if (f->state && strcmp(f->state, "live"))
		bind_text(st, i++, f->state);
	for (size_t k = 0; k < f->nlabels; k++) {
		const char *kv = f->labels[k], *eq = strchr(kv, '=');
		sqlite3_bind_text(st, i++, kv, eq ? (int)(eq - kv) : -1, SQLITE_TRANSIENT);
		bind_text(st, i++, eq ? eq + 1 : "");
	}
	if (f->since_ms)
		sqlite3_bind_int64(st, i++, f->since_ms);
	if (f->before)
		bind_text(st, i++, f->before);
	if (!f->any_owner)
		sqlite3_bind_int64(st, i++, (sqlite3_int64)f->owner);
}

json_t *history_query(struct history *h, const struct history_filter *f, struct error *err)
{
	fold(h);
	_cleanup_free_ char *where = filter_sql(f);
	_cleanup_free_ char *sql = f->limit > 0
		? xasprintf("SELECT " ROW_COLUMNS " FROM runs%s ORDER BY id DESC LIMIT %ld", where, f->limit)
		: xasprintf("SELECT " ROW_COLUMNS " FROM runs%s ORDER BY id DESC", where);
	sqlite3_stmt *st = prepare(h, sql, err);
	if (!st)
		return NULL;
	bind_filter(st, f);
	json_t *a = json_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(a, row_json(st));
	if (rc != SQLITE_DONE) {
		db_error(h, err, "read the runs");
		json_decref(a);
		a = NULL;
	}
	stmt_done(h, st);
	return a;
}

json_t *history_get(struct history *h, const char *id, struct error *err)
{
	fold(h);
	sqlite3_stmt *st = prepare_kept(h, "SELECT " ROW_COLUMNS " FROM runs WHERE id = ?1", err);
	if (!st)
		return NULL;
	bind_text(st, 1, id);
	json_t *j = NULL;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		j = row_json(st);
	else if (rc == SQLITE_DONE)
		error_set(err, ENOENT, "no run %s in the history %s", id, h->path);
	else
		db_error(h, err, "read the run");
	stmt_done(h, st);
	return j;
}

/* The first column of each row of a prepared statement, as a NULL-terminated list. */
static char **collect_ids(struct history *h, sqlite3_stmt *st, struct error *err)
{
	char **ids = xcalloc(1, sizeof *ids);
	size_t n = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ids = xrealloc(ids, (n + 2) * sizeof *ids);
		ids[n++] = xstrdup((const char *)sqlite3_column_text(st, 0) ?: "");
		ids[n] = NULL;
	}
	if (rc != SQLITE_DONE) {
		db_error(h, err, "read the runs");
		history_ids_free(ids);
		ids = NULL;
	}
	stmt_done(h, st);
	return ids;
}

char **history_ids_in_state(struct history *h, const char *state, const char *via, const char *statedir,
			    struct error *err)
{
	fold(h);
	sqlite3_stmt *st = prepare_kept(h, "SELECT id FROM runs WHERE state = ?1 AND via = ?2 AND statedir = ?3 ORDER BY id", err);
	if (!st)
		return NULL;
	bind_text(st, 1, state);
	bind_text(st, 2, via);
	bind_text(st, 3, statedir);
	return collect_ids(h, st, err);
}

char **history_expired(struct history *h, long keep_runs, int64_t keep_for_ms, int64_t now_ms, struct error *err)
{
	fold(h);
	sqlite3_stmt *st = prepare_kept(h,
		"SELECT id FROM (SELECT id, ended_ms, row_number() OVER (ORDER BY id DESC) AS n FROM runs"
		" WHERE state NOT IN ('queued', 'running') AND pruned = 0)"
		" WHERE (?1 > 0 AND n > ?1) OR (?2 > 0 AND ended_ms IS NOT NULL AND ended_ms < ?3 - ?2) ORDER BY id", err);
	if (!st)
		return NULL;
	sqlite3_bind_int64(st, 1, keep_runs);
	sqlite3_bind_int64(st, 2, keep_for_ms);
	sqlite3_bind_int64(st, 3, now_ms);
	return collect_ids(h, st, err);
}

void history_ids_free(char **ids)
{
	strv_free(ids);
}

/* ---- what the supervisor writes ---- */

static void note_end_line(const struct cell_spec *s, const struct history_end *e)
{
	note_line(s, end_json(s->id, e), true);
	noted_id[0] = '\0';
}

void history_note_start(const struct cell_spec *s)
{
	json_t *cmd = json_array();
	for (char **p = s->argv; p && *p; p++)
		json_array_append_new(cmd, json_string(*p));
	json_t *labels = record_labels_json(s->labels);
	struct history_run r = { .id = s->id, .name = s->name, .state = "running",
				 .kind = s->argv && s->argv[0] && !strcmp(s->argv[0], "warren-job") ? "job" : "command",
				 .worktree = s->worktree, .statedir = s->statedir, .command = cmd, .labels = labels,
				 .owner = s->host_uid, .started_ms = history_now_ms(), .start = s->start,
				 .start_why = s->start_why };
	note_line(s, begin_json(&r), false);
	snprintf(noted_id, sizeof noted_id, "%s", s->id);
	json_decref(cmd);
	json_decref(labels);
}

void history_note_end(const struct cell_spec *s, const struct run_result *res, const char *status)
{
	char sig[32] = "";
	if (res->signal)
		snprintf(sig, sizeof sig, "SIG%s", sigabbrev_np(res->signal) ?: "?");
	struct history_end e = { .state = status ? status : run_status_name(res->status), .have_exit = true,
				 .exit_code = res->exit_code, .signal = *sig ? sig : NULL,
				 .cause_limit = res->cause_limit, .cause = res->cause_message, .error = res->error,
				 .failed_step = res->failed_step, .tolerated = res->tolerated,
				 .ended_ms = (int64_t)res->ended.tv_sec * 1000 + res->ended.tv_nsec / 1000000,
				 .duration_s = res->wall_s };
	note_end_line(s, &e);
}

/* ---- checks of what users give ---- */

static bool printable(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

int history_check_label(const char *kv, struct error *err)
{
	const char *eq = strchr(kv, '=');
	size_t klen = eq ? (size_t)(eq - kv) : 0;
	if (!eq || !klen || klen > 63 || strspn(kv, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") != klen)
		return error_set(err, 0, "label '%s' is not KEY=VALUE with a KEY of 1-63 letters, digits and ._/- (e.g. team=ci)", kv);
	if (strlen(eq + 1) > 255 || !printable(eq + 1))
		return error_set(err, 0, "label '%.*s': its value must be at most 255 printable characters", (int)klen, kv);
	return 0;
}

int history_check_name(const char *name, struct error *err)
{
	if (!*name || strlen(name) > 128 || !printable(name))
		return error_set(err, 0, "name '%s' must be 1-128 printable characters", name);
	return 0;
}

int history_parse_since(const char *s, int64_t now_ms, int64_t *out)
{
	uint64_t ms;
	if (parse_duration_ms(s, &ms) == 0) {
		*out = now_ms - (int64_t)ms;
		return 0;
	}
	struct tm tm = { 0 };
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end)
		end = strptime(s, "%Y-%m-%d", &tm);
	if (end && *end == '.')
		end += 1 + strspn(end + 1, "0123456789");
	if (!end || (*end && strcmp(end, "Z")))
		return -EINVAL;
	*out = (int64_t)timegm(&tm) * 1000;
	return 0;
}

/* ---- retention, for warren serve and warren gc ---- */

char **history_retain(struct history *h, const struct statedir *sd, long keep_runs, int64_t keep_for_ms,
		      struct error *err)
{
	char **ids = history_expired(h, keep_runs, keep_for_ms, history_now_ms(), err);
	if (!ids)
		return NULL;
	size_t n = 0;
	for (char **id = ids; *id; id++) {
		_cleanup_close_ int dir = rundir_open(sd, *id, NULL);
		if (dir >= 0 && rundir_is_live(dir)) {
			free(*id);  /* a supervisor holds it (a row left "ended" by another writer): not now */
			continue;
		}
		int r = dir >= 0 ? rm_tree_at(sd->runs, *id) : 0;
		if (r < 0) {
			warn_line("cannot prune the record %s/runs/%s: %s", sd->path, *id, strerror(-r));
			free(*id);
			continue;
		}
		struct error e2 = { 0 };
		if (history_mark_pruned(h, *id, &e2) < 0) {
			warn_line("%s", e2.msg);
			error_clear(&e2);
		}
		ids[n++] = *id;
	}
	ids[n] = NULL;
	return ids;
}

json_t *history_counts(struct history *h, struct error *err)
{
	fold(h);
	sqlite3_stmt *st = prepare_kept(h, "SELECT state, COALESCE(cause_limit, ''), count(*) FROM runs GROUP BY 1, 2 ORDER BY 1, 2", err);
	if (!st)
		return NULL;
	json_t *a = json_array();
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(a, json_pack("{s:o,s:o,s:I}", "state", col_text(st, 0), "cause", col_text(st, 1),
						   "runs", (json_int_t)sqlite3_column_int64(st, 2)));
	if (rc != SQLITE_DONE) {
		db_error(h, err, "count the runs");
		json_decref(a);
		a = NULL;
	}
	stmt_done(h, st);
	return a;
}
