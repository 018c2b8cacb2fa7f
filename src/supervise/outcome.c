/* SPDX-License-Identifier: Apache-2.0 */
/* outcome.c - how the run ended, for the record: the facts the supervisor gathered (the job's
 * wait status, a setup error, the cause that stopped it, a limit the kernel enforced since the
 * last look) handed to the pure decision of end.h, the usage of the run's cgroup, and the
 * record's parts the supervisor writes itself ("timings", "output_held_outside"). */
#include "supervise/internal.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "run/rundir.h"
#include "supervise/end.h"
#include "util/fs.h"
#include "util/units.h"
#include "util/sys.h"

/* "timings" of the record: when the run reached each step, in whole microseconds after the
 * supervisor's start (a warm run: after its take; integers: a real keeps 6 digits in the
 * record, too few past 10 s). From init's own clock reads where the step is init's (a
 * container's), else the supervisor's (a VM guest's clock is not the host's); null where there
 * is none: a warm cell's root was built and its job made before its run came, a VM's guest
 * reports none, and an init killed before it reported the job's end (the grace's SIGKILL)
 * sent none. */
void sup_timings_record(struct sup *u, json_t **extra)
{
	int64_t t0 = ts_ns(&u->t0);
	bool warm = u->s->warm;
	/* without init's time, the job ended when its end was reported or init was gone, the
	 * earlier (the report may be read only after init's pidfd) */
	int64_t ended = u->init_ns[2] ? u->init_ns[2]
		      : u->exit_ns && u->gone_ns && u->gone_ns < u->exit_ns ? u->gone_ns : u->exit_ns;
	int64_t at[5] = { warm ? 0 : u->init_ns[0], warm ? 0 : u->init_ns[1], ended, u->gone_ns, mono_ns() };
	static const char *const names[] = { "cell_ready_us", "job_started_us", "job_ended_us", "cell_gone_us", "recorded_us" };
	json_t *t = json_object();
	for (int i = 0; i < 5; i++)
		json_object_set_new(t, names[i], at[i] > t0 ? json_integer((json_int_t)((at[i] - t0 + 500) / 1000)) : json_null());
	if (!*extra)
		*extra = json_object();
	json_object_set_new(*extra, "timings", t);
}

const char *sup_job_end(const struct sup *u, char *buf, size_t len)
{
	if (u->have_exit && WIFSIGNALED(u->job_status))
		snprintf(buf, len, "killed by SIG%s", sigabbrev_np(WTERMSIG(u->job_status)) ?: "?");
	else if (u->have_exit && WIFEXITED(u->job_status))
		snprintf(buf, len, "exited with %d", WEXITSTATUS(u->job_status));
	else
		snprintf(buf, len, "gone");
	return buf;
}

/* A cause found at the end (the kernel enforced the limit since the last look): limit, value
 * (copied), text (taken). No signal was sent for it. */
static void late_cause(struct sup *u, const char *limit, const char *value, char *text)
{
	u->cause_status = RUN_LIMIT;
	u->cause_limit = xstrdup(limit);
	u->cause_value = xstrdup(value);
	u->cause_text = text;
	u->stop_signal = 0;
	u->stopping = true;
}

