/* SPDX-License-Identifier: Apache-2.0 */
/* seccomp_json.c - a seccomp profile in JSON compiled with libseccomp as runc compiles it: the
 * OCI runtime spec's linux.seccomp (a bundle's second filter, oci/seccomp.c) and the profile
 * files of docker, podman and containerd (`warren run --seccomp FILE.json`, the cell's filter).
 *
 * As runc (libcontainer/seccomp, matchCall): a rule whose action is the default's is skipped; a
 * name this architecture lacks is skipped; the conditions of a rule are ANDed into one libseccomp
 * rule, unless two of them compare the same argument: then each condition is a rule of its own,
 * so they are alternatives (personality with arg0 == 0, == 8, == 0xffffffff allows the three).
 * The profile files' "includes"/"excludes" are decided as docker decides them, for the native
 * architecture, the running kernel and a job that holds none of the capabilities they name (a
 * cell's root holds only a few, and none of those the profiles name but CAP_SYS_CHROOT and
 * CAP_AUDIT_WRITE, for which the rule without the capability is the stricter). Calls of another
 * architecture fail with EPERM, as under warren's own profile. */
#include "policy/policy.h"

#include <errno.h>
#include <jansson.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

static int action(const char *where, const char *name, json_t *errno_ret, uint32_t *act, struct error *err)
{
	int e = json_is_integer(errno_ret) ? (int)json_integer_value(errno_ret) : EPERM;
	if (!name)
		return error_set(err, 0, "%s: an action is missing (SCMP_ACT_ALLOW, SCMP_ACT_ERRNO...)", where);
	if (e < 0 || e > 4095)
		return error_set(err, 0, "%s: errno %d for %s is not 0-4095", where, e, name);
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
	else if (!strcmp(name, "SCMP_ACT_NOTIFY"))
		return error_set(err, 0, "%s: action %s is not supported by warren (no notify listener outside the cell)",
				 where, name);
	else
		return error_set(err, 0, "%s: action '%s' is not one of the spec's (SCMP_ACT_ALLOW, SCMP_ACT_ERRNO, "
				 "SCMP_ACT_KILL...)", where, name);
	return 0;
}

static int arg_cmp(const char *where, json_t *a, struct scmp_arg_cmp *c, struct error *err)
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
		return error_set(err, 0, "%s: argument operator '%s' is not one of the spec's", where, op ? op : "");
	json_int_t index = json_integer_value(json_object_get(a, "index"));
	if (index < 0 || index > 5)
		return error_set(err, 0, "%s: argument index %lld is not 0-5", where, (long long)index);
	/* a value above 2^63 is read by jansson as a negative json_int_t: the same 64 bits */
	*c = (struct scmp_arg_cmp){ .arg = (unsigned)index, .op = OPS[k].op,
				    .datum_a = (scmp_datum_t)json_integer_value(json_object_get(a, "value")),
				    .datum_b = (scmp_datum_t)json_integer_value(json_object_get(a, "valueTwo")) };
	return 0;
}

/* The native architecture as docker's profiles name it (Go's GOARCH). */
static const char *native_arch(void)
{
	switch (seccomp_arch_native()) {
	case SCMP_ARCH_X86_64: return "amd64";
	case SCMP_ARCH_AARCH64: return "arm64";
	case SCMP_ARCH_PPC64LE: return "ppc64le";
	case SCMP_ARCH_S390X: return "s390x";
	case SCMP_ARCH_RISCV64: return "riscv64";
	default: return "";
	}
}

static bool in_list(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v) if (json_is_string(v) && !strcmp(json_string_value(v), s)) return true;
	return false;
}

/* Is the running kernel at least "MAJOR.MINOR"? */
static bool kernel_at_least(const char *want)
{
	struct utsname u;
	unsigned wa = 0, wb = 0, ha = 0, hb = 0;
	if (!want || sscanf(want, "%u.%u", &wa, &wb) < 1 || uname(&u) < 0 || sscanf(u.release, "%u.%u", &ha, &hb) < 1)
		return true;
	return ha > wa || (ha == wa && hb >= wb);
}

/* Does docker's rule apply (its "includes" and "excludes", see the top of the file)? */
static bool rule_applies(json_t *rule)
{
	json_t *inc = json_object_get(rule, "includes"), *exc = json_object_get(rule, "excludes");
	const char *arch = native_arch();
	if (json_array_size(json_object_get(inc, "caps")))
		return false; /* the job holds none of them */
	if (json_array_size(json_object_get(inc, "arches")) && !in_list(json_object_get(inc, "arches"), arch))
		return false;
	if (!kernel_at_least(json_string_value(json_object_get(inc, "minKernel"))))
		return false;
	if (in_list(json_object_get(exc, "arches"), arch))
		return false;
	return true;
}

/* The rules with comparisons added so far, each's comparisons in the order of the arguments:
 * libseccomp 2.5.4 never returns from adding a rule whose comparisons begin as those of an
 * earlier one for the same call, one of them other than == and &==, and then differ (see
 * never_returns_with in seccomp.c; a bundle is untrusted input, its create must not hang). */
struct added {
	int nr;
	unsigned n;
	struct scmp_arg_cmp c[6];
};
struct added_list {
	struct added *a;
	size_t n, cap;
};

static bool same_cmp(const struct scmp_arg_cmp *a, const struct scmp_arg_cmp *b)
{
	return a->arg == b->arg && a->op == b->op && a->datum_a == b->datum_a &&
	       (a->op != SCMP_CMP_MASKED_EQ || a->datum_b == b->datum_b);
}

/* Note the rule (nr, c[n], n <= 6, one comparison per argument); false if libseccomp would hang
 * on it after one noted before. */
