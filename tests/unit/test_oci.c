/* SPDX-License-Identifier: Apache-2.0 */
/* test_oci.c - the OCI runtime face's decisions: container ids, signal names, the liveness of
 * a supervisor by pid and start time, a bundle's linux.seccomp (personality's three values in
 * one rule, as oci-runtime-tool writes them) and process.capabilities. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>

#include "oci/internal.h"
#include "policy/policy.h"

static void test_valid_id(void **state)
{
	(void)state;
	const char *good[] = { "a", "c1", "abc-DEF_1.2+3", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" };
	const char *bad[] = { "", ".", "..", "a/b", "../x", "a b", "a\nb", "é", "a:b", "$x" };
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		assert_true(oci_valid_id(good[i]));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_false(oci_valid_id(bad[i]));
	char *longid = malloc(1026);
	memset(longid, 'a', 1025);
	longid[1025] = 0;
	assert_false(oci_valid_id(longid));
	longid[1024] = 0;
	assert_true(oci_valid_id(longid));
	free(longid);
}

static void test_parse_signal(void **state)
{
	(void)state;
	static const struct { const char *in; int want; } T[] = {
		{ "TERM", SIGTERM }, { "SIGTERM", SIGTERM }, { "sigkill", SIGKILL }, { "KILL", SIGKILL }, { "9", 9 },
		{ "15", 15 }, { "HUP", SIGHUP }, { "SIGUSR1", SIGUSR1 }, { "0", -1 }, { "65", -1 }, { "-1", -1 },
		{ "NOPE", -1 }, { "SIG", -1 }, { "", -1 }, { "9x", -1 },
	};
	for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
		assert_int_equal(oci_parse_signal(T[i].in), T[i].want);
}

static void test_pid_alive(void **state)
{
	(void)state;
	unsigned long long st = oci_pid_start_time(getpid());
	assert_true(st > 0);
	assert_int_equal(oci_pid_start_time(getpid()), st);
	assert_true(oci_pid_alive(getpid(), st));
	assert_false(oci_pid_alive(getpid(), st + 1)); /* another process that got the number */
	assert_false(oci_pid_alive(0, st));
	assert_false(oci_pid_alive(-1, st));
}

static int seccomp_of(const char *json, struct policy_opts *p, struct error *err)
{
	json_t *j = json_loads(json, 0, NULL);
	assert_non_null(j);
	int r = oci_seccomp(j, p, err);
	json_decref(j);
	return r;
}

static void test_seccomp(void **state)
{
	(void)state;
	struct policy_opts p = { 0 };
	struct error err = { 0 };
	assert_int_equal(seccomp_of("{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"mkdir\", \"no_such_call\"], "
				    "\"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 1}, {\"names\": [\"personality\"], \"action\": "
				    "\"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}, "
				    "{\"index\": 0, \"value\": 8, \"op\": \"SCMP_CMP_EQ\"}, {\"index\": 0, \"value\": 4294967295, "
				    "\"op\": \"SCMP_CMP_EQ\"}]}]}",
				    &p, &err), 0);
	assert_non_null(p.extra_bpf);
	assert_true(p.extra_len > 4);
	policy_opts_free(&p);
	static const char *const refused[] = {
		"{\"defaultAction\": \"SCMP_ACT_NOTIFY\"}",
		"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerPath\": \"/run/x.sock\"}",
		"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_WHAT\"}]}]}",
		"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 6, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
		"{}",
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		struct policy_opts q = { 0 };
		assert_true(seccomp_of(refused[i], &q, &err) < 0);
		assert_non_null(strstr(err.msg, "linux.seccomp"));
		error_clear(&err);
		assert_null(q.extra_bpf);
		policy_opts_free(&q);
	}
}

static void test_caps(void **state)
{
	(void)state;
	struct policy_opts p = { 0 };
	struct error err = { 0 };
	json_t *c = json_loads("{\"bounding\": [\"CAP_KILL\", \"CAP_SETUID\", \"CAP_SYS_ADMIN\"], "
			       "\"effective\": [\"CAP_KILL\", \"CAP_SETUID\", \"CAP_CHOWN\"]}", 0, NULL);
	assert_int_equal(oci_caps(c, &p, &err), 0);
	json_decref(c);
	for (size_t i = 0; i < policy_root_caps_n; i++) {
		int cap = policy_root_caps[i];
		bool kept = cap == CAP_KILL || cap == CAP_SETUID;
		assert_int_equal(!(p.caps_drop & (1ULL << cap)), kept);
	}
	/* no capabilities object: warren's set as it is */
	struct policy_opts q = { 0 };
	assert_int_equal(oci_caps(NULL, &q, &err), 0);
	assert_int_equal(q.caps_drop, 0);
	/* a set left out is empty, as runc reads it: {} (containerd's CRI for drop ALL, its empty
	 * lists omitted) and a bounding set alone keep nothing */
	const char *none[] = { "{}", "{\"bounding\": [\"CAP_KILL\"]}", "{\"effective\": [\"CAP_KILL\"], \"bounding\": null}" };
	for (size_t k = 0; k < sizeof none / sizeof none[0]; k++) {
		struct policy_opts r = { 0 };
		json_t *j = json_loads(none[k], 0, NULL);
		assert_int_equal(oci_caps(j, &r, &err), 0);
		json_decref(j);
		for (size_t i = 0; i < policy_root_caps_n; i++)
			assert_true(r.caps_drop & (1ULL << policy_root_caps[i]));
	}
	/* a set that is not a list: one line naming it */
	json_t *bad = json_loads("{\"bounding\": \"CAP_KILL\"}", 0, NULL);
	struct policy_opts b = { 0 };
	assert_int_equal(oci_caps(bad, &b, &err) < 0, 1);
	assert_non_null(strstr(err.msg, "process.capabilities.bounding"));
	error_clear(&err);
	json_decref(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_id),
		cmocka_unit_test(test_parse_signal),
		cmocka_unit_test(test_pid_alive),
		cmocka_unit_test(test_seccomp),
		cmocka_unit_test(test_caps),
	};
	return cmocka_run_group_tests_name("oci", tests, NULL, NULL);
}
