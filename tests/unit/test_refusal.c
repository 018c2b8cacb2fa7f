/* SPDX-License-Identifier: Apache-2.0 */
/* test_refusal.c - the write watch's decision (supervise/refusal.h), case by case: from the
 * facts the lookups find of a path (read-only mount or not, what the name is) and the cell's
 * rules (worktree, /tmp, home, a read-only root, system trees, binds, --work-ro, --rootfs,
 * Landlock's ABI), was the call refused, and which path does the record name; a path too long
 * to look up is a verdict of its own; renames and links in the kernel's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervise/refusal.h"

#define NO REFUSAL_NO
#define YES REFUSAL_YES
#define TOO_LONG REFUSAL_TOO_LONG

static struct policy_opts opts;
static const struct policy_mount binds[] = {
	{ .source = "/srv/data", .destination = "/data", .readonly = true },
	{ .source = "/srv/cache", .destination = "/cache", .readonly = false },
};

enum cell { PLAIN, WORK_RO, ROOTFS };

static struct policy_ctx ctx(enum cell c)
{
	return (struct policy_ctx){ .id = "run_TEST", .worktree = "/work/repo", .worktree_ro = c == WORK_RO,
				    .cwd = "/work/repo", .mounts = binds, .n_mounts = 2, .home = "/home/runner",
				    .rootfs = c == ROOTFS ? "/srv/rootfs" : NULL, .rundir = "/var/lib/warren/runs/run_TEST",
				    .uid = 1000, .policy = &opts };
}

/* The facts of a name: in dir, found, on a read-only mount (ro) or not. */
#define AT(d, n, ro) .found_dir = true, .dir = (d), .name = (n), .ro_dir = (ro), .ro_name = (ro)
#define FILE_ .exists = true, .is_reg = true
#define DIR_ .exists = true, .is_dir = true
#define OPEN(fl) .want = W_OPEN, .flags = (fl), .landlock = 1
#define CREATE .want = W_CREATE, .landlock = 1
#define REMOVE .want = W_REMOVE, .landlock = 1
#define CHMOD .want = W_CHANGE, .landlock = 0
#define TRUNCATE .want = W_CHANGE, .landlock = REFUSAL_LANDLOCK_TRUNCATE

struct row {
	const char *what;
	enum cell cell;
	int abi;               /* Landlock ABI the job runs under */
	struct path_facts f;
	enum refusal_verdict want;
	const char *path;      /* the path the record names (NULL: none) */
	bool is_protected;
};

