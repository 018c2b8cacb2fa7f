/* SPDX-License-Identifier: Apache-2.0 */
/* apply.h - applying the entries of an image's layers to a tree, beneath one directory
 * descriptor: every directory on the way is opened one component at a time without following
 * a symlink, so no entry (nor a whiteout) reaches outside the tree, whatever links earlier
 * entries made. Limits on bytes and entries stop an archive that would fill the disk. */
#ifndef WARREN_IMAGE_APPLY_H
#define WARREN_IMAGE_APPLY_H

#include <nettle/sha2.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "util/error.h"

/* One entry as a source reads it. */
struct ientry {
	const char *path;       /* as the archive names it */
	mode_t mode;            /* type and permission bits */
	uid_t uid;
	gid_t gid;
	int64_t size;           /* regular files: bytes of content */
	const char *symlink;    /* symlinks: the target */
	const char *hardlink;   /* hard links: the entry it links to, or NULL */
	struct timespec mtime;
	/* regular files: read up to n bytes of content; 0 at the end, -1 + err on failure */
	ssize_t (*read)(void *ctx, void *buf, size_t n, struct error *err);
	void *ctx;
};

struct apply {
	int root;                 /* the tree (O_RDONLY | O_DIRECTORY) */
	bool keep_owners;         /* root: the archive's uids/gids; rootless: all the caller's */
	uint64_t max_bytes, max_entries;
	const char *over_bytes;   /* what stops an image at max_bytes, when not --max-size (not owned) */
	uint64_t bytes, entries;  /* so far */
	uint64_t skipped;         /* device nodes and sockets left out */
	char *first_skipped;      /* the first of them, for the note */
	struct sha256_ctx *hash;  /* when set: a digest of what was applied (directory sources) */
	/* private */
	void *layer;              /* tsearch set of the paths this layer made */
	void *dirs;               /* tsearch set of directories whose mode and mtime come last */
	char *cached;             /* the parent directory last opened, and its descriptor */
	int cached_fd;
};

void apply_init(struct apply *a, int root, bool keep_owners, uint64_t max_bytes, uint64_t max_entries);
/* Apply one entry; 0, or -errno + err (the message names the entry, escaped). */
int apply_entry(struct apply *a, const struct ientry *e, struct error *err);
/* The end of a layer: a later layer's whiteouts and opaque directories remove what this one made. */
void apply_layer_end(struct apply *a);
/* Give directories their modes and mtimes (held back so that a read-only directory could still
 * be filled); release everything. 0 or -errno + err. */
int apply_finish(struct apply *a, struct error *err);
void apply_free(struct apply *a);

/* s as one line for a message: control characters and non-ASCII bytes as \n, \xNN. Heap. */
char *escape_name(const char *s);

#endif
