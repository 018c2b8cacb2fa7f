/* SPDX-License-Identifier: Apache-2.0 */
/* apply.c - applying archive entries to an image's tree (apply.h). Each directory on an
 * entry's way is opened one component at a time with O_NOFOLLOW, beneath the tree's
 * descriptor, and names are normalised first (entry.c refuses absolute names and ".."): no
 * entry, hard link or whiteout reaches outside the tree, whatever symlinks earlier entries
 * made. Existing entries are replaced, never written through. */
#include "image/apply.h"

#include <dirent.h>
#include <fcntl.h>
#include <search.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/entry.h"
#include "image/libs.h"
#include "util/fs.h"

struct dirfix {
	char *path;
	mode_t mode;
	struct timespec mtime;
};

static int cmp_str(const void *a, const void *b) { return strcmp(a, b); }
static int cmp_dirfix(const void *a, const void *b) { return strcmp(((const struct dirfix *)a)->path, ((const struct dirfix *)b)->path); }

static void set_add(void **set, const char *s)
{
	char *dup = xstrdup(s);
	char **got = tsearch(dup, set, cmp_str);
	if (!got)
		abort();
	if (*got != dup)
		free(dup);
}

static bool set_has(void *const *set, const char *s) { return tfind(s, set, cmp_str) != NULL; }

char *escape_name(const char *s)
{
	size_t n = strlen(s);
	char *out = xmalloc(n * 4 + 1), *o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\n')
			o += sprintf(o, "\\n");
		else if (*p < 0x20 || *p >= 0x7f || *p == '\\')
			o += sprintf(o, "\\x%02x", *p);
		else
			*o++ = (char)*p;
	}
	*o = '\0';
	return out;
}

static int entry_error(struct error *err, int e, const char *path, const char *what)
{
	_cleanup_free_ char *p = escape_name(path);
	return error_set(err, e, "archive entry '%s': %s", p, what);
}

void apply_init(struct apply *a, int root, bool keep_owners, uint64_t max_bytes, uint64_t max_entries)
{
	*a = (struct apply){ .root = root, .keep_owners = keep_owners, .max_bytes = max_bytes,
			     .max_entries = max_entries, .cached_fd = -1 };
}

static void drop_cache(struct apply *a)
{
	free(a->cached);
	a->cached = NULL;
	closep(&a->cached_fd);
}

/* Open the directory dir of the tree ("" = the root), never through a symlink, making missing
 * components (0755 in the end) when create. An owned descriptor, or -errno. */
static int open_dir(struct apply *a, const char *dir, bool create)
{
	int cur = fcntl(a->root, F_DUPFD_CLOEXEC, 0);
	_cleanup_free_ char *copy = xstrdup(dir);
	size_t done = 0;
	for (char *save = NULL, *c = strtok_r(copy, "/", &save); c && cur >= 0; c = strtok_r(NULL, "/", &save)) {
		int next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create && mkdirat(cur, c, 0700) == 0) {
			next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			_cleanup_free_ char *implied = strndup(dir, done + strlen(c));
			struct dirfix probe = { .path = implied };
			if (!tfind(&probe, &a->dirs, cmp_dirfix)) {
				struct dirfix *f = xcalloc(1, sizeof *f);
				*f = (struct dirfix){ .path = steal_pointer(&implied), .mode = 0755, .mtime = { .tv_nsec = UTIME_OMIT } };
				tsearch(f, &a->dirs, cmp_dirfix);
			}
		}
		int e = errno;
		close(cur);
		cur = next;
		errno = e;
		done += strlen(c) + 1;
	}
	return cur < 0 ? -errno : cur;
}

/* The parent of an entry, cached: archives list a directory's entries together. Not owned. */
static int parent_dir(struct apply *a, const char *dir, bool create)
{
	if (a->cached && !strcmp(a->cached, dir))
		return a->cached_fd;
	drop_cache(a);
	int fd = open_dir(a, dir, create);
	if (fd >= 0) {
		a->cached = xstrdup(dir);
		a->cached_fd = fd;
	}
	return fd;
}

