/* SPDX-License-Identifier: Apache-2.0 */
/* test_policy.c - the seccomp profile format (parse, errors, print), the filter libseccomp
 * builds from it (run through a small classic-BPF interpreter, so that every rule, the
 * 32-bit architecture and the 64-bit argument tricks are checked without loading anything),
 * the 'unless' rules, --protect paths, the Landlock rights per ABI, and the answers of
 * policy_allows() (`warren policy`). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "policy/policy.h"

/* ---------- a classic BPF interpreter for seccomp programs ---------- */

struct prog {
	struct sock_filter *f;
	size_t n;
};

static uint32_t bpf_run(const struct prog *p, const struct seccomp_data *d)
{
	uint32_t A = 0, X = 0, M[BPF_MEMWORDS] = { 0 };
	for (size_t pc = 0; pc < p->n; pc++) {
		const struct sock_filter *i = &p->f[pc];
		uint32_t k = i->k;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
			switch (BPF_MODE(i->code)) {
			case BPF_ABS:
				assert_true(BPF_SIZE(i->code) == BPF_W && k + 4 <= sizeof *d);
				memcpy(&A, (const char *)d + k, 4);
				break;
			case BPF_IMM: A = k; break;
			case BPF_MEM: A = M[k]; break;
			case BPF_LEN: A = sizeof *d; break;
			default: fail_msg("unexpected BPF_LD mode %#x", i->code);
			}
			break;
		case BPF_LDX:
			switch (BPF_MODE(i->code)) {
			case BPF_IMM: X = k; break;
			case BPF_MEM: X = M[k]; break;
			case BPF_LEN: X = sizeof *d; break;
			default: fail_msg("unexpected BPF_LDX mode %#x", i->code);
			}
			break;
		case BPF_ST: M[k] = A; break;
		case BPF_STX: M[k] = X; break;
		case BPF_ALU: {
			uint32_t v = BPF_SRC(i->code) == BPF_X ? X : k;
			switch (BPF_OP(i->code)) {
			case BPF_ADD: A += v; break;
			case BPF_SUB: A -= v; break;
			case BPF_MUL: A *= v; break;
			case BPF_DIV: A = v ? A / v : 0; break;
			case BPF_MOD: A = v ? A % v : 0; break;
			case BPF_OR: A |= v; break;
			case BPF_AND: A &= v; break;
			case BPF_XOR: A ^= v; break;
			case BPF_LSH: A <<= v; break;
			case BPF_RSH: A >>= v; break;
			case BPF_NEG: A = -A; break;
			default: fail_msg("unexpected BPF_ALU op %#x", i->code);
			}
			break;
		}
		case BPF_JMP: {
			if (BPF_OP(i->code) == BPF_JA) {
				pc += k;
				break;
			}
			uint32_t v = BPF_SRC(i->code) == BPF_X ? X : k;
			bool c;
			switch (BPF_OP(i->code)) {
			case BPF_JEQ: c = A == v; break;
			case BPF_JGT: c = A > v; break;
			case BPF_JGE: c = A >= v; break;
			case BPF_JSET: c = (A & v) != 0; break;
			default: fail_msg("unexpected BPF_JMP op %#x", i->code); c = false;
			}
			pc += c ? i->jt : i->jf;
			break;
		}
		case BPF_RET: return BPF_RVAL(i->code) == BPF_A ? A : k;
		case BPF_MISC: if (BPF_MISCOP(i->code) == BPF_TAX) X = A; else A = X; break;
		default: fail_msg("unexpected BPF class %#x", i->code);
		}
	}
	fail_msg("the program ran off its end");
	return 0;
}

/* A profile's program, as policy_prepare() makes it for the job. */
static struct prog compile_prof(const struct seccomp_profile *prof)
{
	struct error err = { 0 };
	struct prog p = { 0 };
	unsigned short len = 0;
	if (seccomp_profile_bpf(prof, &p.f, &len, &err) < 0)
		fail_msg("compile: %s", err.msg);
	p.n = len;
	return p;
}

static struct prog compile(const char *text, bool nested)
{
	struct seccomp_profile prof;
	struct error err = { 0 };
	if (seccomp_profile_parse(&prof, text, "test", &err) < 0)
		fail_msg("parse: %s", err.msg);
	if (nested)
		seccomp_profile_allow_nested(&prof);
	struct prog p = compile_prof(&prof);
	seccomp_profile_free(&prof);
	return p;
}

#define ALLOW SECCOMP_RET_ALLOW
#define ERR(e) (SECCOMP_RET_ERRNO | (uint32_t)(e))

