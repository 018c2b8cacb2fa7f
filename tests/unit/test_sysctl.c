/* SPDX-License-Identifier: Apache-2.0 */
/* test_sysctl.c - which sysctls a cell may be given (cell/sysctl.h): the kubelet's safe set by
 * namespace, in either spelling; anything else refused; none where the namespace is the
 * host's; values of one short line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cell/sysctl.h"

static void kinds(void **state)
{
	(void)state;
	assert_int_equal(cell_sysctl_kind("kernel.shm_rmid_forced"), GATE_NS_IPC);
	assert_int_equal(cell_sysctl_kind("net.ipv4.ip_local_port_range"), GATE_NS_NET);
	assert_int_equal(cell_sysctl_kind("net/ipv4/tcp_syncookies"), GATE_NS_NET);
	assert_int_equal(cell_sysctl_kind("net.ipv4.ip_unprivileged_port_start"), GATE_NS_NET);
	const char *unsafe[] = { "kernel.msgmax", "kernel.hostname", "net.core.somaxconn", "net.ipv4.ip_forward", "vm.swappiness",
				 "net.ipv4.tcp_syncookies.x", "net.ipv4", "", "kernel.shm_rmid_forced_", "net.ipv4.conf.all.rp_filter",
				 "net.ipv4.ip_local_port_range.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				 /* spellings that would lead /proc/sys elsewhere, or that are another key */
				 "net/ipv4/../../kernel/msgmax", "net.ipv4.conf/../../../kernel/msgmax", "NET.IPV4.TCP_SYNCOOKIES",
				 "/net/ipv4/tcp_syncookies", "net.ipv4.tcp_syncookies/", "net.ipv4..tcp_syncookies", "./net/ipv4/tcp_syncookies",
				 "net/ipv4/./tcp_syncookies", "net.ipv4.tcp_syncookies " };
	for (size_t i = 0; i < sizeof unsafe / sizeof *unsafe; i++)
		if (cell_sysctl_kind(unsafe[i]) >= 0)
			fail_msg("'%s': taken as safe", unsafe[i]);
}

static void adds(void **state)
{
	(void)state;
	struct cell_spec s = { 0 };
	struct error err = { 0 };
	assert_int_equal(cell_sysctl_add(&s, "linux.sysctl", "net/ipv4/tcp_fin_timeout", "30", &err), 0);
	assert_int_equal(s.n_sysctls, 1);
	assert_string_equal(s.sysctls[0].key, "net.ipv4.tcp_fin_timeout");
	assert_int_equal(cell_sysctl_add(&s, "linux.sysctl", "kernel.msgmax", "1", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "linux.sysctl 'kernel.msgmax'"));
	error_clear(&err);
	assert_int_equal(cell_sysctl_add(&s, "linux.sysctl", "net.ipv4.tcp_fin_timeout", "30\n1", &err), -EINVAL);
	error_clear(&err);
	assert_int_equal(cell_sysctl_add(&s, "linux.sysctl", "net.ipv4.tcp_fin_timeout", "", &err), -EINVAL);
	error_clear(&err);
	s.ns[GATE_NS_NET].from = CELL_NS_HOST;
	assert_int_equal(cell_sysctl_add(&s, "linux.sysctl", "net.ipv4.tcp_fin_timeout", "30", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "hostNetwork"));
	error_clear(&err);
	assert_int_equal(cell_sysctl_add(&s, "linux.sysctl", "kernel.shm_rmid_forced", "1", &err), 0);
	s.ns[GATE_NS_IPC].from = CELL_NS_HOST;
	assert_int_equal(cell_sysctl_add(&s, "linux.sysctl", "kernel.shm_rmid_forced", "1", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "hostIPC"));
	error_clear(&err);
	assert_int_equal(s.n_sysctls, 2);
	cell_spec_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(kinds), cmocka_unit_test(adds) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