/* Split a normalised path into its directory ("" for the root's entries) and its name. */
static char *split(const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	*base = slash ? slash + 1 : path;
	return strndup(path, slash ? (size_t)(slash - path) : 0);
}

/* Remove what is at pfd/base (a whole directory tree too); nothing there is fine. */
static int clear_at(struct apply *a, int pfd, const char *base)
{
	struct stat st;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(pfd, base, 0) < 0 ? -errno : 0;
	int r = rm_tree_at(pfd, base);
	(void)a;
	return r;
}

static int too_big(struct apply *a, const char *path, struct error *err)
{
	if (a->over_bytes)
		return entry_error(err, 0, path, a->over_bytes);
	_cleanup_free_ char *what = xasprintf("the image would exceed %llu bytes (the limit; give --max-size to raise it)",
					      (unsigned long long)a->max_bytes);
	return entry_error(err, EFBIG, path, what);
}

static int copy_content(struct apply *a, int fd, const struct ientry *e, struct error *err)
{
	char buf[65536];
	ssize_t n;
	while ((n = e->read(e->ctx, buf, sizeof buf, err)) > 0) {
		if ((uint64_t)n > a->max_bytes - a->bytes)
			return too_big(a, e->path, err);
		a->bytes += (uint64_t)n;
		if (a->hash)
			sha256_update(a->hash, (size_t)n, (const uint8_t *)buf);
		int r = write_all(fd, buf, (size_t)n);
		if (r < 0)
			return entry_error(err, -r, e->path, "cannot write its content");
	}
	return n < 0 ? -EIO : 0;
}

static void defer_dir(struct apply *a, const char *path, mode_t mode, struct timespec mtime)
{
	struct dirfix probe = { .path = (char *)path };
	struct dirfix **got = tfind(&probe, &a->dirs, cmp_dirfix);
	if (got) {
		(*got)->mode = mode;
		(*got)->mtime = mtime;
		return;
	}
	struct dirfix *f = xcalloc(1, sizeof *f);
	*f = (struct dirfix){ .path = xstrdup(path), .mode = mode, .mtime = mtime };
	tsearch(f, &a->dirs, cmp_dirfix);
}

static int make_file(struct apply *a, int pfd, const char *base, const struct ientry *e, mode_t mode, struct error *err)
{
	if (e->size < 0 || (uint64_t)e->size > a->max_bytes - a->bytes)
		return too_big(a, e->path, err);
	_cleanup_close_ int fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return entry_error(err, errno, e->path, "cannot create it");
	int r = copy_content(a, fd, e, err);
	if (r < 0)
		return r;
	if ((a->keep_owners && fchown(fd, e->uid, e->gid) < 0) || fchmod(fd, mode) < 0)
		return entry_error(err, errno, e->path, "cannot set its owner and mode");
	struct timespec t[2] = { e->mtime, e->mtime };
	futimens(fd, t);
	return 0;
}

static int make_hardlink(struct apply *a, int pfd, const char *base, const struct ientry_decision *d, struct error *err)
{
	const char *tbase;
	_cleanup_free_ char *tdir = split(d->link, &tbase);
	_cleanup_close_ int tfd = open_dir(a, tdir, false);
	struct stat st;
	if (tfd == -ELOOP || tfd == -ENOTDIR)
		return entry_error(err, 0, d->path, "a hard link whose target's way goes through a symlink or a file");
	if (tfd < 0 || fstatat(tfd, tbase, &st, AT_SYMLINK_NOFOLLOW) < 0 || S_ISDIR(st.st_mode))
		return entry_error(err, 0, d->path, "a hard link to what is not a file of the image so far");
	if (linkat(tfd, tbase, pfd, base, 0) < 0)
		return entry_error(err, errno, d->path, "cannot make the hard link");
	return 0;
}

