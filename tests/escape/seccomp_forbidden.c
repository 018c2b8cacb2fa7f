/* SPDX-License-Identifier: Apache-2.0 */
/* seccomp_forbidden: calls the default profile refuses: the kernel keyring, bpf,
 * perf_event_open, userfaultfd, io_uring. (keyctl succeeds for any user on a bare host.) */
#include "attempt.h"
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>

int main(void)
{
	a_start("seccomp_forbidden");
	long r = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
	tried(r >= 0, "keyctl(GET_KEYRING_ID): %s", res(r));
	r = syscall(SYS_add_key, "user", "warren-escape", "x", 1, KEY_SPEC_PROCESS_KEYRING);
	tried(r >= 0, "add_key: %s", res(r));
	union bpf_attr a = { .map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 4, .max_entries = 1 };
	r = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
	tried(r >= 0, "bpf(BPF_MAP_CREATE): %s", res(r));
	struct perf_event_attr pa = { .type = PERF_TYPE_SOFTWARE, .size = sizeof pa, .config = PERF_COUNT_SW_CPU_CLOCK,
				      .exclude_kernel = 1, .exclude_hv = 1 };
	r = syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0);
	tried(r >= 0, "perf_event_open: %s", res(r));
	r = syscall(SYS_userfaultfd, O_CLOEXEC | 1);
	tried(r >= 0, "userfaultfd: %s", res(r));
	struct io_uring_params ip = { 0 };
	r = syscall(SYS_io_uring_setup, 1, &ip);
	tried(r >= 0, "io_uring_setup: %s", res(r));
	finish();
}