static uint32_t call(const struct prog *p, uint32_t arch, int nr, uint64_t a0, uint64_t a1)
{
	struct seccomp_data d = { .nr = nr, .arch = arch, .args = { a0, a1 } };
	return bpf_run(p, &d);
}

static uint32_t x64(const struct prog *p, int nr, uint64_t a0, uint64_t a1)
{
	return call(p, AUDIT_ARCH_X86_64, nr, a0, a1);
}

/* ---------- the default profile ---------- */

static void default_profile_parses(void **state)
{
	(void)state;
	struct seccomp_profile prof;
	struct error err = { 0 };
	assert_int_equal(seccomp_profile_parse(&prof, policy_default_seccomp, "default", &err), 0);
	assert_true(prof.default_allow);
	assert_true(prof.n >= 40);
	seccomp_profile_free(&prof);
}

static void default_filter_denies_what_it_says(void **state)
{
	(void)state;
	struct prog p = compile(policy_default_seccomp, false);
	static const int denied[] = {
		SYS_keyctl, SYS_add_key, SYS_request_key, SYS_bpf, SYS_perf_event_open, SYS_userfaultfd,
		SYS_kexec_load, SYS_kexec_file_load, SYS_init_module, SYS_finit_module, SYS_delete_module,
		SYS_reboot, SYS_swapon, SYS_swapoff, SYS_settimeofday, SYS_clock_settime, SYS_adjtimex,
		SYS_clock_adjtime, SYS_mount, SYS_umount2, SYS_pivot_root, SYS_fsopen, SYS_fsconfig, SYS_fsmount,
		SYS_fspick, SYS_move_mount, SYS_open_tree, SYS_mount_setattr, SYS_io_uring_setup,
	};
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
		if (x64(&p, denied[i], 0, 0) != ERR(EPERM))
			fail_msg("syscall %d is not denied with EPERM", denied[i]);
	static const int allowed[] = { SYS_read, SYS_write, SYS_openat, SYS_execve, SYS_getpid, SYS_ptrace,
				       SYS_landlock_create_ruleset, SYS_seccomp, SYS_chroot, SYS_setns };
	for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
		if (x64(&p, allowed[i], 0, 0) != ALLOW)
			fail_msg("syscall %d is not allowed", allowed[i]);
	free(p.f);
}

static void default_filter_arguments(void **state)
{
	(void)state;
	struct prog p = compile(policy_default_seccomp, false);
	/* terminals: TIOCSTI and TIOCLINUX, also with garbage in the upper 32 bits (the kernel
	 * reads an unsigned int) */
	assert_int_equal(x64(&p, SYS_ioctl, 0, 0x5412), ERR(EPERM));
	assert_int_equal(x64(&p, SYS_ioctl, 0, 0x5412 | (1ULL << 32)), ERR(EPERM));
	assert_int_equal(x64(&p, SYS_ioctl, 0, 0x541C), ERR(EPERM));
	assert_int_equal(x64(&p, SYS_ioctl, 0, 0x5401 /* TCGETS */), ALLOW);
	assert_int_equal(x64(&p, SYS_ioctl, 0, 0x5413 /* TIOCGWINSZ */), ALLOW);
	/* user namespaces: unshare and clone with CLONE_NEWUSER; clone3 -> ENOSYS */
	assert_int_equal(x64(&p, SYS_unshare, CLONE_NEWUSER, 0), ERR(EPERM));
	assert_int_equal(x64(&p, SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS, 0), ERR(EPERM));
	assert_int_equal(x64(&p, SYS_unshare, CLONE_NEWNS, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_clone, CLONE_NEWUSER | 17, 0), ERR(EPERM));
	assert_int_equal(x64(&p, SYS_clone, CLONE_VM | CLONE_THREAD | CLONE_SIGHAND, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_clone, 17, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_clone3, 0, 0), ERR(ENOSYS));
	/* personality: Linux, Linux32, UNAME26 and the query only */
	static const uint64_t ok[] = { 0, 8, 0x20000, 0x20008, 0xffffffff };
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (x64(&p, SYS_personality, ok[i], 0) != ALLOW)
			fail_msg("personality(%#llx) is refused", (unsigned long long)ok[i]);
	static const uint64_t bad[] = { 1, 7, 9, 0x40000 /* ADDR_NO_RANDOMIZE */, 0x400000 /* READ_IMPLIES_EXEC */,
					0x100000, 0x20009, 0xfffffffe, 0x7fffffff, 0x80000000, 0xffffffff00040000ULL };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (x64(&p, SYS_personality, bad[i], 0) != ERR(EPERM))
			fail_msg("personality(%#llx) is allowed", (unsigned long long)bad[i]);
	free(p.f);
}