static int make_other(struct apply *a, int pfd, const char *base, const struct ientry *e, const struct ientry_decision *d, struct error *err)
{
	if (S_ISLNK(e->mode)) {
		if (symlinkat(e->symlink ? e->symlink : "", pfd, base) < 0)
			return entry_error(err, errno, e->path, "cannot make the symlink");
	} else if (mknodat(pfd, base, S_IFIFO | 0600, 0) < 0) {
		return entry_error(err, errno, e->path, "cannot make the fifo");
	}
	if (a->keep_owners && fchownat(pfd, base, e->uid, e->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return entry_error(err, errno, e->path, "cannot set its owner");
	if (S_ISFIFO(e->mode) && fchmodat(pfd, base, d->mode, 0) < 0)
		return entry_error(err, errno, e->path, "cannot set its mode");
	struct timespec t[2] = { e->mtime, e->mtime };
	utimensat(pfd, base, t, AT_SYMLINK_NOFOLLOW);
	return 0;
}

static void hash_entry(struct apply *a, const struct ientry *e, const struct ientry_decision *d)
{
	if (!a->hash)
		return;
	sha256_update(a->hash, strlen(d->path) + 1, (const uint8_t *)d->path);
	_cleanup_free_ char *meta = xasprintf("%o %u %u %lld %s", (unsigned)(e->mode & ~06000u), a->keep_owners ? e->uid : 0,
					      a->keep_owners ? e->gid : 0, (long long)(S_ISREG(e->mode) ? e->size : 0),
					      d->link ? d->link : e->symlink ? e->symlink : "");
	sha256_update(a->hash, strlen(meta) + 1, (const uint8_t *)meta);
}

static int create(struct apply *a, const struct ientry *e, const struct ientry_decision *d, struct error *err)
{
	const char *base;
	_cleanup_free_ char *dir = split(d->path, &base);
	int pfd = parent_dir(a, dir, true);
	if (pfd < 0)
		return pfd == -ELOOP || pfd == -ENOTDIR
			? entry_error(err, 0, e->path, "its way goes through a symlink or a file (an entry is never written through a link)")
			: entry_error(err, -pfd, e->path, "cannot open its directory");
	hash_entry(a, e, d);
	set_add(&a->layer, d->path);
	struct stat st;
	bool exists = fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (S_ISDIR(e->mode) && !d->link) {
		if (exists && !S_ISDIR(st.st_mode) && unlinkat(pfd, base, 0) < 0)
			return entry_error(err, errno, e->path, "cannot replace what is there");
		if ((!exists || !S_ISDIR(st.st_mode)) && mkdirat(pfd, base, 0700) < 0)
			return entry_error(err, errno, e->path, "cannot make the directory");
		if (a->keep_owners && fchownat(pfd, base, e->uid, e->gid, AT_SYMLINK_NOFOLLOW) < 0)
			return entry_error(err, errno, e->path, "cannot set its owner");
		defer_dir(a, d->path, d->mode, e->mtime);
		return 0;
	}
	int r = exists ? clear_at(a, pfd, base) : 0;
	if (r < 0)
		return entry_error(err, -r, e->path, "cannot replace what is there");
	if (d->link)
		return make_hardlink(a, pfd, base, d, err);
	if (S_ISREG(e->mode))
		return make_file(a, pfd, base, e, d->mode, err);
	return make_other(a, pfd, base, e, d, err);
}

/* A whiteout: remove path as the lower layers left it (what this layer made stays). */
static int whiteout(struct apply *a, const struct ientry *e, const char *path, struct error *err)
{
	if (set_has(&a->layer, path))
		return 0;
	const char *base;
	_cleanup_free_ char *dir = split(path, &base);
	int pfd = parent_dir(a, dir, false);
	if (pfd == -ENOENT)
		return 0;
	if (pfd == -ELOOP || pfd == -ENOTDIR)
		return entry_error(err, 0, e->path, "a whiteout whose way goes through a symlink or a file");
	int r = pfd < 0 ? pfd : rm_tree_at(pfd, base);
	if (r < 0)
		return entry_error(err, -r, e->path, "cannot remove what it hides");
	return 0;
}

/* An opaque directory: remove what the lower layers put in it. */
static int opaque(struct apply *a, const struct ientry *e, const char *path, struct error *err)
{
	int fd = open_dir(a, path, true);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		int r = fd < 0 ? fd : -errno;
		closep(&fd);
		return entry_error(err, -r, e->path, "an opaque marker whose directory cannot be opened (through a symlink?)");
	}
	char **gone = NULL;
	size_t n = 0;
	for (struct dirent *de; (de = readdir(d));) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		_cleanup_free_ char *full = *path ? xasprintf("%s/%s", path, de->d_name) : xstrdup(de->d_name);
		if (set_has(&a->layer, full))
			continue;
		gone = xrealloc(gone, (n + 1) * sizeof *gone);
		gone[n++] = xstrdup(de->d_name);
	}
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		if (!r)
			r = rm_tree_at(dirfd(d), gone[i]);
		free(gone[i]);
	}
	free(gone);
	closedir(d);
	drop_cache(a);
	return r < 0 ? entry_error(err, -r, e->path, "cannot empty the opaque directory") : 0;
}

