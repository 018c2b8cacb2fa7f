/* SPDX-License-Identifier: Apache-2.0 */
/* test_sample.c - the series of a run's memory and CPU (supervise/sample.h): bounded at
 * SAMPLE_MAX points however long the run, evenly spaced as the period doubles, each merged
 * point the later one's time and CPU and the higher memory; and its JSON in the record. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "supervise/sample.h"

/* The point of a tick k (1, 2, ...) of a run that samples every period ms: memory rising
 * and falling, CPU half a core. */
static struct sample_point tick(uint64_t k, uint64_t period_ms)
{
	double t = (double)(k * period_ms) / 1000;
	return (struct sample_point){ .t_s = t, .memory = (k % 7) * 1000 + k, .cpu_s = t / 2 };
}

/* Sample a run as the supervisor does for secs seconds: a point at each tick of the period,
 * the period doubling whenever the series is halved. */
static void run_for(struct samples *s, double secs)
{
	samples_init(s);
	uint64_t at_ms = 0;
	for (;;) {
		at_ms += s->period_ms;
		if ((double)at_ms / 1000 > secs)
			return;
		struct sample_point p = { .t_s = (double)at_ms / 1000, .memory = at_ms, .cpu_s = (double)at_ms / 2000 };
		samples_add(s, &p);
	}
}

static void bounded(void **state)
{
	(void)state;
	static const struct {
		double secs;
		size_t n;            /* points kept */
		uint64_t period_ms;
	} rows[] = {
		{ 0.5, 0, 1000 },     /* shorter than a period: no point */
		{ 1, 1, 1000 },
		{ 30, 30, 1000 },
		{ 119, 119, 1000 },
		{ 120, 60, 2000 },    /* the 120th point halves the series */
		{ 121, 60, 2000 },    /* ... and the next is 2 s later */
		{ 122, 61, 2000 },
		{ 3600, 112, 32000 }, /* an hour: 1 s, 2, 4, 8, 16, 32 s apart */
		{ 8 * 3600, 112, 256000 },
		{ 7 * 86400, 73, 8192000 },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct samples s;
		run_for(&s, rows[i].secs);
		if (s.n != rows[i].n || s.period_ms != rows[i].period_ms)
			fail_msg("%g s: %zu points %llu ms apart, want %zu points %llu ms apart", rows[i].secs, s.n,
				 (unsigned long long)s.period_ms, rows[i].n, (unsigned long long)rows[i].period_ms);
		/* evenly spaced, the period apart, the last point the latest tick */
		for (size_t k = 1; k < s.n; k++)
			if ((uint64_t)((s.p[k].t_s - s.p[k - 1].t_s) * 1000 + 0.5) != s.period_ms)
				fail_msg("%g s: points %zu and %zu are %g s apart, not %llu ms", rows[i].secs, k - 1, k,
					 s.p[k].t_s - s.p[k - 1].t_s, (unsigned long long)s.period_ms);
		if (s.n > SAMPLE_MAX)
			fail_msg("%g s: %zu points, more than %d", rows[i].secs, s.n, SAMPLE_MAX);
	}
}

static void merged(void **state)
{
	(void)state;
	struct samples s;
	samples_init(&s);
	for (uint64_t k = 1; k < SAMPLE_MAX; k++) {
		struct sample_point p = tick(k, 1000);
		assert_false(samples_add(&s, &p));
	}
	struct sample_point last = tick(SAMPLE_MAX, 1000);
	assert_true(samples_add(&s, &last));
	assert_int_equal(s.n, SAMPLE_MAX / 2);
	assert_int_equal(s.period_ms, 2000);
	for (uint64_t i = 0; i < SAMPLE_MAX / 2; i++) {
		struct sample_point a = tick(2 * i + 1, 1000), b = tick(2 * i + 2, 1000);
		uint64_t hi = a.memory > b.memory ? a.memory : b.memory;
		if (s.p[i].t_s != b.t_s || s.p[i].cpu_s != b.cpu_s || s.p[i].memory != hi)
			fail_msg("point %llu: t %g cpu %g memory %llu; want the later's t %g and cpu %g, the higher memory %llu",
				 (unsigned long long)i, s.p[i].t_s, s.p[i].cpu_s, (unsigned long long)s.p[i].memory, b.t_s, b.cpu_s,
				 (unsigned long long)hi);
	}
}

static void as_json(void **state)
{
	(void)state;
	struct samples s;
	samples_init(&s);
	samples_add(&s, &(struct sample_point){ .t_s = 1.0004, .memory = 4096, .cpu_s = 0.25 });
	samples_add(&s, &(struct sample_point){ .t_s = 2.0011, .memory = 8192, .cpu_s = 1.5 });
	json_t *j = samples_json(&s);
	char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)); /* as the record */
	assert_string_equal(t, "{\"period_s\":1.0,\"points\":[{\"t_s\":1.0,\"memory_bytes\":4096,\"cpu_s\":0.25},"
			       "{\"t_s\":2.001,\"memory_bytes\":8192,\"cpu_s\":1.5}]}");
	free(t);
	json_decref(j);
	/* what the host does not tell is null (a v1 group of more processes than are read) */
	samples_init(&s);
	samples_add(&s, &(struct sample_point){ .t_s = 1, .memory = SAMPLE_NONE, .cpu_s = -1 });
	j = samples_json(&s);
	t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	assert_string_equal(t, "{\"period_s\":1.0,\"points\":[{\"t_s\":1.0,\"memory_bytes\":null,\"cpu_s\":null}]}");
	free(t);
	json_decref(j);
	s.period_ms = 0;  /* no cgroup told anything */
	j = samples_json(&s);
	assert_true(json_is_null(j));
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bounded),
		cmocka_unit_test(merged),
		cmocka_unit_test(as_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
