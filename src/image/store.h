/* SPDX-License-Identifier: Apache-2.0 */
/* store.h - the image store: <state>/images/<name>/ holds rootfs/ (the tree, owners and modes
 * as the archive has them; never written after the import) and image.json (name, digest,
 * size, created, source). An import is made in a hidden temporary directory and renamed into
 * place: an interrupted one leaves nothing visible, and image_gc removes it. A run holds a
 * shared lock on the image's directory for its life; removal takes it exclusively. */
#ifndef WARREN_IMAGE_STORE_H
#define WARREN_IMAGE_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

#define IMAGE_DEFAULT_MAX_BYTES (32ULL << 30)
#define IMAGE_DEFAULT_MAX_ENTRIES 2000000ULL

struct image_import_opts {
	uint64_t max_bytes, max_entries;
	bool max_bytes_given;     /* --max-size was given (not the default) */
	bool replace;             /* --replace: an image of that name is replaced (else refused) */
	const char *source_name;  /* the source as the record names it (a pull's docker://REF), or
	                             NULL: the source's absolute path */
};

/* The room an import has on the store's file system: its free space (statvfs f_bavail) less a
 * reserve kept for the runs and the records that share it, 5% of the file system's size but
 * at most IMAGE_RESERVE_MAX. */
#define IMAGE_RESERVE_PERCENT 5
#define IMAGE_RESERVE_MAX (1ULL << 30)
struct image_budget {
	uint64_t limit;           /* the import's byte limit: the one asked, or the room when less */
	uint64_t reserve;         /* kept free */
	uint64_t room;            /* fs_free less the reserve (0: none) */
	bool by_space;            /* the room is the limit (it is below the one asked) */
	bool warn;                /* a --max-size given above the room: say the import stops sooner */
};
/* A pure decision: the limit of an import asked max_bytes (given: by --max-size) on a file
 * system of fs_size bytes with fs_free available. */
void image_budget(uint64_t max_bytes, bool given, uint64_t fs_free, uint64_t fs_size, struct image_budget *b);

/* Import source as the image name in the state directory statefd (its path: state). The new
 * image's record (image.json's content) in *info; warnings (skipped device nodes, a --max-size
 * above the store's room) on stderr. The byte limit is at most the room of the store's file
 * system (image_budget): an import stops there, or is refused up front when there is none,
 * with one line naming the store, its free space and what to do; running out of space or
 * inodes anyway says the same. Nothing of a failed import is left. */
int image_import(int statefd, const char *state, const char *name, const char *source,
		 const struct image_import_opts *o, json_t **info, struct error *err);

/* An image opened for a run: its root's path, its digest, its config (image/config.h), and
 * the descriptor holding the shared lock that keeps `warren image rm` (and a replaced image's
 * removal) away while the run lives. */
struct image_ref {
	char *rootfs;
	char *digest;
	json_t *config;   /* never NULL once opened: an empty object when the image sets nothing */
	int fd;
};
int image_open(int statefd, const char *state, const char *name, struct image_ref *ref, struct error *err);
void image_ref_free(struct image_ref *ref);

/* The images' records (image.json), sorted by name; an empty array when there are none. */
json_t *image_list(int statefd);
/* The record of the image name, or NULL (no such image). */
json_t *image_record(int statefd, const char *name);

/* A second name dst for the image src: a tree of its own whose files are hard links to src's
 * (the store never writes a file, so sharing them is safe), and src's record under the new
 * name. An existing dst is refused unless replace. 0 or -errno + err. */
int image_tag(int statefd, const char *state, const char *src, const char *dst, bool replace, struct error *err);

/* A scratch directory in the store for a pull (<images>/.pull.NAME.PID, locked: image_gc removes
 * it when its puller is gone): its path (heap) and the descriptor holding the lock in *fd. */
char *image_scratch(int statefd, const char *state, const char *name, int *fd, struct error *err);
/* Remove it again. */
void image_scratch_remove(int statefd, const char *path, int *fd);

/* Remove the image name: -EBUSY when a run holds it (the caller names the run). */
int image_remove(int statefd, const char *name, struct error *err);

/* Remove what interrupted imports and removals left (no live importer holds them): how many. */
int image_gc(int statefd);

#endif