int apply_entry(struct apply *a, const struct ientry *e, struct error *err)
{
	if (++a->entries > a->max_entries) {
		_cleanup_free_ char *what = xasprintf("the image has more than %llu entries (the limit; give --max-entries to raise it)",
						      (unsigned long long)a->max_entries);
		return entry_error(err, EFBIG, e->path, what);
	}
	struct ientry_decision d;
	ientry_decide(e->path, e->mode, e->hardlink, &d);
	int r = 0;
	switch (d.action) {
	case IE_REFUSE: r = entry_error(err, 0, e->path, d.why); break;
	case IE_CREATE: r = create(a, e, &d, err); break;
	case IE_WHITEOUT: r = whiteout(a, e, d.path, err); break;
	case IE_OPAQUE: r = opaque(a, e, d.path, err); break;
	case IE_SKIP_DEVICE:
		if (!a->skipped++)
			a->first_skipped = escape_name(d.path);
		break;
	case IE_SKIP_ROOT:
	case IE_SKIP_META: break;
	}
	ientry_decision_free(&d);
	return r;
}

static void free_str(void *p) { free(p); }

void apply_layer_end(struct apply *a)
{
	tdestroy(a->layer, free_str);
	a->layer = NULL;
}

struct fixes {
	struct dirfix **v;
	size_t n;
};

static void collect(const void *node, VISIT v, void *closure)
{
	struct fixes *f = closure;
	if (v == postorder || v == leaf) {
		f->v = xrealloc(f->v, (f->n + 1) * sizeof *f->v);
		f->v[f->n++] = *(struct dirfix *const *)node;
	}
}

static void free_dirfix(void *p)
{
	struct dirfix *f = p;
	free(f->path);
	free(f);
}

int apply_finish(struct apply *a, struct error *err)
{
	struct fixes f = { 0 };
	twalk_r(a->dirs, collect, &f);
	int r = 0;
	/* deepest first: "a/b" sorts after "a", so backwards a directory comes before its parent */
	for (size_t i = f.n; i-- > 0 && !r;) {
		_cleanup_close_ int fd = open_dir(a, f.v[i]->path, false);
		struct timespec t[2] = { f.v[i]->mtime, f.v[i]->mtime };
		if (fd == -ENOENT)
			continue;
		if (fd < 0 || fchmod(fd, f.v[i]->mode) < 0)
			r = entry_error(err, fd < 0 ? -fd : errno, f.v[i]->path, "cannot set the directory's mode");
		else
			futimens(fd, t);
	}
	free(f.v);
	apply_free(a);
	return r;
}

void apply_free(struct apply *a)
{
	apply_layer_end(a);
	tdestroy(a->dirs, free_dirfix);
	a->dirs = NULL;
	drop_cache(a);
	free(a->first_skipped);
	a->first_skipped = NULL;
}
