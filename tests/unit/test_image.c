/* SPDX-License-Identifier: Apache-2.0 */
/* test_image.c - the decisions about image archive entries (image/entry.h), case by case: names
 * normalised or refused (absolute, "..", control characters, too long), whiteouts and opaque
 * directories, device nodes skipped, setuid/setgid stripped, hard link targets; image names;
 * an import's byte limit against the free space of the store's file system. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image/entry.h"
#include "image/store.h"

struct decide_case {
	const char *name;
	mode_t mode;
	const char *hardlink;
	enum ientry_action want;
	const char *path;     /* expected d.path (NULL: not checked, or none) */
	mode_t want_mode;     /* expected permission bits (checked for IE_CREATE) */
};

static const char *action_name(enum ientry_action a)
{
	static const char *const n[] = { "CREATE", "WHITEOUT", "OPAQUE", "SKIP_ROOT", "SKIP_DEVICE", "SKIP_META", "REFUSE" };
	return n[a];
}

static const struct decide_case cases[] = {
	/* plain names, normalised */
	{ "bin/sh", S_IFREG | 0755, NULL, IE_CREATE, "bin/sh", 0755 },
	{ "./bin/sh", S_IFREG | 0755, NULL, IE_CREATE, "bin/sh", 0755 },
	{ "./usr//lib/./x/", S_IFDIR | 0755, NULL, IE_CREATE, "usr/lib/x", 0755 },
	{ "tmp", S_IFDIR | 01777, NULL, IE_CREATE, "tmp", 01777 },
	{ "a..b/..c/c..", S_IFREG | 0644, NULL, IE_CREATE, "a..b/..c/c..", 0644 },
	{ "etc/...", S_IFREG | 0644, NULL, IE_CREATE, "etc/...", 0644 },
	{ "./", S_IFDIR | 0755, NULL, IE_SKIP_ROOT, "", 0 },
	{ ".", S_IFDIR | 0755, NULL, IE_SKIP_ROOT, "", 0 },
	{ "lnk", S_IFLNK | 0777, NULL, IE_CREATE, "lnk", 0777 },
	{ "fifo", S_IFIFO | 0600, NULL, IE_CREATE, "fifo", 0600 },
	/* setuid and setgid stripped, sticky kept */
	{ "bin/su", S_IFREG | 04755, NULL, IE_CREATE, "bin/su", 0755 },
	{ "bin/wall", S_IFREG | 02755, NULL, IE_CREATE, "bin/wall", 0755 },
	{ "srv", S_IFDIR | 07777, NULL, IE_CREATE, "srv", 01777 },
	/* hostile names */
	{ "/etc/passwd", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	{ "//etc", S_IFDIR | 0755, NULL, IE_REFUSE, NULL, 0 },
	{ "..", S_IFDIR | 0755, NULL, IE_REFUSE, NULL, 0 },
	{ "../x", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	{ "a/../../x", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	{ "a/b/..", S_IFDIR | 0755, NULL, IE_REFUSE, NULL, 0 },
	{ "bad\nname", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	{ "tab\tname", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	{ "del\x7fname", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	{ "", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	/* devices and sockets: left out */
	{ "dev/sda", S_IFBLK | 0660, NULL, IE_SKIP_DEVICE, "dev/sda", 0 },
	{ "dev/mem", S_IFCHR | 0640, NULL, IE_SKIP_DEVICE, "dev/mem", 0 },
	{ "run/sock", S_IFSOCK | 0777, NULL, IE_SKIP_DEVICE, "run/sock", 0 },
	/* whiteouts */
	{ "etc/.wh.passwd", S_IFREG | 0644, NULL, IE_WHITEOUT, "etc/passwd", 0 },
	{ ".wh.etc", S_IFREG | 0644, NULL, IE_WHITEOUT, "etc", 0 },
	{ "./a/b/.wh..hidden", S_IFREG | 0644, NULL, IE_WHITEOUT, "a/b/.hidden", 0 },
	{ "opt/.wh..wh..opq", S_IFREG | 0644, NULL, IE_OPAQUE, "opt", 0 },
	{ ".wh..wh..opq", S_IFREG | 0644, NULL, IE_OPAQUE, "", 0 },
	{ "x/.wh..wh.plnk", S_IFDIR | 0700, NULL, IE_SKIP_META, NULL, 0 },
	{ "etc/.wh.", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	{ "etc/.wh..", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	{ "etc/.wh...", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	{ "../.wh.x", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	{ "/etc/.wh.passwd", S_IFREG | 0644, NULL, IE_REFUSE, NULL, 0 },
	/* hard links: inside the tree only */
	{ "bin/b", S_IFREG | 0755, "./bin/a", IE_CREATE, "bin/b", 0755 },
	{ "bin/b", S_IFREG | 0755, "/etc/shadow", IE_REFUSE, NULL, 0 },
	{ "bin/b", S_IFREG | 0755, "../../etc/shadow", IE_REFUSE, NULL, 0 },
	{ "bin/b", S_IFREG | 0755, "bin/b", IE_REFUSE, NULL, 0 },
	{ "bin/b", S_IFREG | 0755, ".", IE_REFUSE, NULL, 0 },
	{ "bin/b", S_IFREG | 0755, "a\nb", IE_REFUSE, NULL, 0 },
};

static void test_decide_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct decide_case *c = &cases[i];
		struct ientry_decision d;
		ientry_decide(c->name, c->mode, c->hardlink, &d);
		if (d.action != c->want)
			fail_msg("case %zu '%s' (link '%s'): %s (%s), want %s", i, c->name, c->hardlink ? c->hardlink : "",
				 action_name(d.action), d.why ? d.why : "", action_name(c->want));
		if (c->path && (!d.path || strcmp(d.path, c->path)))
			fail_msg("case %zu '%s': path '%s', want '%s'", i, c->name, d.path ? d.path : "(null)", c->path);
		if (c->want == IE_CREATE && d.mode != c->want_mode)
			fail_msg("case %zu '%s': mode %o, want %o", i, c->name, (unsigned)d.mode, (unsigned)c->want_mode);
		if (c->want == IE_REFUSE && (!d.why || !*d.why || d.path))
			fail_msg("case %zu '%s': refused without a reason, or with a path", i, c->name);
		ientry_decision_free(&d);
	}
}

static void test_hardlink_target_normalised(void **state)
{
	(void)state;
	struct ientry_decision d;
	ientry_decide("usr/bin/b", S_IFREG | 0755, "./usr//bin/a", &d);
	assert_int_equal(d.action, IE_CREATE);
	assert_string_equal(d.link, "usr/bin/a");
	ientry_decision_free(&d);
}

static void test_too_long(void **state)
{
	(void)state;
	char comp[300], path[4100];
	memset(comp, 'a', 256);
	comp[256] = '\0';
	const char *why = NULL;
	assert_null(ientry_normalize(comp, &why));
	assert_non_null(why);
	comp[255] = '\0';
	char *ok = ientry_normalize(comp, &why);
	assert_non_null(ok);
	free(ok);
	memset(path, 'a', sizeof path - 1);
	for (size_t i = 100; i < sizeof path - 1; i += 100)
		path[i] = '/';
	path[sizeof path - 1] = '\0';
	assert_null(ientry_normalize(path, &why));
}

static void test_image_names(void **state)
{
	(void)state;
	static const char *const good[] = { "a", "debian-12", "node_20.11", "A1", "x.y-z_0", NULL };
	static const char *const bad[] = { "", ".hidden", "-x", "_x", "a/b", "..", "a b", "a:b", "a,b", "a\nb", "é",
					   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL };
	for (const char *const *g = good; *g; g++)
		if (image_name_problem(*g))
			fail_msg("'%s' refused: %s", *g, image_name_problem(*g));
	for (const char *const *b = bad; *b; b++)
		if (!image_name_problem(*b))
			fail_msg("'%s' accepted as an image name", *b);
}

#define G (1ULL << 30)
#define M (1ULL << 20)

/* image_budget: the limit is the smaller of the one asked and the free space less the reserve
 * (5% of the file system, at most 1 GiB); a --max-size above that room is noted */
static void test_budget_table(void **state)
{
	(void)state;
	static const struct {
		uint64_t asked;
		bool given;
		uint64_t fs_free, fs_size;
		uint64_t limit, reserve;
		bool by_space, warn;
	} cases[] = {
		/* a large disk: the reserve is 1 GiB, the default 32 GiB limit stands */
		{ 32 * G, false, 79 * G, 252 * G, 32 * G, G, false, false },
		{ 32 * G, false, 20 * G, 252 * G, 19 * G, G, true, false },
		{ 100 * G, true, 20 * G, 252 * G, 19 * G, G, true, true },
		{ 2 * G, true, 20 * G, 252 * G, 2 * G, G, false, false },
		/* the room exactly what is asked: not the space's limit */
		{ 19 * G, true, 20 * G, 252 * G, 19 * G, G, false, false },
		/* a small file system: 5% of it (16 MiB: 819.2 KiB) */
		{ 32 * G, false, 16 * M, 16 * M, 16 * M - 838860, 838860, true, false },
		{ 8 * M, true, 16 * M, 16 * M, 8 * M, 838860, false, false },
		/* 5% of 20 GiB is exactly 1 GiB */
		{ 32 * G, false, 10 * G, 20 * G, 9 * G, G, true, false },
		/* no room: the free space is all reserve (no note: the import is refused) */
		{ 32 * G, false, G, 252 * G, 0, G, true, false },
		{ 100 * G, true, 512 * M, 252 * G, 0, G, true, false },
		{ 32 * G, false, 0, 16 * M, 0, 838860, true, false },
		/* an empty statvfs (a file system that reports nothing): no room */
		{ 32 * G, false, 0, 0, 0, 0, true, false },
		/* sizes near the top of uint64_t: no overflow */
		{ UINT64_MAX, true, UINT64_MAX, UINT64_MAX, UINT64_MAX - G, G, true, true },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct image_budget b;
		image_budget(cases[i].asked, cases[i].given, cases[i].fs_free, cases[i].fs_size, &b);
		if (b.limit != cases[i].limit || b.reserve != cases[i].reserve || b.by_space != cases[i].by_space ||
		    b.warn != cases[i].warn)
			fail_msg("case %zu: limit %llu reserve %llu by_space %d warn %d; want %llu %llu %d %d", i,
				 (unsigned long long)b.limit, (unsigned long long)b.reserve, b.by_space, b.warn,
				 (unsigned long long)cases[i].limit, (unsigned long long)cases[i].reserve, cases[i].by_space,
				 cases[i].warn);
		if (b.room != (b.by_space ? b.limit : b.room) || (b.limit == 0) != (b.room == 0))
			fail_msg("case %zu: room %llu does not agree with limit %llu", i, (unsigned long long)b.room,
				 (unsigned long long)b.limit);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_table),
		cmocka_unit_test(test_hardlink_target_normalised),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_image_names),
		cmocka_unit_test(test_budget_table),
	};
	return cmocka_run_group_tests_name("image", tests, NULL, NULL);
}
