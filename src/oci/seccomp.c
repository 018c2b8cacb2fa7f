/* SPDX-License-Identifier: Apache-2.0 */
/* seccomp.c - an OCI bundle's linux.seccomp (the JSON of the runtime spec) compiled as runc
 * compiles it (policy/seccomp_json.c) into a second filter the job loads after warren's own
 * (policy/policy.h): both run, the stricter action wins, so a bundle's profile can only take
 * calls away; and process.capabilities as the capabilities root of the cell gives up. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>

#include "oci/internal.h"
#include "policy/policy.h"

int oci_seccomp(json_t *sc, struct policy_opts *p, struct error *err)
{
	if (!json_is_object(sc))
		return 0;
	return seccomp_json_bpf(sc, "linux.seccomp", &p->extra_bpf, &p->extra_len, err);
}

/* The capabilities of warren's root set that the bundle's bounding or effective set lacks. A
 * set left out of the object is empty, as runc reads it: containerd's CRI writes a container
 * that dropped ALL as "capabilities": {} (its empty lists are omitted). */
int oci_caps(json_t *caps, struct policy_opts *p, struct error *err)
{
	if (!json_is_object(caps))
		return 0;
	uint64_t keep = ~0ULL;
	const char *sets[] = { "bounding", "effective" };
	for (size_t s = 0; s < 2; s++) {
		json_t *arr = json_object_get(caps, sets[s]), *c;
		if (arr && !json_is_array(arr) && !json_is_null(arr))
			return error_set(err, 0, "process.capabilities.%s: not a list of capability names", sets[s]);
		uint64_t m = 0;
		size_t i;
		json_array_foreach(arr, i, c) {
			char name[64];
			const char *v = json_string_value(c);
			if (!v || strlen(v) >= sizeof name)
				return error_set(err, 0, "process.capabilities.%s[%zu]: not a capability name", sets[s], i);
			for (size_t k = 0; k <= strlen(v); k++)
				name[k] = (char)tolower((unsigned char)v[k]);
			cap_value_t cv;
			if (cap_from_name(name, &cv) == 0 && cv < 64)
				m |= 1ULL << cv; /* names this libcap does not know: not in warren's set either */
		}
		keep &= m;
	}
	for (size_t i = 0; i < policy_root_caps_n; i++)
		if (!(keep & (1ULL << policy_root_caps[i])))
			p->caps_drop |= 1ULL << policy_root_caps[i];
	return 0;
}