static bool note_rule(struct added_list *l, int nr, const struct scmp_arg_cmp *c, unsigned n)
{
	struct added r = { .nr = nr };
	for (unsigned arg = 0; arg < 6; arg++)
		for (unsigned k = 0; k < n; k++)
			if (c[k].arg == arg)
				r.c[r.n++] = c[k];
	for (size_t i = 0; i < l->n; i++) {
		const struct added *e = &l->a[i];
		unsigned k = 0;
		bool inexact = false;
		for (; e->nr == nr && k < r.n && k < e->n && same_cmp(&r.c[k], &e->c[k]); k++)
			inexact |= r.c[k].op != SCMP_CMP_EQ && r.c[k].op != SCMP_CMP_MASKED_EQ;
		if (inexact && k < r.n && k < e->n)
			return false;
	}
	if (l->n == l->cap)
		l->a = xrealloc(l->a, (l->cap = l->cap ? 2 * l->cap : 32) * sizeof *l->a);
	l->a[l->n++] = r;
	return true;
}

/* One name of a rule: one libseccomp rule, or one per condition when two compare an argument. */
static int add_name(scmp_filter_ctx ctx, struct added_list *l, uint32_t act, int nr, const struct scmp_arg_cmp *c,
		    size_t n, const char *where, const char *name, struct error *err)
{
	unsigned count[6] = { 0 };
	bool split = false;
	for (size_t k = 0; k < n; k++)
		split |= ++count[c[k].arg] > 1;
	if (n && !split && !note_rule(l, nr, c, (unsigned)n))
		return error_set(err, 0, "%s: the comparisons of a rule for %s begin as those of an earlier rule for it, not "
				 "all of them SCMP_CMP_EQ or SCMP_CMP_MASKED_EQ, and then differ; libseccomp 2.5 hangs on "
				 "such a pair: make their first comparisons differ", where, name);
	int r = 0;
	if (!split)
		r = seccomp_rule_add_array(ctx, act, nr, (unsigned)n, c);
	for (size_t k = 0; split && k < n && (r == 0 || r == -EEXIST); k++)
		r = seccomp_rule_add_array(ctx, act, nr, 1, &c[k]);
	if (r < 0 && r != -EEXIST)
		return error_set(err, -r, "%s: libseccomp refused the rule for %s (one that contradicts an earlier one?)",
				 where, name);
	return 0;
}

static int add_rule(scmp_filter_ctx ctx, struct added_list *l, uint32_t def, json_t *rule, size_t at, const char *where,
		    struct error *err)
{
	uint32_t act;
	if (action(where, json_string_value(json_object_get(rule, "action")), json_object_get(rule, "errnoRet"), &act, err) < 0)
		return -EINVAL;
	if (act == def || !rule_applies(rule))
		return 0; /* libseccomp refuses a rule that is the default */
	json_t *args = json_object_get(rule, "args"), *a, *name;
	size_t n = json_array_size(args), i;
	if (n > 64)
		return error_set(err, 0, "%s: syscalls[%zu] has %zu argument conditions; give at most 64", where, at, n);
	struct scmp_arg_cmp cmp[64];
	json_array_foreach(args, i, a) if (arg_cmp(where, a, &cmp[i], err) < 0) return -EINVAL;
	json_t *names = json_object_get(rule, "names");
	if (!names && json_is_string(json_object_get(rule, "name")))
		names = json_pack("[O]", json_object_get(rule, "name")); /* the older "name" of docker's files */
	else
		json_incref(names);
	int rc = 0;
	json_array_foreach(names, i, name) {
		const char *s = json_string_value(name);
		int nr = seccomp_syscall_resolve_name(s ? s : "");
		if (nr == __NR_SCMP_ERROR)
			continue; /* a call this kernel's architecture does not have, as runc skips it */
		if ((rc = add_name(ctx, l, act, nr, cmp, n, where, s, err)) < 0)
			break;
	}
	json_decref(names);
	return rc;
}

int seccomp_json_bpf(struct json_t *prof, const char *where, struct sock_filter **out, unsigned short *len,
		     struct error *err)
{
	if (!json_is_object(prof))
		return error_set(err, 0, "%s: not a JSON object", where);
	if (json_string_value(json_object_get(prof, "listenerPath")) || json_array_size(json_object_get(prof, "flags")))
		return error_set(err, 0, "%s: listenerPath and flags are not supported by warren; leave them out", where);
	uint32_t def;
	if (action(where, json_string_value(json_object_get(prof, "defaultAction")), json_object_get(prof, "defaultErrnoRet"),
		   &def, err) < 0)
		return -EINVAL;
	json_t *calls = json_object_get(prof, "syscalls");
	if (calls && !json_is_array(calls))
		return error_set(err, 0, "%s: syscalls is not a list", where);
	scmp_filter_ctx ctx = seccomp_init(def);
	if (!ctx)
		return error_set(err, 0, "%s: libseccomp cannot make a filter", where);
	/* the native architecture only: every other one's calls fail with EPERM */
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (rc < 0) {
		seccomp_release(ctx);
		return error_set(err, -rc, "%s: cannot set up the seccomp filter (libseccomp)", where);
	}
	seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (json_array_size(calls) > 32)
		seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2); /* a binary tree, as runc past 32 rules */
	size_t i;
	json_t *rule;
	struct added_list added = { 0 };
	json_array_foreach(calls, i, rule) if ((rc = add_rule(ctx, &added, def, rule, i, where, err)) < 0) break;
	free(added.a);
	if (rc == 0 && seccomp_ctx_bpf(ctx, out, len, err) < 0) {
		error_prefix(err, "%s", where);
		rc = -EINVAL;
	}
	seccomp_release(ctx);
	return rc;
}
