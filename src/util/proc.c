/* SPDX-License-Identifier: Apache-2.0 */
/* proc.c - see proc.h. */
#include "util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <unistd.h>

static unsigned std_fds_closed;

bool std_fds_open(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		if (open("/dev/null", fd ? O_WRONLY : O_RDONLY) != fd)
			return false;
		std_fds_closed |= 1u << fd;
	}
	return true;
}

bool std_fd_was_closed(int fd)
{
	return fd >= 0 && fd <= 2 && (std_fds_closed & (1u << fd));
}

static char *args_start;
static size_t args_len;

void proc_args_save(int argc, char **argv)
{
	if (argc < 1 || !argv[0] || !argv[argc - 1])
		return;
	args_start = argv[0];
	args_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - args_start);
}

void proc_args_wipe(const char *title)
{
	if (!args_start || !args_len)
		return;
	size_t n = strlen(title);
	if (n >= args_len)
		n = args_len - 1;
	memset(args_start, 0, args_len);
	memcpy(args_start, title, n);
}

const char *proc_reset_inherited(void)
{
	int pol = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	if (pol >= 0 && pol != SCHED_OTHER && pol != SCHED_BATCH && pol != SCHED_IDLE &&
	    sched_setscheduler(0, SCHED_OTHER, &(struct sched_param){ 0 }) < 0)
		return "real-time scheduling";
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0);
	if (errno == 0 && nice < 0 && setpriority(PRIO_PROCESS, 0, 0) < 0)
		return "negative nice";
	const unsigned long weak = ADDR_NO_RANDOMIZE | READ_IMPLIES_EXEC | MMAP_PAGE_ZERO | ADDR_COMPAT_LAYOUT;
	int per = personality(0xffffffff);
	if (per >= 0 && ((unsigned long)per & weak) && personality((unsigned long)per & ~weak) < 0)
		return "personality flags";
	return NULL;
}

pid_t proc_parent(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* the name may hold anything: the fields follow its last ')' (state, then ppid) */
	char *p = strrchr(buf, ')');
	int ppid;
	return p && sscanf(p + 1, " %*c %d", &ppid) == 1 ? (pid_t)ppid : -1;
}
