/* warm-client.c - the client bench/run times for warren serve's runs: one POST /v1/runs?wait=1
 * over the server's unix socket ({"command": [...], "worktree": DIR}), the answer read to its
 * end. Exit status: the run's exit code; 98 when it was not given a warm cell and
 * BENCH_WANT_WARM is set; 99 when the server could not be asked. No libraries, no shell: its
 * own start costs what /bin/true's does.
 *
 *   warm-client SOCKET WORKTREE CMD [ARG...]      (arguments without quotes or backslashes) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 4)
		return 99;
	char body[8192];
	int n = snprintf(body, sizeof body, "{\"worktree\":\"%s\",\"command\":[", argv[2]);
	for (int i = 3; i < argc && n < (int)sizeof body; i++)
		n += snprintf(body + n, sizeof body - (size_t)n, "%s\"%s\"", i > 3 ? "," : "", argv[i]);
	n += snprintf(body + n, sizeof body - (size_t)n, "]}");
	char req[9000];
	int m = snprintf(req, sizeof req, "POST /v1/runs?wait=1 HTTP/1.1\r\nHost: warren\r\nContent-Type: application/json\r\n"
			 "Content-Length: %d\r\nConnection: close\r\n\r\n%s", n, body);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", argv[1]);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || write(fd, req, (size_t)m) != m)
		return 99;
	char ans[16384];
	size_t got = 0;
	ssize_t r;
	while (got < sizeof ans - 1 && (r = read(fd, ans + got, sizeof ans - 1 - got)) > 0)
		got += (size_t)r;
	ans[got] = '\0';
	const char *ec = strstr(ans, "\"exit_code\":");
	if (!ec) {
		fprintf(stderr, "warm-client: no exit code in the answer: %s\n", got ? ans : "(none)");
		return 99;
	}
	if (getenv("BENCH_WANT_WARM") && !strstr(ans, "\"start\":\"warm\"") && !strstr(ans, "\"start\": \"warm\""))
		return 98;
	return atoi(ec + 12);
}
