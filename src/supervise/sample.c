/* SPDX-License-Identifier: Apache-2.0 */
/* sample.c - the run's series of memory and CPU (sample.h): the pure series, and the loop's
 * part: the timer armed once the job is let go, a point read from the run's cgroup at each
 * tick (two small reads), the series into the record at the end. */
#include "supervise/internal.h"

#include <string.h>
#include <sys/timerfd.h>

void samples_init(struct samples *s)
{
	memset(s, 0, sizeof *s);
	s->period_ms = SAMPLE_FIRST_MS;
}

bool samples_add(struct samples *s, const struct sample_point *pt)
{
	if (s->n < SAMPLE_MAX) {
		s->p[s->n++] = *pt;
		if (s->n < SAMPLE_MAX)
			return false;
	}
	for (size_t i = 0; i < SAMPLE_MAX / 2; i++) {
		struct sample_point a = s->p[2 * i], b = s->p[2 * i + 1];
		s->p[i] = b;
		if (a.memory != SAMPLE_NONE && (b.memory == SAMPLE_NONE || a.memory > b.memory))
			s->p[i].memory = a.memory;
	}
	s->n = SAMPLE_MAX / 2;
	s->period_ms *= 2;
	return true;
}

json_t *samples_json(const struct samples *s)
{
	if (!s->period_ms)
		return json_null();
	json_t *a = json_array();
	for (size_t i = 0; i < s->n; i++) {
		const struct sample_point *p = &s->p[i];
		/* milliseconds of time and CPU: enough for a graph, and a short record */
		json_array_append_new(a, json_pack("{s:f,s:o,s:o}", "t_s", (double)(int64_t)(p->t_s * 1000 + 0.5) / 1000,
						   "memory_bytes", p->memory == SAMPLE_NONE ? json_null() : json_integer((json_int_t)p->memory),
						   "cpu_s", p->cpu_s < 0 ? json_null() : json_real((double)(int64_t)(p->cpu_s * 1000 + 0.5) / 1000)));
	}
	return json_pack("{s:f,s:o}", "period_s", (double)s->period_ms / 1000, "points", a);
}

void sup_sample_start(struct sup *u)
{
	samples_init(&u->samples);
	if (u->cg.kind == CGROUP_NONE || u->sample_tfd < 0) {
		u->samples.period_ms = 0;
		return;
	}
	sup_watch_fd(u, u->sample_tfd, EV_SAMPLE);
	sup_arm(u->sample_tfd, SAMPLE_FIRST_MS, SAMPLE_FIRST_MS);
}

void sup_sample(struct sup *u)
{
	struct cgroup_sample cs;
	if (cgroup_sample(&u->cg, &cs) < 0) {
		timerfd_settime(u->sample_tfd, 0, &(struct itimerspec){ 0 }, NULL);
		u->samples.period_ms = 0;  /* nothing tells: no series */
		return;
	}
	struct sample_point pt = { .t_s = sup_elapsed(u), .memory = cs.have_memory ? cs.memory : SAMPLE_NONE,
				   .cpu_s = cs.have_cpu ? (double)cs.cpu_ns / 1e9 : -1 };
	if (samples_add(&u->samples, &pt))
		sup_arm(u->sample_tfd, u->samples.period_ms, u->samples.period_ms);
}

void sup_sample_record(struct sup *u, json_t **extra)
{
	if (!*extra)
		*extra = json_object();
	json_object_set_new(*extra, "samples", samples_json(&u->samples));
}
