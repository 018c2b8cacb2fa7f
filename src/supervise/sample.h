/* SPDX-License-Identifier: Apache-2.0 */
/* sample.h - the run's memory and CPU over its life, sampled by its supervisor from the run's
 * cgroup into the record ("samples" of result.json, docs/guide.md): a point a second; once
 * SAMPLE_MAX points are taken, each pair is merged into one and the period doubles, so a run of
 * any length keeps between SAMPLE_MAX / 2 and SAMPLE_MAX points, evenly spaced. The series is a
 * pure structure (tests/unit/test_sample.c); sample.c also reads the cgroup for the loop. */
#ifndef WARREN_SUPERVISE_SAMPLE_H
#define WARREN_SUPERVISE_SAMPLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SAMPLE_MAX 120          /* points at most (even) */
#define SAMPLE_FIRST_MS 1000    /* the period to begin with */

#define SAMPLE_NONE UINT64_MAX  /* a memory not told */

struct sample_point {
	double t_s;             /* seconds after the run's start */
	uint64_t memory;        /* bytes charged to its cgroup: the highest of the points merged into
	                           it (SAMPLE_NONE: not told) */
	double cpu_s;           /* CPU seconds it used until then (< 0: not told) */
};

struct samples {
	struct sample_point p[SAMPLE_MAX];
	size_t n;
	uint64_t period_ms;     /* between two points; 0: not sampled (no cgroup tells) */
};

/* An empty series of period SAMPLE_FIRST_MS. */
void samples_init(struct samples *s);
/* Add pt; true when the series was full and halved (pairs merged: the later one's time and
 * CPU, the higher memory): period_ms doubled, and the sampling timer is to follow it. */
bool samples_add(struct samples *s, const struct sample_point *pt);
/* {"period_s", "points": [{"t_s", "memory_bytes", "cpu_s"}]} (null for what was not told), or
 * null when not sampled. */
json_t *samples_json(const struct samples *s);

#endif
