/* SPDX-License-Identifier: Apache-2.0 */
/* store.c - the image store (store.h): import into a hidden directory then rename, within the
 * room of the store's file system (its free space less a reserve); list, remove, open for a
 * run under a shared lock, and gc of what interrupted imports left. */
#include "image/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "image/apply.h"
#include "image/config.h"
#include "image/entry.h"
#include "image/source.h"
#include "util/fs.h"
#include "util/units.h"

#define IMAGES_DIR "images"
#define IMAGE_ROOTFS "rootfs"
#define IMAGE_RECORD "image.json"
#define IMPORT_PREFIX ".import."
#define REMOVE_PREFIX ".rm."
#define PULL_PREFIX ".pull."
/* what to do when the store's file system is what stops an import */
#define SPACE_REMEDY "free space there, or import into a state directory on a larger file system (--state DIR)"

void image_budget(uint64_t max_bytes, bool given, uint64_t fs_free, uint64_t fs_size, struct image_budget *b)
{
	uint64_t reserve = fs_size / 100 * IMAGE_RESERVE_PERCENT + fs_size % 100 * IMAGE_RESERVE_PERCENT / 100;
	if (reserve > IMAGE_RESERVE_MAX)
		reserve = IMAGE_RESERVE_MAX;
	uint64_t room = fs_free > reserve ? fs_free - reserve : 0;
	*b = (struct image_budget){ .limit = max_bytes < room ? max_bytes : room, .reserve = reserve, .room = room,
				    .by_space = room < max_bytes };
	b->warn = given && b->by_space && room > 0;
}

/* <state>/images, made (the caller's alone) when create; it must be the caller's. */
static int images_open(int statefd, bool create, struct error *err)
{
	if (create && mkdirat(statefd, IMAGES_DIR, 0700) < 0 && errno != EEXIST)
		return error_set(err, errno, "cannot create the image store " IMAGES_DIR "/ in the state directory");
	int fd = openat(statefd, IMAGES_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		int e = errno;
		closep(&fd);
		return err ? error_set(err, e, "cannot open the image store " IMAGES_DIR "/ of the state directory") : -e;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return err ? error_set(err, 0, "the image store " IMAGES_DIR "/ of the state directory is not yours alone (owner uid %u, mode %o); remove it", st.st_uid, st.st_mode & 07777) : -EPERM;
	}
	return fd;
}

static int name_check(const char *name, struct error *err)
{
	const char *why = image_name_problem(name);
	if (!why)
		return 0;
	_cleanup_free_ char *esc = escape_name(name);
	return error_set(err, 0, "'%s' cannot name an image: %s", esc, why);
}

static json_t *record_json(const char *name, const char *source, const struct apply *a, const struct image_source_info *info)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	_cleanup_free_ char *src = abs_path(source);
	return json_pack("{s:s,s:s,s:I,s:I,s:i,s:s,s:s,s:s,s:s,s:I,s:o}", "name", name, "digest", info->digest,
			 "size", (json_int_t)a->bytes, "entries", (json_int_t)a->entries, "layers", (int)info->layers,
			 "created", when, "source", src ? src : source, "format", info->format, "owners",
			 a->keep_owners ? "as in the archive" : "the importing user's (a rootless import cannot give files to other users)",
			 "skipped_devices", (json_int_t)a->skipped, "config", info->config ? json_incref(info->config) : json_object());
}

/* The store's room on its file system: the budget b for limits o, in *space a description
 * ("N free on its file system, less R kept in reserve") and in *over what stops an image at
 * the room when the room is its limit (else NULL). A store without room is refused up front;
 * a --max-size above the room is noted. */
