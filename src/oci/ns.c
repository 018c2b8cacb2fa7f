/* SPDX-License-Identifier: Apache-2.0 */
/* ns.c - a bundle's linux.namespaces as the cell's: each of network, ipc, uts and pid is the
 * cell's own (named without a path), a pod's joined by its path, or the host's (left out: a
 * pod's hostNetwork, hostIPC, hostPID), the last two judged by the one gate (cell/gate.h). The
 * user, mount and cgroup namespaces are always the cell's own.
 *
 * The CRI names the namespaces of a pod's sandbox as /proc/PID/ns/TYPE, PID being what the
 * runtime's --pid-file named for the sandbox: here warren's supervisor, whose namespaces are
 * the host's. Such a path, when PID is the live supervisor of a container of this runtime's
 * --root, stands for that container's cell: its init's namespace (/proc/INIT/ns/TYPE). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "oci/internal.h"
#include "util/conf.h"
#include "util/fs.h"
#include "util/proc.h"

static json_t *jget(json_t *o, const char *k) { return json_is_object(o) ? json_object_get(o, k) : NULL; }

/* The cell's init of the container of this runtime whose supervisor is sup (alive, the same
 * process the state names, init still its child), or 0. */
static pid_t cell_init_of(pid_t sup)
{
	struct error err = { 0 };
	_cleanup_free_ char *root = oci_root(false, &err);
	error_clear(&err);
	DIR *d = root ? opendir(root) : NULL;
	pid_t init = 0;
	for (struct dirent *e; d && !init && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		_cleanup_close_ int dfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct oci_state st = { 0 };
		if (dfd < 0 || oci_state_read(dfd, &st, &err) < 0) {
			error_clear(&err);
			continue;
		}
		if (st.pid == sup && st.init_pid > 0 && oci_pid_alive(st.pid, st.start_time) && proc_parent(st.init_pid) == sup)
			init = st.init_pid;
		oci_state_free(&st);
	}
	if (d)
		closedir(d);
	return init;
}

/* path, or for /proc/SUP/ns/NAME of a container's supervisor (above) /proc/INIT/ns/NAME
 * (heap); *sup, *init: that supervisor and init, or 0. */
static char *cell_ns_path(const char *path, pid_t *sup, pid_t *init)
{
	int p = 0, end = 0;
	char name[32];
	*sup = *init = 0;
	if (sscanf(path, "/proc/%d/ns/%31[a-z_]%n", &p, name, &end) == 2 && !path[end] && p > 0 &&
	    (*init = cell_init_of((pid_t)p)) > 0) {
		*sup = (pid_t)p;
		return xasprintf("/proc/%d/ns/%s", (int)*init, name);
	}
	return xstrdup(path);
}

static int kind_of(const char *type)
{
	for (int k = 0; type && k < GATE_NS_KINDS; k++)
		if (!strcmp(type, gate_ns_type_name(k)))
			return k;
	return -1;
}

/* The namespace of kind k: idx its entry (-1: left out), path its path (NULL: the cell's own
 * when idx >= 0). */
static int take_kind(enum gate_ns_kind k, long idx, const char *path, struct cell_spec *s, struct error *err)
{
	if (idx >= 0 && !path)
		return 0;   /* the cell's own */
	const char *v = conf_get(gate_ns_conf_key(k), NULL);
	const struct gate_ask a = { .face = GATE_BUNDLE, .uid = geteuid() };
	_cleanup_free_ char *opt = idx >= 0 ? xasprintf("linux.namespaces[%ld]", idx) : xstrdup("linux.namespaces");
	pid_t sup = 0, init = 0;
	_cleanup_free_ char *p = path ? cell_ns_path(path, &sup, &init) : NULL;
	int fd = -1;
	if (gate_check_ns(&a, k, p, path, v && !strcmp(v, "allow"), opt, &fd, err) < 0)
		return -EPERM;
	/* init's pid, reused since it was found (the container ended)? then it was another's */
	if (init && proc_parent(init) != sup) {
		closep(&fd);
		return error_set(err, 0, "%s (%s) path %s: the container it names ended meanwhile", opt, gate_ns_type_name(k), path);
	}
	s->ns[k] = (struct cell_ns){ fd >= 0 ? CELL_NS_JOIN : CELL_NS_HOST, fd };
	return 0;
}

int oci_take_namespaces(json_t *ns, bool kept, struct cell_spec *s, struct error *err)
{
	long idx[GATE_NS_KINDS] = { -1, -1, -1, -1 };
	const char *path[GATE_NS_KINDS] = { NULL };
	size_t i;
	json_t *n;
	json_array_foreach(ns, i, n) {
		const char *type = json_string_value(jget(n, "type")), *p = json_string_value(jget(n, "path"));
		int k = kind_of(type);
		if (k < 0 && type && strcmp(type, "user") && strcmp(type, "mount") && strcmp(type, "cgroup"))
			return error_set(err, 0, "linux.namespaces[%zu].type '%s': not a namespace warren knows (user, pid, network, ipc, uts, mount, cgroup)",
					 i, type);
		if (k < 0 && p && *p)
			return error_set(err, 0, "linux.namespaces[%zu] (%s) path %s: warren makes the cell's user, mount and cgroup namespaces itself; leave the path out",
					 i, type ? type : "?", p);
		if (k < 0)
			continue;
		if (idx[k] >= 0)
			return error_set(err, 0, "linux.namespaces[%zu]: a second %s namespace; give each type once", i, type);
		idx[k] = (long)i;
		path[k] = p && *p ? p : NULL;
	}
	/* an exec's copy of the config: the cell is there, its job's namespaces are entered */
	if (kept)
		return 0;
	for (int k = 0; k < GATE_NS_KINDS; k++)
		if (take_kind(k, idx[k], path[k], s, err) < 0)
			return -EPERM;
	return 0;
}
