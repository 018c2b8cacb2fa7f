/* SPDX-License-Identifier: Apache-2.0 */
/* output_held: the job hands its own stdout and stderr (the write ends of the supervisor's
 * pipes, or its terminal) to a process outside the cell, over a unix socket the test placed in
 * the worktree (argv[1]), and exits 0. The way out is the supervisor's: if it waits for an end
 * of output that the process outside never gives, it hangs and records the run wrongly.
 * escape.t judges that (warren ends at once with exit 0 and the record says "exited 0"); here
 * the job only proves the descriptors arrived (the holder answers once it has them).
 * Named output_held_tty when its stdout is a terminal (warren on a terminal). */
#include "attempt.h"

#include <sys/socket.h>
#include <sys/un.h>

/* Send fds 1 and 2 over the unix socket at path; wait for the holder's one-byte answer. */
static bool hand_out(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path) {
		errno = ENAMETOOLONG;
		return false;
	}
	strcpy(sa.sun_path, path);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0)
		return false;
	int fds[2] = { 1, 2 };
	union {
		char buf[CMSG_SPACE(sizeof fds)];
		struct cmsghdr align;
	} c = { 0 };
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(cm), fds, sizeof fds);
	char ack;
	return sendmsg(s, &mh, MSG_NOSIGNAL) == 1 && read(s, &ack, 1) == 1;
}

int main(int argc, char **argv)
{
	a_start(isatty(1) ? "output_held_tty" : "output_held");
	if (argc < 2)
		untested("no holder socket given");
	if (!hand_out(argv[1])) {
		printf("%s: untested: cannot hand stdout and stderr to the holder at %s: %s\n", a_name, argv[1], en());
		exit(2);
	}
	/* the supervisor's part is judged outside; this only records what was done */
	tried(false, "stdout and stderr handed to a process outside the cell, then exit 0");
	finish();
}