static int store_room(int images, const char *state, const char *name, const struct image_import_opts *o,
		      struct image_budget *b, char **space, char **over, struct error *err)
{
	struct statvfs vfs;
	if (fstatvfs(images, &vfs) < 0)
		return error_set(err, errno, "image import %s: cannot read the free space of the image store %s/" IMAGES_DIR, name, state);
	image_budget(o->max_bytes, o->max_bytes_given, (uint64_t)vfs.f_bavail * vfs.f_frsize,
		     (uint64_t)vfs.f_blocks * vfs.f_frsize, b);
	char fr[32], res[32], room[32], asked[32];
	format_size(fr, sizeof fr, (uint64_t)vfs.f_bavail * vfs.f_frsize);
	format_size(res, sizeof res, b->reserve);
	*space = xasprintf("%s free on its file system, less %s kept in reserve", fr, res);
	if (b->room == 0)
		return error_set(err, 0, "image import %s: the image store %s/" IMAGES_DIR " has no room for an image (%s); " SPACE_REMEDY,
				 name, state, *space);
	format_size(room, sizeof room, b->room);
	if (b->warn)
		warn_line("note: image import %s: --max-size %s is above the room in the image store %s/" IMAGES_DIR " (%s): the import stops at %s",
			  name, format_size(asked, sizeof asked, o->max_bytes), state, *space, room);
	if (b->by_space)
		*over = xasprintf("the image would exceed %llu bytes (%s), the room in the image store %s/" IMAGES_DIR " (%s); " SPACE_REMEDY,
				  (unsigned long long)b->limit, room, state, *space);
	return 0;
}

/* An import that ran out of space or quota anyway: the store named as when its room stops it. */
static void store_full(struct error *err, const char *state, const char *space)
{
	_cleanup_free_ char *why = steal_pointer(&err->msg);
	error_clear(err);
	error_set(err, 0, "the image store %s/" IMAGES_DIR " ran out of room (%s; it had %s); " SPACE_REMEDY, state, why, space);
}

static int record_write(int dirfd, json_t *j, struct error *err)
{
	char *txt = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int r = write_file_atomic_at(dirfd, IMAGE_RECORD, txt, strlen(txt), 0444);
	free(txt);
	return r < 0 ? error_set(err, -r, "cannot write the image's record") : 0;
}

/* Fill tfd/rootfs from source and write tfd/image.json. */
static int import_into(int tfd, const char *name, const char *source, const struct image_import_opts *o,
		       const char *over_bytes, json_t **info, struct error *err)
{
	if (mkdirat(tfd, IMAGE_ROOTFS, 0755) < 0)
		return error_set(err, errno, "cannot create the image's root");
	_cleanup_close_ int rfd = openat(tfd, IMAGE_ROOTFS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd < 0)
		return error_set(err, errno, "cannot open the image's root");
	struct apply a;
	struct image_source_info si = { .format = "?" };
	apply_init(&a, rfd, geteuid() == 0, o->max_bytes, o->max_entries);
	a.over_bytes = over_bytes;
	int r = image_source_apply(source, &a, &si, err);
	if (r < 0) {
		json_decref(si.config);
		apply_free(&a);
		return r;
	}
	if (a.skipped)
		warn_line("note: image %s: left out %llu device node%s or socket%s (the first: %s); a cell has its own /dev",
			name, (unsigned long long)a.skipped, a.skipped == 1 ? "" : "s", a.skipped == 1 ? "" : "s", a.first_skipped);
	json_t *j = record_json(name, o->source_name ? o->source_name : source, &a, &si);
	json_decref(si.config);
	if (apply_finish(&a, err) < 0) {
		json_decref(j);
		return -EIO;
	}
	if (record_write(tfd, j, err) < 0) {
		json_decref(j);
		return -EIO;
	}
	*info = j;
	return 0;
}

