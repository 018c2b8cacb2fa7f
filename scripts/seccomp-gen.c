/* SPDX-License-Identifier: Apache-2.0 */
/* seccomp-gen.c - run by the build: compile warren's default seccomp profile (as it is, and
 * with --allow-nested) with libseccomp and print the two programs as C (policy_prebuilt_filters,
 * build/gen/seccomp_prebuilt.c), so that a run loads them instead of compiling them again.
 * tests/unit/test_policy.c checks that they are what libseccomp makes of the profile now. */
#include <linux/filter.h>
#include <stdio.h>
#include <stdlib.h>

#include "policy/policy.h"

int main(void)
{
	printf("/* seccomp_prebuilt.c - made by scripts/seccomp-gen.c at build time: warren's default\n"
	       " * seccomp profile compiled by libseccomp, as it is and with --allow-nested. */\n"
	       "#include <linux/filter.h>\n\n#include \"policy/policy.h\"\n\n");
	for (int nested = 0; nested < 2; nested++) {
		struct policy_opts p = { .allow_nested = nested };
		struct error err = { 0 };
		if (policy_compile(&p, &err) < 0) {
			fprintf(stderr, "seccomp-gen: %s\n", err.msg);
			return 1;
		}
		printf("static const struct sock_filter filter%d[%u] = {\n", nested, (unsigned)p.bpf_len);
		for (unsigned i = 0; i < p.bpf_len; i++)
			printf("\t{ 0x%04x, %u, %u, 0x%08x },\n", p.bpf[i].code, p.bpf[i].jt, p.bpf[i].jf, p.bpf[i].k);
		printf("};\n\n");
		free(p.bpf);
	}
	printf("const struct policy_filter policy_prebuilt_filters[2] = {\n"
	       "\t{ filter0, sizeof filter0 / sizeof filter0[0] },\n"
	       "\t{ filter1, sizeof filter1 / sizeof filter1[0] },\n};\n");
	return 0;
}
