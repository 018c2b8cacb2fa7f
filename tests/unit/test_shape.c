/* SPDX-License-Identifier: Apache-2.0 */
/* test_shape.c - whether a run fits a warm cell (cell_spec_shape_diff, cell/spec.h): the same
 * spec fits; each thing a cell is made with (root, image digest, worktree and its inode, user,
 * binds, network mode, policy) makes it not fit, with its reason; what a run brings itself
 * (command, environment, labels, every limit, published ports, allow list) does not, but for
 * a rootless cell's cgroup limits and pasta; and what the run set at the claim
 * (cell_spec_claims), by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell/spec.h"

static char *argv_a[] = { "warren-job", "/a.json", NULL }, *argv_b[] = { "warren-job", "/b.json", NULL };
static char *env_a[] = { "X=1", "TMPDIR=/tmp", NULL }, *env_b[] = { "Y=2", "TMPDIR=/tmp", NULL };

/* A spec as `job run` makes it for a worktree fd (the fields the comparison reads). */
static struct cell_spec base(int wfd)
{
	struct cell_spec s = { 0 };
	s.driver = CELL_DRIVER_CONTAINER;
	s.argv = argv_a;
	s.env = env_a;
	s.worktree = "/src/app";
	s.worktree_fd = wfd;
	s.uid = 1000;
	s.gid = 1000;
	s.user_name = "warren";
	s.home = "/home/warren";
	s.id_base = 1000000000u;
	s.limits.memory = 1u << 30;
	s.limits.pids = 4096;
	return s;
}

static void fits(void **state)
{
	(void)state;
	int fd = open("/", O_PATH | O_DIRECTORY);
	struct cell_spec w = base(fd), r = base(fd);
	assert_null(cell_spec_shape_diff(&w, &r));
	/* what the run brings itself */
	r.argv = argv_b;
	r.env = env_b;
	r.limits.time_ms = 1000;
	r.limits.cpu_ms = 500;
	r.limits.output = 10;
	r.limits.scratch = 1u << 20;
	r.limits.grace_ms = 1;
	r.keep = true;
	assert_null(cell_spec_shape_diff(&w, &r));
	/* its memory, process and CPU limits are set at the claim too */
	r.limits.memory = 64u << 20;
	r.limits.pids = 10;
	r.limits.cpu_quota_us = 50000;
	strcpy(r.limits.cpuset, "0");
	assert_null(cell_spec_shape_diff(&w, &r));
	r.limits.memory = 0;  /* none, where the cell has the default */
	assert_null(cell_spec_shape_diff(&w, &r));
	/* in a cell with a network, its published ports and allow list too */
	w.net.mode = r.net.mode = NET_ALLOW;
	w.net.allow = "";
	r.net.allow = "pypi.org:443,10.1.2.3";
	r.net.npublish = 1;
	r.net.publish[0] = (struct net_publish){ .host_port = 8080, .cell_port = 80 };
	assert_null(cell_spec_shape_diff(&w, &r));
	close(fd);
}

/* The settings a run set at the claim, and their names. */
static void claims(void **state)
{
	(void)state;
	struct cell_spec w = base(-1), r = base(-1);
	assert_int_equal(cell_spec_claims(&w, &r), 0);
	char *labels[] = { "t=1", NULL };
	r.env = env_b;
	r.labels = labels;
	r.limits.time_ms = 1000;
	r.limits.memory = 64u << 20;
	r.limits.pids = 10;
	r.net.npublish = 1;
	r.net.allow = "example.com";
	assert_int_equal(cell_spec_claims(&w, &r), CLAIM_ENV | CLAIM_LABELS | CLAIM_TIME | CLAIM_MEMORY | CLAIM_PIDS |
							   CLAIM_PUBLISH | CLAIM_ALLOW);
	char *env_a2[] = { "X=1", "TMPDIR=/tmp", NULL };
	struct cell_spec r2 = base(-1);
	r2.env = env_a2;  /* the same variables: not its own */
	r2.limits.cpu_quota_us = 1;
	r2.limits.scratch = 1;
	assert_int_equal(cell_spec_claims(&w, &r2), CLAIM_CPUS | CLAIM_SCRATCH);
	const char *want[CLAIM_N] = { "env", "labels", "time", "cpu-time", "memory", "pids", "cpus", "output", "scratch",
				      "publish", "allow" };
	for (unsigned i = 0; i < CLAIM_N; i++)
		assert_string_equal(cell_claim_name(i), want[i]);
	assert_null(cell_claim_name(CLAIM_N));
}

