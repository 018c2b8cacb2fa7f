/* SPDX-License-Identifier: Apache-2.0 */
/* seccomp.c - warren's seccomp profiles: the default profile, the simple text format they are
 * written in (parse, check, print), and their translation into a libseccomp filter.
 *
 * The format (docs/hardening.md), one rule a line, '#' starts a comment:
 *   default allow | default deny [ERRNO]
 *   deny NAME [ERRNO] [if COND...]          COND: argN==V argN!=V argN<V argN<=V argN>V
 *   allow NAME [if COND...]                       argN>=V argN&MASK==V
 *   deny NAME [ERRNO] unless argN in V,V... (compares the low 32 bits)
 * A value is a number (12, 0x5412) or a known constant (TIOCSTI, CLONE_NEWUSER...), and may be
 * combined with '|'. ERRNO is a name (EPERM) or a number; the default is EPERM. */
#include "policy/policy.h"

#include <ctype.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <errno.h>
#include <jansson.h>
#include <seccomp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/sys.h"

const char policy_default_seccomp[] =
	"# warren's default seccomp profile. Format: docs/hardening.md.\n"
	"# Denied calls fail with the errno shown (EPERM unless noted), they do not kill.\n"
	"# System calls of other architectures (32-bit x86, x32) always fail with EPERM.\n"
	"default allow\n"
	"\n"
	"# the kernel keyring\n"
	"deny keyctl\n"
	"deny add_key\n"
	"deny request_key\n"
	"\n"
	"# kernel programs, tracing and memory tricks\n"
	"deny bpf\n"
	"deny perf_event_open\n"
	"deny userfaultfd\n"
	"deny io_uring_setup\n"
	"deny io_uring_enter\n"
	"deny io_uring_register\n"
	"\n"
	"# the kernel itself: loading, replacing, rebooting, swap, accounting, raw I/O\n"
	"deny kexec_load\n"
	"deny kexec_file_load\n"
	"deny init_module\n"
	"deny finit_module\n"
	"deny delete_module\n"
	"deny reboot\n"
	"deny swapon\n"
	"deny swapoff\n"
	"deny acct\n"
	"deny iopl\n"
	"deny ioperm\n"
	"deny syslog\n"
	"deny quotactl\n"
	"deny open_by_handle_at\n"
	"deny lookup_dcookie\n"
	"deny uselib\n"
	"deny sysfs\n"
	"deny _sysctl\n"
	"deny ustat\n"
	"deny nfsservctl\n"
	"\n"
	"# the clocks\n"
	"deny settimeofday\n"
	"deny clock_settime\n"
	"deny adjtimex\n"
	"deny clock_adjtime\n"
	"\n"
	"# personality: only Linux, 32-bit Linux, the 2.6 uname and the query\n"
	"deny personality unless arg0 in PER_LINUX,PER_LINUX32,UNAME26,UNAME26|PER_LINUX32,0xffffffff\n"
	"\n"
	"# no keystrokes pushed into a terminal, no console tricks\n"
	"deny ioctl if arg1&0xffffffff==TIOCSTI\n"
	"deny ioctl if arg1&0xffffffff==TIOCLINUX\n"
	"\n"
	"# no new user namespace inside the cell (--allow-nested lifts these three rules);\n"
	"# clone3 passes its flags in memory, which seccomp cannot read: ENOSYS makes libc use clone\n"
	"deny unshare if arg0&CLONE_NEWUSER==CLONE_NEWUSER\n"
	"deny clone if arg0&CLONE_NEWUSER==CLONE_NEWUSER\n"
	"deny clone3 ENOSYS\n"
	"\n"
	"# nothing is mounted, unmounted or moved inside the cell\n"
	"deny mount\n"
	"deny umount2\n"
	"deny pivot_root\n"
	"deny fsopen\n"
	"deny fsconfig\n"
	"deny fsmount\n"
	"deny fspick\n"
	"deny move_mount\n"
	"deny open_tree\n"
	"deny mount_setattr\n"
	"\n"
	"# no set-user-id or set-group-id files: the worktree (and kept scratch) is on the host's\n"
	"# disk, where such a file would give whoever runs it its owner's ids (the worktree's owner\n"
	"# is the run user inside). openat2 passes its mode in memory: ENOSYS makes libc use openat\n"
	"deny chmod if arg1&S_ISUID==S_ISUID\n"
	"deny chmod if arg1&S_ISGID==S_ISGID\n"
	"deny fchmod if arg1&S_ISUID==S_ISUID\n"
	"deny fchmod if arg1&S_ISGID==S_ISGID\n"
	"deny fchmodat if arg2&S_ISUID==S_ISUID\n"
	"deny fchmodat if arg2&S_ISGID==S_ISGID\n"
	"deny fchmodat2 if arg2&S_ISUID==S_ISUID\n"
	"deny fchmodat2 if arg2&S_ISGID==S_ISGID\n"
	"deny creat if arg1&S_ISUID==S_ISUID\n"
	"deny creat if arg1&S_ISGID==S_ISGID\n"
	"deny open if arg1&O_CREAT==O_CREAT arg2&S_ISUID==S_ISUID\n"
	"deny open if arg1&O_CREAT==O_CREAT arg2&S_ISGID==S_ISGID\n"
	"deny open if arg1&O_TMPFILE==O_TMPFILE arg2&S_ISUID==S_ISUID\n"
	"deny open if arg1&O_TMPFILE==O_TMPFILE arg2&S_ISGID==S_ISGID\n"
	"deny openat if arg2&O_CREAT==O_CREAT arg3&S_ISUID==S_ISUID\n"
	"deny openat if arg2&O_CREAT==O_CREAT arg3&S_ISGID==S_ISGID\n"
	"deny openat if arg2&O_TMPFILE==O_TMPFILE arg3&S_ISUID==S_ISUID\n"
	"deny openat if arg2&O_TMPFILE==O_TMPFILE arg3&S_ISGID==S_ISGID\n"
	"deny mknod if arg1&S_ISUID==S_ISUID\n"
	"deny mknod if arg1&S_ISGID==S_ISGID\n"
	"deny mknodat if arg2&S_ISUID==S_ISUID\n"
	"deny mknodat if arg2&S_ISGID==S_ISGID\n"
	"deny openat2 ENOSYS\n";

