/* SPDX-License-Identifier: Apache-2.0 */
/* refused-calls.c - bench/refused-writes: the cost of a watched call. Times 20000
 * open(O_CREAT|O_TRUNC)+close of one file in /tmp (each open is a write-side path call the
 * write watch looks at) and prints microseconds per iteration. */
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
	enum { N = 20000 };
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < N; i++) {
		int fd = open("/tmp/calls-probe", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0) {
			perror("open /tmp/calls-probe");
			return 1;
		}
		close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f\n", ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3 / N);
	return 0;
}
