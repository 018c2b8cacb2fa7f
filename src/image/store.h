/* store.h - the image store: <state>/images/<name>/ holds rootfs/ (the tree, owners and modes
 * as the archive has them; never written after the import) and image.json (name, digest,
 * size, created, source). An import is made in a hidden temporary directory and renamed into
 * place: an interrupted one leaves nothing visible, and image_gc removes it. A run holds a
 * shared lock on the image's directory for its life; removal takes it exclusively. */
#ifndef WARREN_IMAGE_STORE_H
#define WARREN_IMAGE_STORE_H

#include <jansson.h>
#include <stdint.h>

#include "util/error.h"

#define IMAGE_DEFAULT_MAX_BYTES (32ULL << 30)
#define IMAGE_DEFAULT_MAX_ENTRIES 2000000ULL

struct image_import_opts {
	uint64_t max_bytes, max_entries;
};

/* Import source as the image name in the state directory statefd (its path: state). The new
 * image's record (image.json's content) in *info; warnings (skipped device nodes) on stderr. */
int image_import(int statefd, const char *state, const char *name, const char *source,
		 const struct image_import_opts *o, json_t **info, struct error *err);

/* An image opened for a run: its root's path, its digest, and the descriptor holding the
 * shared lock that keeps `warren image rm` away while the run lives. */
struct image_ref {
	char *rootfs;
	char *digest;
	int fd;
};
int image_open(int statefd, const char *state, const char *name, struct image_ref *ref, struct error *err);
void image_ref_free(struct image_ref *ref);

/* The images' records (image.json), sorted by name; an empty array when there are none. */
json_t *image_list(int statefd);

/* Remove the image name: -EBUSY when a run holds it (the caller names the run). */
int image_remove(int statefd, const char *name, struct error *err);

/* Remove what interrupted imports and removals left (no live importer holds them): how many. */
int image_gc(int statefd);

#endif
