/* SPDX-License-Identifier: Apache-2.0 */
/* watch.c - what the guest init watches of the job and tells the host: its cgroup (the
 * process limit, the peak of its processes), the scratch's use (a full scratch at once) and
 * the OOM killer's kills. */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/timerfd.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell/contract.h"

#include "guest.h"

/* ---- the scratch ---- */

/* The scratch tmpfs mounts (O_PATH), for their use and the scratch-full report. */
#define MAX_SCRATCH 8
static int scratch_fds[MAX_SCRATCH];
static size_t n_scratch;

void scratch_watch(const char *path)
{
	int fd = n_scratch < MAX_SCRATCH ? open(path, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (fd >= 0)
		scratch_fds[n_scratch++] = fd;
}

/* ---- the job's cgroup: its process limit ---- */

static int cg_procs = -1, cg_events = -1, cg_current = -1, cg_peak = -1;
static unsigned long long pids_hits;

static void write_cg(const char *file, const char *val)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		die(errno, "cannot write %s", file);
	close(fd);
}

/* A cgroup "job" in the guest's cgroup2 (its pids.peak is the record's), with pids.max when
 * there is a process limit. */
void make_job_cgroup(const struct orders *o)
{
	char max[32];
	snprintf(max, sizeof max, o->pids ? "%llu" : "max", o->pids);
	mkdir(VM_CGROUP_MNT, 0755);
	mount_or_die("cgroup2", VM_CGROUP_MNT, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	write_cg(VM_CGROUP_MNT "/cgroup.subtree_control", "+pids");
	if (mkdir(VM_CGROUP_MNT "/job", 0755) < 0)
		die(errno, "cannot make the job's cgroup");
	write_cg(VM_CGROUP_MNT "/job/pids.max", max);
	cg_procs = open(VM_CGROUP_MNT "/job/cgroup.procs", O_WRONLY | O_CLOEXEC);
	cg_events = open(VM_CGROUP_MNT "/job/pids.events", O_RDONLY | O_CLOEXEC);
	/* the root is entered later: the files are read by their descriptors (no pids.peak in 6.1) */
	cg_current = open(VM_CGROUP_MNT "/job/pids.current", O_RDONLY | O_CLOEXEC);
	cg_peak = open(VM_CGROUP_MNT "/job/pids.peak", O_RDONLY | O_CLOEXEC);
	if (cg_procs < 0 || cg_events < 0)
		die(errno, "cannot open the job's cgroup");
}

int pids_events_fd(void)
{
	return cg_events;
}

/* In the job's process: into the job's cgroup. */
void enter_job_cgroup(void)
{
	if (cg_procs >= 0 && write(cg_procs, "0", 1) < 0)
		die(errno, "cannot enter the job's cgroup");
}

/* Tell the host when the process limit refused more forks ({"pids_max": N}). */
void report_pids(void)
{
	char b[128];
	ssize_t n = cg_events >= 0 ? pread(cg_events, b, sizeof b - 1, 0) : -1;
	if (n <= 0)
		return;
	b[n] = '\0';
	char *m = strstr(b, "max ");
	unsigned long long hits = m ? strtoull(m + 4, NULL, 10) : 0;
	if (hits <= pids_hits)
		return;
	pids_hits = hits;
	char line[64];
	snprintf(line, sizeof line, "{\"" VM_REPORT_PIDS_MAX "\":%llu}\n", hits);
	write_line(line);
}

/* The most processes the job's cgroup was seen with (its pids.current, looked at whenever the
 * init wakes up and ten times a second), for a kernel without pids.peak (6.1). */
static unsigned long long pids_seen;

/* The number in the cgroup file open as fd, or 0. */
static unsigned long long cg_number(int fd)
{
	char b[32];
	ssize_t n = fd >= 0 ? pread(fd, b, sizeof b - 1, 0) : -1;
	b[n > 0 ? n : 0] = '\0';
	return strtoull(b, NULL, 10);
}

void sample_pids(void)
{
	unsigned long long n = cg_number(cg_current);
	pids_seen = n > pids_seen ? n : pids_seen;
}

/* Tell the host the most processes the job had at once ({"pids_peak": N}: the job's cgroup's
 * pids.peak, or what the init saw). */
void report_pids_peak(void)
{
	char line[64];
	snprintf(line, sizeof line, "{\"" VM_REPORT_PIDS_PEAK "\":%llu}\n", cg_peak >= 0 ? cg_number(cg_peak) : pids_seen);
	write_line(line);
}

/* The scratch's use: bytes used on all its tmpfs mounts, the least free on one of them; false
 * without any. */
static bool scratch_use(unsigned long long *used, unsigned long long *avail)
{
	*used = 0;
	*avail = ~0ull;
	for (size_t i = 0; i < n_scratch; i++) {
		struct statfs fs;
		if (fstatfs(scratch_fds[i], &fs) < 0)
			continue;
		*used += (unsigned long long)(fs.f_blocks - fs.f_bfree) * fs.f_bsize;
		unsigned long long a = (unsigned long long)fs.f_bfree * fs.f_bsize;
		*avail = a < *avail ? a : *avail;
	}
	return n_scratch > 0;
}

/* Tell the host the scratch's use ({"scratch": [used, free]}), with "full": true when one of
 * its mounts has less than VM_SCRATCH_FULL bytes free; true then. */
bool report_scratch(bool only_full)
{
	unsigned long long used, avail;
	if (!scratch_use(&used, &avail))
		return false;
	bool full = avail < VM_SCRATCH_FULL;
	if (only_full && !full)
		return false;
	char line[128];
	snprintf(line, sizeof line, "{\"" VM_REPORT_SCRATCH "\":[%llu,%llu]%s}\n", used, avail,
		 full ? ",\"" VM_REPORT_SCRATCH_FULL "\":true" : "");
	write_line(line);
	return full;
}

/* A timer that looks at the job's processes and, with a scratch limit, the scratch, ten
 * times a second (-1: none). */
int watch_timer(void)
{
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec it = { .it_value = { 0, 100000000 }, .it_interval = { 0, 100000000 } };
	if (tfd >= 0)
		timerfd_settime(tfd, 0, &it, NULL);
	return tfd;
}

/* Tell the host how many processes the guest's OOM killer killed ({"oom_kills": N}, when
 * any): the VM's RAM is the run's memory limit. */
void report_oom_kills(void)
{
	char *vm = read_small("/proc/vmstat", NULL);
	char *k = vm ? strstr(vm, "\noom_kill ") : NULL;
	unsigned long long kills = k ? strtoull(k + 10, NULL, 10) : 0;
	free(vm);
	if (!kills)
		return;
	char line[64];
	snprintf(line, sizeof line, "{\"" VM_REPORT_OOM_KILLS "\":%llu}\n", kills);
	write_line(line);
}
