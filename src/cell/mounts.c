/* SPDX-License-Identifier: Apache-2.0 */
/* mounts.c - the decisions about a cell's extra mounts and names (see mounts.h): pure
 * functions of paths and words, unit-tested in tests/unit/test_mounts.c. */
#include "cell/mounts.h"

#include <ctype.h>
#include <string.h>

#include "cell/contract.h"
#include "util/fs.h"

bool path_is_system_tree(const char *path)
{
	/* neither these directories nor anything below the first group (the host would run what
	 * a job wrote there) */
	static const char *const below[] = { "/proc", "/sys", "/dev", "/etc", "/usr", "/boot", "/bin", "/sbin",
					     "/lib", "/lib32", "/lib64", "/libx32", "/run", "/var/run" };
	static const char *const exactly[] = { "/", "/tmp", "/var", "/var/tmp", "/var/lib", "/home", "/root", "/srv", "/opt", "/mnt", "/media" };
	for (size_t i = 0; i < sizeof exactly / sizeof exactly[0]; i++)
		if (!strcmp(path, exactly[i]))
			return true;
	for (size_t i = 0; i < sizeof below / sizeof below[0]; i++)
		if (path_beneath(path, below[i]))
			return true;
	return false;
}

bool rootfs_refused(const char *path)
{
	static const char *const below[] = { "/etc", "/root", "/boot", "/proc", "/sys", "/dev" };
	static const char *const exactly[] = { "/tmp", "/var", "/var/tmp", "/var/lib", "/home", "/srv", "/opt", "/mnt",
					       "/media", "/run", "/var/run" };
	for (size_t i = 0; i < sizeof exactly / sizeof exactly[0]; i++)
		if (!strcmp(path, exactly[i]))
			return true;
	for (size_t i = 0; i < sizeof below / sizeof below[0]; i++)
		if (path_beneath(path, below[i]))
			return true;
	return false;
}

const char *mount_source_refused(const char *path)
{
	static const char *const kernel[] = { "/proc", "/sys", "/dev" };
	for (size_t i = 0; i < sizeof kernel / sizeof kernel[0]; i++)
		if (path_beneath(path, kernel[i]))
			return "the host's kernel files (processes, devices) stay out of the cell";
	if (path_beneath(path, "/run") || path_beneath(path, "/var/run"))
		return "the host's services keep their sockets there, which a bind would let the cell connect to";
	if (!strcmp(path, "/") || !strcmp(path, "/tmp") || !strcmp(path, "/var/tmp"))
		return "it holds the host's sockets and other users' files (the cell sees the host's / read-only already)";
	return NULL;
}

void mount_arg_split(const char *arg, char **src, char **dst)
{
	const char *colon = strchr(arg, ':');
	*src = colon ? strndup(arg, (size_t)(colon - arg)) : xstrdup(arg);
	*dst = xstrdup(colon ? colon + 1 : arg);
}

char *mount_dst_normalise(const char *dst, const char **why)
{
	if (dst[0] != '/') {
		*why = "it must be an absolute path in the cell";
		return NULL;
	}
	char *out = xmalloc(strlen(dst) + 2);
	size_t o = 0;
	_cleanup_free_ char *copy = xstrdup(dst);
	for (char *save = NULL, *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			free(out);
			*why = "'..' is not allowed in it; name the directory itself";
			return NULL;
		}
		out[o++] = '/';
		memcpy(out + o, c, strlen(c));
		o += strlen(c);
	}
	if (!o)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}

/* A new name directly in /dev, none of the cell's own nodes, links and mount points there
 * (a pod's /dev/termination-log). */
static bool dev_new_name(const char *dst)
{
	static const char *const own[] = { "null", "zero", "full", "random", "urandom", "tty", "pts", "shm", "mqueue",
					   "ptmx", "fd", "stdin", "stdout", "stderr", "console", "core" };
	const char *name = path_beneath(dst, "/dev") && dst[4] == '/' ? dst + 5 : NULL;
	if (!name || !*name || strchr(name, '/'))
		return false;
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (!strcmp(name, own[i]))
			return false;
	return true;
}

const char *mount_dst_refused_for(const char *dst, const struct cell_spec *s, bool pod)
{
	if (!strcmp(dst, "/"))
		return "a mount over / would hide the whole cell (use --rootfs for another root)";
	/* a pod's volumes: an emptyDir at /tmp or /var/tmp is the pod's scratch instead of the
	 * cell's, its termination log a new file in /dev */
	if (pod && (path_beneath(dst, CELL_TMP_PATH) || path_beneath(dst, CELL_VARTMP_PATH) || dev_new_name(dst)))
		return NULL;
	static const char *const own[] = { "/proc", "/dev", "/sys", CELL_TMP_PATH, CELL_VARTMP_PATH };
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
		if (path_beneath(dst, own[i]) || path_beneath(own[i], dst))
			return pod ? "the cell's own /proc, /dev and /sys stay as they are (a pod's volume may go at /tmp, /var/tmp or a new file in /dev)"
				   : "the cell's own /proc, /dev, /sys and scratch (/tmp, /var/tmp) stay as they are";
	if (s->worktree && (path_beneath(dst, s->worktree) || path_beneath(s->worktree, dst)))
		return "it would hide the worktree or a part of it; bind elsewhere, or use --work";
	if (s->statedir && (path_beneath(dst, s->statedir) || path_beneath(s->statedir, dst)))
		return "it is warren's state directory, hidden in the cell";
	if (s->home && path_beneath(s->home, dst))
		return "it would hide the run's home; bind below it instead";
	return NULL;
}

const char *mount_dst_refused(const char *dst, const struct cell_spec *s)
{
	return mount_dst_refused_for(dst, s, false);
}

bool hostname_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 63 || name[0] == '-' || name[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '-')
			return false;
	return true;
}
