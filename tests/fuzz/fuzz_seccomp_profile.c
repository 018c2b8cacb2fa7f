/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_seccomp_profile.c - the seccomp profile text format (seccomp_profile_parse), and what
 * a profile it takes goes through next: --allow-nested, libseccomp's filter and the whole BPF
 * program, and --seccomp-print. */
#include <stdio.h>

#include "fuzz.h"
#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *text = fuzz_string(data, size);
	struct error err = { 0 };
	struct seccomp_profile prof;
	if (seccomp_profile_parse(&prof, text, "fuzz", &err) == 0) {
		seccomp_profile_allow_nested(&prof);
		struct sock_filter *f = NULL;
		unsigned short len;
		seccomp_profile_bpf(&prof, &f, &len, &err);
		free(f);
		seccomp_profile_free(&prof);
		struct policy_opts p = { .seccomp_text = text, .allow_nested = true };
		FILE *out = fopen("/dev/null", "w");
		policy_seccomp_print(out, &p, &err);
		fclose(out);
	}
	error_clear(&err);
	return 0;
}
