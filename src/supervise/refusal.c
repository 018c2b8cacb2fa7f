/* SPDX-License-Identifier: Apache-2.0 */
/* refusal.c - the write watch's decision: was a call refused for the cell's rules? Pure
 * functions of the facts refused.c gathers (see refusal.h); the kernel's order of checks
 * (EEXIST, ENOENT, EXDEV and EISDIR before or instead of a refusal) is docs/hardening.md's. */
#include "supervise/refusal.h"

#include <fcntl.h>
#include <stdio.h> /* RENAME_NOREPLACE, RENAME_EXCHANGE */
#include <string.h>

#include "util/error.h"

/* O_TMPFILE names a directory to make an unnamed file in */
static bool is_tmpfile(const struct path_facts *f)
{
	return f->want == W_OPEN && (f->flags & O_TMPFILE) == O_TMPFILE;
}

bool refusal_creates(const struct path_facts *f)
{
	return f->want == W_OPEN && (f->flags & O_CREAT) && !is_tmpfile(f);
}

static bool is_excl(const struct path_facts *f)
{
	return refusal_creates(f) && (f->flags & O_EXCL);
}

bool refusal_follows(const struct path_facts *f)
{
	return f->is_link && !f->nofollow && !(f->want == W_OPEN && (f->flags & O_NOFOLLOW)) && !is_excl(f);
}

/* opens and attribute changes act on what the name leads to (a symlink followed, unless the
 * call says not to): it is looked at where it may differ from its directory (a symlink
 * followed, something mounted over it, a directory named by "." or "..") */
bool refusal_looks_at_name(const struct path_facts *f)
{
	return f->exists && (f->want == W_OPEN || f->want == W_CHANGE) && (refusal_follows(f) || f->own_mount || f->dots);
}

/* The Landlock ABI from which Landlock rules this call (0: never). */
static int landlock_from(const struct path_facts *f)
{
	if (f->want == W_OPEN && (f->flags & O_ACCMODE) == O_RDONLY && !refusal_creates(f) && !is_tmpfile(f))
		return REFUSAL_LANDLOCK_TRUNCATE;   /* O_RDONLY|O_TRUNC: only ..._FS_TRUNCATE rules it */
	return f->landlock;
}

/* An open of f: refused, from its facts and Landlock's answer. */
static bool open_refused(const struct path_facts *f, bool landlock)
{
	bool wr = (f->flags & O_ACCMODE) != O_RDONLY || (f->flags & O_TRUNC);
	/* a device, FIFO or socket opens for writing on a read-only mount */
	bool special = f->exists && !f->is_reg && !f->is_dir && !f->is_link;
	if (is_tmpfile(f))
		return f->exists && f->is_dir && (f->ro_name || landlock);
	if (f->exists)
		/* O_EXCL: EEXIST; a directory: EISDIR; a symlink not followed: ELOOP; "file/":
		 * ENOTDIR; a read-only open writes nothing */
		return !is_excl(f) && !f->is_dir && !f->is_link && !f->slash_end && wr && ((f->ro_name && !special) || landlock);
	/* "new/": EISDIR; procfs has no new names: ENOENT */
	return refusal_creates(f) && !f->slash_end && !f->procfs && (f->ro_dir || landlock);
}

static bool refused(const struct path_facts *f, bool landlock)
{
	switch (f->want) {
	case W_CREATE: return !f->exists && !f->procfs && (f->ro_dir || landlock);
	case W_REMOVE: return !f->dots && (f->ro_dir || (f->exists && (landlock || f->own_mount)));
	case W_TO: return !f->dots && (f->ro_dir || landlock || (f->exists && f->own_mount));
	case W_FROM:
	case W_CONNECT: return false;   /* connects: judged by refused.c on the socket itself */
	case W_CHANGE:
		/* truncate of anything but a regular file: EISDIR or EINVAL */
		return f->exists && !(landlock_from(f) == REFUSAL_LANDLOCK_TRUNCATE && !f->is_reg) && (f->ro_name || landlock);
	case W_OPEN: return open_refused(f, landlock);
	}
	return false;
}

static char *join(const char *dir, const char *name)
{
	return xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", name);
}

void refusal_decide(const struct path_facts *f, const struct policy_ctx *p, int landlock_abi, struct refusal *out)
{
	*out = (struct refusal){ .verdict = f->too_long ? REFUSAL_TOO_LONG : REFUSAL_NO };
	if (f->too_long || !f->found_dir || !f->dir || !f->name)
		return;
	out->path = f->resolved ? xstrdup(f->resolved) : f->dots ? xstrdup(f->dir) : join(f->dir, f->name);
	out->is_protected = policy_protected(p, out->path);
	int ll = landlock_from(f);
	if (ll && landlock_abi >= ll && !out->is_protected) {
		/* Landlock rules making and removing names on their directory, writing on the file */
		bool on_dir = f->want == W_CREATE || f->want == W_REMOVE || f->want == W_TO || (refusal_creates(f) && !f->exists);
		_cleanup_free_ char *why = NULL;
		out->landlock_denied = !policy_allows(p, on_dir ? f->dir : out->path, POLICY_WRITE, &why);
	}
	out->verdict = refused(f, out->landlock_denied) ? REFUSAL_YES : REFUSAL_NO;
}

/* A rename: both directories (ENOENT), the same mount (EXDEV), dots (EBUSY), then EROFS, then
 * the source (ENOENT), NOREPLACE/EXCHANGE, then Landlock, then a mount point on either side
 * (EBUSY). */
static void rename_hits(const struct path_facts *a, const struct path_facts *b, const struct refusal *va,
			const struct refusal *vb, bool exdev, bool ll_exdev, bool hit[2])
{
	bool go = a->found_dir && b->found_dir && !exdev && !a->dots && !b->dots;
	if (!go || a->ro_dir) {
		hit[0] = hit[1] = go;
		return;
	}
	go = a->exists && !((b->flags & RENAME_NOREPLACE) && b->exists) && !((b->flags & RENAME_EXCHANGE) && !b->exists) &&
	     !ll_exdev;
	hit[0] = go && (va->landlock_denied || a->own_mount);
	hit[1] = go && (vb->landlock_denied || (b->exists && b->own_mount));
}

void refusal_decide_pair(const struct path_facts *a, const struct path_facts *b, const struct refusal *va,
			 const struct refusal *vb, int landlock_abi, bool hit[2])
{
	bool both = a->found_dir && b->found_dir;
	bool exdev = both && a->mnt && b->mnt && a->mnt != b->mnt;
	/* Landlock ABI 1 cannot tell a move between directories: EXDEV */
	bool ll_exdev = landlock_abi == 1 && both && a->dir && b->dir && strcmp(a->dir, b->dir) != 0;
	if (a->want == W_REMOVE) {
		rename_hits(a, b, va, vb, exdev, ll_exdev, hit);
		return;
	}
	/* a link: the source (ENOENT), the new name (EEXIST, EROFS), the same mount (EXDEV), then
	 * Landlock */
	hit[0] = false;
	hit[1] = a->exists && b->found_dir && !b->exists && (b->ro_dir || (!exdev && !ll_exdev && vb->landlock_denied));
}