/* ---- names ---- */

static const struct { const char *name; uint64_t value; } CONSTS[] = {
	{ "CLONE_NEWUSER", CLONE_NEWUSER }, { "CLONE_NEWNS", CLONE_NEWNS }, { "CLONE_NEWPID", CLONE_NEWPID },
	{ "CLONE_NEWNET", CLONE_NEWNET }, { "CLONE_NEWUTS", CLONE_NEWUTS }, { "CLONE_NEWIPC", CLONE_NEWIPC },
	{ "CLONE_NEWCGROUP", CLONE_NEWCGROUP }, { "CLONE_NEWTIME", 0x80 },
	{ "TIOCSTI", 0x5412 }, { "TIOCLINUX", 0x541C },
	{ "PER_LINUX", 0 }, { "PER_LINUX32", 0x8 }, { "UNAME26", 0x20000 }, { "ADDR_NO_RANDOMIZE", 0x40000 },
	{ "READ_IMPLIES_EXEC", 0x400000 },
	{ "S_ISUID", 04000 }, { "S_ISGID", 02000 }, { "O_CREAT", 0100 }, { "O_TMPFILE", 020000000 },
};

static const struct { const char *name; int value; } ERRNOS[] = {
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "EIO", EIO }, { "EBADF", EBADF }, { "EAGAIN", EAGAIN },
	{ "ENOMEM", ENOMEM }, { "EACCES", EACCES }, { "EFAULT", EFAULT }, { "EBUSY", EBUSY },
	{ "EEXIST", EEXIST }, { "EXDEV", EXDEV }, { "ENODEV", ENODEV }, { "ENOTDIR", ENOTDIR },
	{ "EINVAL", EINVAL }, { "ENFILE", ENFILE }, { "EMFILE", EMFILE }, { "ENOTTY", ENOTTY },
	{ "ENOSPC", ENOSPC }, { "EROFS", EROFS }, { "ENOSYS", ENOSYS }, { "EOPNOTSUPP", EOPNOTSUPP },
	{ "ENOTSUP", ENOTSUP }, { "EAFNOSUPPORT", EAFNOSUPPORT }, { "ECONNREFUSED", ECONNREFUSED },
};

