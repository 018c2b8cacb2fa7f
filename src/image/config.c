/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - an image's config (config.h): the checked part of a config blob, the command of a
 * run of the image, and the user its User names, looked up in the image's own files (never the
 * host's). */
#include "image/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/strv.h"

static bool env_entry_ok(const char *kv)
{
	size_t n = strcspn(kv, "=");
	if (!kv[n] || !n || isdigit((unsigned char)kv[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)kv[i]) && kv[i] != '_')
			return false;
	return true;
}

/* A copy of a when it is an array of strings only (and, for env, each NAME=VALUE); else NULL. */
static json_t *strings(json_t *a, bool env)
{
	size_t i;
	json_t *v;
	if (!json_is_array(a) || !json_array_size(a))
		return NULL;
	json_array_foreach(a, i, v)
		if (!json_is_string(v) || (env && !env_entry_ok(json_string_value(v))))
			return NULL;
	return json_deep_copy(a);
}

json_t *image_config_pick(json_t *blob)
{
	json_t *c = json_object_get(blob, "config"), *out = json_object(), *v;
	if ((v = strings(json_object_get(c, "Env"), true)))
		json_object_set_new(out, "Env", v);
	const char *wd = json_string_value(json_object_get(c, "WorkingDir"));
	if (wd && wd[0] == '/')
		json_object_set_new(out, "WorkingDir", json_string(wd));
	const char *user = json_string_value(json_object_get(c, "User"));
	if (user && *user)
		json_object_set_new(out, "User", json_string(user));
	if ((v = strings(json_object_get(c, "Entrypoint"), false)))
		json_object_set_new(out, "Entrypoint", v);
	if ((v = strings(json_object_get(c, "Cmd"), false)))
		json_object_set_new(out, "Cmd", v);
	return out;
}

static void push(char ***v, size_t *n, const char *s)
{
	*v = xrealloc(*v, (*n + 2) * sizeof **v);
	(*v)[(*n)++] = xstrdup(s);
	(*v)[*n] = NULL;
}

char **image_command(const json_t *cfg, const char *entrypoint, char *const *cmd, size_t n)
{
	char **v = xcalloc(1, sizeof *v);
	size_t k = 0, i;
	json_t *w;
	if (entrypoint) {
		if (*entrypoint)
			push(&v, &k, entrypoint);
	} else {
		json_array_foreach(json_object_get(cfg, "Entrypoint"), i, w)
			push(&v, &k, json_string_value(w));
	}
	if (n) {
		for (i = 0; i < n; i++)
			push(&v, &k, cmd[i]);
	} else if (!entrypoint) {
		json_array_foreach(json_object_get(cfg, "Cmd"), i, w)
			push(&v, &k, json_string_value(w));
	}
	return v;
}

/* A decimal id below 2^32 - 1, the whole of s[0..n). */
static bool parse_id(const char *s, size_t n, unsigned long *out)
{
	if (!n || n > 10 || strspn(s, "0123456789") < n)
		return false;
	char buf[16];
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*out = strtoul(buf, NULL, 10);
	return !errno && *out < 0xffffffffUL;
}

/* Field 3 (and 4) of the line of a passwd or group file whose first field is name[0..n). */
static bool db_find(const char *db, const char *name, size_t n, unsigned long *id, unsigned long *id2)
{
	for (const char *l = db; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, name, n) != 0 || l[n] != ':')
			continue;
		const char *f = strchr(l + n + 1, ':');   /* past the password */
		if (!f || !parse_id(f + 1, strcspn(f + 1, ":\n"), id))
			return false;
		f = strchr(f + 1, ':');
		if (id2 && (!f || !parse_id(f + 1, strcspn(f + 1, ":\n"), id2)))
			return false;
		return true;
	}
	return false;
}

int image_user_lookup(const char *user, const char *passwd, const char *group, uid_t *uid, gid_t *gid, const char **why)
{
	size_t un = strcspn(user, ":");
	const char *g = user[un] == ':' ? user + un + 1 : NULL;
	unsigned long u, pg = ~0UL, gg;
	if (!un || strchr(user, '\n'))
		return *why = "it names no user", -1;
	if (!parse_id(user, un, &u) && !db_find(passwd, user, un, &u, &pg))
		return *why = "no such user in the image's /etc/passwd", -1;
	if (pg == ~0UL) {   /* a number: its passwd entry's group, if it has one */
		for (const char *l = passwd; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
			const char *f = strchr(l, ':') ? strchr(strchr(l, ':') + 1, ':') : NULL;
			unsigned long lu, lg;
			const char *f2 = f ? strchr(f + 1, ':') : NULL;
			if (f2 && parse_id(f + 1, (size_t)(f2 - f - 1), &lu) && lu == u && parse_id(f2 + 1, strcspn(f2 + 1, ":\n"), &lg)) {
				pg = lg;
				break;
			}
		}
	}
	if (g && !*g)
		return *why = "its group is empty", -1;
	if (g && !parse_id(g, strlen(g), &gg) && !db_find(group, g, strlen(g), &gg, NULL))
		return *why = "no such group in the image's /etc/group", -1;
	*uid = (uid_t)u;
	*gid = (gid_t)(g ? gg : pg != ~0UL ? pg : u);
	return 0;
}
