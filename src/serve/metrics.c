/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.c - GET /metrics in the Prometheus text format: runs by state and cause (from the
 * history), the queue, the slots, the start latency (submission to the run's start). */
#include "serve/internal.h"

#include <stdio.h>
#include <string.h>

/* append to a growing text */
static void add(char **t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(char **t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	char *n = xasprintf("%s%s", *t, m);
	free(m);
	free(*t);
	*t = n;
}

static void runs_by_state(struct server *s, char **t)
{
	_cleanup_error_ struct error err = { 0 };
	pthread_mutex_lock(&s->rmu);
	json_t *rows = history_counts(s->hr, &err);
	pthread_mutex_unlock(&s->rmu);
	add(t, "# HELP warren_runs Runs in the history by state and by the limit or signal that stopped them.\n# TYPE warren_runs gauge\n");
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r)
		add(t, "warren_runs{state=\"%s\",cause=\"%s\"} %lld\n", json_string_value(json_object_get(r, "state")) ?: "?",
		    json_string_value(json_object_get(r, "cause")) ?: "", (long long)json_integer_value(json_object_get(r, "runs")));
	json_decref(rows);
}

char *metrics_text(struct server *s)
{
	char *t = xstrdup("");
	runs_by_state(s, &t);
	pthread_mutex_lock(&s->mu);
	long q = 0;
	for (struct srun *r = s->queue; r; r = r->next)
		q++;
	add(&t, "# HELP warren_queue_length Runs waiting for a slot.\n# TYPE warren_queue_length gauge\nwarren_queue_length %ld\n", q);
	add(&t, "# HELP warren_slots Slots (runs at once).\n# TYPE warren_slots gauge\nwarren_slots %ld\n", s->slots);
	add(&t, "# HELP warren_slots_busy Slots running a run.\n# TYPE warren_slots_busy gauge\nwarren_slots_busy %ld\n", s->busy);
	add(&t, "# HELP warren_submitted_total Runs submitted to this server since it started.\n# TYPE warren_submitted_total counter\nwarren_submitted_total %llu\n",
	    (unsigned long long)s->submitted);
	add(&t, "# HELP warren_start_latency_seconds From submission to the run's supervisor starting.\n# TYPE warren_start_latency_seconds histogram\n");
	for (int i = 0; i < LAT_BUCKETS; i++)
		add(&t, "warren_start_latency_seconds_bucket{le=\"%g\"} %llu\n", LAT_BOUNDS[i], (unsigned long long)s->lat_le[i]);
	add(&t, "warren_start_latency_seconds_bucket{le=\"+Inf\"} %llu\nwarren_start_latency_seconds_sum %.6f\nwarren_start_latency_seconds_count %llu\n",
	    (unsigned long long)s->lat_count, s->lat_sum, (unsigned long long)s->lat_count);
	long ready = 0;
	for (struct warm_cell *w = s->pool; w; w = w->next)
		ready += w->ready && !w->discarded;
	add(&t, "# HELP warren_warm_cells Warm cells (serve --warm): wanted, and made with their init waiting.\n"
		"# TYPE warren_warm_cells gauge\nwarren_warm_cells{state=\"wanted\"} %ld\nwarren_warm_cells{state=\"ready\"} %ld\n",
	    s->warm_n, ready);
	add(&t, "# HELP warren_starts_total Runs given a warm cell, or started cold.\n# TYPE warren_starts_total counter\n"
		"warren_starts_total{start=\"warm\"} %llu\nwarren_starts_total{start=\"cold\"} %llu\n",
	    (unsigned long long)s->warm_taken, (unsigned long long)s->cold_started);
	add(&t, "# HELP warren_warm_cell_pss_bytes Memory of one ready warm cell: the Pss of its supervisor and the cell's processes (mean).\n"
		"# TYPE warren_warm_cell_pss_bytes gauge\nwarren_warm_cell_pss_bytes %llu\n", (unsigned long long)warm_pss_per_cell(s));
	pthread_mutex_unlock(&s->mu);
	return t;
}
