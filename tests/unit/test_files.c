/* SPDX-License-Identifier: Apache-2.0 */
/* test_files.c - a session's files, their pure parts (job/files.h): where a path falls in the
 * cell's view (the worktree, /tmp, the home) or the one line that refuses it, what a request is
 * made of, a mode, the status and line of each failure, and a list's records as JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "job/files.h"

static void test_place(void **state)
{
	(void)state;
	static const struct {
		const char *path, *worktree, *home;
		int status;
		const char *place, *rel;  /* status 0: where; else place NULL and rel a part of the line */
	} rows[] = {
		{ "/w/a/b.txt", "/w", "/home/u", 0, "/w", "a/b.txt" },
		{ "a/b.txt", "/w", "/home/u", 0, "/w", "a/b.txt" },
		{ ".", "/w", "/home/u", 0, "/w", "" },
		{ "./a//b/./", "/w", "/home/u", 0, "/w", "a/b" },
		{ "/w", "/w", "/home/u", 0, "/w", "" },
		{ "/tmp/x", "/w", "/home/u", 0, "/tmp", "x" },
		{ "/tmp", "/w", "/home/u", 0, "/tmp", "" },
		{ "/home/u/.cache/p", "/w", "/home/u", 0, "/home/u", ".cache/p" },
		{ "rel", NULL, "/home/u", 0, "/home/u", "rel" },
		/* the deepest place that holds it: a worktree below /tmp */
		{ "/tmp/wt/f", "/tmp/wt", "/home/u", 0, "/tmp/wt", "f" },
		{ "/tmp/other", "/tmp/wt", "/home/u", 0, "/tmp", "other" },
		/* outside: one line naming where files may be */
		{ "/etc/shadow", "/w", "/home/u", 403, NULL,
		  "/etc/shadow is not among the cell's files: files may be under /w (the worktree), /tmp ($TMPDIR) and /home/u (the home)" },
		{ "/wx/a", "/w", "/home/u", 403, NULL, "/wx/a is not among the cell's files" },
		{ "/", "/w", "/home/u", 403, NULL, "/ is not among the cell's files" },
		{ "/home/v/x", "/w", "/home/u", 403, NULL, "not among" },
		{ "/etc", NULL, "/home/u", 403, NULL, "files may be under /tmp ($TMPDIR) and /home/u (the home)" },
		{ "/etc", "/w", NULL, 403, NULL, "files may be under /w (the worktree) and /tmp ($TMPDIR)" },
		/* a ".." anywhere: refused, even one that would stay inside */
		{ "/tmp/../etc/passwd", "/w", "/home/u", 403, NULL, "/tmp/../etc/passwd has a '..' part: give the path without it (files may be under" },
		{ "../x", "/w", "/home/u", 403, NULL, "has a '..' part" },
		{ "a/../b", "/w", "/home/u", 403, NULL, "has a '..' part" },
		{ "", "/w", "/home/u", 400, NULL, "path must be a path in the cell" },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const char *place = NULL;
		char *rel = NULL, *why = NULL;
		int st = files_place(rows[i].path, rows[i].worktree, rows[i].home, &place, &rel, &why);
		if (st != rows[i].status)
			fail_msg("%s: status %d, want %d (%s)", rows[i].path, st, rows[i].status, why ? why : "");
		if (!st && (strcmp(place, rows[i].place) || strcmp(rel, rows[i].rel)))
			fail_msg("%s: place %s rel '%s', want %s '%s'", rows[i].path, place, rel, rows[i].place, rows[i].rel);
		if (st && (!why || !strstr(why, rows[i].rel) || strchr(why, '\n')))
			fail_msg("%s: '%s' does not say '%s' on one line", rows[i].path, why ? why : "(none)", rows[i].rel);
		free(rel);
		free(why);
	}
}

