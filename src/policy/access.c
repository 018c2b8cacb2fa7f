/* SPDX-License-Identifier: Apache-2.0 */
/* access.c - may a run read, write or execute a path of its cell? The answer the kernel will
 * give (Landlock, the read-only mounts, the protected worktree paths), computed from the spec
 * alone, for `warren policy` and for the supervisor's explanation of a refused write: one
 * source of truth, kept beside the code that makes the rules (landlock.c, mask.c). Paths are
 * taken as the job writes them (relative ones from the worktree, its working directory) and
 * normalised lexically; symlinks are not followed. */
#include "policy/policy.h"

#include <string.h>

#include "cell/contract.h"
#include "util/fs.h"

/* path normalised: absolute, no "." or ".." or empty components, no trailing '/'. */
static char *normalise(const struct policy_ctx *s, const char *path)
{
	const char *cwd = s->cwd ? s->cwd : s->worktree ? s->worktree : s->home ? s->home : "/";
	_cleanup_free_ char *full = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", cwd, path);
	size_t n = strlen(full);
	char *out = xmalloc(n + 2);
	size_t o = 0;
	for (char *save = NULL, *c = strtok_r(full, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;  /* the '/' before it */
			continue;
		}
		out[o++] = '/';
		size_t l = strlen(c);
		memcpy(out + o, c, l);
		o += l;
	}
	if (!o)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

static bool is_protected(const struct policy_ctx *s, const char *path, const char **which)
{
	if (!s->worktree)
		return false;
	for (int pass = 0; pass < 2; pass++) {
		const char *const *list = pass ? (const char *const *)s->policy->protect : policy_default_protect;
		for (size_t i = 0; list && list[i]; i++) {
			_cleanup_free_ char *p = xasprintf("%s/%s", s->worktree, list[i]);
			if (path_beneath(path, p)) {
				*which = list[i];
				return true;
			}
		}
	}
	return false;
}

/* The kernel's read-only mounts and masks: what no run may write, --rootfs or not. */
static const char *kernel_readonly(const char *path)
{
	static const char *const dev_rw[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/shm" };
	if (path_beneath(path, "/dev")) {
		for (size_t i = 0; i < sizeof dev_rw / sizeof dev_rw[0]; i++)
			if (path_beneath(path, dev_rw[i]))
				return NULL;
		return "/dev is read-only in the cell";
	}
	if (path_beneath(path, "/sys"))
		return "/sys is read-only in the cell";
	static const char *const proc_ro[] = { "/proc/sys", "/proc/irq", "/proc/bus", "/proc/fs" };
	for (size_t i = 0; i < sizeof proc_ro / sizeof proc_ro[0]; i++)
		if (path_beneath(path, proc_ro[i]))
			return "it is a read-only kernel setting in the cell";
	return NULL;
}

static char *where_to_write(const struct policy_ctx *s)
{
	_cleanup_free_ char *where = s->scratch_tmpfs ? xstrdup("a tmpfs of the run's own")
						      : xasprintf("host: %s/" RUN_TMP_DIR, s->rundir ? s->rundir : "<rundir>");
	_cleanup_free_ char *work = s->worktree && !s->worktree_ro ? xasprintf(" and the worktree %s", s->worktree) : xstrdup("");
	return xasprintf("it may write under $" CELL_TMPDIR_ENV "=" CELL_TMP_PATH " (%s, reclaimed when the run ends)%s its home %s%s%s",
			 where, *work ? "," : " and", s->home ? s->home : "$HOME", work,
			 s->rootfs ? " (and, with --rootfs, anywhere in the image's root)" : "");
}

/* The extra mount (--bind, --ro-bind, --externals) path lies in: the deepest one, or NULL. */
static const struct policy_mount *mount_holding(const struct policy_ctx *s, const char *path)
{
	const struct policy_mount *best = NULL;
	for (size_t i = 0; i < s->n_mounts; i++)
		if (path_beneath(path, s->mounts[i].destination) &&
		    (!best || strlen(s->mounts[i].destination) >= strlen(best->destination)))
			best = &s->mounts[i];
	return best;
}

bool policy_protected(const struct policy_ctx *s, const char *path)
{
	_cleanup_free_ char *p = normalise(s, path);
	const char *which;
	return path_beneath(p, s->worktree) && is_protected(s, p, &which);
}

bool policy_allows(const struct policy_ctx *s, const char *path, enum policy_access how, char **why)
{
	_cleanup_free_ char *p = normalise(s, path);
	*why = NULL;
	if (s->statedir && path_beneath(p, s->statedir)) {
		*why = xasprintf("denied: %s is warren's state directory, hidden in the cell", p);
		return false;
	}
	if (how == POLICY_READ)
		return true;
	if (how == POLICY_EXEC) {
		static const char *const noexec[] = { "/proc", "/dev", "/run" };
		for (size_t i = 0; i < sizeof noexec / sizeof noexec[0]; i++)
			if (path_beneath(p, noexec[i])) {
				*why = xasprintf("denied: %s is on a noexec mount in the cell", p);
				return false;
			}
		return true;
	}
	const char *which;
	if (path_beneath(p, s->worktree) && is_protected(s, p, &which)) {
		*why = xasprintf("denied: %s is read-only in %s (protected: the host runs %s after the run); "
				 "it may write elsewhere in the worktree", p, s->id, which);
		return false;
	}
	const struct policy_mount *m = mount_holding(s, p);
	if (m || (s->worktree_ro && path_beneath(p, s->worktree))) {
		if (m && !m->readonly)
			return true;
		_cleanup_free_ char *w = where_to_write(s);
		if (m)
			*why = xasprintf("denied: %s is in the read-only bind of %s at %s — %s", p, m->source, m->destination, w);
		else
			*why = xasprintf("denied: %s is in the worktree, read-only in %s (--work-ro) — %s", p, s->id, w);
		return false;
	}
	const char *ro = kernel_readonly(p);
	if (ro) {
		_cleanup_free_ char *w = where_to_write(s);
		*why = xasprintf("denied: %s: %s — %s", p, ro, w);
		return false;
	}
	if (path_beneath(p, s->worktree) || path_beneath(p, CELL_TMP_PATH) || path_beneath(p, CELL_VARTMP_PATH) ||
	    (s->home && path_beneath(p, s->home)) || path_beneath(p, "/dev") || path_beneath(p, "/proc"))
		return true;
	/* --rootfs: the overlay root is the run's own; its passwd and group are read-only */
	if (s->rootfs && strcmp(p, "/etc/passwd") != 0 && strcmp(p, "/etc/group") != 0)
		return true;
	_cleanup_free_ char *w = where_to_write(s);
	*why = xasprintf("denied: %s is outside %s — %s", p, s->id, w);
	return false;
}
