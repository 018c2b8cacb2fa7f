/* SPDX-License-Identifier: Apache-2.0 */
/* entry.h - what to do with one entry of an image archive, decided as a pure function of its
 * name, type and link target: the path normalised (or the entry refused: absolute, "..",
 * control characters), whiteouts (.wh.NAME) and opaque directories (.wh..wh..opq) of layered
 * images, device nodes skipped, setuid/setgid bits stripped; and the names of images. */
#ifndef WARREN_IMAGE_ENTRY_H
#define WARREN_IMAGE_ENTRY_H

#include <stdbool.h>
#include <sys/types.h>

enum ientry_action {
	IE_CREATE,      /* make path (a file, directory, symlink, hard link or fifo) */
	IE_WHITEOUT,    /* remove path as lower layers left it */
	IE_OPAQUE,      /* path is an opaque directory: remove what lower layers put in it */
	IE_SKIP_ROOT,   /* "." or "./": the image's root itself */
	IE_SKIP_DEVICE, /* a device node or socket: an image holds none (the cell has its own /dev) */
	IE_SKIP_META,   /* another aufs-style .wh..wh.* file: layer metadata, not content */
	IE_REFUSE,      /* hostile or malformed: the import stops (why says what is wrong) */
};

struct ientry_decision {
	enum ientry_action action;
	char *path;       /* heap; relative, normalised: no "", "." or ".." component ("" = the root) */
	char *link;       /* heap; IE_CREATE of a hard link: its target, normalised the same way */
	mode_t mode;      /* the permission bits to give it: setuid and setgid stripped */
	const char *why;  /* IE_REFUSE: what is wrong with the entry (a static string) */
};

/* The longest name accepted, and the longest component. */
#define IENTRY_PATH_MAX 4000
#define IENTRY_NAME_MAX 255

/* Normalise raw into *out (heap): "./a//b/" -> "a/b". NULL and *why when raw is absolute, has a
 * ".." component, a control character (a newline...), or is too long. */
char *ientry_normalize(const char *raw, const char **why);
/* Decide about an entry named raw of type and mode st_mode, a hard link to hardlink (or NULL).
 * Free d->path and d->link after use (ientry_decision_free). */
void ientry_decide(const char *raw, mode_t st_mode, const char *hardlink, struct ientry_decision *d);
void ientry_decision_free(struct ientry_decision *d);

/* Is name fit to name an image (1 to 64 of letters, digits, '.', '_', '-', starting with a
 * letter or digit: a directory name and an overlay option alike)? NULL, or what is wrong. */
const char *image_name_problem(const char *name);

#endif