/* A replaced image, out of sight: removed now, or by `warren gc` once no run holds it. */
static void retire(int images, const char *tmp, const char *name)
{
	_cleanup_free_ char *gone = xasprintf(REMOVE_PREFIX "%s.%d", name, (int)getpid());
	if (renameat(images, tmp, images, gone) < 0)
		return;
	_cleanup_close_ int fd = openat(images, gone, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
		rm_tree_at(images, gone);
	else
		warn_line("note: image %s: a live run still uses the image it replaced, which stays (unseen) until that run ends; 'warren gc' removes it then", name);
}

/* Put the finished tmp in place as name: refused when name exists, unless replace (then the
 * two are exchanged at once, and the old one retired). */
static int place(int images, const char *tmp, const char *name, bool replace, const char *state, struct error *err)
{
	if (replace && renameat2(images, tmp, images, name, RENAME_EXCHANGE) == 0) {
		retire(images, tmp, name);
		return 0;
	}
	if (replace && errno != ENOENT)
		return error_set(err, errno, "cannot replace the image %s", name);
	if (renameat2(images, tmp, images, name, RENAME_NOREPLACE) < 0)
		return error_set(err, errno, errno == EEXIST ? "image %s was made by someone else meanwhile in %s (give --replace to replace it)"
								: "cannot store the image %s", name, state);
	return 0;
}

/* Refused when name exists and replace is not given. */
static int exists_check(int images, const char *state, const char *name, bool replace, struct error *err)
{
	if (replace || faccessat(images, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return error_set(err, EEXIST, "image %s exists in %s (give --replace to replace it, or remove it first: warren image rm %s)",
			 name, state, name);
}

int image_import(int statefd, const char *state, const char *name, const char *source,
		 const struct image_import_opts *o, json_t **info, struct error *err)
{
	*info = NULL;
	if (name_check(name, err) < 0)
		return -EINVAL;
	_cleanup_close_ int images = images_open(statefd, true, err);
	if (images < 0)
		return -EINVAL;
	if (exists_check(images, state, name, o->replace, err) < 0)
		return -EEXIST;
	_cleanup_free_ char *tmp = xasprintf(IMPORT_PREFIX "%s.%d", name, (int)getpid());
	rm_tree_at(images, tmp); /* a dead importer's, with our pid */
	struct image_budget b;
	_cleanup_free_ char *space = NULL, *over = NULL;
	if (store_room(images, state, name, o, &b, &space, &over, err) < 0)
		return -ENOSPC;
	struct image_import_opts lim = *o;
	lim.max_bytes = b.limit;
	_cleanup_close_ int tfd = -1;
	if (mkdirat(images, tmp, 0700) < 0 || (tfd = openat(images, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    flock(tfd, LOCK_EX) < 0)
		return error_set(err, errno, "cannot create a directory for the import in %s/" IMAGES_DIR, state);
	int r = import_into(tfd, name, source, &lim, over, info, err);
	/* the room is reckoned in bytes of content: blocks, inodes, a quota or another writer can
	 * end it sooner */
	if (r < 0 && (err->errnum == ENOSPC || err->errnum == EDQUOT))
		store_full(err, state, space);
	if (r == 0 && fchmod(tfd, 0555) < 0)
		r = error_set(err, errno, "cannot make the image read-only");
	if (r == 0)
		r = place(images, tmp, name, o->replace, state, err);
	if (r < 0) {
		rm_tree_at(images, tmp);
		if (*info)
			json_decref(*info);
		*info = NULL;
		error_prefix(err, "image import %s", name);
	}
	return r;
}

static json_t *read_record(int images, const char *name)
{
	_cleanup_free_ char *rel = xasprintf("%s/" IMAGE_RECORD, name);
	_cleanup_free_ char *txt = read_file_at(images, rel, NULL);
	return txt ? json_loads(txt, 0, NULL) : NULL;
}

int image_open(int statefd, const char *state, const char *name, struct image_ref *ref, struct error *err)
{
	*ref = (struct image_ref){ .fd = -1 };
	if (name_check(name, err) < 0)
		return -EINVAL;
	_cleanup_close_ int images = images_open(statefd, false, NULL);
	ref->fd = images < 0 ? -1 : openat(images, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ref->fd < 0)
		return error_set(err, 0, "no image %s in %s (see 'warren image ls'; import one with 'warren image import %s SOURCE')", name, state, name);
	if (flock(ref->fd, LOCK_SH | LOCK_NB) < 0)
		return error_set(err, errno, "image %s is being removed", name);
	json_t *j = read_record(images, name);
	const char *digest = json_string_value(json_object_get(j, "digest"));
	ref->digest = digest ? xstrdup(digest) : NULL;
	/* an image imported before configs were kept has none: as one that sets nothing */
	json_t *blob = json_pack("{s:O?}", "config", json_object_get(j, "config"));
	ref->config = image_config_pick(blob);
	json_decref(blob);
	json_decref(j);
	ref->rootfs = xasprintf("%s/" IMAGES_DIR "/%s/" IMAGE_ROOTFS, state, name);
	if (!ref->digest || faccessat(ref->fd, IMAGE_ROOTFS, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return error_set(err, 0, "image %s in %s is damaged (no record or no root); remove it with 'warren image rm %s' and import it again", name, state, name);
	return 0;
}

void image_ref_free(struct image_ref *ref)
{
	free(ref->rootfs);
	free(ref->digest);
	json_decref(ref->config);
	ref->config = NULL;
	closep(&ref->fd);
	ref->rootfs = ref->digest = NULL;
}

json_t *image_list(int statefd)
{
	json_t *all = json_array();
	_cleanup_close_ int images = images_open(statefd, false, NULL);
	struct dirent **names = NULL;
	int n = images < 0 ? 0 : scandirat(images, ".", &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		json_t *j = names[i]->d_name[0] == '.' ? NULL : read_record(images, names[i]->d_name);
		if (j)
			json_array_append_new(all, j);
		free(names[i]);
	}
	free(names);
	return all;
}

int image_remove(int statefd, const char *name, struct error *err)
{
	if (name_check(name, err) < 0)
		return -EINVAL;
	_cleanup_close_ int images = images_open(statefd, false, NULL);
	_cleanup_close_ int fd = images < 0 ? -1 : openat(images, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, ENOENT, "image rm %s: no such image (see 'warren image ls')", name);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? -EBUSY : error_set(err, errno, "image rm %s", name);
	/* out of sight first (a run starting now finds no image), then removed */
	_cleanup_free_ char *gone = xasprintf(REMOVE_PREFIX "%s.%d", name, (int)getpid());
	if (renameat(images, name, images, gone) < 0)
		return error_set(err, errno, "image rm %s: cannot remove it", name);
	int r = rm_tree_at(images, gone);
	return r < 0 ? error_set(err, -r, "image rm %s: cannot remove all of it ('warren gc' will retry)", name) : 0;
}

int image_gc(int statefd)
{
	_cleanup_close_ int images = images_open(statefd, false, NULL);
	struct dirent **names = NULL;
	int n = images < 0 ? 0 : scandirat(images, ".", &names, NULL, alphasort), done = 0;
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		if (!strncmp(nm, IMPORT_PREFIX, strlen(IMPORT_PREFIX)) || !strncmp(nm, REMOVE_PREFIX, strlen(REMOVE_PREFIX)) ||
		    !strncmp(nm, PULL_PREFIX, strlen(PULL_PREFIX))) {
			_cleanup_close_ int fd = openat(images, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 && rm_tree_at(images, nm) == 0)
				done++;
		}
		free(names[i]);
	}
	free(names);
	return done;
}

json_t *image_record(int statefd, const char *name)
{
	if (image_name_problem(name))
		return NULL;
	_cleanup_close_ int images = images_open(statefd, false, NULL);
	return images < 0 ? NULL : read_record(images, name);
}

/* Copy the directory src to dst (made here), every other entry a hard link to src's; the
 * directories' owners, modes and times as src's. */
static int link_tree(int sfd, int dfd, const char *name, struct error *err)
{
	struct stat st;
	if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return error_set(err, errno, "cannot read %s", name);
	if (!S_ISDIR(st.st_mode))
		return linkat(sfd, name, dfd, name, 0) < 0 ? error_set(err, errno, "cannot link %s", name) : 0;
	if (mkdirat(dfd, name, 0700) < 0)
		return error_set(err, errno, "cannot make %s", name);
	_cleanup_close_ int from = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int to = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (from < 0 || to < 0)
		return error_set(err, errno, "cannot open %s", name);
	struct dirent **names = NULL;
	int n = scandirat(from, ".", &names, NULL, NULL), r = n < 0 ? error_set(err, errno, "cannot list %s", name) : 0;
	for (int i = 0; i < n; i++) {
		if (r == 0 && strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			r = link_tree(from, to, names[i]->d_name, err);
		free(names[i]);
	}
	free(names);
	struct timespec t[2] = { st.st_atim, st.st_mtim };
	if (r == 0 && (fchown(to, st.st_uid, st.st_gid) < 0 || fchmod(to, st.st_mode & 07777) < 0 || futimens(to, t) < 0))
		r = error_set(err, errno, "cannot give %s its owner, mode and times", name);
	return r;
}

int image_tag(int statefd, const char *state, const char *src, const char *dst, bool replace, struct error *err)
{
	if (name_check(src, err) < 0 || name_check(dst, err) < 0)
		return -EINVAL;
	if (!strcmp(src, dst))
		return error_set(err, 0, "image tag %s %s: give another name", src, dst);
	_cleanup_close_ int images = images_open(statefd, false, NULL);
	_cleanup_close_ int sfd = images < 0 ? -1 : openat(images, src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return error_set(err, ENOENT, "image tag %s: no such image in %s (see 'warren image ls')", src, state);
	if (flock(sfd, LOCK_SH | LOCK_NB) < 0)
		return error_set(err, errno, "image tag %s: it is being removed", src);
	json_t *j = read_record(images, src);
	if (!j)
		return error_set(err, 0, "image tag %s: it is damaged (no record); remove it with 'warren image rm %s'", src, src);
	json_object_set_new(j, "name", json_string(dst));
	json_object_set_new(j, "tagged_from", json_string(src));
	_cleanup_free_ char *tmp = xasprintf(IMPORT_PREFIX "%s.%d", dst, (int)getpid());
	rm_tree_at(images, tmp);
	_cleanup_close_ int tfd = -1;
	int r = exists_check(images, state, dst, replace, err);
	if (r == 0 && (mkdirat(images, tmp, 0700) < 0 || (tfd = openat(images, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
		       flock(tfd, LOCK_EX) < 0))
		r = error_set(err, errno, "cannot create a directory for the image in %s/" IMAGES_DIR, state);
	if (r == 0)
		r = link_tree(sfd, tfd, IMAGE_ROOTFS, err);
	if (r == 0)
		r = record_write(tfd, j, err);
	if (r == 0 && fchmod(tfd, 0555) < 0)
		r = error_set(err, errno, "cannot make the image read-only");
	if (r == 0)
		r = place(images, tmp, dst, replace, state, err);
	json_decref(j);
	if (r < 0 && tfd >= 0)
		rm_tree_at(images, tmp);
	if (r < 0)
		error_prefix(err, "image tag %s %s", src, dst);
	return r;
}

char *image_scratch(int statefd, const char *state, const char *name, int *fd, struct error *err)
{
	*fd = -1;
	if (name_check(name, err) < 0)
		return NULL;
	_cleanup_close_ int images = images_open(statefd, true, err);
	if (images < 0)
		return NULL;
	_cleanup_free_ char *rel = xasprintf(PULL_PREFIX "%s.%d", name, (int)getpid());
	rm_tree_at(images, rel);
	if (mkdirat(images, rel, 0700) < 0 || (*fd = openat(images, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    flock(*fd, LOCK_EX) < 0) {
		error_set(err, errno, "cannot create a directory for the pull in %s/" IMAGES_DIR, state);
		closep(fd);
		return NULL;
	}
	return xasprintf("%s/" IMAGES_DIR "/%s", state, rel);
}

void image_scratch_remove(int statefd, const char *path, int *fd)
{
	_cleanup_close_ int images = images_open(statefd, false, NULL);
	const char *rel = strrchr(path, '/');
	if (images >= 0 && rel)
		rm_tree_at(images, rel + 1);
	closep(fd);
}
