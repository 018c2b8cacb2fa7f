/* SPDX-License-Identifier: Apache-2.0 */
/* ports.c - the ports below 1024 in a cell's own network namespace. As runc and containerd
 * do, net.ipv4.ip_unprivileged_port_start is 0 there, so the job binds :80 as the unprivileged
 * user it runs as (nginx, a web server under test): the namespace and its ports are the cell's
 * alone, reached from outside only through --publish. The sysctl is the namespace's own (the
 * kernel resolves /proc/sys/net by the caller's namespace), so only a process already in the
 * cell's new namespace calls this; the host's is never written. Raw system calls, not
 * instrumented by the sanitizers: the supervisor's netns helper (cell/container/container.c) runs it
 * where no C library state may be taken. */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>

#include "net/net.h"
#include "util/sys.h"

#define UNPRIVILEGED_PORT_START "/proc/sys/net/ipv4/ip_unprivileged_port_start"

int __attribute__((no_sanitize("address", "undefined"))) net_open_low_ports(void)
{
	long fd = sys_raw6(SYS_openat, AT_FDCWD, (long)UNPRIVILEGED_PORT_START, O_WRONLY | O_CLOEXEC, 0, 0, 0);
	if (fd < 0)
		return (int)fd;
	long r = sys_raw(SYS_write, fd, "0", 1);
	sys_raw(SYS_close, fd, 0, 0);
	return r == 1 ? 0 : r < 0 ? (int)r : -EIO;
}
