/* SPDX-License-Identifier: Apache-2.0 */
/* files.h - a live session's files, through its socket (job/session.h): read, written and
 * listed in the cell's own view, by the cell's executor as the run user inside the cell
 * (cell/execfiles.c: no link leads out of the worktree, /tmp or the home, only regular files);
 * the bytes pass in a memfd of the supervisor's, which never opens a file of the cell itself.
 *
 * Requests (one JSON line each, on a connection of its own, as an exec's):
 *   {"op":"read","path":P}        answered {"size":N} and then N raw bytes
 *   {"op":"write","path":P,"size":N,"mode":"0644","parents":true} and then N raw bytes;
 *                                 answered {"written":N} (the file created or truncated; mode:
 *                                 its mode, octal, also for a file that was there; parents:
 *                                 the missing directories above it made)
 *   {"op":"list","path":P}        answered {"path":P,"entries":[{"name","type","size","mode",
 *                                 "mtime","target"}],"truncated":bool} (by name)
 * P is a path in the cell (absolute, or relative to the worktree) below the worktree, /tmp or
 * the home; bytes at most EXEC_FILE_MAX (64 MiB) each way. A refusal is one line
 * {"error":TEXT,"status":HTTP-STATUS}: 400 (a bad request, not a regular file), 403 (outside
 * the cell's files, a link that leaves them, a permission the run user lacks), 404, 409 (the
 * session ends), 413 (over 64 MiB), 429 (FILES_AT_ONCE at once), 503 and 504 (the cell's
 * executor does not take it, or did not answer within FILES_CELL_S). */
#ifndef WARREN_JOB_FILES_H
#define WARREN_JOB_FILES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cell/executor.h"

#define FILES_AT_ONCE 8          /* file operations of one session at once */
#define FILES_CELL_S 60.0        /* seconds the cell has to do one */
#define FILES_STALL_S 30.0       /* seconds a caller may send or take nothing mid-way */
#define FILES_TASK_BIT 0x20000000u  /* executor task ids of file operations */

struct session_host;
struct files;

/* A file request as parsed (pure: files_parse). */
struct files_req {
	enum exec_file_op op;
	const char *path;         /* the request's own string */
	uint64_t size;            /* write: the bytes that follow */
	int mode;                 /* write: -1, or the mode to set */
	bool parents;
};

/* Is op one of the files' ("read", "write", "list")? */
bool files_op(const char *op);
/* Parse a request (pure): 0, or the status (400, 413) with a one-line reason in *why (heap). */
int files_parse(json_t *req, struct files_req *r, char **why);
/* A mode as given ("0644", "755"): 0 with *mode, or -EINVAL with *why (static, to follow
 * "mode 'M': "). */
int files_parse_mode(const char *s, int *mode, const char **why);
/* Where path falls in the cell's view (pure): 0 with *place (one of worktree, /tmp, home: the
 * deepest that holds it) and *rel (heap; below *place, "" for *place itself, without "." or
 * empty parts); else 403 (outside, or a ".." part) or 400 (empty, too long) with *why (heap,
 * one line naming where files may be). A relative path is the worktree's (the home's when
 * there is none). */
int files_place(const char *path, const char *worktree, const char *home, const char **place, char **rel, char **why);
/* The status and one line (heap) for the errno an operation on path failed with (pure). */
int files_failure(int err, enum exec_file_op op, const char *path, char **why);
/* A list's records (cell/executor.h: struct exec_file_ent), as JSON entries sorted by name
 * (pure; records cut short or malformed end it). */
json_t *files_entries(const char *b, size_t len);

struct files *files_new(const struct session_host *h);
/* The request req (its op one of files_op's) came on connection fd (taken: the session no
 * longer watches it), with n bytes after its line already read (rest). */
void files_take(struct files *f, int fd, json_t *req, const char *rest, size_t n);
/* One of the files' epoll events (tag - EV_FILES). */
void files_event(struct files *f, uint32_t tag, uint32_t events);
#define EV_FILES_BASE 0x8000000u  /* (the session's tags from EV_SESSION + this on are the files') */
/* An executor's message about a file operation: true when it was one. */
bool files_ctl(struct files *f, const struct exec_hdr *h);
/* The runner's tick: operations stalled or unanswered are ended. */
void files_tick(struct files *f);
/* The session is gone (or going): each operation refused (409, why) and closed. */
void files_close(struct files *f, const char *why);
void files_free(struct files *f);

#endif