static void test_parse(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		int status;
		const char *why;           /* a part of the line */
		enum exec_file_op op;
		uint64_t size;
		int mode;
		bool parents;
	} rows[] = {
		{ "{\"op\":\"read\",\"path\":\"a\"}", 0, NULL, EXEC_FILE_READ, 0, -1, false },
		{ "{\"op\":\"list\",\"path\":\"/tmp\"}", 0, NULL, EXEC_FILE_LIST, 0, -1, false },
		{ "{\"op\":\"write\",\"path\":\"a\",\"size\":5,\"mode\":\"0755\",\"parents\":true}", 0, NULL, EXEC_FILE_WRITE, 5, 0755, true },
		{ "{\"op\":\"write\",\"path\":\"a\",\"size\":0}", 0, NULL, EXEC_FILE_WRITE, 0, -1, false },
		{ "{\"op\":\"write\",\"path\":\"a\",\"size\":67108864}", 0, NULL, EXEC_FILE_WRITE, 67108864, -1, false },
		{ "{\"op\":\"write\",\"path\":\"a\",\"size\":67108865}", 413, "over the 64 MiB a write takes", 0, 0, -1, false },
		{ "{\"op\":\"write\",\"path\":\"a\"}", 400, "size must be the number of bytes", 0, 0, -1, false },
		{ "{\"op\":\"write\",\"path\":\"a\",\"size\":-1}", 400, "size must be", 0, 0, -1, false },
		{ "{\"op\":\"write\",\"path\":\"a\",\"size\":1,\"mode\":\"4755\"}", 400, "mode '4755': no set-user-id", 0, 0, -1, false },
		{ "{\"op\":\"write\",\"path\":\"a\",\"size\":1,\"mode\":\"rw\"}", 400, "mode 'rw': not octal", 0, 0, -1, false },
		{ "{\"op\":\"write\",\"path\":\"a\",\"size\":1,\"mode\":644}", 400, "mode must be a string", 0, 0, -1, false },
		{ "{\"op\":\"read\",\"path\":\"a\",\"parents\":\"yes\"}", 400, "parents must be true or false", 0, 0, -1, false },
		{ "{\"op\":\"read\"}", 400, "path must be a path in the cell", 0, 0, -1, false },
		{ "{\"op\":\"read\",\"path\":\"\"}", 400, "path must be", 0, 0, -1, false },
		{ "{\"op\":\"read\",\"path\":\"a\\u0000b\"}", 400, "path must be", 0, 0, -1, false },
		{ "{\"op\":\"chmod\",\"path\":\"a\"}", 400, "op must be", 0, 0, -1, false },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		json_t *j = json_loads(rows[i].json, JSON_ALLOW_NUL, NULL);
		assert_non_null(j);
		struct files_req r;
		char *why = NULL;
		int st = files_parse(j, &r, &why);
		if (st != rows[i].status)
			fail_msg("%s: status %d, want %d (%s)", rows[i].json, st, rows[i].status, why ? why : "");
		if (st && (!why || !strstr(why, rows[i].why)))
			fail_msg("%s: '%s' does not say '%s'", rows[i].json, why ? why : "(none)", rows[i].why);
		if (!st && (r.op != rows[i].op || r.size != rows[i].size || r.mode != rows[i].mode || r.parents != rows[i].parents))
			fail_msg("%s: op %d size %llu mode %o parents %d", rows[i].json, r.op, (unsigned long long)r.size, r.mode, r.parents);
		free(why);
		json_decref(j);
	}
	assert_true(files_op("read") && files_op("write") && files_op("list"));
	assert_false(files_op("exec") || files_op("end") || files_op(NULL));
}