static int parse_number(const char *s, uint64_t *out)
{
	if (!*s || !(isdigit((unsigned char)*s)))
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* A value: numbers and known constants joined by '|'. */
static int parse_value(const char *s, uint64_t *out)
{
	_cleanup_free_ char *copy = xstrdup(s);
	uint64_t v = 0;
	char *save = NULL;
	int parts = 0;
	for (char *t = strtok_r(copy, "|", &save); t; t = strtok_r(NULL, "|", &save), parts++) {
		uint64_t x;
		if (parse_number(t, &x) == 0) {
			v |= x;
			continue;
		}
		size_t i;
		for (i = 0; i < sizeof CONSTS / sizeof CONSTS[0]; i++)
			if (!strcmp(t, CONSTS[i].name))
				break;
		if (i == sizeof CONSTS / sizeof CONSTS[0])
			return -1;
		v |= CONSTS[i].value;
	}
	if (!parts || s[strlen(s) - 1] == '|')
		return -1;
	*out = v;
	return 0;
}

static int parse_errno(const char *s, int *out)
{
	for (size_t i = 0; i < sizeof ERRNOS / sizeof ERRNOS[0]; i++)
		if (!strcmp(s, ERRNOS[i].name)) {
			*out = ERRNOS[i].value;
			return 0;
		}
	uint64_t v;
	if (parse_number(s, &v) < 0 || v == 0 || v > 4095)
		return -1;
	*out = (int)v;
	return 0;
}

/* "argN" at the start of s; returns the length consumed (4) or 0. */
static size_t parse_arg(const char *s, unsigned *arg)
{
	if (strncmp(s, "arg", 3) != 0 || s[3] < '0' || s[3] > '5')
		return 0;
	*arg = (unsigned)(s[3] - '0');
	return 4;
}

static int parse_cond(const char *tok, struct seccomp_cond *c)
{
	size_t n = parse_arg(tok, &c->arg);
	if (!n)
		return -1;
	const char *p = tok + n;
	if (*p == '&') {
		const char *eq = strstr(p, "==");
		if (!eq)
			return -1;
		_cleanup_free_ char *mask = strndup(p + 1, (size_t)(eq - p - 1));
		if (!mask || parse_value(mask, &c->mask) < 0 || parse_value(eq + 2, &c->value) < 0)
			return -1;
		c->op = CMP_MASKED_EQ;
		return 0;
	}
	static const struct { const char *op; enum seccomp_cmp cmp; } OPS[] = {
		{ "==", CMP_EQ }, { "!=", CMP_NE }, { "<=", CMP_LE }, { ">=", CMP_GE }, { "<", CMP_LT }, { ">", CMP_GT },
	};
	for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++) {
		size_t l = strlen(OPS[i].op);
		if (!strncmp(p, OPS[i].op, l)) {
			c->op = OPS[i].cmp;
			return parse_value(p + l, &c->value);
		}
	}
	return -1;
}

/* ---- parsing ---- */

static struct seccomp_rule *new_rule(struct seccomp_profile *prof)
{
	if (prof->n == prof->cap)
		prof->rules = xrealloc(prof->rules, (prof->cap = prof->cap ? prof->cap * 2 : 64) * sizeof *prof->rules);
	struct seccomp_rule *r = &prof->rules[prof->n++];
	memset(r, 0, sizeof *r);
	return r;
}

#define MAX_TOKENS 16