static const struct row rows[] = {
	/* where the run may write */
	{ "a new file in the worktree", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT), AT("/work/repo", "out.txt", false) }, NO,
	  "/work/repo/out.txt", false },
	{ "a new file in /tmp", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT), AT("/tmp", "x", false) }, NO, "/tmp/x", false },
	{ "a new file in /var/tmp", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT), AT("/var/tmp", "x", false) }, NO, "/var/tmp/x", false },
	{ "a new file in home", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT), AT("/home/runner/.cache", "pip", false) }, NO,
	  "/home/runner/.cache/pip", false },
	{ "rewrite a file of the worktree", PLAIN, 3, { OPEN(O_WRONLY | O_TRUNC), AT("/work/repo/src", "a.c", false), FILE_ },
	  NO, "/work/repo/src/a.c", false },
	{ "mkdir in the worktree", PLAIN, 3, { CREATE, AT("/work/repo", "build", false) }, NO, "/work/repo/build", false },
	{ "unlink in the worktree", PLAIN, 3, { REMOVE, AT("/work/repo", "a.o", false), FILE_ }, NO, "/work/repo/a.o", false },
	{ "a new file in the read-write bind", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT), AT("/cache", "x", false) }, NO,
	  "/cache/x", false },
	/* the read-only root and the system trees */
	{ "a new file in /usr/bin (read-only root)", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT), AT("/usr/bin", "tool", true) }, YES,
	  "/usr/bin/tool", false },
	{ "the same without Landlock", PLAIN, 0, { OPEN(O_WRONLY | O_CREAT), AT("/usr/bin", "tool", true) }, YES,
	  "/usr/bin/tool", false },
	{ "overwrite /etc/passwd", PLAIN, 3, { OPEN(O_WRONLY | O_TRUNC), AT("/etc", "passwd", true), FILE_ }, YES,
	  "/etc/passwd", false },
	{ "mkdir in /var/lib", PLAIN, 3, { CREATE, AT("/var/lib", "app", true) }, YES, "/var/lib/app", false },
	{ "a file in /opt, writable mount but outside (Landlock)", PLAIN, 3,
	  { OPEN(O_WRONLY | O_CREAT), AT("/opt", "x", false) }, YES, "/opt/x", false },
	{ "the same with no Landlock: the kernel lets it", PLAIN, 0, { OPEN(O_WRONLY | O_CREAT), AT("/opt", "x", false) }, NO,
	  "/opt/x", false },
	{ "chmod on the read-only root", PLAIN, 3, { CHMOD, AT("/usr/bin", "ls", true), FILE_ }, YES, "/usr/bin/ls", false },
	{ "chmod outside on a writable mount: not Landlock's", PLAIN, 3, { CHMOD, AT("/opt", "f", false), FILE_ }, NO, "/opt/f",
	  false },
	{ "truncate a file on the read-only root", PLAIN, 3, { TRUNCATE, AT("/etc", "hosts", true), FILE_ }, YES,
	  "/etc/hosts", false },
	{ "a symlink followed to the read-only root", PLAIN, 3,
	  { OPEN(O_WRONLY), .found_dir = true, .dir = "/work/repo", .name = "link", .ro_name = true, FILE_,
	    .resolved = "/usr/lib/libx.so" },
	  YES, "/usr/lib/libx.so", false },
	/* binds, --work-ro, --rootfs, protected paths */
	{ "a new file in the read-only bind", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT), AT("/data", "x", true) }, YES, "/data/x",
	  false },
	{ "--work-ro: a new file in the worktree", WORK_RO, 3, { OPEN(O_WRONLY | O_CREAT), AT("/work/repo", "x", true) }, YES,
	  "/work/repo/x", false },
	{ "--work-ro: /tmp still writable", WORK_RO, 3, { OPEN(O_WRONLY | O_CREAT), AT("/tmp", "x", false) }, NO, "/tmp/x",
	  false },
	{ "--rootfs: the image's /opt is the run's own", ROOTFS, 3, { OPEN(O_WRONLY | O_CREAT), AT("/opt", "x", false) }, NO,
	  "/opt/x", false },
	{ "--rootfs: its /etc/passwd is read-only", ROOTFS, 3, { OPEN(O_WRONLY), AT("/etc", "passwd", true), FILE_ }, YES,
	  "/etc/passwd", false },
	{ "a protected hook", PLAIN, 3, { OPEN(O_WRONLY | O_TRUNC), AT("/work/repo/.git/hooks", "pre-commit", true), FILE_ },
	  YES, "/work/repo/.git/hooks/pre-commit", true },
	{ "remove a mount point in the worktree (EBUSY)", PLAIN, 3,
	  { REMOVE, AT("/work/repo", ".envrc", false), FILE_, .own_mount = true }, YES, "/work/repo/.envrc", false },
	/* the kernel answers first: not a refusal */
	{ "mkdir of a name that exists (EEXIST)", PLAIN, 3, { CREATE, AT("/usr", "bin", true), DIR_ }, NO, "/usr/bin", false },
	{ "a new name in /proc (ENOENT)", PLAIN, 3, { CREATE, AT("/proc", "x", false), .procfs = true }, NO, "/proc/x", false },
	{ "O_EXCL on a file that exists", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT | O_EXCL), AT("/etc", "hosts", true), FILE_ },
	  NO, "/etc/hosts", false },
	{ "open a directory for writing (EISDIR)", PLAIN, 3, { OPEN(O_WRONLY), AT("/", "usr", true), DIR_ }, NO, "/usr",
	  false },
	{ "\"file/\" (ENOTDIR)", PLAIN, 3, { OPEN(O_WRONLY), AT("/etc", "hosts", true), FILE_, .slash_end = true }, NO,
	  "/etc/hosts", false },
	{ "\"new/\" with O_CREAT (EISDIR)", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT), AT("/usr", "new", true), .slash_end = true },
	  NO, "/usr/new", false },
	{ "a read-only open", PLAIN, 3, { OPEN(O_RDONLY), AT("/etc", "hosts", true), FILE_ }, NO, "/etc/hosts", false },
	{ "O_RDONLY|O_TRUNC on the read-only root", PLAIN, 3, { OPEN(O_RDONLY | O_TRUNC), AT("/etc", "hosts", true), FILE_ },
	  YES, "/etc/hosts", false },
	{ "O_RDONLY|O_TRUNC outside, Landlock 2 does not rule truncation", PLAIN, 2,
	  { OPEN(O_RDONLY | O_TRUNC), AT("/opt", "f", false), FILE_ }, NO, "/opt/f", false },
	{ "O_RDONLY|O_TRUNC outside, Landlock 3 does", PLAIN, 3, { OPEN(O_RDONLY | O_TRUNC), AT("/opt", "f", false), FILE_ },
	  YES, "/opt/f", false },
	{ "a device opened for writing on the read-only root", PLAIN, 3,
	  { OPEN(O_WRONLY), AT("/dev", "null", true), .exists = true }, NO, "/dev/null", false },
	{ "truncate a directory (EISDIR)", PLAIN, 3, { TRUNCATE, AT("/", "usr", true), DIR_ }, NO, "/usr", false },
	{ "unlink a missing name on a read-only mount (EROFS first)", PLAIN, 3, { REMOVE, AT("/usr/bin", "nothere", true) },
	  YES, "/usr/bin/nothere", false },
	{ "unlink a missing name outside on a writable mount (ENOENT)", PLAIN, 3, { REMOVE, AT("/opt", "nothere", false) }, NO,
	  "/opt/nothere", false },
	{ "rmdir \".\"", PLAIN, 3, { REMOVE, AT("/usr", ".", true), .exists = true, .dots = true, .is_dir = true }, NO, "/usr",
	  false },
	{ "O_TMPFILE in /usr", PLAIN, 3, { OPEN(O_WRONLY | O_TMPFILE), AT("/", "usr", true), DIR_ }, YES, "/usr", false },
	{ "O_TMPFILE in /tmp", PLAIN, 3, { OPEN(O_WRONLY | O_TMPFILE), AT("/", "tmp", false), DIR_ }, NO, "/tmp", false },
	/* nothing to judge */
	{ "its directory does not resolve", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT), .dir = "/nowhere", .name = "x" }, NO, NULL,
	  false },
	{ "a path too long to look up", PLAIN, 3, { OPEN(O_WRONLY | O_CREAT), .too_long = true }, TOO_LONG, NULL, false },
	{ "too long, its directory found", PLAIN, 3, { OPEN(O_WRONLY), AT("/usr", "x", true), FILE_, .too_long = true },
	  TOO_LONG, NULL, false },
};

