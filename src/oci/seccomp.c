/* SPDX-License-Identifier: Apache-2.0 */
/* seccomp.c - an OCI bundle's linux.seccomp (the JSON of the runtime spec) compiled with
 * libseccomp into a second filter the job loads after warren's own (policy/policy.h): both
 * run, the stricter action wins, so a bundle's profile can only take calls away; and
 * process.capabilities as the capabilities root of the cell gives up. */
#include <ctype.h>
#include <errno.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>

#include "oci/internal.h"
#include "policy/policy.h"

static int action(json_t *sc, const char *name, json_t *errno_ret, uint32_t *act, struct error *err)
{
	int e = json_is_integer(errno_ret) ? (int)json_integer_value(errno_ret) : EPERM;
	if (!name)
		return error_set(err, 0, "linux.seccomp: an action is missing");
	if (!strcmp(name, "SCMP_ACT_ALLOW"))
		*act = SCMP_ACT_ALLOW;
	else if (!strcmp(name, "SCMP_ACT_ERRNO"))
		*act = SCMP_ACT_ERRNO((uint32_t)e);
	else if (!strcmp(name, "SCMP_ACT_KILL") || !strcmp(name, "SCMP_ACT_KILL_THREAD"))
		*act = SCMP_ACT_KILL_THREAD;
	else if (!strcmp(name, "SCMP_ACT_KILL_PROCESS"))
		*act = SCMP_ACT_KILL_PROCESS;
	else if (!strcmp(name, "SCMP_ACT_TRAP"))
		*act = SCMP_ACT_TRAP;
	else if (!strcmp(name, "SCMP_ACT_LOG"))
		*act = SCMP_ACT_LOG;
	else if (!strcmp(name, "SCMP_ACT_TRACE"))
		*act = SCMP_ACT_ERRNO((uint32_t)e); /* no tracer in a cell: the call fails */
	else
		return error_set(err, 0, "linux.seccomp: action %s is not supported by warren (no notify listener outside the cell)", name);
	(void)sc;
	return 0;
}

static int arg_cmp(json_t *a, struct scmp_arg_cmp *c, struct error *err)
{
	static const struct { const char *name; enum scmp_compare op; } OPS[] = {
		{ "SCMP_CMP_NE", SCMP_CMP_NE }, { "SCMP_CMP_LT", SCMP_CMP_LT }, { "SCMP_CMP_LE", SCMP_CMP_LE },
		{ "SCMP_CMP_EQ", SCMP_CMP_EQ }, { "SCMP_CMP_GE", SCMP_CMP_GE }, { "SCMP_CMP_GT", SCMP_CMP_GT },
		{ "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
	};
	const char *op = json_string_value(json_object_get(a, "op"));
	size_t k = 0;
	while (op && k < sizeof OPS / sizeof OPS[0] && strcmp(OPS[k].name, op))
		k++;
	if (!op || k == sizeof OPS / sizeof OPS[0])
		return error_set(err, 0, "linux.seccomp: argument operator '%s' is not one of the spec's", op ? op : "");
	*c = (struct scmp_arg_cmp){ .arg = (unsigned)json_integer_value(json_object_get(a, "index")), .op = OPS[k].op,
				    .datum_a = (scmp_datum_t)json_integer_value(json_object_get(a, "value")),
				    .datum_b = (scmp_datum_t)json_integer_value(json_object_get(a, "valueTwo")) };
	return c->arg > 5 ? error_set(err, 0, "linux.seccomp: argument index %u is not 0-5", c->arg) : 0;
}

static int add_rules(scmp_filter_ctx ctx, uint32_t def, json_t *rule, struct error *err)
{
	uint32_t act;
	if (action(rule, json_string_value(json_object_get(rule, "action")), json_object_get(rule, "errnoRet"), &act, err) < 0)
		return -EINVAL;
	if (act == def)
		return 0; /* libseccomp refuses a rule that is the default */
	json_t *args = json_object_get(rule, "args");
	struct scmp_arg_cmp cmp[6];
	size_t n = json_array_size(args), i;
	if (n > 6)
		return error_set(err, 0, "linux.seccomp: more than 6 argument conditions in one rule");
	json_t *a, *name;
	json_array_foreach(args, i, a) if (arg_cmp(a, &cmp[i], err) < 0) return -EINVAL;
	json_array_foreach(json_object_get(rule, "names"), i, name) {
		int nr = seccomp_syscall_resolve_name(json_string_value(name) ? json_string_value(name) : "");
		if (nr == __NR_SCMP_ERROR)
			continue; /* a call this kernel's architecture does not have, as runc skips it */
		int r = seccomp_rule_add_array(ctx, act, nr, (unsigned)n, cmp);
		if (r < 0 && r != -EEXIST)
			return error_set(err, -r, "linux.seccomp: cannot add the rule for %s", json_string_value(name));
	}
	return 0;
}

int oci_seccomp(json_t *sc, struct policy_opts *p, struct error *err)
{
	if (!json_is_object(sc))
		return 0;
	if (json_string_value(json_object_get(sc, "listenerPath")) || json_array_size(json_object_get(sc, "flags")))
		return error_set(err, 0, "linux.seccomp: listenerPath and flags are not supported by warren; leave them out");
	uint32_t def;
	if (action(sc, json_string_value(json_object_get(sc, "defaultAction")), json_object_get(sc, "defaultErrnoRet"), &def, err) < 0)
		return -EINVAL;
	scmp_filter_ctx ctx = seccomp_init(def);
	if (!ctx)
		return error_set(err, 0, "linux.seccomp: libseccomp cannot make a filter");
	/* the native architecture only: warren's own filter fails every other one */
	seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	size_t i;
	json_t *rule;
	int rc = 0;
	json_array_foreach(json_object_get(sc, "syscalls"), i, rule) if ((rc = add_rules(ctx, def, rule, err)) < 0) break;
	if (rc == 0)
		rc = seccomp_ctx_bpf(ctx, &p->extra_bpf, &p->extra_len, err);
	seccomp_release(ctx);
	return rc;
}

/* The capabilities of warren's root set that the bundle's bounding or effective set lacks. */
int oci_caps(json_t *caps, struct policy_opts *p, struct error *err)
{
	if (!json_is_object(caps))
		return 0;
	uint64_t keep = ~0ULL;
	const char *sets[] = { "bounding", "effective" };
	for (size_t s = 0; s < 2; s++) {
		json_t *arr = json_object_get(caps, sets[s]), *c;
		if (!json_is_array(arr))
			continue;
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
