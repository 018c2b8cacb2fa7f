/* SPDX-License-Identifier: Apache-2.0 */
/* limits.c - the words of a limit's value, the defaults a run gets, and where they come from
 * (see limits.h). The grace between SIGTERM and SIGKILL is not one of them (--grace, 5 s).
 * The defaults keep the host alive when a run names no limit: half the RAM
 * for memory, 4096 processes, a quarter of the RAM of scratch (a tmpfs of the run's own,
 * /dev/shm inside it), 1 GiB of output. */
#include "run/limits.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup/cgroup.h"
#include "util/conf.h"
#include "util/fs.h"
#include "util/units.h"

#define MiB (1024ull * 1024)

const struct limit_desc limit_descs[] = {
	{ "time", LIMIT_DURATION, offsetof(struct limits, time_ms), 1 },
	{ "cpu-time", LIMIT_DURATION, offsetof(struct limits, cpu_ms), 1 },
	{ "memory", LIMIT_SIZE, offsetof(struct limits, memory), MiB },
	{ "pids", LIMIT_COUNT, offsetof(struct limits, pids), 1 },
	{ "output", LIMIT_SIZE, offsetof(struct limits, output), 1 },
	{ "scratch", LIMIT_SIZE, offsetof(struct limits, scratch), MiB },
	{ NULL, 0, 0, 0 },
};

