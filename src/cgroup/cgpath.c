/* SPDX-License-Identifier: Apache-2.0 */
/* cgpath.c - an OCI bundle's linux.cgroupsPath, untrusted, as the path of the cell's own group
 * relative to each hierarchy's root: the cgroupfs form (/kubepods/burstable/pod<uid>/<id>) or
 * the systemd form (slice:prefix:name, mapped as runc's systemd driver maps it). Pure. */
#include "cgroup/cgroup.h"

#include <errno.h>
#include <string.h>

/* A name a component may have: what kubelet, containerd, podman and systemd give (letters,
 * digits, . _ - @ : + =), never . or .. nor a name starting with '.', at most 255 bytes. */
static bool good_component(const char *c, size_t n)
{
	if (n == 0 || n > 255 || c[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@:+=", c[i]))
			return false;
	return true;
}

/* slice ("kubepods-burstable-pod1.slice") as kubepods.slice/kubepods-burstable.slice/... ("" for
 * the root slice "-.slice"); NULL when it is not a slice's name. */
static char *expand_slice(const char *slice)
{
	size_t n = strlen(slice), sl = strlen(".slice");
	if (n <= sl || strcmp(slice + n - sl, ".slice") || strchr(slice, '/'))
		return NULL;
	if (n == sl + 1 && slice[0] == '-')
		return xstrdup("");
	char *path = xstrdup("");
	const char *name = slice, *end = slice + n - sl;
	for (const char *c = name; c < end;) {
		const char *dash = memchr(c, '-', (size_t)(end - c));
		const char *stop = dash ? dash : end;
		if (stop == c) {
			free(path);
			return NULL; /* "a--b.slice", "-a.slice" */
		}
		char *t = xasprintf("%s%s%.*s.slice", path, *path ? "/" : "", (int)(stop - name), name);
		free(path);
		path = t;
		c = dash ? dash + 1 : end;
		if (dash && c == end) {
			free(path);
			return NULL; /* "a-.slice" */
		}
	}
	return path;
}

/* slice:prefix:name -> the relative path, or NULL with *why */
static char *systemd_path(const char *v, bool rootless, const char **why)
{
	const char *c1 = strchr(v, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2 || strchr(c2 + 1, ':')) {
		*why = "is not slice:prefix:name (the systemd form) nor an absolute path (the cgroupfs form)";
		return NULL;
	}
	char *slice = c1 == v ? xstrdup(rootless ? "user.slice" : "system.slice") : xasprintf("%.*s", (int)(c1 - v), v);
	char *prefix = xasprintf("%.*s", (int)(c2 - c1 - 1), c1 + 1);
	const char *name = c2 + 1;
	char *dir = expand_slice(slice), *out = NULL;
	size_t nl = strlen(name);
	if (!dir)
		*why = "names no systemd slice (NAME.slice, its parents split by '-', no '/')";
	else if (!*name)
		*why = "has no name after the second ':'";
	else if (strchr(prefix, '/') || strchr(name, '/'))
		*why = "has a '/' in its prefix or name (the systemd form names a unit, not a path)";
	else if (nl > 6 && !strcmp(name + nl - 6, ".slice"))
		out = xasprintf("%s%s%s", dir, *dir ? "/" : "", name); /* a slice of its own: the name as is */
	else
		out = xasprintf("%s%s%s%s%s.scope", dir, *dir ? "/" : "", prefix, *prefix ? "-" : "", name);
	free(slice);
	free(prefix);
	free(dir);
	return out;
}

int cgroup_path_parse(const char *v, bool systemd, bool rootless, char **rel, struct error *err)
{
	*rel = NULL;
	const char *why = NULL;
	char *p = NULL;
	if (strlen(v) > 2048)
		why = "is too long";
	else if (systemd || (v[0] != '/' && strchr(v, ':')))
		p = systemd_path(v, rootless, &why);
	else if (v[0] != '/')
		why = "is not absolute: give /PARENT/.../NAME (the cgroupfs form) or slice:prefix:name (the systemd form)";
	else
		p = xstrdup(v + strspn(v, "/"));
	if (p && p[0] && p[strlen(p) - 1] == '/')
		p[strlen(p) - 1] = '\0';
	if (!why && p && !*p)
		why = "names the hierarchy's root: a cell gets a group of its own";
	/* each component a plain name below the hierarchy's root: no '..', '.', empty */
	for (const char *c = p; p && !why;) {
		size_t n = strcspn(c, "/");
		if (!good_component(c, n))
			why = "has a component that is empty, '.', '..', starts with '.' or holds a character other than letters, digits and . _ - @ : + =";
		c += n;
		if (*c != '/')
			break;
		c++;
	}
	if (!why && p && (!strcmp(p, "warren") || !strncmp(p, "warren/", 7)))
		why = "is inside warren's own groups (warren/), where other runs live";
	if (why) {
		free(p);
		return error_set(err, 0, "linux.cgroupsPath '%s' %s", v, why);
	}
	*rel = p;
	return 0;
}
