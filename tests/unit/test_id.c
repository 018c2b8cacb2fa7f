/* SPDX-License-Identifier: Apache-2.0 */
/* test_id.c - run ids: ULID encoding, validation, timestamp decoding, sort order; the names
 * of runs' cgroups (id and state tag) and which of them gc --orphans takes for orphans; the
 * supervisor's pid in a run directory's lock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>

#include "run/id.h"
#include "run/rundir.h"
#include "util/fs.h"

#define MAX_MS ((1ULL << 48) - 1)

static const uint8_t ZERO[10] = { 0 };
static const uint8_t ONES[10] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static uint64_t rng = 0x243f6a8885a308d3ULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static void rand_bytes(uint8_t b[10])
{
	for (int i = 0; i < 10; i++)
		b[i] = (uint8_t)next_rand();
}

/* An independent encoder: the 128-bit value (ms << 80 | rnd) in 26 base-32 digits. */
__extension__ typedef unsigned __int128 u128;
static void ref_ulid(char out[27], uint64_t ms, const uint8_t rnd[10])
{
	static const char A[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
	u128 v = (u128)ms;
	for (int i = 0; i < 10; i++)
		v = (v << 8) | rnd[i];
	for (int i = 25; i >= 0; i--) {
		out[i] = A[(unsigned)(v & 31)];
		v >>= 5;
	}
	out[26] = '\0';
}

static void fmt(char *out, uint64_t ms, const uint8_t rnd[10])
{
	memset(out, '#', RUN_ID_LEN + 1);
	run_id_format(out, ms, rnd);
}

static void test_ulid_spec_vector(void **state)
{
	(void)state;
	char id[RUN_ID_LEN + 1];
	fmt(id, 1469918176385ULL, ZERO);
	assert_int_equal(strlen(id), RUN_ID_LEN);
	assert_true(strncmp(id, "run_", 4) == 0);
	assert_true(strncmp(id + 4, "01ARYZ6S41", 10) == 0);
	assert_string_equal(id, "run_01ARYZ6S410000000000000000");
}

static void test_format_extremes(void **state)
{
	(void)state;
	char id[RUN_ID_LEN + 1];
	fmt(id, 0, ZERO);
	assert_string_equal(id, "run_00000000000000000000000000");
	fmt(id, MAX_MS, ONES);
	assert_string_equal(id, "run_7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
	fmt(id, 0, ONES);
	assert_string_equal(id, "run_0000000000ZZZZZZZZZZZZZZZZ");
	fmt(id, MAX_MS, ZERO);
	assert_string_equal(id, "run_7ZZZZZZZZZ0000000000000000");
	fmt(id, 1, ZERO);
	assert_string_equal(id, "run_00000000010000000000000000");
	fmt(id, 32, ZERO);
	assert_string_equal(id, "run_00000000100000000000000000");
}

/* The random part is bit-aligned right after the 48 timestamp bits. */
static void test_format_random_alignment(void **state)
{
	(void)state;
	char id[RUN_ID_LEN + 1];
	uint8_t r[10] = { 0 };
	r[0] = 0x80; /* first random bit: symbol 10 = 0b10000 = 'G' */
	fmt(id, 0, r);
	assert_string_equal(id, "run_0000000000G000000000000000");
	memset(r, 0, sizeof r);
	r[9] = 0x01; /* last bit: last symbol = 1 */
	fmt(id, 0, r);
	assert_string_equal(id, "run_00000000000000000000000001");
	memset(r, 0, sizeof r);
	r[9] = 0x20; /* bit 5 of the last byte: second-last symbol = 1 */
	fmt(id, 0, r);
	assert_string_equal(id, "run_00000000000000000000000010");
}

static void test_format_matches_reference(void **state)
{
	(void)state;
	char id[RUN_ID_LEN + 1], ref[27];
	uint8_t r[10];
	for (int i = 0; i < 5000; i++) {
		uint64_t ms = next_rand() & MAX_MS;
		rand_bytes(r);
		fmt(id, ms, r);
		ref_ulid(ref, ms, r);
		assert_true(strncmp(id, "run_", 4) == 0);
		assert_string_equal(id + 4, ref);
	}
}

static void test_valid_accepts_formatted(void **state)
{
	(void)state;
	char id[RUN_ID_LEN + 1];
	uint8_t r[10];
	fmt(id, 0, ZERO);
	assert_true(run_id_valid(id));
	fmt(id, MAX_MS, ONES);
	assert_true(run_id_valid(id));
	for (int i = 0; i < 2000; i++) {
		rand_bytes(r);
		fmt(id, next_rand() & MAX_MS, r);
		assert_true(run_id_valid(id));
	}
	assert_true(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FAV"));
}

static void test_valid_rejects(void **state)
{
	(void)state;
	assert_false(run_id_valid(NULL));
	assert_false(run_id_valid(""));
	assert_false(run_id_valid("run_"));
	assert_false(run_id_valid("01ARYZ6S41TSV4RRFFQ69G5FAV"));          /* no prefix */
	assert_false(run_id_valid("RUN_01ARYZ6S41TSV4RRFFQ69G5FAV"));      /* prefix case */
	assert_false(run_id_valid("job_01ARYZ6S41TSV4RRFFQ69G5FAV"));
	assert_false(run_id_valid("run-01ARYZ6S41TSV4RRFFQ69G5FAV"));
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FA"));       /* 25 symbols */
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FAVV"));     /* 27 symbols */
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FA "));
	assert_false(run_id_valid(" run_01ARYZ6S41TSV4RRFFQ69G5FA"));
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FA\n"));
	/* letters outside Crockford's alphabet */
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FAI"));
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FAL"));
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FAO"));
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FAU"));
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FA-"));
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5FA/"));
	assert_false(run_id_valid("run_01ARYZ6S41TSV4RRFFQ69G5F\xc3\xa9"));
	assert_false(run_id_valid("run_../../../../etc/passwd/xx"));
	/* the first symbol only carries 3 bits: 8..Z would overflow 128 bits */
	assert_false(run_id_valid("run_81ARYZ6S41TSV4RRFFQ69G5FAV"));
	assert_false(run_id_valid("run_ZZZZZZZZZZZZZZZZZZZZZZZZZZ"));
	assert_true(run_id_valid("run_7ZZZZZZZZZZZZZZZZZZZZZZZZZ"));
}

static void test_time_roundtrip(void **state)
{
	(void)state;
	char id[RUN_ID_LEN + 1];
	uint8_t r[10];
	static const uint64_t fixed[] = { 0, 1, 31, 32, 1469918176385ULL, 1700000000000ULL, MAX_MS - 1, MAX_MS };
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		rand_bytes(r);
		fmt(id, fixed[i], r);
		assert_int_equal(run_id_time_ms(id), fixed[i]);
		fmt(id, fixed[i], ONES);
		assert_int_equal(run_id_time_ms(id), fixed[i]);
	}
	for (int i = 0; i < 5000; i++) {
		uint64_t ms = next_rand() & MAX_MS;
		rand_bytes(r);
		fmt(id, ms, r);
		assert_int_equal(run_id_time_ms(id), ms);
	}
	assert_int_equal(run_id_time_ms("run_01ARYZ6S41TSV4RRFFQ69G5FAV"), 1469918176385ULL);
}

/* Ids sort (strcmp) by their timestamp, whatever the random bytes. */
static void test_sortable(void **state)
{
	(void)state;
	char a[RUN_ID_LEN + 1], b[RUN_ID_LEN + 1];
	/* adjacent milliseconds, worst-case random bytes */
	static const uint64_t edges[] = { 0, 30, 31, 32, 1023, 1024, 1469918176385ULL, (1ULL << 40) - 1, (1ULL << 45) - 1,
					  MAX_MS - 1 };
	for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
		fmt(a, edges[i], ONES);
		fmt(b, edges[i] + 1, ZERO);
		if (strcmp(a, b) >= 0)
			fail_msg("%s !< %s", a, b);
	}
	/* a walk of increasing times, as a host would make them */
	uint64_t ms = 1700000000000ULL;
	uint8_t r[10];
	rand_bytes(r);
	fmt(a, ms, r);
	for (int i = 0; i < 20000; i++) {
		ms += 1 + next_rand() % (i % 3 ? 5 : 100000);
		rand_bytes(r);
		fmt(b, ms, r);
		if (strcmp(a, b) >= 0)
			fail_msg("%s (earlier) !< %s (later)", a, b);
		memcpy(a, b, sizeof a);
	}
	/* random pairs */
	for (int i = 0; i < 20000; i++) {
		uint64_t x = next_rand() & MAX_MS, y = next_rand() & MAX_MS;
		if (x == y)
			continue;
		rand_bytes(r);
		fmt(a, x, r);
		rand_bytes(r);
		fmt(b, y, r);
		int c = strcmp(a, b);
		assert_true(x < y ? c < 0 : c > 0);
	}
}

static void test_new(void **state)
{
	(void)state;
	char a[RUN_ID_LEN + 1], b[RUN_ID_LEN + 1];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t before = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	assert_int_equal(run_id_new(a), 0);
	assert_int_equal(run_id_new(b), 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t after = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	assert_true(run_id_valid(a));
	assert_true(run_id_valid(b));
	assert_string_not_equal(a, b);
	assert_in_range(run_id_time_ms(a), before, after);
	assert_in_range(run_id_time_ms(b), run_id_time_ms(a), after);
}

static void test_cgroup_name_tag(void **state)
{
	(void)state;
	char id[RUN_ID_LEN + 1];
	assert_int_equal(run_id_new(id), 0);
	char *name = rundir_cgroup_name("0badc0de", id);
	assert_string_equal(rundir_cgroup_tag(name), "0badc0de");
	free(name);
	static const char *const not_runs[] = {
		"", "warren", "not-a-run", "run_01M8XE7C73GHC24W5MXEEZCFW1",   /* no tag */
		"run_01M8XE7C73GHC24W5MXEEZCFW1.", "run_01M8XE7C73GHC24W5MXEEZCFW1.0badc0d", /* short */
		"run_01M8XE7C73GHC24W5MXEEZCFW1.0badc0de0", "run_01M8XE7C73GHC24W5MXEEZCFW1.0BADC0DE",
		"run_01M8XE7C73GHC24W5MXEEZCFW1-0badc0de", "run_01M8XE7C73GHC24W5MXEEZCFWU.0badc0de", /* U: not Crockford */
		"run_01M8XE7C73GHC24W5MXEEZCF.0badc0de.00", "xyz_01M8XE7C73GHC24W5MXEEZCFW1.0badc0de",
	};
	for (size_t i = 0; i < sizeof not_runs / sizeof *not_runs; i++)
		assert_null(rundir_cgroup_tag(not_runs[i]));
}

static void test_cgroup_orphaned(void **state)
{
	(void)state;
	struct stat st;
	char tag[9], other[9];
	assert_int_equal(stat("/", &st), 0);
	statedir_tag(&st, tag);
	snprintf(other, sizeof other, "%08x", (unsigned)strtoul(tag, NULL, 16) ^ 1u);
	char *mine = rundir_cgroup_name(tag, "run_01M8XE7C73GHC24W5MXEEZCFW1");
	char *theirs = rundir_cgroup_name(other, "run_01M8XE7C73GHC24W5MXEEZCFW1");
	assert_false(rundir_cgroup_orphaned(mine, "/"));           /* its state directory is there */
	assert_true(rundir_cgroup_orphaned(theirs, "/"));          /* another directory in its place */
	assert_true(rundir_cgroup_orphaned(mine, "/nonexistent-warren-state/x"));   /* gone */
	assert_true(rundir_cgroup_orphaned(mine, "/proc/self/status/x"));          /* gone: ENOTDIR */
	assert_false(rundir_cgroup_orphaned(mine, NULL));          /* unmarked: nobody can tell */
	assert_false(rundir_cgroup_orphaned(mine, "relative/state"));
	assert_false(rundir_cgroup_orphaned("not-a-run", "/nonexistent-warren-state/x"));
	free(mine);
	free(theirs);
}

/* The supervisor's pid, in its lock file (an older run directory: in "pid"); a line cut
 * short, or no number, is no pid. */
static void put(int dir, const char *name, const char *text)
{
	assert_int_equal(write_file_atomic_at(dir, name, text, strlen(text), 0644), 0);
}

static void test_rundir_pid(void **state)
{
	(void)state;
	const char *base = getenv("TEST_SCRATCH") && *getenv("TEST_SCRATCH") ? getenv("TEST_SCRATCH") : "build";
	char tmpl[PATH_MAX];
	snprintf(tmpl, sizeof tmpl, "%s/test_id.XXXXXX", base);
	assert_non_null(mkdtemp(tmpl));
	int dir = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dir >= 0);
	put(dir, "lock", "");
	assert_int_equal(rundir_pid(dir), 0);           /* not written yet */
	int lock = openat(dir, "lock", O_RDWR | O_CLOEXEC);
	assert_int_equal(rundir_write_pid(lock, 4242), 0);
	close(lock);
	assert_int_equal(rundir_pid(dir), 4242);
	put(dir, "lock", "42");                          /* cut short */
	assert_int_equal(rundir_pid(dir), 0);
	put(dir, "lock", "x\n");
	assert_int_equal(rundir_pid(dir), 0);
	put(dir, "lock", "-7\n");
	assert_int_equal(rundir_pid(dir), 0);
	put(dir, "lock", "");                            /* an older warren's layout */
	put(dir, "pid", "314\n");
	assert_int_equal(rundir_pid(dir), 314);
	unlinkat(dir, "lock", 0);
	unlinkat(dir, "pid", 0);
	close(dir);
	assert_int_equal(rmdir(tmpl), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ulid_spec_vector),
		cmocka_unit_test(test_format_extremes),
		cmocka_unit_test(test_format_random_alignment),
		cmocka_unit_test(test_format_matches_reference),
		cmocka_unit_test(test_valid_accepts_formatted),
		cmocka_unit_test(test_valid_rejects),
		cmocka_unit_test(test_time_roundtrip),
		cmocka_unit_test(test_sortable),
		cmocka_unit_test(test_new),
		cmocka_unit_test(test_cgroup_name_tag),
		cmocka_unit_test(test_cgroup_orphaned),
		cmocka_unit_test(test_rundir_pid),
	};
	return cmocka_run_group_tests_name("id", tests, NULL, NULL);
}