const struct limit_desc *limit_find(const char *name)
{
	for (const struct limit_desc *d = limit_descs; d->name; d++)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

static const char *const EXAMPLE[] = {
	[LIMIT_SIZE] = "a size (e.g. 512M, 2G, 100K)",
	[LIMIT_DURATION] = "a duration (e.g. 30s, 10m, 1h30m, 250ms)",
	[LIMIT_COUNT] = "a positive whole number",
};

const char *limit_expects(const struct limit_desc *d)
{
	return EXAMPLE[d->kind];
}

int limit_value(const struct limit_desc *d, const char *v, uint64_t *out)
{
	if (!strcmp(v, "none")) {
		*out = LIMIT_NONE;
		return 0;
	}
	int r = d->kind == LIMIT_SIZE ? parse_size(v, out) : d->kind == LIMIT_DURATION ? parse_duration_ms(v, out)
										       : parse_uint(v, out);
	if (r == 0 && *out == 0)
		return -EDOM;
	if (r < 0 || *out == LIMIT_NONE)
		return -EINVAL;
	return *out < d->min ? -ERANGE : 0;
}

const char *limit_format(const struct limit_desc *d, uint64_t v, char *buf, size_t len)
{
	if (v == 0 || v == LIMIT_NONE)
		return "none";
	if (d->kind == LIMIT_SIZE)
		return format_size(buf, len, v);
	if (d->kind == LIMIT_DURATION)
		return format_duration_ms(buf, len, v);
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

char *limit_zero(const struct limit_desc *d, const char *v)
{
	return xasprintf("'%s' is zero, no limit a run can keep; give %s above zero, or none for no limit", v, EXAMPLE[d->kind]);
}

char *limit_too_small(const struct limit_desc *d, uint64_t v)
{
	char have[32], least[32];
	return xasprintf("%s is too small to start a cell; give at least %s (or none for no limit)",
			 format_size(have, sizeof have, v), format_size(least, sizeof least, d->min));
}

int limit_parse(const struct limit_desc *d, const char *what, const char *v, uint64_t *out, struct error *err)
{
	int r = limit_value(d, v, out);
	if (r == -EINVAL)
		return error_set(err, 0, "%s: '%s' is not %s or none", what, v, EXAMPLE[d->kind]);
	if (r == -EDOM) {
		_cleanup_free_ char *m = limit_zero(d, v);
		return error_set(err, 0, "%s: %s", what, m);
	}
	if (r == -ERANGE) {
		_cleanup_free_ char *m = limit_too_small(d, *out);
		return error_set(err, 0, "%s: %s", what, m);
	}
	return 0;
}

void limits_host(struct limit_host *h, bool rootless)
{
	/* learned once a process (each run's process asks once, and a warm cell's again at its
	 * take: the facts its cell was made with, ~0.07 ms less between a warm run's request and
	 * its start) */
	static struct limit_host known[2];
	static bool have[2];
	if (have[rootless]) {
		*h = known[rootless];
		return;
	}
	*h = (struct limit_host){ 0 };
	_cleanup_free_ char *mi = read_file("/proc/meminfo", NULL);
	const char *t = mi ? strstr(mi, "MemTotal:") : NULL;
	unsigned long long kb;
	if (t && sscanf(t, "MemTotal: %llu kB", &kb) == 1)
		h->mem_total = kb * 1024;
	h->memory = cgroup_can_limit("memory", rootless);
	h->pids = cgroup_can_limit("pids", rootless);
	known[rootless] = *h;
	have[rootless] = true;
}

/* One file of defaults: "NAME = VALUE" lines, '#' comments. A file that does not exist is
 * no error; *read tells whether it was there. */
static int read_defaults(const char *path, struct limits *def, bool *read, struct error *err)
{
	*read = false;
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : error_set(err, errno, "cannot read the defaults file %s", path);
	*read = true;
	char line[512];
	int r = 0;
	for (unsigned n = 1; r == 0 && fgets(line, sizeof line, f); n++) {
		line[strcspn(line, "#\n")] = '\0';
		char key[64], val[128], extra;
		int k = sscanf(line, " %63[a-z-] = %127s %c", key, val, &extra);
		if (k <= 0)
			continue;
		const struct limit_desc *d = k == 2 ? limit_find(key) : NULL;
		_cleanup_free_ char *what = xasprintf("%s:%u: %s", path, n, k >= 1 ? key : "");
		if (!d)
			r = error_set(err, 0, "%s:%u: '%s' is not a line NAME = VALUE with NAME one of time, cpu-time, memory, pids, output, scratch",
				      path, n, line + strspn(line, " \t"));
		else
			r = limit_parse(d, what, val, limit_field(def, d), err);
	}
	fclose(f);
	return r;
}

static void names_add(char **names, const char *name)
{
	char *n = xasprintf("%s%s%s", *names, **names ? ", " : "", name);
	free(*names);
	*names = n;
}

/* warren.conf's limits.NAME (util/conf.h; checked when the file was read), each named in
 * names as FILE:LINE. */
static int conf_limits(struct limits *def, char **names, struct error *err)
{
	for (const struct limit_desc *d = limit_descs; d->name; d++) {
		_cleanup_free_ char *key = xasprintf(LIMITS_CONF_PREFIX "%s", d->name);
		const char *from = NULL, *v = conf_get(key, &from);
		if (!v)
			continue;
		_cleanup_free_ char *what = xasprintf("%s: %s", from, key);
		if (limit_parse(d, what, v, limit_field(def, d), err) < 0)
			return -EINVAL;
		_cleanup_free_ char *n = xasprintf("%s (%s)", from, key);
		names_add(names, n);
	}
	return 0;
}

int limits_defaults(const struct limit_host *h, const char *statedir, struct limits *def, char **from,
		    struct error *err)
{
	*def = (struct limits){ .memory = h->mem_total / 2 / MiB * MiB, .pids = 4096, .output = 1024 * MiB,
				.scratch = h->mem_total / 4 / MiB * MiB, .grace_ms = 5000 };
	if (!def->memory)
		def->memory = def->scratch = LIMIT_NONE; /* RAM unknown: no guess */
	_cleanup_free_ char *local = statedir ? xasprintf("%s/defaults", statedir) : NULL;
	const char *files[] = { LIMITS_DEFAULTS_FILE, NULL, local };
	char *names = xstrdup("");
	int r = 0;
	for (size_t i = 0; r == 0 && i < 3; i++) {
		bool read = false;
		if (i == 1)
			r = conf_limits(def, &names, err);
		else if (files[i] && (r = read_defaults(files[i], def, &read, err)) == 0 && read)
			names_add(&names, files[i]);
	}
	if (from)
		*from = names;
	else
		free(names);
	return r;
}

void limits_apply(struct limits *l, const struct limits *def, const struct limit_host *h, bool keep)
{
	for (const struct limit_desc *d = limit_descs; d->name; d++) {
		uint64_t *v = limit_field(l, d), dv = *(const uint64_t *)((const char *)def + d->off);
		if (*v == 0) {
			bool enforceable = (d->off != offsetof(struct limits, memory) || h->memory) &&
					   (d->off != offsetof(struct limits, pids) || h->pids) &&
					   (d->off != offsetof(struct limits, scratch) || !keep);
			*v = enforceable ? dv : 0;
		}
		if (*v == LIMIT_NONE)
			*v = 0;
	}
}
