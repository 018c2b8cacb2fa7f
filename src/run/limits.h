/* SPDX-License-Identifier: Apache-2.0 */
/* limits.h - the limits of a run as people write them ("512M", "30s", "4096", "none"), and the
 * defaults a run gets for what it does not name: chosen from the host's size, then set by
 * /etc/warren/defaults and by <state>/defaults, lifted one by one with `--memory none`. */
#ifndef WARREN_RUN_LIMITS_H
#define WARREN_RUN_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cell/spec.h"
#include "util/error.h"

/* A limit asked to be off (`--memory none`); limits_apply() turns it into 0 (no limit). */
#define LIMIT_NONE UINT64_MAX

/* The host-wide defaults file; warren.conf's limits.NAME keys (util/conf.h) are read after it,
 * the state directory's `defaults` last. */
#define LIMITS_DEFAULTS_FILE "/etc/warren/defaults"
#define LIMITS_CONF_PREFIX "limits."

enum limit_kind { LIMIT_SIZE, LIMIT_DURATION, LIMIT_COUNT };

struct limit_desc {
	const char *name;     /* as in --NAME, a job file's limits: and the defaults file */
	enum limit_kind kind;
	size_t off;           /* of the uint64_t in struct limits */
	uint64_t min;         /* the smallest value that makes sense (a cell cannot start below) */
};

/* The limits warren knows (not the grace), NULL-name terminated. */
extern const struct limit_desc limit_descs[];
const struct limit_desc *limit_find(const char *name);
static inline uint64_t *limit_field(struct limits *l, const struct limit_desc *d)
{
	return (uint64_t *)((char *)l + d->off);
}

/* v as a value of d: a size, a duration or a count as d asks, or "none" (LIMIT_NONE). 0,
 * -EINVAL (not such a value), -EDOM (zero) or -ERANGE (*out is below d->min). */
int limit_value(const struct limit_desc *d, const char *v, uint64_t *out);
/* What d's value looks like ("a size (e.g. 512M, 2G, 100K)"), for messages. */
const char *limit_expects(const struct limit_desc *d);
/* Why v (a zero: 0, 0s, 0M) is refused for d, and what to give instead (heap). */
char *limit_zero(const struct limit_desc *d, const char *v);
/* v as people write it ("1 GiB", "30s", "4096", "none" for 0 and LIMIT_NONE), in buf. */
const char *limit_format(const struct limit_desc *d, uint64_t v, char *buf, size_t len);
/* "100 B is too small to start a cell; give at least 1 MiB (or none for no limit)" (heap). */
char *limit_too_small(const struct limit_desc *d, uint64_t v);
/* limit_value with the error message: what names the limit ("--memory"). 0, or -EINVAL. */
int limit_parse(const struct limit_desc *d, const char *what, const char *v, uint64_t *out, struct error *err);

/* What a run may enforce here: memory and pids need a cgroup warren manages. */
struct limit_host {
	uint64_t mem_total;   /* bytes of RAM (MemTotal) */
	bool memory, pids;    /* a memory / pids cgroup controller warren can use for this run */
};

/* The defaults in force: from the host's size (h), then LIMITS_DEFAULTS_FILE, then warren.conf's
 * limits.NAME, then <statedir>/defaults (when statedir is not NULL). *from (when not NULL) gets
 * a heap string naming the files read (warren.conf's keys as FILE:LINE). 0, or -EINVAL with err naming the file, line and value. */
int limits_defaults(const struct limit_host *h, const char *statedir, struct limits *def, char **from,
		    struct error *err);
/* The host's facts for limits_defaults (rootless: no cgroup of its own here). */
void limits_host(struct limit_host *h, bool rootless);

/* Give every limit l does not name (0) its default; LIMIT_NONE becomes 0 (off). Defaults
 * that cannot be enforced on this host (h) are left off. keep: --keep keeps the scratch on
 * the host's disk, so the scratch default (a tmpfs) does not apply. */
void limits_apply(struct limits *l, const struct limits *def, const struct limit_host *h, bool keep);

#endif