static const char *verdict_name(enum refusal_verdict v)
{
	return v == YES ? "refused" : v == TOO_LONG ? "too long" : "not refused";
}

static void table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		const struct row *r = &rows[i];
		struct policy_ctx p = ctx(r->cell);
		struct refusal v;
		refusal_decide(&r->f, &p, r->abi, &v);
		if (v.verdict != r->want)
			fail_msg("%s: %s, expected %s", r->what, verdict_name(v.verdict), verdict_name(r->want));
		if ((r->path == NULL) != (v.path == NULL) || (r->path && strcmp(r->path, v.path)))
			fail_msg("%s: path %s, expected %s", r->what, v.path ? v.path : "(none)", r->path ? r->path : "(none)");
		if (v.is_protected != r->is_protected)
			fail_msg("%s: protected %d, expected %d", r->what, v.is_protected, r->is_protected);
		free(v.path);
	}
}

/* What the lookups must open of an existing name, and whether a symlink is followed there. */
static void lookups(void **state)
{
	(void)state;
	struct path_facts link = { OPEN(O_WRONLY), AT("/work/repo", "l", false), .exists = true, .is_link = true };
	assert_true(refusal_follows(&link));
	assert_true(refusal_looks_at_name(&link));
	link.flags |= O_NOFOLLOW;
	assert_false(refusal_follows(&link));
	assert_false(refusal_looks_at_name(&link));
	link.flags = O_WRONLY | O_CREAT | O_EXCL;   /* O_EXCL never follows */
	assert_false(refusal_follows(&link));
	link.flags = O_WRONLY;
	link.nofollow = true;   /* lchown, AT_SYMLINK_NOFOLLOW */
	assert_false(refusal_follows(&link));
	struct path_facts mnt = { CHMOD, AT("/work/repo", ".git", false), DIR_, .own_mount = true };
	assert_true(refusal_looks_at_name(&mnt));
	struct path_facts plain = { OPEN(O_WRONLY), AT("/etc", "hosts", true), FILE_ };
	assert_false(refusal_looks_at_name(&plain));
	struct path_facts mk = { CREATE, AT("/usr", ".", true), .exists = true, .dots = true };
	assert_false(refusal_looks_at_name(&mk));   /* a creation acts on the directory */
	struct path_facts creat = { OPEN(O_WRONLY | O_CREAT) };
	assert_true(refusal_creates(&creat));
	struct path_facts tmpfile = { OPEN(O_WRONLY | O_TMPFILE) };
	assert_false(refusal_creates(&tmpfile));
}

struct pair_row {
	const char *what;
	int abi;
	struct path_facts a, b;
	bool a_denied, b_denied;   /* Landlock's answers for each path alone */
	bool hit0, hit1;
};