void sup_build_result(struct sup *u, struct run_result *r)
{
	const struct limits *l = &u->s->limits;
	struct cgroup_usage cu;
	cgroup_usage(&u->cg, &cu);
	cu.pids_max_hits += u->guest_pids_hits;
	cu.oom_kills += u->guest_oom_kills;
	/* a limit the kernel enforced after our last look (or that the job got past by itself: a
	 * child OOM-killed, a fork refused, a write refused with ENOSPC) still names itself */
	char v[32];
	switch (u->stopping ? RUN_END_LATE_NONE
			    : run_end_late_limit(l, cu.oom_kills, cu.pids_max_hits, u->have_scratch, u->scratch_free)) {
	case RUN_END_LATE_MEMORY: {
		char *text = sup_memory_cause(l, cu.oom_kills, u->s, v, sizeof v);
		late_cause(u, "memory", v, text);
		break;
	}
	case RUN_END_LATE_PIDS:
		snprintf(v, sizeof v, "%llu", (unsigned long long)l->pids);
		late_cause(u, "pids", v, sup_pids_cause(l, cu.pids_max_hits));
		break;
	case RUN_END_LATE_SCRATCH:
		format_size(v, sizeof v, l->scratch);
		late_cause(u, "scratch", v,
			   xasprintf("scratch limit %s reached (writes to /tmp, /dev/shm, $HOME and the root failed with ENOSPC)", v));
		break;
	case RUN_END_LATE_NONE:
		break;
	}
	struct run_end_facts f = {
		.have_exit = u->have_exit, .job_status = u->job_status,
		.setup_error = u->setup_error, .setup_status = u->setup_status,
		.stopping = u->stopping, .cause_status = u->cause_status, .cause_limit = u->cause_limit,
		.cause_value = u->cause_value, .cause_text = u->cause_text, .stop_signal = u->stop_signal,
		.killed = u->killed, .killed_early = u->killed_early, .grace_ms = l->grace_ms,
	};
	run_end_decide(&f, r);
	r->have_cpu = cu.have_cpu;
	r->cpu_user_s = cu.cpu_user_s;
	r->cpu_sys_s = cu.cpu_sys_s;
	r->have_memory = cu.have_memory;
	r->peak_memory = cu.peak_memory;
	r->have_pids = cu.have_pids;
	r->pids_peak = cu.pids_peak;
	if (!cu.have_pids && u->pids_sampled) {
		/* no pids.peak (cgroup v1): the highest count seen by the limit watch */
		r->have_pids = true;
		r->pids_peak = u->pids_sampled;
	}
	if (u->drv->reports_pids_peak) {
		/* the host's cgroup counts qemu's threads: the job's processes are the guest's count */
		r->have_pids = u->guest_pids_peak > 0;
		r->pids_peak = u->guest_pids_peak;
	}
	r->have_output = true;
	r->output_bytes = u->output;
	r->have_throttle = cu.have_throttle;
	r->nr_throttled = cu.nr_throttled;
	r->throttled_us = cu.throttled_us;
}

bool sup_end_known(struct sup *u, int *exit_code)
{
	if (!u->have_exit || u->stopping || u->setup_error || !WIFEXITED(u->job_status))
		return false;
	/* as sup_build_result's late causes (end.h): a limit the kernel enforced names the end */
	const struct limits *l = &u->s->limits;
	uint64_t oom_kills, pids_max_hits;
	cgroup_limit_hits(&u->cg, l->memory, l->pids, &oom_kills, &pids_max_hits);
	if (run_end_late_limit(l, oom_kills, pids_max_hits, u->have_scratch, u->scratch_free) != RUN_END_LATE_NONE)
		return false;
	*exit_code = WEXITSTATUS(u->job_status);
	return true;
}

/* "output_held_outside" in the record, and one line: the streams a process outside the cell
 * still held open when the cell was gone; what was written to them later is dropped. */
void sup_held_record(struct sup *u, json_t **extra, bool quiet)
{
	if (!u->held)
		return;
	if (!*extra)
		*extra = json_object();
	json_object_set(*extra, "output_held_outside", u->held);
	if (quiet)
		return;
	uint64_t bytes = 0;
	_cleanup_free_ char *names = NULL;
	size_t i;
	json_t *h;
	json_array_foreach(u->held, i, h) {
		const char *name = json_string_value(json_object_get(h, "stream"));
		char *more = xasprintf("%s%s%s", names ? names : "", names ? ", " : "", name);
		free(names);
		names = more;
		bytes += (uint64_t)json_integer_value(json_object_get(h, "bytes_read"));
	}
	warn_line("%s: a process outside the cell held the job's output open (%s); %llu bytes read, the rest dropped",
		u->s->id, names, (unsigned long long)bytes);
}

/* CPU time and peak RSS from the kernel's accounting of init and what it reaped, where no
 * cgroup tells us. */
void sup_rusage_fallback(struct run_result *r, const struct rusage *ru)
{
	if (!r->have_cpu) {
		r->have_cpu = true;
		r->cpu_user_s = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
		r->cpu_sys_s = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
	}
	if (!r->have_memory) {
		r->have_memory = true;
		r->peak_memory = (uint64_t)ru->ru_maxrss * 1024;
	}
}

uint64_t sup_scratch_bytes(const struct cell_spec *s)
{
	static const char *const parts[] = { RUN_TMP_DIR, RUN_VARTMP_DIR, RUN_SHM_DIR, RUN_HOME_DIR, RUN_UPPER_DIR };
	uint64_t total = 0;
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		int fd = openat(s->rundir_fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			total += tree_bytes_fd(fd);
	}
	return total;
}

void sup_emit_result(const struct supervise_opts *o, const char *json)
{
	if (o->result_fd >= 0)
		write_all(o->result_fd, json, strlen(json));
	if (o->result_file) {
		int r = write_file_atomic(o->result_file, json, strlen(json), 0644);
		if (r < 0)
			warn_line("cannot write --result %s: %s", o->result_file, strerror(-r));
	}
}
