/* SPDX-License-Identifier: Apache-2.0 */
/* limits.c - the limits watched while the run lives: memory (the kernel's OOM kills, and whom
 * it chose), processes (forks refused), CPU time and the wall clock; each stops the cell for a
 * cause that names itself. */
#include "supervise/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "run/rundir.h"
#include "util/fs.h"
#include "util/units.h"

/* Which process the kernel's OOM killer chose in this run's cgroup, from the kernel log
 * ("oom-kill:...,oom_memcg=/warren/<id>,...,task=cc1,pid=41,..."): "cc1 (host pid 41)", or
 * NULL when the log cannot be read (not root, or the kernel restricts it). */
static char *oom_victim(const char *id)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *found = NULL;
	char rec[8192];
	_cleanup_free_ char *memcg = xasprintf("oom_memcg=/warren/%s,", id);
	for (;;) {
		ssize_t n = read(fd, rec, sizeof rec - 1);
		if (n < 0 && errno == EPIPE)
			continue; /* records overwritten while we read: go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (!strstr(rec, memcg))
			continue;
		char *task = strstr(rec, ",task=");
		char *pid = strstr(rec, ",pid=");
		if (!task || !pid)
			continue;
		task += 6;
		pid += 5;
		free(found);
		found = xasprintf("%.*s (host pid %.*s)", (int)strcspn(task, ","), task, (int)strcspn(pid, ",\n"), pid);
	}
	close(fd);
	return found;
}

char *sup_memory_cause(const struct limits *l, uint64_t kills, const struct cell_spec *s, char *v, size_t vlen)
{
	format_size(v, vlen, l->memory);
	_cleanup_free_ char *cg = rundir_cgroup_name(s->state_tag, s->id);
	_cleanup_free_ char *who = oom_victim(cg);
	if (who && kills == 1)
		return xasprintf("memory limit %s reached; the kernel killed %s", v, who);
	if (who)
		return xasprintf("memory limit %s reached; the kernel killed %llu processes, the last %s", v,
				 (unsigned long long)kills, who);
	return xasprintf("memory limit %s reached; the kernel killed %llu process%s", v, (unsigned long long)kills,
			 kills == 1 ? "" : "es");
}

char *sup_pids_cause(const struct limits *l, uint64_t hits)
{
	return xasprintf("process limit %llu reached (fork failed %llu time%s)", (unsigned long long)l->pids,
			 (unsigned long long)hits, hits == 1 ? "" : "s");
}

void sup_watch_limits(struct sup *u)
{
	struct cgroup_usage cu;
	cgroup_usage(&u->cg, &cu);
	cu.pids_max_hits += u->guest_pids_hits;
	cu.oom_kills += u->guest_oom_kills;
	if (cu.pids_current > u->pids_sampled)
		u->pids_sampled = cu.pids_current;
	const struct limits *l = &u->s->limits;
	char v[32];
	if (l->memory && cu.oom_kills) {
		char *text = sup_memory_cause(l, cu.oom_kills, u->s, v, sizeof v);
		bool first = !u->stopping;
		sup_stop(u, RUN_LIMIT, "memory", v, SIGKILL, text);
		if (first)  /* (a cause set before keeps the signal it named) */
			u->stop_signal = 0;
		sup_kill(u);
	} else if (l->pids && cu.pids_max_hits) {
		sup_stop(u, RUN_LIMIT, "pids", NULL, SIGTERM, sup_pids_cause(l, cu.pids_max_hits));
		free(u->cause_value);
		u->cause_value = xasprintf("%llu", (unsigned long long)l->pids);
	} else if (l->cpu_ms && cu.have_cpu && sup_job_started(u) && (cu.cpu_ns - u->job_start_cpu_ns) / 1000000 >= l->cpu_ms) {
		format_duration_ms(v, sizeof v, l->cpu_ms);
		char at[32];
		format_seconds(at, sizeof at, sup_elapsed(u));
		sup_stop(u, RUN_LIMIT, "cpu-time", v, SIGTERM,
			  xasprintf("CPU-time limit %s reached at %s of wall-clock time", v, at));
	}
}

void sup_time_limit(struct sup *u)
{
	char v[32], at[32];
	format_duration_ms(v, sizeof v, u->s->limits.time_ms);
	format_seconds(at, sizeof at, sup_elapsed(u) - u->job_start_s);
	sup_stop(u, RUN_LIMIT, "time", v, SIGTERM, xasprintf("wall-clock limit %s reached at %s", v, at));
}