static int parse_line(struct seccomp_profile *prof, char **tok, int ntok, int line, bool *seen_rule,
		      struct error *err, const char *where)
{
	if (!strcmp(tok[0], "default")) {
		if (*seen_rule)
			return error_set(err, 0, "%s, line %d: 'default' must come before the rules", where, line);
		if (ntok == 2 && !strcmp(tok[1], "allow")) {
			prof->default_allow = true;
			return 0;
		}
		if ((ntok == 2 || ntok == 3) && !strcmp(tok[1], "deny")) {
			prof->default_allow = false;
			prof->default_errnum = EPERM;
			if (ntok == 3 && parse_errno(tok[2], &prof->default_errnum) < 0)
				return error_set(err, 0, "%s, line %d: '%s' is not an errno (EPERM, ENOSYS, 38...)", where, line, tok[2]);
			return 0;
		}
		return error_set(err, 0, "%s, line %d: expected 'default allow' or 'default deny [ERRNO]'", where, line);
	}
	bool allow = !strcmp(tok[0], "allow");
	if (!allow && strcmp(tok[0], "deny") != 0)
		return error_set(err, 0, "%s, line %d: '%s' is not a rule; a line is 'deny NAME [ERRNO] [if COND...]', "
				 "'allow NAME [if COND...]' or 'default allow|deny'", where, line, tok[0]);
	if (ntok < 2)
		return error_set(err, 0, "%s, line %d: '%s' needs a system call name", where, line, tok[0]);
	*seen_rule = true;
	int nr = seccomp_syscall_resolve_name(tok[1]);
	if (nr == __NR_SCMP_ERROR)
		return error_set(err, 0, "%s, line %d: '%s' is not a system call libseccomp knows", where, line, tok[1]);
	if (strlen(tok[1]) >= sizeof prof->rules[0].name)
		return error_set(err, 0, "%s, line %d: system call name too long", where, line);
	/* 'allow NAME' drops what earlier lines said about NAME */
	if (allow)
		for (size_t i = 0; i < prof->n; i++)
			if (!strcmp(prof->rules[i].name, tok[1]))
				prof->rules[i].dropped = true;
	struct seccomp_rule r = { .allow = allow, .errnum = EPERM, .nr = nr, .line = line };
	strcpy(r.name, tok[1]);
	int i = 2;
	if (i < ntok && strcmp(tok[i], "if") != 0 && strcmp(tok[i], "unless") != 0) {
		if (allow)
			return error_set(err, 0, "%s, line %d: 'allow' takes no errno", where, line);
		if (parse_errno(tok[i], &r.errnum) < 0)
			return error_set(err, 0, "%s, line %d: '%s' is not an errno (EPERM, ENOSYS, 38...)", where, line, tok[i]);
		i++;
	}
	if (i < ntok && !strcmp(tok[i], "if")) {
		if (++i == ntok)
			return error_set(err, 0, "%s, line %d: 'if' needs a condition such as arg0==1", where, line);
		for (; i < ntok; i++) {
			if (r.ncond == SECCOMP_MAX_COND)
				return error_set(err, 0, "%s, line %d: too many conditions", where, line);
			struct seccomp_cond *c = &r.cond[r.ncond];
			if (parse_cond(tok[i], c) < 0)
				return error_set(err, 0, "%s, line %d: '%s' is not a condition (argN==V, !=, <, <=, >, >=, argN&MASK==V)",
						 where, line, tok[i]);
			for (unsigned k = 0; k < r.ncond; k++)
				if (r.cond[k].arg == c->arg)
					return error_set(err, 0, "%s, line %d: arg%u is compared twice; libseccomp allows one comparison "
							 "per argument in a rule (write two rules)", where, line, c->arg);
			r.ncond++;
		}
	} else if (i < ntok && !strcmp(tok[i], "unless")) {
		if (allow)
			return error_set(err, 0, "%s, line %d: 'unless' goes with 'deny'", where, line);
		if (ntok != i + 4 || !parse_arg(tok[i + 1], &r.unless_arg) || tok[i + 1][4] || strcmp(tok[i + 2], "in") != 0)
			return error_set(err, 0, "%s, line %d: expected 'unless argN in V,V,...'", where, line);
		r.unless = true;
		_cleanup_free_ char *list = xstrdup(tok[i + 3]);
		char *save = NULL;
		for (char *v = strtok_r(list, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
			uint64_t x;
			if (parse_value(v, &x) < 0 || x > 0xffffffffULL)
				return error_set(err, 0, "%s, line %d: '%s' is not a 32-bit value", where, line, v);
			if (r.nset == SECCOMP_MAX_SET)
				return error_set(err, 0, "%s, line %d: at most %d values after 'in'", where, line, SECCOMP_MAX_SET);
			r.set[r.nset++] = (uint32_t)x;
		}
		if (!r.nset)
			return error_set(err, 0, "%s, line %d: 'in' needs values", where, line);
	} else if (i < ntok) {
		return error_set(err, 0, "%s, line %d: unexpected '%s' (expected 'if' or 'unless')", where, line, tok[i]);
	}
	*new_rule(prof) = r;
	return 0;
}

int seccomp_profile_parse(struct seccomp_profile *prof, const char *text, const char *name, struct error *err)
{
	memset(prof, 0, sizeof *prof);
	prof->default_allow = true;
	prof->default_errnum = EPERM;
	bool seen_rule = false;
	int line = 0;
	const char *p = text;
	while (*p) {
		line++;
		size_t len = strcspn(p, "\n");
		_cleanup_free_ char *l = strndup(p, len);
		p += len + (p[len] == '\n');
		if (!l)
			abort();
		char *hash = strchr(l, '#');
		if (hash)
			*hash = '\0';
		char *tok[MAX_TOKENS];
		int ntok = 0;
		bool too_many = false;
		char *save = NULL;
		for (char *t = strtok_r(l, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
			if (ntok == MAX_TOKENS)
				too_many = true;
			else
				tok[ntok++] = t;
		}
		if (!ntok)
			continue;
		if (too_many && (!strcmp(tok[0], "deny") || !strcmp(tok[0], "allow") || !strcmp(tok[0], "default"))) {
			seccomp_profile_free(prof);
			return error_set(err, 0, "%s, line %d: too many words", name, line);
		}
		if (parse_line(prof, tok, ntok, line, &seen_rule, err, name) < 0) {
			seccomp_profile_free(prof);
			return -EINVAL;
		}
	}
	return 0;
}

void seccomp_profile_free(struct seccomp_profile *prof)
{
	free(prof->rules);
	memset(prof, 0, sizeof *prof);
}

void seccomp_profile_allow_nested(struct seccomp_profile *prof)
{
	for (size_t i = 0; i < prof->n; i++) {
		struct seccomp_rule *r = &prof->rules[i];
		if (r->allow)
			continue;
		if (!strcmp(r->name, "clone3")) {
			r->lifted = true;
			continue;
		}
		if (strcmp(r->name, "clone") != 0 && strcmp(r->name, "unshare") != 0)
			continue;
		for (unsigned k = 0; k < r->ncond; k++)
			if (r->cond[k].arg == 0 && r->cond[k].op == CMP_MASKED_EQ && (r->cond[k].mask & CLONE_NEWUSER))
				r->lifted = true;
	}
}

/* ---- the filter ---- */

static enum scmp_compare scmp_op(enum seccomp_cmp op)
{
	switch (op) {
	case CMP_NE: return SCMP_CMP_NE;
	case CMP_LT: return SCMP_CMP_LT;
	case CMP_LE: return SCMP_CMP_LE;
	case CMP_EQ: return SCMP_CMP_EQ;
	case CMP_GE: return SCMP_CMP_GE;
	case CMP_GT: return SCMP_CMP_GT;
	case CMP_MASKED_EQ: return SCMP_CMP_MASKED_EQ;
	}
	return SCMP_CMP_EQ;
}

static int add_rule(scmp_filter_ctx ctx, const struct seccomp_profile *prof, const struct seccomp_rule *r,
		    struct error *err)
{
	uint32_t act = r->allow ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO((uint32_t)r->errnum);
	uint32_t def = prof->default_allow ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO((uint32_t)prof->default_errnum);
	int rc = 0;
	if (r->unless) {
		/* the refusal is the prefix's (unless_prefix); under a default deny libseccomp's
		 * program must let the listed values through */
		if (!prof->default_allow)
			for (size_t i = 0; i < r->nset && rc == 0; i++)
				rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, r->nr, 1,
						      SCMP_CMP(r->unless_arg, SCMP_CMP_MASKED_EQ, 0xffffffffULL, (uint64_t)r->set[i]));
	} else if (act != def) {
		struct scmp_arg_cmp c[SECCOMP_MAX_COND];
		for (unsigned k = 0; k < r->ncond; k++) {
			c[k] = (struct scmp_arg_cmp){ .arg = r->cond[k].arg, .op = scmp_op(r->cond[k].op) };
			if (r->cond[k].op == CMP_MASKED_EQ) {
				c[k].datum_a = r->cond[k].mask;
				c[k].datum_b = r->cond[k].value;
			} else {
				c[k].datum_a = r->cond[k].value;
			}
		}
		rc = seccomp_rule_add_array(ctx, act, r->nr, r->ncond, c);
	}
	if (rc < 0)
		return error_set(err, -rc, "seccomp profile, line %d (%s %s): libseccomp refused the rule (a rule that contradicts "
				 "an earlier one for the same call?)", r->line, r->allow ? "allow" : "deny", r->name);
	return 0;
}

/* Does libseccomp take r as a rule with comparisons (add_rule: an action not the default's)? */
static bool adds_comparisons(const struct seccomp_profile *prof, const struct seccomp_rule *r)
{
	bool default_action = r->allow ? prof->default_allow : !prof->default_allow && r->errnum == prof->default_errnum;
	return !r->lifted && !r->dropped && r->nr >= 0 && !r->unless && r->ncond && !default_action;
}

static bool same_cond(const struct seccomp_cond *a, const struct seccomp_cond *b)
{
	return a->arg == b->arg && a->op == b->op && a->value == b->value && (a->op != CMP_MASKED_EQ || a->mask == b->mask);
}

/* r's comparisons in the order of their arguments, as libseccomp chains them. */
static void conds_by_arg(const struct seccomp_rule *r, const struct seccomp_cond *out[SECCOMP_MAX_COND])
{
	unsigned n = 0;
	for (unsigned arg = 0; arg < 6; arg++)
		for (unsigned k = 0; k < r->ncond; k++)
			if (r->cond[k].arg == arg)
				out[n++] = &r->cond[k];
}

/* libseccomp 2.5.4 (Debian 12) never returns from adding a rule whose comparisons, in the
 * order of the arguments, begin as those of an earlier rule for the same call, one of these
 * common ones other than == and &==, and then differ (found by fuzzing: "deny mkdirat if
 * arg3>5 arg0!=3" after "deny mkdirat if arg2>5 arg0!=3"). The line of the earlier rule of
 * such a pair with rule i, or 0. Some pairs refused this way libseccomp would take. */
static int never_returns_with(const struct seccomp_profile *prof, size_t i)
{
	const struct seccomp_rule *r = &prof->rules[i];
	const struct seccomp_cond *a[SECCOMP_MAX_COND], *b[SECCOMP_MAX_COND];
	conds_by_arg(r, a);
	for (size_t j = 0; j < i; j++) {
		const struct seccomp_rule *e = &prof->rules[j];
		if (e->nr != r->nr || !adds_comparisons(prof, e))
			continue;
		conds_by_arg(e, b);
		unsigned k = 0;
		bool inexact = false;
		for (; k < r->ncond && k < e->ncond && same_cond(a[k], b[k]); k++)
			inexact |= a[k]->op != CMP_EQ && a[k]->op != CMP_MASKED_EQ;
		if (inexact && k < r->ncond && k < e->ncond)
			return e->line;
	}
	return 0;
}

void *seccomp_profile_compile(const struct seccomp_profile *prof, struct error *err)
{
	scmp_filter_ctx ctx = seccomp_init(prof->default_allow ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO((uint32_t)prof->default_errnum));
	if (!ctx) {
		error_set(err, ENOMEM, "cannot start a seccomp filter (libseccomp)");
		return NULL;
	}
	/* every call of another architecture (i386 through int 0x80, x32) fails with EPERM */
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (rc < 0) {
		seccomp_release(ctx);
		error_set(err, -rc, "cannot set up the seccomp filter (libseccomp)");
		return NULL;
	}
	/* a binary tree of the system calls: the cost per call does not grow with the profile */
	seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	for (size_t i = 0; i < prof->n; i++) {
		const struct seccomp_rule *r = &prof->rules[i];
		/* lifted, or a call this architecture does not have */
		if (r->lifted || r->dropped || r->nr < 0)
			continue;
		int other = adds_comparisons(prof, r) ? never_returns_with(prof, i) : 0;
		if (other) {
			seccomp_release(ctx);
			error_set(err, 0, "seccomp profile, line %d (%s %s): its comparisons begin as those of line %d, not all "
				  "of them == or &==, and then differ; libseccomp 2.5 hangs on such a pair: write them as one "
				  "rule, or make their first comparisons differ", r->line, r->allow ? "allow" : "deny", r->name, other);
			return NULL;
		}
		if (add_rule(ctx, prof, r, err) < 0) {
			seccomp_release(ctx);
			return NULL;
		}
	}
	return ctx;
}

/* The BPF program libseccomp made of ctx, in memory, after room for `room` instructions. */
static int export_bpf(scmp_filter_ctx ctx, size_t room, struct sock_filter **out, size_t *len, struct error *err)
{
	_cleanup_close_ int fd = memfd_create("warren-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "cannot export the seccomp filter (memfd_create)");
	int rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return error_set(err, -rc, "cannot export the seccomp filter (libseccomp)");
	off_t size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof **out)
		return error_set(err, 0, "the seccomp filter libseccomp made has an odd size (%lld bytes)", (long long)size);
	*out = xmalloc(room * sizeof **out + (size_t)size);
	if (pread(fd, *out + room, (size_t)size, 0) != size) {
		int e = errno;
		free(steal_pointer(out));
		return error_set(err, e, "cannot read the seccomp filter back");
	}
	*len = (size_t)size / sizeof **out;
	return 0;
}

int seccomp_ctx_bpf(void *ctx, struct sock_filter **out, unsigned short *len, struct error *err)
{
	size_t n = 0;
	if (export_bpf(ctx, 0, out, &n, err) < 0)
		return -EINVAL;
	if (n > BPF_MAXINSNS) {
		free(steal_pointer(out));
		return error_set(err, 0, "the seccomp filter has %zu instructions, more than the kernel's %d", n, BPF_MAXINSNS);
	}
	*len = (unsigned short)n;
	return 0;
}

/* "deny NAME unless argN in V,...": libseccomp takes one comparison per argument in a rule, and
 * covering every other 32-bit value with masked comparisons takes some eighty rules and a third
 * of a millisecond to compile. So these rules are a few hand-written instructions put before
 * libseccomp's program: on x86_64, for the call NAME, the low 32 bits of argN (what the kernel
 * reads of an int argument) are compared with each value; none equal: the errno; else, and for
 * every other call and architecture, libseccomp's program decides. One program, not two
 * filters: the kernel compiles each filter it is given, which costs more than running it. */
static size_t unless_prefix(const struct seccomp_profile *prof, struct sock_filter *f)
{
	size_t n = 0, end = 0;
	for (int pass = 0; pass < 2; pass++) {
		/* pass 0 counts (end = the prefix's length), pass 1 writes */
#define EMIT(c, jt, jf, k) do { \
		if (pass && f) \
			f[n] = (struct sock_filter)BPF_JUMP((c), (k), (jt), (jf)); \
		n++; \
	} while (0)
		n = 0;
		EMIT(BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, arch));
		EMIT(BPF_JMP | BPF_JEQ | BPF_K, 0, (uint8_t)(end - n - 1), AUDIT_ARCH_X86_64);
		for (size_t i = 0; i < prof->n; i++) {
			const struct seccomp_rule *r = &prof->rules[i];
			if (!r->unless || r->lifted || r->dropped || r->nr < 0)
				continue;
			EMIT(BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, nr));
			/* not NAME: on to the next block (past the arg load, the values, the errno) */
			EMIT(BPF_JMP | BPF_JEQ | BPF_K, 0, (uint8_t)(r->nset + 2), (uint32_t)r->nr);
			EMIT(BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)(offsetof(struct seccomp_data, args) + 8 * r->unless_arg));
			for (unsigned k = 0; k < r->nset; k++)  /* a listed value: libseccomp's program */
				EMIT(BPF_JMP | BPF_JEQ | BPF_K, (uint8_t)(end - n - 1), 0, r->set[k]);
			EMIT(BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | ((uint32_t)r->errnum & SECCOMP_RET_DATA));
		}
