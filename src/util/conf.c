/* SPDX-License-Identifier: Apache-2.0 */
/* conf.c - the one parser of warren's configuration files (see conf.h): the files a caller
 * reads, who may own them, their "key = value" lines checked against the caller's table of
 * keys, and the store of what they set (a key, its value, the FILE:LINE it came from). */
#include "util/conf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/strv.h"
#include "util/words.h"

struct conf_entry {
	char *key, *value, *from;
};

static struct conf_entry *entries;
static size_t nentries;

void conf_reset(void)
{
	for (size_t i = 0; i < nentries; i++) {
		free(entries[i].key);
		free(entries[i].value);
		free(entries[i].from);
	}
	free(entries);
	entries = NULL;
	nentries = 0;
}

static void conf_set(const char *key, const char *value, const char *from)
{
	for (size_t i = 0; i < nentries; i++)
		if (!strcmp(entries[i].key, key)) {
			free(entries[i].value);
			free(entries[i].from);
			entries[i].value = xstrdup(value);
			entries[i].from = xstrdup(from);
			return;
		}
	entries = xrealloc(entries, (nentries + 1) * sizeof *entries);
	entries[nentries++] = (struct conf_entry){ xstrdup(key), xstrdup(value), xstrdup(from) };
}

const char *conf_get(const char *key, const char **from)
{
	for (size_t i = 0; i < nentries; i++)
		if (!strcmp(entries[i].key, key)) {
			if (from)
				*from = entries[i].from;
			return entries[i].value;
		}
	return NULL;
}

const char **conf_keys(void)
{
	const char **v = xcalloc(nentries + 1, sizeof *v);
	for (size_t i = 0; i < nentries; i++)
		v[i] = entries[i].key;
	return v;
}

char **conf_files(void)
{
	char **v = xcalloc(3, sizeof *v);
	const char *only = getenv(CONF_ENV);
	if (only && *only) {
		if (strcmp(only, "none"))
			v[0] = xstrdup(only);
		return v;
	}
	v[0] = xstrdup(CONF_SYSTEM_FILE);
	if (geteuid() == 0)
		return v;
	const char *x = getenv("XDG_CONFIG_HOME");
	if (x && *x == '/') {
		v[1] = xasprintf("%s/warren/warren.conf", x);
		return v;
	}
	const char *home = getenv("HOME");
	if (!home || *home != '/') {
		struct passwd *pw = getpwuid(geteuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (home)
		v[1] = xasprintf("%s/.config/warren/warren.conf", home);
	return v;
}

const char *conf_file_untrusted(unsigned owner, unsigned gid, unsigned mode, unsigned uid)
{
	if (owner != 0 && owner != uid)
		return "it belongs to neither root nor you";
	if (mode & S_IWOTH)
		return "others may write it";
	if ((mode & S_IWGRP) && gid != 0)
		return "its group may write it";
	return NULL;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t l = strlen(s);
	while (l && isspace((unsigned char)s[l - 1]))
		s[--l] = '\0';
	return s;
}

/* One line (its comment cut): nothing, or key = value checked against keys. */
static int conf_line(const char *where, char *line, const struct conf_key *keys, struct error *err)
{
	line[strcspn(line, "#")] = '\0';
	char *t = trim(line);
	if (!*t)
		return 0;
	char *eq = strchr(t, '=');
	if (!eq) {
		_cleanup_free_ char *p = printable_name(t);
		return error_set(err, 0, "%s: '%s' is not a line key = value", where, p);
	}
	*eq = '\0';
	char *key = trim(t), *value = trim(eq + 1);
	const struct conf_key *k = keys;
	while (k->name && strcmp(k->name, key))
		k++;
	if (!k->name) {
		size_t n = 0;
		while (keys[n].name)
			n++;
		_cleanup_free_ const char **names = xcalloc(n + 1, sizeof *names);
		for (size_t i = 0; i < n; i++)
			names[i] = keys[i].name;
		const char *near = closest_word(key, names);
		_cleanup_free_ char *p = printable_name(key);
		if (near)
			return error_set(err, 0, "%s: unknown key '%s'; did you mean '%s'?", where, p, near);
		_cleanup_free_ char *all = xstrdup("");
		for (size_t i = 0; i < n; i++) {
			char *a = xasprintf("%s%s%s", all, i ? ", " : "", names[i]);
			free(all);
			all = a;
		}
		return error_set(err, 0, "%s: unknown key '%s'; the keys are %s", where, p, all);
	}
	char *why = NULL;
	if (!*value || (k->check && k->check(key, value, &why) < 0)) {
		_cleanup_free_ char *p = printable_name(value);
		int r = why ? error_set(err, 0, "%s: %s: %s", where, key, why)
			    : error_set(err, 0, "%s: %s: '%s' is not %s", where, key, p, k->expects);
		free(why);
		return r;
	}
	conf_set(key, value, where);
	return 0;
}

int conf_load_text(const char *path, const char *text, const struct conf_key *keys, struct error *err)
{
	_cleanup_free_ char *copy = xstrdup(text);
	char *p = copy;
	unsigned n = 0;
	for (;;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		n++;
		_cleanup_free_ char *where = xasprintf("%s:%u", path, n);
		if (conf_line(where, p, keys, err) < 0)
			return -EINVAL;
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}

/* One file: missing is no error; it must be trusted (conf_file_untrusted) and text. */
static int conf_read(const char *path, const struct conf_key *keys, struct error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : error_set(err, errno, "cannot read the configuration file %s", path);
	struct stat st;
	if (fstat(fd, &st) < 0)
		return error_set(err, errno, "cannot read the configuration file %s", path);
	if (!S_ISREG(st.st_mode))
		return error_set(err, 0, "the configuration file %s is not a regular file; make it one or remove it", path);
	const char *why = conf_file_untrusted(st.st_uid, st.st_gid, st.st_mode, geteuid());
	if (why)
		return error_set(err, 0, "the configuration file %s is refused: %s (owner uid %u, mode %04o); "
				 "make it root's or yours, and writable by nobody else (chmod go-w)",
				 path, why, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	size_t len = 0;
	_cleanup_free_ char *txt = read_fd(fd, &len);
	if (!txt)
		return error_set(err, errno, "cannot read the configuration file %s", path);
	if (strlen(txt) != len)
		return error_set(err, 0, "the configuration file %s holds a NUL byte; it is text, lines key = value", path);
	return conf_load_text(path, txt, keys, err);
}

int conf_load(const struct conf_key *keys, struct error *err)
{
	conf_reset();
	_cleanup_strv_ char **files = conf_files();
	for (size_t i = 0; files[i]; i++)
		if (conf_read(files[i], keys, err) < 0) {
			conf_reset();
			return -EINVAL;
		}
	return 0;
}
