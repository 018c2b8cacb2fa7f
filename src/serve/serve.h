/* SPDX-License-Identifier: Apache-2.0 */
/* serve.h - `warren serve`: runs queued to slots behind an HTTP API (v1, docs/api.md) on unix
 * sockets and TCP, each run an ordinary warren run (this binary, `job run`, as a child that
 * dies with the server), its row in the history. */
#ifndef WARREN_SERVE_SERVE_H
#define WARREN_SERVE_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct serve_opts {
	char **listen;        /* "unix:PATH" or "tcp:ADDR:PORT"; none: unix:<state>/serve.sock */
	size_t nlisten;
	long slots;           /* runs at once (default: the CPUs) */
	const char *state;    /* --state */
	const char *db;       /* --db */
	const char *token_file;
	long keep_runs;       /* retention: 0 none */
	long warm;            /* --warm N: cells made in advance (0: none) */
	const char *warm_work; /* --warm-work DIR: their worktree */
	const char *warm_image; /* --warm-image NAME: their root (NULL: the host's /) */
	const char *warm_net;  /* --warm-net MODE: their network (NULL: none) */
	uint64_t keep_for_ms;
};

/* Serve until SIGTERM or SIGINT. 0, or -errno with err. */
int serve_run(const struct serve_opts *o, struct error *err);

#endif