#undef EMIT
		if (n == 2)
			return 0;  /* no 'unless' rule */
		end = n;
	}
	return n;
}

int seccomp_profile_bpf(const struct seccomp_profile *prof, struct sock_filter **out, unsigned short *len,
			struct error *err)
{
	size_t room = unless_prefix(prof, NULL);
	if (room > 255)
		return error_set(err, 0, "the seccomp profile has too many 'unless' rules or values");
	scmp_filter_ctx ctx = seccomp_profile_compile(prof, err);
	if (!ctx)
		return -EINVAL;
	size_t n = 0;
	int rc = export_bpf(ctx, room, out, &n, err);
	seccomp_release(ctx);
	if (rc < 0)
		return rc;
	if (room + n > BPF_MAXINSNS) {
		free(steal_pointer(out));
		return error_set(err, 0, "the seccomp profile makes a filter of %zu instructions, more than the kernel's %d",
				 room + n, BPF_MAXINSNS);
	}
	unless_prefix(prof, *out);
	*len = (unsigned short)(room + n);
	return 0;
}

/* ---- the command line ---- */

static int load_profile(const struct policy_opts *p, struct seccomp_profile *prof, struct error *err)
{
	const char *text = p->seccomp_text ? p->seccomp_text : policy_default_seccomp;
	const char *name = p->seccomp_file ? p->seccomp_file : "the default seccomp profile";
	if (seccomp_profile_parse(prof, text, name, err) < 0)
		return -EINVAL;
	if (p->allow_nested)
		seccomp_profile_allow_nested(prof);
	return 0;
}