static void other_architectures_refused(void **state)
{
	(void)state;
	struct prog p = compile(policy_default_seccomp, false);
	/* i386 (int 0x80 from a 64-bit process): getpid is 20, read 3 */
	assert_int_equal(call(&p, AUDIT_ARCH_I386, 20, 0, 0), ERR(EPERM));
	assert_int_equal(call(&p, AUDIT_ARCH_I386, 3, 0, 0), ERR(EPERM));
	/* x32: native arch, syscall number with bit 30 */
	assert_int_equal(x64(&p, 0x40000000 | SYS_getpid, 0, 0), ERR(EPERM));
	assert_int_equal(x64(&p, SYS_getpid, 0, 0), ALLOW);
	free(p.f);
}

static void allow_nested_lifts_user_namespaces_only(void **state)
{
	(void)state;
	struct prog p = compile(policy_default_seccomp, true);
	assert_int_equal(x64(&p, SYS_unshare, CLONE_NEWUSER, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_clone, CLONE_NEWUSER | 17, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_clone3, 0, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_mount, 0, 0), ERR(EPERM));
	assert_int_equal(x64(&p, SYS_keyctl, 0, 0), ERR(EPERM));
	free(p.f);
}

/* ---------- the format ---------- */

static void custom_profile(void **state)
{
	(void)state;
	struct prog p = compile("# mine\n"
				"default allow\n"
				"deny getpid EACCES   # a comment after a rule\n"
				"deny kill 38 if arg1==9 arg0>100\n"
				"deny mkdir if arg1&0x7==0x7\n"
				"deny bpf\n"
				"allow bpf            # drops the line above\n", false);
	assert_int_equal(x64(&p, SYS_getpid, 0, 0), ERR(EACCES));
	assert_int_equal(x64(&p, SYS_kill, 101, 9), ERR(ENOSYS));
	assert_int_equal(x64(&p, SYS_kill, 100, 9), ALLOW);
	assert_int_equal(x64(&p, SYS_kill, 101, 15), ALLOW);
	assert_int_equal(x64(&p, SYS_mkdir, 0, 0777), ERR(EPERM));
	assert_int_equal(x64(&p, SYS_mkdir, 0, 0750), ALLOW);
	assert_int_equal(x64(&p, SYS_bpf, 0, 0), ALLOW);
	free(p.f);

	/* an allow-list */
	p = compile("default deny ENOSYS\nallow read\nallow write\nallow exit_group\n"
		    "deny personality unless arg0 in 0,8\n", false);
	assert_int_equal(x64(&p, SYS_read, 0, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_getpid, 0, 0), ERR(ENOSYS));
	assert_int_equal(x64(&p, SYS_personality, 8, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_personality, 9, 0), ERR(EPERM));
	free(p.f);
}

static void expect_error(const char *text, const char *want)
{
	struct seccomp_profile prof;
	struct error err = { 0 };
	int r = seccomp_profile_parse(&prof, text, "p", &err);
	if (r == 0)
		fail_msg("'%s' parsed, expected an error with '%s'", text, want);
	if (!err.msg || !strstr(err.msg, want))
		fail_msg("error for '%s' is '%s', expected it to contain '%s'", text, err.msg ? err.msg : "(none)", want);
	error_clear(&err);
}

static void profile_errors(void **state)
{
	(void)state;
	expect_error("deny nosuchcall\n", "p, line 1: 'nosuchcall' is not a system call");
	expect_error("\n\ndeny getpid EWHAT\n", "p, line 3: 'EWHAT' is not an errno");
	expect_error("forbid getpid\n", "'forbid' is not a rule");
	expect_error("deny\n", "needs a system call name");
	expect_error("deny kill if arg0>1 arg0<5\n", "arg0 is compared twice");
	expect_error("deny kill if arg7==1\n", "is not a condition");
	expect_error("deny kill if arg0=1\n", "is not a condition");
	expect_error("deny kill if\n", "'if' needs a condition");
	expect_error("deny ioctl if arg1==NOSUCHCONST\n", "is not a condition");
	expect_error("deny getpid\ndefault deny\n", "line 2: 'default' must come before the rules");
	expect_error("default maybe\n", "expected 'default allow'");
	expect_error("allow getpid EPERM\n", "'allow' takes no errno");
	expect_error("deny personality unless arg0 0,8\n", "expected 'unless argN in");
	expect_error("deny personality unless arg0 in 0x100000000\n", "is not a 32-bit value");
	expect_error("deny getpid EPERM extra\n", "unexpected 'extra'");
}