/* Case i's change of r (a run's spec like the cell's), and a word its reason must hold; the
 * cell's own changes: */
static bool w_rootless;
static uint64_t w_cpus;
static const char *change(int i, struct cell_spec *r, int other)
{
	static struct cell_mount m = { .source = "/data", .destination = "/data", .fd = -1 };
	switch (i) {
	case 0: r->rootfs = "/img"; return "root";
	case 1: r->image = "bb"; return "root";
	case 2: r->image_digest = "sha256:new"; return "image changed";
	case 3: r->worktree = "/src/other"; return "worktree";
	case 4: r->worktree_fd = other; return "worktree";   /* the same path, another directory */
	case 5: r->worktree_ro = true; return "worktree";
	case 6: r->uid = 0; return "run user";
	case 7: r->rootless = true; return "run user";
	case 8: r->home = "/root"; return "run user";
	case 9: r->mounts = &m; r->n_mounts = 1; return "binds";
	case 10: r->workdir = "/src/app/sub"; return "workdir";
	case 11: r->hostname = "box"; return "hostname";
	case 12: r->rootless = w_rootless = true; r->limits.memory = 2u << 30; return "rootless";
	case 13: r->rootless = w_rootless = true; r->limits.pids = 10; return "rootless";
	case 14: r->net.mode = NET_NAT; return "network";
	case 15: r->driver = CELL_DRIVER_VM; return "microVM";
	case 16: r->tty = true; return "terminal";
	case 17: r->policy.allow_nested = true; return "policy";
	case 18: r->policy.seccomp_text = "{}"; return "policy";
	case 19: w_cpus = 50000; r->limits.cpu_quota_us = 20000; return "CPU";
	case 20: r->net.lan = true; return "network mode";
	case 21: r->rootless = w_rootless = true; r->net.npublish = 1; return "pasta";
	case 22: r->rootless = w_rootless = true; r->net.allow = "10.1.2.3"; return "pasta";
	case 23: r->net.dns_max_names = 5; return "dns-max-names";
	case 24: r->rootless = w_rootless = true; r->limits.cpu_ms = 1000; return "rootless";
	default: return NULL;
	}
}

static void does_not_fit(void **state)
{
	(void)state;
	int fd = open("/", O_PATH | O_DIRECTORY), other = open("/proc", O_PATH | O_DIRECTORY);
	struct cell_spec w = base(fd);
	w.image_digest = NULL;
	for (int i = 0;; i++) {
		struct cell_spec r = base(fd);
		if (i == 2) {  /* an image whose digest changed: same name */
			w.image = r.image = "bb";
			w.image_digest = "sha256:old";
		}
		w_rootless = false;
		w_cpus = 0;
		const char *word = change(i, &r, other);
		if (!word)
			break;
		w.rootless = w_rootless;
		w.limits.cpu_quota_us = w_cpus;
		const char *why = cell_spec_shape_diff(&w, &r);
		if (!why)
			fail_msg("case %d: fits, expected '%s'", i, word);
		if (!strstr(why, word))
			fail_msg("case %d: '%s' does not say '%s'", i, why, word);
		w.image = NULL;
		w.image_digest = NULL;
	}
	close(fd);
	close(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(fits), cmocka_unit_test(does_not_fit),
					    cmocka_unit_test(claims) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
