/* SPDX-License-Identifier: Apache-2.0 */
/* test_image.c - the decisions about image archive entries (image/entry.h), case by case: names
 * normalised or refused (absolute, "..", control characters, too long), whiteouts and opaque
 * directories, device nodes skipped, setuid/setgid stripped, hard link targets; image names;
 * an import's byte limit against the free space of the store's file system; an image's config
 * (what is kept of it, the command of a run, the user it names) and a pull's default name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/pull.h"
#include "image/config.h"
#include "image/entry.h"
#include "image/store.h"
#include "util/strv.h"

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

/* argv as one string, words joined by '|' */
static char *joined(char **v)
{
	static char buf[512];
	buf[0] = '\0';
	for (char **w = v; *w; w++)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", w == v ? "" : "|", *w);
	return buf;
}

static void test_image_command(void **state)
{
	(void)state;
	json_t *both = json_pack("{s:[s,s],s:[s]}", "Entrypoint", "/bin/echo", "entry", "Cmd", "from-cmd");
	json_t *cmd_only = json_pack("{s:[s,s]}", "Cmd", "sh", "-l");
	json_t *none = json_object();
	char *two[] = { "a", "b", NULL };
	struct { json_t *cfg; const char *entrypoint; char **cmd; size_t n; const char *want; } cases[] = {
		{ both, NULL, NULL, 0, "/bin/echo|entry|from-cmd" },      /* no command: Entrypoint + Cmd */
		{ both, NULL, two, 2, "/bin/echo|entry|a|b" },            /* a command replaces Cmd */
		{ both, "", two, 2, "a|b" },                              /* --entrypoint '': the command alone */
		{ both, "", NULL, 0, "" },                                /* ... and no Cmd either (docker) */
		{ both, "/bin/sh", NULL, 0, "/bin/sh" },                  /* --entrypoint X drops Cmd */
		{ both, "/bin/sh", two, 2, "/bin/sh|a|b" },
		{ cmd_only, NULL, NULL, 0, "sh|-l" },
		{ cmd_only, NULL, two, 2, "a|b" },
		{ none, NULL, NULL, 0, "" },                              /* nothing to run */
		{ none, NULL, two, 2, "a|b" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char **v = image_command(cases[i].cfg, cases[i].entrypoint, cases[i].cmd, cases[i].n);
		if (strcmp(joined(v), cases[i].want))
			fail_msg("case %zu: '%s', want '%s'", i, joined(v), cases[i].want);
		strv_free(v);
	}
	json_decref(both);
	json_decref(cmd_only);
	json_decref(none);
}

static void test_image_config_pick(void **state)
{
	(void)state;
	json_t *blob = json_loads("{\"config\": {\"Env\": [\"A=1\", \"B=\"], \"WorkingDir\": \"/srv\", \"User\": \"app\","
				  " \"Entrypoint\": [\"/e\"], \"Cmd\": [\"c\"], \"Labels\": {\"x\": \"y\"}, \"ExposedPorts\": {}}}", 0, NULL);
	json_t *c = image_config_pick(blob);
	char *t = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(t, "{\"Cmd\":[\"c\"],\"Entrypoint\":[\"/e\"],\"Env\":[\"A=1\",\"B=\"],\"User\":\"app\",\"WorkingDir\":\"/srv\"}");
	free(t);
	json_decref(c);
	json_decref(blob);
	/* malformed parts are left out: a relative WorkingDir, an Env entry without a name or '=',
	 * a Cmd with a number, a string for an array, an empty User */
	static const char *const bad[] = {
		"{\"config\": {\"WorkingDir\": \"srv\"}}", "{\"config\": {\"Env\": [\"=1\"]}}", "{\"config\": {\"Env\": [\"NOEQ\"]}}",
		"{\"config\": {\"Env\": [\"1A=x\"]}}", "{\"config\": {\"Cmd\": [\"a\", 1]}}", "{\"config\": {\"Entrypoint\": \"/e\"}}",
		"{\"config\": {\"User\": \"\"}}", "{\"config\": null}", "[]", "{\"config\": {\"Cmd\": []}}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *b = json_loads(bad[i], JSON_DECODE_ANY, NULL);
		json_t *p = image_config_pick(b);
		if (!p || json_object_size(p))
			fail_msg("%s: kept %zu keys", bad[i], p ? json_object_size(p) : 99);
		json_decref(p);
		json_decref(b);
	}
}

static void test_image_user(void **state)
{
	(void)state;
	const char *passwd = "root:x:0:0:root:/root:/bin/sh\napp:x:1001:1002::/srv:/bin/sh\nnobody:x:65534:65534::/:/bin/false\nbad:x:notanumber:1::/:/\n";
	const char *group = "root:x:0:\nstaff:x:50:\n";
	struct { const char *user, *passwd; bool ok; uid_t uid; gid_t gid; } cases[] = {
		{ "app", passwd, true, 1001, 1002 },        /* a name: its passwd entry's uid and gid */
		{ "app:staff", passwd, true, 1001, 50 },    /* a group name from the image's group */
		{ "app:7", passwd, true, 1001, 7 },
		{ "1001", passwd, true, 1001, 1002 },       /* a number in passwd: its entry's gid */
		{ "4242", passwd, true, 4242, 4242 },       /* a number not in passwd: gid = uid */
		{ "4242:0", passwd, true, 4242, 0 },
		{ "0", NULL, true, 0, 0 },                  /* no passwd at all: numbers still do */
		{ "nobody", passwd, true, 65534, 65534 },
		{ "ghost", passwd, false, 0, 0 },           /* not in the image: never the host's */
		{ "root", NULL, false, 0, 0 },
		{ "app:nogroup", passwd, false, 0, 0 },
		{ "app:", passwd, false, 0, 0 },
		{ ":5", passwd, false, 0, 0 },
		{ "bad", passwd, false, 0, 0 },             /* a broken entry */
		{ "ap", passwd, false, 0, 0 },              /* a prefix of a name is no name */
		{ "4294967295", passwd, false, 0, 0 },      /* (uid_t)-1 */
		{ "99999999999", passwd, false, 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uid_t u = 0;
		gid_t g = 0;
		const char *why = NULL;
		int r = image_user_lookup(cases[i].user, cases[i].passwd, group, &u, &g, &why);
		if ((r == 0) != cases[i].ok || (r == 0 && (u != cases[i].uid || g != cases[i].gid)) || (r < 0 && !why))
			fail_msg("'%s': r %d uid %u gid %u; want ok %d %u %u", cases[i].user, r, u, g, cases[i].ok, cases[i].uid, cases[i].gid);
	}
}

static void test_pull_names(void **state)
{
	(void)state;
	struct { const char *ref, *name; } cases[] = {
		{ "docker.io/library/debian:12", "debian" },
		{ "registry.example:5000/team/app:1.2", "app" },
		{ "127.0.0.1:5000/app@sha256:0123", "app" },
		{ "docker://quay.io/x/tool", "tool" },
		{ "alpine", "alpine" },
		{ "localhost:5000/", NULL },   /* nothing to name it by */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *n = pull_default_name(cases[i].ref);
		if (!!n != !!cases[i].name || (n && strcmp(n, cases[i].name)))
			fail_msg("%s: '%s', want '%s'", cases[i].ref, n ? n : "(null)", cases[i].name ? cases[i].name : "(null)");
		free(n);
	}
	char *m = pull_skopeo_message("Getting image source signatures\ntime=\"2026\" level=fatal msg=\"reading blob: Get \\\"https://x/v2/\\\": EOF\"\n");
	assert_string_equal(m, "reading blob: Get \"https://x/v2/\": EOF");
	free(m);
	m = pull_skopeo_message("plain last line\n\n");
	assert_string_equal(m, "plain last line");
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_table),
		cmocka_unit_test(test_hardlink_target_normalised),
		cmocka_unit_test(test_too_long),
		cmocka_unit_test(test_image_names),
		cmocka_unit_test(test_budget_table),
		cmocka_unit_test(test_image_command),
		cmocka_unit_test(test_image_config_pick),
		cmocka_unit_test(test_image_user),
		cmocka_unit_test(test_pull_names),
	};
	return cmocka_run_group_tests_name("image", tests, NULL, NULL);
}