bool seccomp_text_is_json(const char *text)
{
	return text && text[strspn(text, " \t\r\n")] == '{';
}

/* A JSON profile (text): its program into *out, or an error naming where it came from. */
static int json_profile_bpf(const char *text, const char *where, struct sock_filter **out, unsigned short *len,
			    struct error *err)
{
	json_error_t je;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return error_set(err, 0, "%s: not valid JSON (line %d: %s)", where, je.line, je.text);
	int rc = seccomp_json_bpf(j, where, out, len, err);
	json_decref(j);
	return rc;
}

int policy_set_seccomp_file(struct policy_opts *p, const char *file, struct error *err)
{
	_cleanup_free_ char *text = read_file(file, NULL);
	if (!text)
		return error_set(err, errno, "--seccomp %s: cannot read the profile", file);
	_cleanup_free_ char *where = xasprintf("--seccomp %s", file);
	/* compile it too: libseccomp's own objections are known before the cell is made */
	struct sock_filter *f = NULL;
	unsigned short len;
	int rc;
	if (seccomp_text_is_json(text)) {
		rc = json_profile_bpf(text, where, &f, &len, err);
	} else {
		struct seccomp_profile prof;
		if (seccomp_profile_parse(&prof, text, where, err) < 0)
			return -EINVAL;
		rc = seccomp_profile_bpf(&prof, &f, &len, err);
		seccomp_profile_free(&prof);
		if (rc < 0)
			error_prefix(err, "--seccomp %s", file);
	}
	free(f);
	if (rc < 0)
		return -EINVAL;
	free(p->seccomp_file);
	free(p->seccomp_text);
	p->seccomp_file = xstrdup(file);
	p->seccomp_text = steal_pointer(&text);
	return 0;
}