static void print_round_trips(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct policy_opts o = { 0 };
	struct error err = { 0 };
	assert_int_equal(policy_seccomp_print(f, &o, &err), 0);
	fclose(f);
	assert_string_equal(buf, policy_default_seccomp);
	free(buf);

	/* --allow-nested comments out the three rules it lifts, nothing else */
	f = open_memstream(&buf, &len);
	o.allow_nested = true;
	assert_int_equal(policy_seccomp_print(f, &o, &err), 0);
	fclose(f);
	int lifted = 0;
	for (char *s = buf; (s = strstr(s, "# lifted by --allow-nested: deny ")); s++)
		lifted++;
	assert_int_equal(lifted, 3);
	assert_non_null(strstr(buf, "# lifted by --allow-nested: deny clone3 ENOSYS\n"));
	assert_non_null(strstr(buf, "\ndeny mount\n"));
	free(buf);
}

/* ---------- the 'unless' filter ---------- */

static void unless_filter_is_exact(void **state)
{
	(void)state;
	static const char *const texts[] = {
		"deny personality unless arg0 in 0,8,0x20000,0x20008,0xffffffff\n",
		"deny personality EACCES unless arg0 in 5\ndeny kill unless arg1 in 0,15,9\n",
		"default deny\nallow read\ndeny personality unless arg0 in 0,8\n",
	};
	for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
		struct seccomp_profile prof;
		struct error err = { 0 };
		assert_int_equal(seccomp_profile_parse(&prof, texts[t], "t", &err), 0);
		struct prog p = compile(texts[t], false);
		for (size_t i = 0; i < prof.n; i++) {
			const struct seccomp_rule *r = &prof.rules[i];
			if (!r->unless)
				continue;
			uint32_t x = 0x9e3779b9;
			for (int k = 0; k < 20000; k++) {
				x = x * 1664525u + 1013904223u;
				uint32_t y = (k & 1) ? x : r->set[k % r->nset] ^ (k % 3 ? 1u << (x % 32) : 0);
				bool in = false;
				for (unsigned j = 0; j < r->nset; j++)
					in |= r->set[j] == y;
				/* garbage in the upper half of the register does not matter */
				uint64_t v = (uint64_t)y | ((uint64_t)(x & 3) << 32);
				uint64_t a0 = r->unless_arg == 0 ? v : 0, a1 = r->unless_arg == 1 ? v : 0;
				uint32_t got = x64(&p, r->nr, a0, a1);
				if (got != (in ? ALLOW : ERR(r->errnum)))
					fail_msg("profile %zu, %s(%#llx): got %#x", t, r->name, (unsigned long long)v, got);
			}
		}
		/* another architecture: the prefix leaves it to libseccomp's part, which refuses it */
		assert_int_equal(call(&p, AUDIT_ARCH_I386, SYS_personality, 0x40000, 0), ERR(EPERM));
		seccomp_profile_free(&prof);
		free(p.f);
	}
	/* without 'unless' rules the program is libseccomp's alone, as long as its export */
	struct seccomp_profile prof;
	struct error err = { 0 };
	assert_int_equal(seccomp_profile_parse(&prof, "deny bpf\n", "t", &err), 0);
	struct prog p = compile_prof(&prof);
	void *ctx = seccomp_profile_compile(&prof, &err);
	int fd = memfd_create("bpf", MFD_CLOEXEC);
	assert_int_equal(seccomp_export_bpf(ctx, fd), 0);
	assert_int_equal((size_t)lseek(fd, 0, SEEK_END), p.n * sizeof(struct sock_filter));
	close(fd);
	seccomp_release(ctx);
	seccomp_profile_free(&prof);
	free(p.f);
}

/* Pairs of rules libseccomp 2.5 never returns from adding (found by fuzzing) are refused with
 * both lines; pairs that begin with == only, or differ from the start, still compile. */
static void profile_libseccomp_hang(void **state)
{
	(void)state;
	static const struct { const char *text, *want; } refused[] = {
		{ "deny mkdirat if arg2>5 arg0!=3\ndeny mkdirat if arg3>5 arg0!=3\n",
		  "line 2 (deny mkdirat): its comparisons begin as those of line 1" },
		{ "deny mkdirat if arg0==1 arg1<3 arg2>5\ndeny mkdirat EACCES if arg0==1 arg1<3 arg3==5\n",
		  "line 2 (deny mkdirat): its comparisons begin as those of line 1" },
		/* under a default deny, a deny with another errno is a rule of its own too */
		{ "default deny\ndeny mkdirat 26 if arg2>=0755 arg0!=3\ndeny mkdirat 13 if arg3>=0755 arg0!=3\n",
		  "line 3 (deny mkdirat): its comparisons begin as those of line 2" },
	};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		struct seccomp_profile prof;
		struct error err = { 0 };
		assert_int_equal(seccomp_profile_parse(&prof, refused[i].text, "t", &err), 0);
		struct sock_filter *f = NULL;
		unsigned short len;
		assert_true(seccomp_profile_bpf(&prof, &f, &len, &err) < 0);
		assert_non_null(strstr(err.msg, refused[i].want));
		error_clear(&err);
		seccomp_profile_free(&prof);
	}
	struct prog p = compile("deny mkdirat if arg0==3 arg2>5\ndeny mkdirat if arg0==3 arg3>5\n"
				"deny kill if arg0!=3 arg1>5\ndeny kill if arg0!=4 arg2>5\n", false);
	assert_int_equal(x64(&p, SYS_mkdirat, 3, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_kill, 4, 6), ERR(EPERM));
	free(p.f);
}

