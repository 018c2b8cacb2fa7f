/* SPDX-License-Identifier: Apache-2.0 */
/* files.h - a live session's files from outside its cell, for `warren files` and `warren mcp`:
 * read, written and listed by the cell's executor as the run user (job/files.h), over the run's
 * own socket (<rundir>/session.sock; its owner or root) or through a warren serve (GET and PUT
 * /v1/runs/{id}/files). A path is the cell's: absolute, or relative to the worktree; only below
 * the worktree, /tmp and the home; at most 64 MiB a file. Each call fails with one line in err
 * (its status 125): the run ended, is not a session, is not the caller's, the path is outside
 * the cell's files, not found, too large... */
#ifndef WARREN_CLI_FILES_H
#define WARREN_CLI_FILES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* Where the session is reached. */
struct cli_files_at {
	const char *state;        /* the state directory (NULL: $WARREN_STATE or the default) */
	const char *via;          /* NULL: the run's own socket; else a warren serve, unix:PATH or
	                             tcp:HOST:PORT (the run then a full id) */
	const char *token_file;   /* the server's token, for tcp: */
};

/* The bytes of path in run's cell (run: an id or, without via, a unique prefix), written to
 * out: 0, or -1 after err. */
int cli_file_read_fd(const struct cli_files_at *at, const char *run, const char *path, int out, struct error *err);
/* The same into a heap buffer (NUL-terminated, its length in *len); NULL after err. */
char *cli_file_read(const struct cli_files_at *at, const char *run, const char *path, size_t *len, struct error *err);
/* Write len bytes of data to path in run's cell (created or truncated); mode: NULL, or octal
 * permissions ("0755") set on it; parents: make the missing directories above it. 0, or -1
 * after err. */
int cli_file_write(const struct cli_files_at *at, const char *run, const char *path, const void *data, size_t len,
		   const char *mode, bool parents, struct error *err);
/* The directory path of run's cell: {"path", "entries": [{"name", "type" (file, dir, symlink,
 * fifo, socket, char, block, unknown), "size", "mode" ("0644"), "mtime" (RFC 3339), "target"
 * (a link's)}], "truncated"}; NULL after err. */
json_t *cli_file_list(const struct cli_files_at *at, const char *run, const char *path, struct error *err);

#endif
