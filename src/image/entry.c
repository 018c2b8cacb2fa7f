/* SPDX-License-Identifier: Apache-2.0 */
/* entry.c - the decisions about one entry of an image archive (entry.h): pure functions, unit
 * tested case by case (tests/unit/test_image.c). The system calls that act on them are in
 * apply.c. */
#include "image/entry.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/error.h"

#define WHITEOUT_PREFIX ".wh."
#define WHITEOUT_OPAQUE ".wh..wh..opq"

char *ientry_normalize(const char *raw, const char **why)
{
	if (!raw || !*raw) {
		*why = "an empty name";
		return NULL;
	}
	if (raw[0] == '/') {
		*why = "an absolute path (an image's names are relative to its root)";
		return NULL;
	}
	if (strlen(raw) > IENTRY_PATH_MAX) {
		*why = "a name longer than 4000 bytes";
		return NULL;
	}
	char *out = xmalloc(strlen(raw) + 1);
	size_t n = 0;
	for (const char *p = raw; *p;) {
		size_t len = strcspn(p, "/");
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) {
				*why = "a control character (a newline, a tab...) in its name";
				free(out);
				return NULL;
			}
		if (len == 2 && !strncmp(p, "..", 2)) {
			*why = "a '..' component (it would leave the image's root)";
			free(out);
			return NULL;
		}
		if (len > IENTRY_NAME_MAX) {
			*why = "a component longer than 255 bytes";
			free(out);
			return NULL;
		}
		if (len && !(len == 1 && *p == '.')) {
			if (n)
				out[n++] = '/';
			memcpy(out + n, p, len);
			n += len;
		}
		p += len;
		p += *p == '/';
	}
	out[n] = '\0';
	return out;
}

static void refuse(struct ientry_decision *d, const char *why)
{
	free(d->path);
	free(d->link);
	d->path = d->link = NULL;
	d->action = IE_REFUSE;
	d->why = why;
}

/* d->path ends in a whiteout name: what it removes, or that it is metadata */
static void decide_whiteout(struct ientry_decision *d, char *base)
{
	const char *name = base + strlen(WHITEOUT_PREFIX);
	if (!strcmp(base, WHITEOUT_OPAQUE)) {
		d->action = IE_OPAQUE;
		base[base == d->path ? 0 : -1] = '\0'; /* the directory holding it */
		return;
	}
	if (!strncmp(name, WHITEOUT_PREFIX, strlen(WHITEOUT_PREFIX))) {
		d->action = IE_SKIP_META; /* .wh..wh.plnk, .wh..wh.aufs: aufs's own bookkeeping */
		return;
	}
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return refuse(d, "a whiteout that names no entry of its directory ('.wh.', '.wh..', '.wh...')");
	memmove(base, name, strlen(name) + 1);
	d->action = IE_WHITEOUT;
}

void ientry_decide(const char *raw, mode_t st_mode, const char *hardlink, struct ientry_decision *d)
{
	const char *why = NULL;
	*d = (struct ientry_decision){ .action = IE_CREATE, .mode = st_mode & 01777 };
	d->path = ientry_normalize(raw, &why);
	if (!d->path)
		return refuse(d, why);
	char *base = strrchr(d->path, '/');
	base = base ? base + 1 : d->path;
	if (!strncmp(base, WHITEOUT_PREFIX, strlen(WHITEOUT_PREFIX)))
		return decide_whiteout(d, base);
	if (!*d->path) {
		d->action = IE_SKIP_ROOT;
		return;
	}
	if (hardlink) {
		d->link = ientry_normalize(hardlink, &why);
		if (!d->link)
			return refuse(d, "a hard link to outside the image (its target is absolute, has '..', or is malformed)");
		if (!*d->link || !strcmp(d->link, d->path))
			return refuse(d, "a hard link to the image's root or to itself");
		return;
	}
	if (S_ISCHR(st_mode) || S_ISBLK(st_mode) || S_ISSOCK(st_mode))
		d->action = IE_SKIP_DEVICE;
	else if (!S_ISREG(st_mode) && !S_ISDIR(st_mode) && !S_ISLNK(st_mode) && !S_ISFIFO(st_mode))
		refuse(d, "an unknown file type");
}

void ientry_decision_free(struct ientry_decision *d)
{
	free(d->path);
	free(d->link);
	d->path = d->link = NULL;
}

const char *image_name_problem(const char *name)
{
	size_t n = strlen(name);
	if (!n || n > 64)
		return "an image name has 1 to 64 characters";
	if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= '0' && name[0] <= '9')))
		return "an image name starts with a letter or a digit";
	if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
		return "an image name has only letters, digits, '.', '_' and '-'";
	return NULL;
}