/* ---------- --protect ---------- */

static void protect_paths(void **state)
{
	(void)state;
	struct policy_opts o = { 0 };
	struct error err = { 0 };
	assert_int_equal(policy_add_protect(&o, ".envrc", &err), 0);
	assert_int_equal(policy_add_protect(&o, "./.vscode//tasks.json/", &err), 0);
	assert_string_equal(o.protect[0], ".envrc");
	assert_string_equal(o.protect[1], ".vscode/tasks.json");
	assert_null(o.protect[2]);
	assert_true(policy_add_protect(&o, "/etc/passwd", &err) < 0);
	assert_non_null(strstr(err.msg, "relative to the worktree"));
	assert_true(policy_add_protect(&o, "a/../../x", &err) < 0);
	assert_non_null(strstr(err.msg, "'..'"));
	assert_true(policy_add_protect(&o, "./", &err) < 0);
	assert_true(policy_add_protect(&o, "", &err) < 0);
	assert_int_equal(o.nprotect, 2);
	error_clear(&err);
	policy_opts_free(&o);
	assert_null(o.protect);
}

/* ---------- Landlock rights per ABI ---------- */

static void landlock_rights(void **state)
{
	(void)state;
	assert_int_equal(landlock_fs_handled(0), 0);
	uint64_t a1 = landlock_fs_handled(1), a2 = landlock_fs_handled(2), a3 = landlock_fs_handled(3);
	assert_int_equal(a1 & (1ULL << 13), 0);          /* REFER from ABI 2 */
	assert_int_equal(a2 & (1ULL << 13), 1ULL << 13);
	assert_int_equal(a2 & (1ULL << 14), 0);          /* TRUNCATE from ABI 3 */
	assert_int_equal(a3 & (1ULL << 14), 1ULL << 14);
	assert_int_equal(landlock_fs_handled(7), a3);     /* IOCTL_DEV left unhandled */
	assert_int_equal(landlock_net_handled(3, POLICY_NET_NONE), 0);
	assert_int_equal(landlock_net_handled(4, POLICY_NET_ANY), 0);
	assert_int_equal(landlock_net_handled(4, POLICY_NET_NONE), 3);
}

/* ---------- landlock_rules: the one list both drivers make their rulesets from ---------- */

struct seen_rules {
	char text[2048];
};

static int note_rule(void *arg, const char *path, uint64_t access)
{
	struct seen_rules *r = arg;
	size_t n = strlen(r->text);
	snprintf(r->text + n, sizeof r->text - n, "%s=%s;", path, access & (1ULL << 1) /* WRITE_FILE */ ? "w" : "r");
	return 0;
}

static void landlock_rule_list(void **state)
{
	(void)state;
	struct policy_opts po = { 0 };
	struct policy_mount mounts[] = { { .destination = "/opt/rw", .readonly = false },
				       { .destination = "/opt/ro", .readonly = true } };
	struct policy_ctx s = { .worktree = "/src/app", .home = "/home/warren", .mounts = mounts, .n_mounts = 2, .policy = &po };
	struct seen_rules r = { "" };
	assert_int_equal(landlock_rules(&s, note_rule, &r), 0);
	/* the host's /: read and execute only; the worktree, scratch and a --bind writable; a
	 * --ro-bind has no rule of its own (its read-only mount refuses) */
	assert_non_null(strstr(r.text, "/=r;/src/app=w;/tmp=w;/var/tmp=w;/home/warren=w;/dev/shm=w;"));
	assert_non_null(strstr(r.text, "/opt/rw=w;"));
	assert_null(strstr(r.text, "/opt/ro"));
	/* --work-ro, an image root (the overlay is the run's own), --work none */
	s.worktree_ro = true;
	s.rootfs = "/srv/image";
	r.text[0] = '\0';
	assert_int_equal(landlock_rules(&s, note_rule, &r), 0);
	assert_non_null(strstr(r.text, "/=w;/src/app=r;"));
	s.worktree = NULL;
	r.text[0] = '\0';
	assert_int_equal(landlock_rules(&s, note_rule, &r), 0);
	assert_null(strstr(r.text, "/src/app"));
}

