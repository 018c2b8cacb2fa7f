/* SPDX-License-Identifier: Apache-2.0 */
/* delegate.c - the cgroup v2 subtree delegated to a rootless caller (delegate.h): the pure
 * choice of the delegate and of the controllers a run may use below it, the line refusing a
 * limit where there is none, and the facts read for them (/proc/self/cgroup, the owner and
 * the rights of each group above the caller's, found once a process). */
#include "cgroup/delegate.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "util/fs.h"

#define CG_ROOT "/sys/fs/cgroup"

enum cgroup_deleg cgroup_deleg_decide(const struct cgroup_deleg_facts *f, size_t *depth)
{
	*depth = 0;
	if (!f->v2)
		return CGROUP_DELEG_NOT_V2;
	if (!f->self || !f->visible)
		return CGROUP_DELEG_NO_SELF;
	if (f->n == 0 || !f->owned[f->n])
		return CGROUP_DELEG_NOT_OWNED;
	size_t d = f->n;
	while (d > 1 && f->owned[d - 1])
		d--;
	*depth = d;
	return CGROUP_DELEG_OK;
}

/* Is word one of list's words (split by spaces or newlines)? */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *t = list; t && (t = strstr(t, word)); t += n)
		if ((t == list || t[-1] == ' ' || t[-1] == '\n') && (t[n] == ' ' || t[n] == '\n' || t[n] == '\0'))
			return true;
	return false;
}

enum cgroup_deleg cgroup_deleg_usable(const char *ctrl, const char *controllers, const char *subtree, bool has_procs)
{
	if (!has_word(controllers, ctrl))
		return CGROUP_DELEG_NO_CTRL;
	return has_word(subtree, ctrl) || !has_procs ? CGROUP_DELEG_OK : CGROUP_DELEG_BUSY;
}

#define REMEDY_SESSION "run warren in systemd's user session with delegation (systemd-run --user --scope -p Delegate=yes warren ...), or as root, or drop the limit"

char *cgroup_deleg_refusal(const char *limit, enum cgroup_deleg d, const char *self, const char *dir,
			   const char *ctrl, uid_t uid)
{
	const char *head = "needs a cgroup, and this rootless run has none here:";
	switch (d) {
	case CGROUP_DELEG_NOT_V2:
		return xasprintf("%s %s this host's cgroups are v1 or hybrid (" CG_ROOT " is no cgroup2 mount), where no cgroup is delegated to a user; "
				 "run warren as root, or drop the limit (on a cgroup v2 host systemd delegates one to the user's session)",
				 limit, head);
	case CGROUP_DELEG_NO_SELF:
		return xasprintf("%s %s the caller's cgroup v2 group (/proc/self/cgroup: %s) is not found below " CG_ROOT
				 " (another cgroup namespace?); %s",
				 limit, head, self ? self : "none", REMEDY_SESSION);
	case CGROUP_DELEG_NOT_OWNED:
		return xasprintf("%s %s the caller's cgroup %s is not delegated to it (uid %u does not own it, nor may write its cgroup.procs and cgroup.subtree_control); %s",
				 limit, head, self ? self : "/", (unsigned)uid, REMEDY_SESSION);
	case CGROUP_DELEG_NO_CTRL:
		return xasprintf("%s %s the cgroup delegated to the caller, %s, does not offer the '%s' controller (its cgroup.controllers); "
				 "have systemd delegate it (Delegate=memory pids cpu in user@.service: systemctl edit user@.service), or run warren as root, or drop the limit",
				 limit, head, dir ? dir : "(none)", ctrl);
	case CGROUP_DELEG_BUSY:
		return xasprintf("%s %s the cgroup delegated to the caller, %s, holds processes itself, and cgroup v2 enables no controller ('%s') below such a group; "
				 "start warren in a group below it (systemd-run --user --scope -p Delegate=yes warren ...), or as root, or drop the limit",
				 limit, head, dir ? dir : "(none)", ctrl);
	case CGROUP_DELEG_OK:
		break;
	}
	return xasprintf("%s needs a cgroup; the caller's delegated cgroup %s should give it", limit, dir ? dir : "(none)");
}

/* ---- the facts ---- */

/* The caller's v2 group: the path of /proc/self/cgroup's "0::" line (heap), or NULL. */
static char *self_group(void)
{
	_cleanup_free_ char *text = read_file("/proc/self/cgroup", NULL);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, "0::/", 4))
			return xasprintf("%.*s", (int)strcspn(l + 3, "\n"), l + 3);
	return NULL;
}

/* Is the group dir the caller's: its directory owned and writable (a group is made in it),
 * its cgroup.procs and cgroup.subtree_control writable, as systemd's Delegate=yes leaves them? */
static bool owned_group(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return false;
	_cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 && faccessat(fd, "", W_OK, AT_EACCESS | AT_EMPTY_PATH) == 0 &&
	       faccessat(fd, "cgroup.procs", W_OK, AT_EACCESS) == 0 &&
	       faccessat(fd, "cgroup.subtree_control", W_OK, AT_EACCESS) == 0;
}

const char *cgroup_delegate(enum cgroup_deleg *why, const char **self)
{
	static bool known;
	static enum cgroup_deleg d;
	static char *dir, *me;
	if (known)
		goto out;
	known = true;
	struct statfs fs;
	struct cgroup_deleg_facts f = { .v2 = statfs(CG_ROOT, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC };
	me = f.v2 ? self_group() : NULL;
	f.self = me;
	/* where each of its first i components ends in me (0: the root) */
	size_t len = me ? strlen(me) : 0;
	size_t *ends = xcalloc(len + 1, sizeof *ends);
	for (size_t i = 1; i <= len; i++)
		if ((i == len || me[i] == '/') && me[i - 1] != '/')
			ends[++f.n] = i;
	bool *owned = xcalloc(f.n + 1, sizeof *owned);
	for (size_t i = 0; i <= f.n; i++) {
		_cleanup_free_ char *p = xasprintf(CG_ROOT "%.*s", (int)ends[i], me ? me : "");
		owned[i] = owned_group(p);
		if (i == f.n)
			f.visible = me && access(p, F_OK) == 0;
	}
	f.owned = owned;
	size_t depth;
	d = cgroup_deleg_decide(&f, &depth);
	if (d == CGROUP_DELEG_OK)
		dir = xasprintf(CG_ROOT "%.*s", (int)ends[depth], me);
	free(owned);
	free(ends);
out:
	*why = d;
	*self = me;
	return dir;
}

enum cgroup_deleg cgroup_delegate_offers(const char *ctrl)
{
	enum cgroup_deleg why;
	const char *self, *dir = cgroup_delegate(&why, &self);
	if (!dir)
		return why;
	_cleanup_free_ char *cp = xasprintf("%s/cgroup.controllers", dir);
	_cleanup_free_ char *sp = xasprintf("%s/cgroup.subtree_control", dir);
	_cleanup_free_ char *pp = xasprintf("%s/cgroup.procs", dir);
	_cleanup_free_ char *ctrls = read_file(cp, NULL), *subtree = read_file(sp, NULL), *procs = read_file(pp, NULL);
	return cgroup_deleg_usable(ctrl, ctrls ? ctrls : "", subtree ? subtree : "", procs && *procs);
}