int policy_seccomp_print(FILE *out, const struct policy_opts *p, struct error *err)
{
	if (seccomp_text_is_json(p->seccomp_text)) {
		fputs(p->seccomp_text, out); /* as it is: --allow-nested does not change it */
		return 0;
	}
	struct seccomp_profile prof;
	if (load_profile(p, &prof, err) < 0)
		return -EINVAL;
	const char *text = p->seccomp_text ? p->seccomp_text : policy_default_seccomp;
	int line = 0;
	size_t k = 0;
	for (const char *s = text; *s;) {
		line++;
		size_t len = strcspn(s, "\n");
		while (k < prof.n && prof.rules[k].line < line)
			k++;
		bool lifted = false;
		for (size_t j = k; j < prof.n && prof.rules[j].line == line; j++)
			lifted |= prof.rules[j].lifted;
		fprintf(out, "%s%.*s\n", lifted ? "# lifted by --allow-nested: " : "", (int)len, s);
		s += len + (s[len] == '\n');
	}
	seccomp_profile_free(&prof);
	return 0;
}

/* The default profile's filters (index 0: as it is, 1: with --allow-nested), compiled when
 * warren was built (scripts/seccomp-gen.c writes them into build/gen/seccomp_prebuilt.c):
 * compiling one with libseccomp cost every run 1.2 million instructions, 70% of what the
 * supervisor did itself. Weak: what is linked without them (the generator) compiles. */