/* ---------- the kernel files every cell masks ---------- */

static int note_mask(void *arg, const char *path, char kind)
{
	struct seen_rules *r = arg;
	size_t n = strlen(r->text);
	snprintf(r->text + n, sizeof r->text - n, "%c%s;", kind, path);
	return 0;
}

static void kernel_mask_list(void **state)
{
	(void)state;
	struct seen_rules r = { "" };
	assert_int_equal(policy_kernel_masks(note_mask, &r), 0);
	assert_non_null(strstr(r.text, "h/proc/kcore;"));
	assert_non_null(strstr(r.text, "r/proc/sysrq-trigger;"));
	assert_non_null(strstr(r.text, "o/proc/sys;"));
	assert_non_null(strstr(r.text, "h/sys/firmware;"));
}

/* ---------- policy_allows: what `warren policy` answers ---------- */

static void expect_access(const struct policy_ctx *s, const char *path, enum policy_access how, bool want,
			  const char *why_part)
{
	char *why = NULL;
	bool got = policy_allows(s, path, how, &why);
	if (got != want)
		fail_msg("%s (%d): got %s (%s), expected %s", path, how, got ? "allowed" : "denied", why ? why : "",
			 want ? "allowed" : "denied");
	if (why_part && (!why || !strstr(why, why_part)))
		fail_msg("%s: reason '%s' does not contain '%s'", path, why ? why : "(none)", why_part);
	free(why);
}

/* --bind, --ro-bind, --work-ro and --work none in the answers (issue 14). */
static void access_mounts(void **state)
{
	(void)state;
	struct policy_mount mounts[] = {
		{ .source = "/home/alice/.cache/pip", .destination = "/opt/cache", .readonly = true },
		{ .source = "/srv/out", .destination = "/opt/cache/out", .readonly = false },
	};
	struct policy_opts po = { 0 };
	struct policy_ctx s = { .id = "run_01TEST", .worktree = "/src/app", .home = "/home/warren", .cwd = "/src/app", .policy = &po,
				.rundir = "/var/lib/warren/runs/run_01TEST", .statedir = "/var/lib/warren",
				.mounts = mounts, .n_mounts = 2 };
	expect_access(&s, "/opt/cache/x", POLICY_WRITE, false,
		      "denied: /opt/cache/x is in the read-only bind of /home/alice/.cache/pip at /opt/cache — it may write under $TMPDIR");
	expect_access(&s, "/opt/cache", POLICY_READ, true, NULL);
	expect_access(&s, "/opt/cache/out/y", POLICY_WRITE, true, NULL);    /* the deeper, read-write bind */
	expect_access(&s, "/opt/cachex", POLICY_WRITE, false, "is outside");
	s.worktree_ro = true;
	expect_access(&s, "build/x", POLICY_WRITE, false,
		      "denied: /src/app/build/x is in the worktree, read-only in run_01TEST (--work-ro) — it may write under $TMPDIR=/tmp "
		      "(host: /var/lib/warren/runs/run_01TEST/tmp, reclaimed when the run ends) and its home /home/warren");
	s.worktree = NULL;   /* --work none: relative paths from the home (spec_cwd) */
	s.cwd = "/home/warren";
	s.worktree_ro = false;
	expect_access(&s, "x", POLICY_WRITE, true, NULL);
	expect_access(&s, "/src/app/x", POLICY_WRITE, false, "and its home /home/warren");
	s.cwd = "/usr";      /* --workdir /usr */
	expect_access(&s, "x", POLICY_WRITE, false, "denied: /usr/x is outside");
}

