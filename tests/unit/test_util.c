/* SPDX-License-Identifier: Apache-2.0 */
/* test_util.c - write_all (short writes, a full non-blocking pipe), warn_line's one path (the
 * handler gets every line; stderr again without it) and closep (close and reset). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fs.h"

/* ---------- write_all ---------- */

#define BIG (1 << 20) /* far more than a pipe holds (64 KiB) */

static void *drain(void *arg)
{
	int fd = *(int *)arg;
	size_t *got = xmalloc(sizeof *got);
	*got = 0;
	char buf[4096];
	ssize_t r;
	usleep(20000); /* let the writer fill the pipe and meet EAGAIN first */
	while ((r = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < r; i++)
			if (buf[i] != (char)('a' + (*got + (size_t)i) % 26))
				fail_msg("byte %zu is wrong", *got + (size_t)i);
		*got += (size_t)r;
	}
	return got;
}

static void test_write_all_nonblocking_full_pipe(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fcntl(p[1], F_SETFL, O_NONBLOCK), 0);
	char *data = xmalloc(BIG);
	for (size_t i = 0; i < BIG; i++)
		data[i] = (char)('a' + i % 26);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, drain, &p[0]), 0);
	assert_int_equal(write_all(p[1], data, BIG), 0);
	closep(&p[1]);
	size_t *got;
	assert_int_equal(pthread_join(t, (void **)&got), 0);
	assert_int_equal(*got, BIG);
	free(got);
	free(data);
	closep(&p[0]);
}

static void test_write_all_error(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(write_all(p[1], "x", 1), -EPIPE);
	close(p[1]);
	assert_int_equal(write_all(-1, "x", 1), -EBADF);
}

/* ---------- warn_line ---------- */

static void collect(const char *msg, void *data)
{
	char **seen = data;
	char *n = xasprintf("%s%s|", *seen ? *seen : "", msg);
	free(*seen);
	*seen = n;
}

static void test_warn_line_handler(void **state)
{
	(void)state;
	char *seen = NULL;
	warn_set_handler(collect, &seen);
	warn_line("%s refused %d write%s", "run_X", 2, "s");
	warn_line("note: %s", "second");
	warn_set_handler(NULL, NULL);
	assert_string_equal(seen, "run_X refused 2 writes|note: second|");
	free(seen);
}

static void test_warn_line_stderr(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	dup2(p[1], STDERR_FILENO);
	warn_line("cannot %s %s", "remove", "it");
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[1]);
	char buf[128] = { 0 };
	assert_true(read(p[0], buf, sizeof buf - 1) > 0);
	close(p[0]);
	assert_string_equal(buf, "warren: cannot remove it\n");
}

/* ---------- closep ---------- */

static void test_closep_resets(void **state)
{
	(void)state;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	int keep = fd;
	errno = EXDEV;
	closep(&fd);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, EXDEV); /* an error message after it reads the failure's errno */
	assert_int_equal(fcntl(keep, F_GETFD), -1);
	closep(&fd); /* a second time: nothing */
	assert_int_equal(fd, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_all_nonblocking_full_pipe),
		cmocka_unit_test(test_write_all_error),
		cmocka_unit_test(test_warn_line_handler),
		cmocka_unit_test(test_warn_line_stderr),
		cmocka_unit_test(test_closep_resets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