extern const struct policy_filter policy_prebuilt_filters[2] __attribute__((weak));

int policy_prepare(struct policy_opts *p, struct error *err)
{
	if (p->seccomp_text || !policy_prebuilt_filters)
		return policy_compile(p, err);
	const struct policy_filter *f = &policy_prebuilt_filters[p->allow_nested ? 1 : 0];
	free(p->bpf);
	p->bpf = xmalloc(f->len * sizeof *p->bpf);
	memcpy(p->bpf, f->bpf, f->len * sizeof *p->bpf);
	p->bpf_len = f->len;
	return 0;
}

int policy_compile(struct policy_opts *p, struct error *err)
{
	free(steal_pointer(&p->bpf));
	p->bpf_len = 0;
	if (seccomp_text_is_json(p->seccomp_text)) {
		_cleanup_free_ char *where = xasprintf("--seccomp %s", p->seccomp_file ? p->seccomp_file : "");
		return json_profile_bpf(p->seccomp_text, where, &p->bpf, &p->bpf_len, err);
	}
	struct seccomp_profile prof;
	if (load_profile(p, &prof, err) < 0)
		return -EINVAL;
	int rc = seccomp_profile_bpf(&prof, &p->bpf, &p->bpf_len, err);
	seccomp_profile_free(&prof);
	return rc;
}

/* ---- in the job ---- */

int policy_seccomp(const struct policy_ctx *s, struct error *err)
{
	struct policy_opts q = { 0 };
	const struct policy_opts *p = s->policy;
	if (!p->bpf) {
		/* not prepared on the host: compile it here */
		q = *p;
		if (policy_prepare(&q, err) < 0)
			return -EINVAL;
		p = &q;
	}
	struct sock_fprog prog = { .len = p->bpf_len, .filter = p->bpf };
	int r = sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, &prog);
	int e = errno;
	free(q.bpf);
	if (r < 0)
		return error_set(err, e, "cannot load the seccomp filter");
	struct sock_fprog extra = { .len = s->policy->extra_len, .filter = s->policy->extra_bpf };
	if (extra.filter && sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, &extra) < 0)
		return error_set(err, errno, "cannot load the bundle's seccomp filter (linux.seccomp)");
	return 0;
}