static void access_answers(void **state)
{
	(void)state;
	char *protect[] = { ".envrc", NULL };
	struct policy_opts po = { .protect = protect, .nprotect = 1 };
	struct policy_ctx s = { .id = "run_01TEST", .worktree = "/src/app", .home = "/home/warren",
				.rundir = "/var/lib/warren/runs/run_01TEST", .statedir = "/var/lib/warren", .policy = &po };
	expect_access(&s, "/tmp/x", POLICY_WRITE, true, NULL);
	expect_access(&s, "/var/tmp/a/b", POLICY_WRITE, true, NULL);
	expect_access(&s, "/home/warren/.cache/pip/x", POLICY_WRITE, true, NULL);
	expect_access(&s, "build/out.o", POLICY_WRITE, true, NULL);
	expect_access(&s, "/src/app/../app/x", POLICY_WRITE, true, NULL);
	expect_access(&s, "/dev/null", POLICY_WRITE, true, NULL);
	expect_access(&s, "/dev/shm/x", POLICY_WRITE, true, NULL);
	expect_access(&s, "/proc/self/oom_score_adj", POLICY_WRITE, true, NULL);
	expect_access(&s, "/opt/cache/x", POLICY_WRITE, false,
		      "denied: /opt/cache/x is outside run_01TEST — it may write under $TMPDIR=/tmp "
		      "(host: /var/lib/warren/runs/run_01TEST/tmp, reclaimed when the run ends), its home /home/warren "
		      "and the worktree /src/app");
	expect_access(&s, "/tmp2/y", POLICY_WRITE, false, "is outside run_01TEST");
	expect_access(&s, "/src/application/x", POLICY_WRITE, false, "is outside");   /* not beneath /src/app */
	expect_access(&s, "../x", POLICY_WRITE, false, "denied: /src/x is outside");
	expect_access(&s, "/src/app/.git/hooks/pre-commit", POLICY_WRITE, false, "protected: the host runs .git/hooks");
	expect_access(&s, ".git/config", POLICY_WRITE, false, "protected");
	expect_access(&s, ".git/objects/ab/cdef", POLICY_WRITE, true, NULL);
	expect_access(&s, ".envrc", POLICY_WRITE, false, "protected: the host runs .envrc");
	expect_access(&s, "/dev/sda", POLICY_WRITE, false, "/dev is read-only");
	expect_access(&s, "/proc/sys/kernel/hostname", POLICY_WRITE, false, "read-only kernel setting");
	expect_access(&s, "/sys/kernel/x", POLICY_WRITE, false, "/sys is read-only");
	expect_access(&s, "/var/lib/warren/runs/other/tmp/x", POLICY_READ, false, "state directory");
	expect_access(&s, "/etc/shadow", POLICY_READ, true, NULL);
	expect_access(&s, "/usr/bin/make", POLICY_EXEC, true, NULL);
	expect_access(&s, "/dev/shm/x", POLICY_EXEC, false, "noexec");
	/* --rootfs: the whole root is the run's, but not /etc/passwd, the kernel's, or protected paths */
	s.rootfs = "/srv/images/debian";
	expect_access(&s, "/opt/cache/x", POLICY_WRITE, true, NULL);
	expect_access(&s, "/etc/passwd", POLICY_WRITE, false, "outside");
	expect_access(&s, "/sys/x", POLICY_WRITE, false, "read-only");
	expect_access(&s, ".git/hooks/x", POLICY_WRITE, false, "protected");
}

/* The filters embedded at build time are what libseccomp makes of the default profile now,
 * with and without --allow-nested; a --seccomp FILE is compiled, not looked up. */
static void prebuilt_filters_are_the_compiled_ones(void **state)
{
	(void)state;
	for (int nested = 0; nested < 2; nested++) {
		struct policy_opts a = { .allow_nested = nested }, b = { .allow_nested = nested };
		struct error err = { 0 };
		assert_int_equal(policy_prepare(&a, &err), 0);
		assert_int_equal(policy_compile(&b, &err), 0);
		assert_int_equal(a.bpf_len, b.bpf_len);
		assert_memory_equal(a.bpf, b.bpf, a.bpf_len * sizeof *a.bpf);
		free(a.bpf);
		free(b.bpf);
	}
	struct policy_opts c = { .seccomp_text = (char *)"default allow\ndeny keyctl\n" };
	struct error err = { 0 };
	assert_int_equal(policy_prepare(&c, &err), 0);
	struct policy_opts d = { 0 };
	assert_int_equal(policy_prepare(&d, &err), 0);
	assert_true(c.bpf_len < d.bpf_len);
	free(c.bpf);
	free(d.bpf);
}

/* A JSON profile (--seccomp FILE.json; an OCI bundle's linux.seccomp) as runc reads it:
 * conditions on one argument are alternatives, on different arguments all must hold; docker's
 * includes/excludes for a job without capabilities on this architecture; "name" for "names". */
