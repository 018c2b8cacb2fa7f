/* SPDX-License-Identifier: Apache-2.0 */
/* test_users.c - the name an image's passwd or group file gives an id (cell/users.h): what the
 * OCI face names the run user after, and whether the cell keeps the image's files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cell/users.h"

static void test_name_of(void **state)
{
	(void)state;
	static const char db[] = "root:x:0:0:root:/root:/bin/sh\n"
				 "# a comment:x:7:\n"
				 "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
				 "first:x:1000:1000::/home/first:/bin/sh\n"
				 "second:x:1000:1000::/home/second:/bin/sh\n"
				 ":x:42:42::/:/bin/sh\n"
				 "noid:x::1::/:/bin/sh\n"
				 "short:x\n"
				 "www-data:x:33:";   /* no newline at its end */
	static const struct { const char *db; unsigned id; const char *want; } t[] = {
		{ db, 0, "root" },     { db, 65534, "nobody" }, { db, 1000, "first" }, /* the first, as getpwuid */
		{ db, 33, "www-data" }, { db, 7, NULL },        /* a comment names nobody */
		{ db, 42, NULL },       /* no name */
		{ db, 1, NULL },        /* field 3 empty: not 1 (the gid is field 4) */
		{ db, 2, NULL },        { "", 0, NULL },         { NULL, 0, NULL },
		{ "a:x:0012:0\n", 12, "a" }, { "a:x:12x:0\n", 12, "a" }, { "a:x:-1:0\n", 4294967295u, NULL },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char *got = users_name_of(t[i].db, t[i].id);
		if (!t[i].want != !got || (got && strcmp(got, t[i].want)))
			fail_msg("case %zu: users_name_of(id %u): %s, want %s", i, t[i].id, got ? got : "NULL",
				 t[i].want ? t[i].want : "NULL");
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_name_of),
	};
	return cmocka_run_group_tests_name("users", tests, NULL, NULL);
}