static void test_mode(void **state)
{
	(void)state;
	static const struct { const char *s; int mode; } rows[] = {
		{ "0644", 0644 }, { "755", 0755 }, { "0", 0 }, { "1777", 01777 }, { "01777", 01777 },
		{ "4755", -1 }, { "2755", -1 }, { "8", -1 }, { "", -1 }, { "-1", -1 }, { "077777", -1 }, { "0x1ff", -1 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int m = -1;
		const char *why = NULL;
		int r = files_parse_mode(rows[i].s, &m, &why);
		if ((r == 0) != (rows[i].mode >= 0) || (r == 0 && m != rows[i].mode) || (r < 0 && !why))
			fail_msg("mode '%s': r %d mode %o", rows[i].s, r, m);
	}
}

static void test_failure(void **state)
{
	(void)state;
	static const struct {
		int err;
		enum exec_file_op op;
		int status;
		const char *why;
	} rows[] = {
		{ ENOENT, EXEC_FILE_READ, 404, "p: no such file in the cell" },
		{ ENOENT, EXEC_FILE_WRITE, 404, "its directory does not exist in the cell (make it, or ask for the missing directories: parents)" },
		{ EACCES, EXEC_FILE_READ, 403, "permission denied to the run user in the cell" },
		{ EXDEV, EXEC_FILE_READ, 403, "a symbolic link on its way leads out of the cell's files" },
		{ ELOOP, EXEC_FILE_WRITE, 403, "p is a symbolic link: no file is written through a link" },
		{ ENXIO, EXEC_FILE_READ, 400, "not a regular file (a FIFO, a socket or a device)" },
		{ EISDIR, EXEC_FILE_READ, 400, "p is a directory: a read takes a file" },
		{ ENOTDIR, EXEC_FILE_LIST, 400, "p is not a directory" },
		{ EFBIG, EXEC_FILE_READ, 413, "over 64 MiB, the most a read takes" },
		{ EROFS, EXEC_FILE_WRITE, 403, "read-only file system" },
		{ ENOSPC, EXEC_FILE_WRITE, 507, "no space left in the cell" },
		{ EAGAIN, EXEC_FILE_READ, 503, "not taking requests now" },
		{ ETIMEDOUT, EXEC_FILE_READ, 504, "did not answer within 60 s" },
		{ EIO, EXEC_FILE_READ, 500, "p: Input/output error" },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char *why = NULL;
		int st = files_failure(rows[i].err, rows[i].op, "p", &why);
		if (st != rows[i].status || !strstr(why, rows[i].why))
			fail_msg("errno %d: %d '%s', want %d '%s'", rows[i].err, st, why, rows[i].status, rows[i].why);
		free(why);
	}
}

/* one record: mode, name, target */
static size_t rec(char *b, uint32_t mode, const char *name, const char *target, int64_t size)
{
	struct exec_file_ent e = { .mode = mode, .name_len = (uint32_t)strlen(name),
				   .target_len = target ? (uint32_t)strlen(target) : 0, .size = size, .mtime_s = 86400 };
	memcpy(b, &e, sizeof e);
	memcpy(b + sizeof e, name, e.name_len);
	if (target)
		memcpy(b + sizeof e + e.name_len, target, e.target_len);
	return sizeof e + e.name_len + e.target_len;
}

static void test_entries(void **state)
{
	(void)state;
	char b[4096];
	size_t n = 0;
	n += rec(b + n, S_IFREG | 0644, "zeta", NULL, 12);
	n += rec(b + n, S_IFLNK | 0777, "link", "../x", 4);
	n += rec(b + n, S_IFDIR | 0755, "dir", NULL, 4096);
	n += rec(b + n, 0, "hidden", NULL, 0);
	n += rec(b + n, S_IFIFO | 0600, "bad\xff", NULL, 0);
	json_t *e = files_entries(b, n);
	char *t = json_dumps(e, JSON_COMPACT);
	assert_string_equal(t, "[{\"name\":\"bad\xef\xbf\xbd\",\"type\":\"fifo\",\"size\":0,\"mode\":\"0600\",\"mtime\":\"1970-01-02T00:00:00.000Z\"},"
			       "{\"name\":\"dir\",\"type\":\"dir\",\"size\":4096,\"mode\":\"0755\",\"mtime\":\"1970-01-02T00:00:00.000Z\"},"
			       "{\"name\":\"hidden\",\"type\":\"unknown\",\"size\":null,\"mode\":null,\"mtime\":null},"
			       "{\"name\":\"link\",\"type\":\"symlink\",\"size\":4,\"mode\":\"0777\",\"mtime\":\"1970-01-02T00:00:00.000Z\",\"target\":\"../x\"},"
			       "{\"name\":\"zeta\",\"type\":\"file\",\"size\":12,\"mode\":\"0644\",\"mtime\":\"1970-01-02T00:00:00.000Z\"}]");
	free(t);
	json_decref(e);
	/* cut short, or a record that lies about its length: what came before it */
	json_t *cut = files_entries(b, n - 2);
	assert_int_equal(json_array_size(cut), 4);
	json_decref(cut);
	struct exec_file_ent lie = { .mode = S_IFREG, .name_len = 1u << 30 };
	memcpy(b, &lie, sizeof lie);
	json_t *none = files_entries(b, n);
	assert_int_equal(json_array_size(none), 0);
	json_decref(none);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_failure),
		cmocka_unit_test(test_entries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