static void json_profile_as_runc(void **state)
{
	(void)state;
	struct policy_opts o = { .seccomp_file = (char *)"p.json", .seccomp_text = (char *)
		"  {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 1, \"syscalls\": ["
		"{\"names\": [\"personality\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": ["
		"{\"index\": 0, \"value\": 0, \"op\": \"SCMP_CMP_EQ\"}, {\"index\": 0, \"value\": 8, \"op\": \"SCMP_CMP_EQ\"},"
		"{\"index\": 0, \"value\": 4294967295, \"op\": \"SCMP_CMP_EQ\"}]},"
		"{\"names\": [\"socket\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 22, \"args\": ["
		"{\"index\": 0, \"value\": 16, \"op\": \"SCMP_CMP_EQ\"}, {\"index\": 1, \"value\": 3, \"op\": \"SCMP_CMP_EQ\"}]},"
		"{\"names\": [\"chroot\"], \"action\": \"SCMP_ACT_ALLOW\", \"includes\": {\"caps\": [\"CAP_SYS_CHROOT\"]}},"
		"{\"names\": [\"acct\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13, \"excludes\": {\"caps\": [\"CAP_SYS_PACCT\"]}},"
		"{\"names\": [\"getpid\"], \"action\": \"SCMP_ACT_ALLOW\", \"includes\": {\"arches\": [\"s390x\"]}},"
		"{\"names\": [\"gettid\"], \"action\": \"SCMP_ACT_ALLOW\", \"includes\": {\"arches\": [\"amd64\"]}},"
		"{\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_ALLOW\", \"excludes\": {\"arches\": [\"amd64\"]}},"
		"{\"name\": \"getuid\", \"action\": \"SCMP_ACT_ALLOW\"},"
		"{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 1}]}" };
	struct error err = { 0 };
	assert_true(seccomp_text_is_json(o.seccomp_text));
	assert_false(seccomp_text_is_json("default allow\n# {\n"));
	if (policy_prepare(&o, &err) < 0)
		fail_msg("%s", err.msg);
	struct prog p = { .f = o.bpf, .n = o.bpf_len };
	assert_int_equal(x64(&p, SYS_personality, 0, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_personality, 8, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_personality, 0xffffffff, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_personality, 0x1234, 0), ERR(1));
	assert_int_equal(x64(&p, SYS_socket, 16, 3), ERR(22));
	assert_int_equal(x64(&p, SYS_socket, 16, 0), ERR(1)); /* one condition of two: the default */
	assert_int_equal(x64(&p, SYS_chroot, 0, 0), ERR(1));  /* includes a capability: left out */
	assert_int_equal(x64(&p, SYS_acct, 0, 0), ERR(13));   /* excludes one: kept */
	assert_int_equal(x64(&p, SYS_getpid, 0, 0), ERR(1));
	assert_int_equal(x64(&p, SYS_gettid, 0, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_getppid, 0, 0), ERR(1));
	assert_int_equal(x64(&p, SYS_getuid, 0, 0), ALLOW);
	assert_int_equal(x64(&p, SYS_read, 0, 0), ERR(1));   /* the default's action: skipped, as runc */
	assert_int_equal(call(&p, AUDIT_ARCH_I386, 20, 0, 0), ERR(EPERM));
	free(o.bpf);
	static const char *const bad[] = {
		"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_NOPE\"}]}",
		"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\","
		" \"args\": [{\"index\": 7, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]}",
		"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": {}}",
		"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_LOG\"]}",
		"{\"syscalls\": []}",
		"{\"defaultAction\": ",
		/* libseccomp 2.5 would never return (profile_libseccomp_hang): refused instead */
		"{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"mkdirat\"], \"action\": \"SCMP_ACT_ERRNO\","
		" \"args\": [{\"index\": 2, \"value\": 5, \"op\": \"SCMP_CMP_GT\"}, {\"index\": 0, \"value\": 3, \"op\": \"SCMP_CMP_NE\"}]},"
		"{\"names\": [\"mkdirat\"], \"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 3, \"value\": 5, \"op\": \"SCMP_CMP_GT\"},"
		" {\"index\": 0, \"value\": 3, \"op\": \"SCMP_CMP_NE\"}]}]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct policy_opts q = { .seccomp_file = (char *)"bad.json", .seccomp_text = (char *)bad[i] };
		assert_true(policy_compile(&q, &err) < 0);
		assert_non_null(strstr(err.msg, "--seccomp bad.json: "));
		assert_null(strchr(err.msg, '\n'));
		error_clear(&err);
		assert_null(q.bpf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_profile_parses),
		cmocka_unit_test(prebuilt_filters_are_the_compiled_ones),
		cmocka_unit_test(default_filter_denies_what_it_says),
		cmocka_unit_test(default_filter_arguments),
		cmocka_unit_test(other_architectures_refused),
		cmocka_unit_test(allow_nested_lifts_user_namespaces_only),
		cmocka_unit_test(custom_profile),
		cmocka_unit_test(profile_errors),
		cmocka_unit_test(profile_libseccomp_hang),
		cmocka_unit_test(print_round_trips),
		cmocka_unit_test(json_profile_as_runc),
		cmocka_unit_test(unless_filter_is_exact),
		cmocka_unit_test(protect_paths),
		cmocka_unit_test(landlock_rights),
		cmocka_unit_test(landlock_rule_list),
		cmocka_unit_test(kernel_mask_list),
		cmocka_unit_test(access_answers),
		cmocka_unit_test(access_mounts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