#define MNT(m) .mnt = (m)
static const struct pair_row pairs[] = {
	{ "rename inside the worktree", 3, { REMOVE, AT("/work/repo", "a", false), FILE_, MNT(7) },
	  { .want = W_TO, .landlock = 1, AT("/work/repo", "b", false), MNT(7) }, false, false, false, false },
	{ "rename on the read-only root: both paths", 3, { REMOVE, AT("/usr/bin", "a", true), FILE_, MNT(1) },
	  { .want = W_TO, .landlock = 1, AT("/usr/bin", "b", true), MNT(1) }, true, true, true, true },
	{ "rename across mounts (EXDEV)", 3, { REMOVE, AT("/usr/bin", "a", true), FILE_, MNT(1) },
	  { .want = W_TO, .landlock = 1, AT("/tmp", "b", false), MNT(2) }, true, false, false, false },
	{ "rename out of the worktree, Landlock denies the target", 3, { REMOVE, AT("/work/repo", "a", false), FILE_, MNT(7) },
	  { .want = W_TO, .landlock = 1, AT("/opt", "b", false), MNT(7) }, false, true, false, true },
	{ "the same under Landlock 1: EXDEV first", 1, { REMOVE, AT("/work/repo", "a", false), FILE_, MNT(7) },
	  { .want = W_TO, .landlock = 1, AT("/opt", "b", false), MNT(7) }, false, true, false, false },
	{ "rename of a missing source on a writable mount (ENOENT)", 3, { REMOVE, AT("/opt", "a", false), MNT(7) },
	  { .want = W_TO, .landlock = 1, AT("/opt", "b", false), MNT(7) }, true, true, false, false },
	{ "rename of a missing source on a read-only mount (EROFS first)", 3, { REMOVE, AT("/usr", "a", true), MNT(1) },
	  { .want = W_TO, .landlock = 1, AT("/usr", "b", true), MNT(1) }, true, true, true, true },
	{ "RENAME_NOREPLACE onto a name that exists (EEXIST)", 3, { REMOVE, AT("/opt", "a", false), FILE_, MNT(7) },
	  { .want = W_TO, .flags = 1 /* RENAME_NOREPLACE */, .landlock = 1, AT("/opt", "b", false), FILE_, MNT(7) }, true,
	  true, false, false },
	{ "rename onto a mount point (EBUSY)", 3, { REMOVE, AT("/work/repo", "a", false), FILE_, MNT(7) },
	  { .want = W_TO, .landlock = 1, AT("/work/repo", ".envrc", false), FILE_, .own_mount = true, MNT(7) }, false, false,
	  false, true },
	{ "link into the read-only root", 3, { .want = W_FROM, AT("/work/repo", "a", false), FILE_, MNT(7) },
	  { CREATE, AT("/usr/bin", "a", true), MNT(1) }, false, true, false, true },
	{ "link of a missing source (ENOENT)", 3, { .want = W_FROM, AT("/work/repo", "a", false), MNT(7) },
	  { CREATE, AT("/usr/bin", "a", true), MNT(1) }, false, true, false, false },
	{ "link onto a name that exists (EEXIST)", 3, { .want = W_FROM, AT("/work/repo", "a", false), FILE_, MNT(7) },
	  { CREATE, AT("/usr/bin", "ls", true), FILE_, MNT(1) }, false, true, false, false },
	{ "link out of the worktree on its mount, Landlock denies", 3,
	  { .want = W_FROM, AT("/work/repo", "a", false), FILE_, MNT(7) }, { CREATE, AT("/opt", "a", false), MNT(7) }, false,
	  true, false, true },
	{ "the same across mounts (EXDEV)", 3, { .want = W_FROM, AT("/work/repo", "a", false), FILE_, MNT(7) },
	  { CREATE, AT("/opt", "a", false), MNT(8) }, false, true, false, false },
};

static void pair_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
		const struct pair_row *r = &pairs[i];
		struct refusal va = { .landlock_denied = r->a_denied }, vb = { .landlock_denied = r->b_denied };
		bool hit[2] = { true, true };
		refusal_decide_pair(&r->a, &r->b, &va, &vb, r->abi, hit);
		if (hit[0] != r->hit0 || hit[1] != r->hit1)
			fail_msg("%s: refused %d %d, expected %d %d", r->what, hit[0], hit[1], r->hit0, r->hit1);
	}
}

/* Landlock's own answer reaches the pair: a rename out of the worktree decided path by path. */
static void pair_from_decide(void **state)
{
	(void)state;
	struct policy_ctx p = ctx(PLAIN);
	struct path_facts a = { REMOVE, AT("/work/repo", "a", false), FILE_, MNT(7) };
	struct path_facts b = { .want = W_TO, .landlock = 1, AT("/etc", "a", false), MNT(7) };
	struct refusal va, vb;
	refusal_decide(&a, &p, 3, &va);
	refusal_decide(&b, &p, 3, &vb);
	assert_false(va.landlock_denied);
	assert_true(vb.landlock_denied);
	bool hit[2];
	refusal_decide_pair(&a, &b, &va, &vb, 3, hit);
	assert_false(hit[0]);
	assert_true(hit[1]);
	free(va.path);
	free(vb.path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(lookups),
		cmocka_unit_test(pair_table),
		cmocka_unit_test(pair_from_decide),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
