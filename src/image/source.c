/* SPDX-License-Identifier: Apache-2.0 */
/* source.c - reading an image (source.h): tarballs, directories, OCI image layouts (a
 * directory or a tar of one) and docker/podman save archives, through libarchive. A layer held
 * inside an archive is read in place: a second libarchive reader takes its bytes from the
 * first, so nothing is unpacked twice; the bytes of each blob are hashed on the way and an OCI
 * blob whose digest differs is refused. */
#include "image/source.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "image/config.h"
#include "image/entry.h"
#include "image/libs.h"
#include "util/fs.h"
#include "util/sys.h"

#define JSON_MAX (4u << 20) /* an index, a manifest or a config: far less in practice */

/* Where an image's files are: a directory (dirfd) or a tar archive (tar: its path). */
struct container {
	int dirfd;
	const char *tar;
};

/* A stream of bytes from a file or from a member of an archive, hashed as it is read. */
struct stream {
	int fd;
	struct archive *outer;
	const char *name;
	struct sha256_ctx sha;
	char buf[65536];
};

static struct archive *reader_new(void)
{
	struct archive *ar = archive_read_new();
	if (!ar)
		abort();
	archive_read_support_format_tar(ar);
	archive_read_support_filter_gzip(ar);
	archive_read_support_filter_xz(ar);
	archive_read_support_filter_zstd(ar);
	archive_read_support_filter_bzip2(ar);
	return ar;
}

static void stream_close(struct stream *s)
{
	closep(&s->fd);
	if (s->outer)
		archive_read_free(s->outer);
	s->outer = NULL;
}

static ssize_t stream_read(struct stream *s, void *buf, size_t n)
{
	ssize_t r;
	if (s->outer)
		r = archive_read_data(s->outer, buf, n);
	else
		while ((r = read(s->fd, buf, n)) < 0 && errno == EINTR)
			;
	if (r > 0)
		sha256_update(&s->sha, (size_t)r, buf);
	return r;
}

/* Read the rest (a tar's padding after its end, a blob's tail) so the digest covers it all. */
static int stream_drain(struct stream *s)
{
	ssize_t r;
	while ((r = stream_read(s, s->buf, sizeof s->buf)) > 0)
		;
	return r < 0 ? -EIO : 0;
}

static void stream_digest(struct stream *s, char out[72])
{
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(&s->sha, sizeof d, d);
	char *o = out + sprintf(out, "sha256:");
	for (size_t i = 0; i < sizeof d; i++)
		o += sprintf(o, "%02x", d[i]);
}

/* Open member name of c as a stream. */
static int stream_open(const struct container *c, const char *name, struct stream *s, struct error *err)
{
	*s = (struct stream){ .fd = -1, .name = name };
	sha256_init(&s->sha);
	if (c->dirfd >= 0) {
		s->fd = sys_openat2(c->dirfd, name, O_RDONLY, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
		return s->fd < 0 ? error_set(err, errno, "cannot open %s in the image", name) : 0;
	}
	s->outer = reader_new();
	if (archive_read_open_filename(s->outer, c->tar, 1 << 16) != ARCHIVE_OK)
		return error_set(err, archive_errno(s->outer), "cannot read %s: %s", c->tar, archive_error_string(s->outer));
	struct archive_entry *e;
	int r;
	while ((r = archive_read_next_header(s->outer, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
		const char *why;
		_cleanup_free_ char *n = ientry_normalize(archive_entry_pathname(e), &why);
		if (n && !strcmp(n, name) && S_ISREG(archive_entry_mode(e)))
			return 0;
	}
	return error_set(err, r == ARCHIVE_EOF ? ENOENT : archive_errno(s->outer), "%s holds no file %s%s%s", c->tar, name,
			 r == ARCHIVE_EOF ? "" : ": ", r == ARCHIVE_EOF ? "" : archive_error_string(s->outer));
}

/* The whole member name of c (a JSON document), and its digest when digest is not NULL. */
static json_t *read_json(const struct container *c, const char *name, char digest[72], struct error *err)
{
	struct stream s;
	if (stream_open(c, name, &s, err) < 0) {
		stream_close(&s);
		return NULL;
	}
	char *txt = xmalloc(JSON_MAX + 1);
	size_t n = 0;
	ssize_t r = 0;
	while (n < JSON_MAX && (r = stream_read(&s, txt + n, JSON_MAX - n)) > 0)
		n += (size_t)r;
	if (n == JSON_MAX && stream_read(&s, s.buf, 1) > 0)
		n = JSON_MAX + 1;
	stream_close(&s);
	if (r < 0) {
		free(txt);
		error_set(err, EIO, "cannot read %s of the image", name);
		return NULL;
	}
	json_error_t je;
	json_t *j = n <= JSON_MAX ? json_loadb(txt, n, 0, &je) : NULL;
	free(txt);
	if (!j)
		error_set(err, 0, "%s of the image is %s", name, n > JSON_MAX ? "larger than 4 MiB" : "not valid JSON");
	else if (digest)
		stream_digest(&s, digest);
	return j;
}

static la_ssize_t inner_read(struct archive *ar, void *p, const void **buf)
{
	struct stream *s = p;
	ssize_t n = stream_read(s, s->buf, sizeof s->buf);
	if (n < 0) {
		archive_set_error(ar, EIO, "cannot read %s", s->name);
		return -1;
	}
	*buf = s->buf;
	return n;
}

static ssize_t entry_read(void *ctx, void *buf, size_t n, struct error *err)
{
	struct archive *ar = ctx;
	ssize_t r = archive_read_data(ar, buf, n);
	if (r < 0)
		error_set(err, archive_errno(ar) > 0 ? archive_errno(ar) : 0, "cannot read the archive: %s", archive_error_string(ar));
	return r;
}

/* The entries of the tar archive in stream s (compressed or not), applied to a. */
static int apply_tar(struct stream *s, struct apply *a, struct error *err)
{
	struct archive *ar = reader_new();
	int r = archive_read_open(ar, s, NULL, inner_read, NULL) == ARCHIVE_OK ? 0 : -EINVAL;
	struct archive_entry *e;
	int h = ARCHIVE_FATAL;
	while (r == 0 && ((h = archive_read_next_header(ar, &e)) == ARCHIVE_OK || h == ARCHIVE_WARN)) {
		const char *path = archive_entry_pathname(e);
		struct ientry ie = {
			.path = path ? path : "", .mode = archive_entry_mode(e),
			.uid = (uid_t)archive_entry_uid(e), .gid = (gid_t)archive_entry_gid(e),
			.size = archive_entry_size(e), .symlink = archive_entry_symlink(e),
			.hardlink = archive_entry_hardlink(e),
			.mtime = { archive_entry_mtime(e), archive_entry_mtime_nsec(e) },
			.read = entry_read, .ctx = ar,
		};
		if (archive_entry_uid(e) < 0 || archive_entry_uid(e) > 0xfffffffe || archive_entry_gid(e) < 0 || archive_entry_gid(e) > 0xfffffffe)
			ie.uid = ie.gid = 65534;
		r = apply_entry(a, &ie, err);
	}
	if (r == 0 && h != ARCHIVE_EOF)
		r = error_set(err, archive_errno(ar) > 0 ? archive_errno(ar) : 0, "%s is not a tar archive this can read (tar, tar.gz, tar.xz, tar.zst, tar.bz2): %s",
			      s->name, archive_error_string(ar) ? archive_error_string(ar) : "no entries");
	archive_read_free(ar);
	if (r == 0 && stream_drain(s) < 0)
		r = error_set(err, EIO, "cannot read %s", s->name);
	apply_layer_end(a);
	return r;
}

/* A layer (or a plain tarball) named name in c; its digest checked against want (when set). */
static int apply_member(const struct container *c, const char *name, const char *want, struct apply *a, char digest[72], struct error *err)
{
	struct stream s;
	int r = stream_open(c, name, &s, err);
	if (r == 0)
		r = apply_tar(&s, a, err);
	stream_close(&s);
	char got[72];
	stream_digest(&s, got);
	if (r == 0 && want && strcmp(got, want) != 0)
		r = error_set(err, 0, "the blob %s has the digest %s, not %s as the manifest says: the image is damaged or was altered", name, got, want);
	if (digest)
		memcpy(digest, got, sizeof got);
	return r;
}

/* "sha256:<64 hex>" -> "blobs/sha256/<hex>", or NULL for anything else (no path from outside). */
static char *blob_path(const char *digest)
{
	if (!digest || strncmp(digest, "sha256:", 7) != 0 || strlen(digest) != 7 + 64 ||
	    strspn(digest + 7, "0123456789abcdef") != 64)
		return NULL;
	return xasprintf("blobs/sha256/%s", digest + 7);
}

static const char *host_arch(void)
{
	static struct utsname u;
	uname(&u);
	return !strcmp(u.machine, "x86_64") ? "amd64" : !strcmp(u.machine, "aarch64") ? "arm64" : u.machine;
}

/* The manifest of an index for this host: the only one, or the one for linux/<arch>. */
static json_t *pick_manifest(json_t *index, struct error *err)
{
	json_t *list = json_object_get(index, "manifests"), *m, *only = NULL;
	size_t i;
	json_array_foreach(list, i, m) {
		json_t *p = json_object_get(m, "platform");
		const char *os = json_string_value(json_object_get(p, "os"));
		const char *arch = json_string_value(json_object_get(p, "architecture"));
		if (!p || (os && !strcmp(os, "linux") && arch && !strcmp(arch, host_arch())))
			return m;
		only = json_array_size(list) == 1 ? m : NULL;
	}
	if (!only)
		error_set(err, 0, "the image index lists %zu manifests and none for linux/%s", json_array_size(list), host_arch());
	return only;
}

static bool is_index(const char *media)
{
	return media && (strstr(media, "image.index") || strstr(media, "manifest.list"));
}

/* Follow index.json (and nested indexes) to this host's manifest, checking each digest. */
static json_t *oci_manifest(const struct container *c, struct image_source_info *info, struct error *err)
{
	json_t *doc = read_json(c, "index.json", NULL, err);
	for (int depth = 0; doc && depth < 4; depth++) {
		json_t *desc = pick_manifest(doc, err), *next = NULL;
		_cleanup_free_ char *digest = xstrdup(json_string_value(json_object_get(desc, "digest")) ?: "(none)");
		bool index = is_index(json_string_value(json_object_get(desc, "mediaType")));
		_cleanup_free_ char *path = blob_path(digest);
		char got[72];
		if (desc && !path)
			error_set(err, 0, "the image index names the manifest '%s', not a sha256 digest", digest);
		else if (desc && (next = read_json(c, path, got, err)) && strcmp(got, digest) != 0) {
			error_set(err, 0, "the manifest %s has the digest %s: the image is damaged or was altered", digest, got);
			json_decref(next);
			next = NULL;
		}
		json_decref(doc);
		doc = next;
		if (doc && !index) {
			snprintf(info->digest, sizeof info->digest, "%s", digest);
			return doc;
		}
	}
	if (doc) {
		json_decref(doc);
		error_set(err, 0, "the image's indexes nest deeper than 4");
	}
	return NULL;
}

/* The config blob the manifest names, its digest checked: what warren keeps of it in info. */
static int oci_config(const struct container *c, json_t *manifest, struct image_source_info *info, struct error *err)
{
	const char *digest = json_string_value(json_object_get(json_object_get(manifest, "config"), "digest"));
	_cleanup_free_ char *path = blob_path(digest);
	if (!path)
		return error_set(err, 0, "the image's manifest %s names the config '%s', not a sha256 digest", info->digest,
				 digest ? digest : "(none)");
	char got[72];
	json_t *blob = read_json(c, path, got, err);
	if (!blob)
		return -EINVAL;
	int r = strcmp(got, digest) ? error_set(err, 0, "the config %s has the digest %s: the image is damaged or was altered", digest, got) : 0;
	if (r == 0)
		info->config = image_config_pick(blob);
	json_decref(blob);
	return r;
}

static int oci_apply(const struct container *c, struct apply *a, struct image_source_info *info, struct error *err)
{
	json_t *doc = oci_manifest(c, info, err);
	if (!doc)
		return -EINVAL;
	json_t *layers = json_object_get(doc, "layers"), *l;
	size_t i;
	int r = json_is_array(layers) ? 0 : error_set(err, 0, "the image's manifest %s has no layers", info->digest);
	if (r == 0)
		r = oci_config(c, doc, info, err);
	json_array_foreach(layers, i, l) {
		const char *digest = json_string_value(json_object_get(l, "digest"));
		_cleanup_free_ char *path = blob_path(digest);
		if (r == 0 && !path)
			r = error_set(err, 0, "layer %zu of the manifest names '%s', not a sha256 digest", i + 1, digest ? digest : "(none)");
		if (r == 0)
			r = apply_member(c, path, digest, a, NULL, err);
		info->layers++;
	}
	json_decref(doc);
	return r;
}

/* docker save / podman save: manifest.json names the config (its digest is the image id) and
 * the layers in order. */
static int docker_apply(const struct container *c, struct apply *a, struct image_source_info *info, struct error *err)
{
	json_t *doc = read_json(c, "manifest.json", NULL, err);
	if (!doc)
		return -EINVAL;
	json_t *m = json_array_get(doc, 0), *l;
	const char *config = json_string_value(json_object_get(m, "Config")), *why;
	_cleanup_free_ char *cpath = config ? ientry_normalize(config, &why) : NULL;
	int r = 0;
	if (json_array_size(doc) != 1 || !cpath)
		r = error_set(err, 0, "manifest.json of the archive %s", json_array_size(doc) == 1 ? "names no config" :
			      "lists several images (or none): save one image per archive");
	json_t *cj = r ? NULL : read_json(c, cpath, info->digest, err);
	if (!r && !cj)
		r = -EINVAL;
	if (cj)
		info->config = image_config_pick(cj);
	json_decref(cj);
	size_t i;
	json_array_foreach(r ? NULL : json_object_get(m, "Layers"), i, l) {
		const char *name = json_string_value(l);
		_cleanup_free_ char *path = name ? ientry_normalize(name, &why) : NULL;
		if (r == 0 && !path)
			r = error_set(err, 0, "manifest.json names a layer '%s' outside the archive", name ? name : "(none)");
		if (r == 0)
			r = apply_member(c, path, NULL, a, NULL, err);
		info->layers++;
	}
	json_decref(doc);
	return r;
}

/* ---- a directory as the image: walked in name order (so the digest is the tree's), never
 * following a link, never onto another file system; hard links kept as hard links ---- */

struct inode_seen {
	dev_t dev;
	ino_t ino;
	char *path;
};

struct walk {
	struct apply *a;
	dev_t dev;
	struct inode_seen *seen;
	size_t nseen;
};

static ssize_t fd_read(void *ctx, void *buf, size_t n, struct error *err)
{
	ssize_t r;
	while ((r = read(*(int *)ctx, buf, n)) < 0 && errno == EINTR)
		;
	if (r < 0)
		error_set(err, errno, "cannot read a file of the image's directory");
	return r;
}

static const char *seen_before(struct walk *w, const struct stat *st, const char *path)
{
	if (!S_ISREG(st->st_mode) || st->st_nlink < 2)
		return NULL;
	for (size_t i = 0; i < w->nseen; i++)
		if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
			return w->seen[i].path;
	w->seen = xrealloc(w->seen, (w->nseen + 1) * sizeof *w->seen);
	w->seen[w->nseen++] = (struct inode_seen){ st->st_dev, st->st_ino, xstrdup(path) };
	return NULL;
}

static int walk_dir(struct walk *w, int dfd, const char *prefix, struct error *err);

static int walk_one(struct walk *w, int dfd, const char *name, const char *path, struct error *err)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return error_set(err, errno, "cannot read %s of the image's directory", path);
	if (st.st_dev != w->dev)
		return 0;
	char target[4096] = "";
	_cleanup_close_ int fd = -1;
	struct ientry e = { .path = path, .mode = st.st_mode, .uid = st.st_uid, .gid = st.st_gid, .size = st.st_size,
			    .mtime = st.st_mtim, .read = fd_read, .ctx = &fd, .symlink = target };
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
		if (n < 0)
			return error_set(err, errno, "cannot read the symlink %s of the image's directory", path);
		target[n] = '\0';
	}
	e.hardlink = seen_before(w, &st, path);
	if (S_ISREG(st.st_mode) && !e.hardlink && (fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return error_set(err, errno, "cannot read %s of the image's directory", path);
	int r = apply_entry(w->a, &e, err);
	if (r == 0 && S_ISDIR(st.st_mode)) {
		_cleanup_close_ int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = sub < 0 ? error_set(err, errno, "cannot read %s of the image's directory", path) : walk_dir(w, sub, path, err);
	}
	return r;
}

static int walk_dir(struct walk *w, int dfd, const char *prefix, struct error *err)
{
	struct dirent **names = NULL;
	int n = scandirat(dfd, ".", &names, NULL, alphasort);
	if (n < 0)
		return error_set(err, errno, "cannot list %s of the image's directory", *prefix ? prefix : "/");
	int r = 0;
	for (int i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		if (r == 0 && strcmp(nm, ".") && strcmp(nm, "..")) {
			_cleanup_free_ char *path = *prefix ? xasprintf("%s/%s", prefix, nm) : xstrdup(nm);
			r = walk_one(w, dfd, nm, path, err);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

static int dir_apply(int dfd, struct apply *a, struct image_source_info *info, struct error *err)
{
	struct stat st;
	struct sha256_ctx sha;
	sha256_init(&sha);
	struct walk w = { .a = a };
	a->hash = &sha;
	int r = fstat(dfd, &st) < 0 ? -errno : 0;
	w.dev = st.st_dev;
	if (r == 0)
		r = walk_dir(&w, dfd, "", err);
	a->hash = NULL;
	for (size_t i = 0; i < w.nseen; i++)
		free(w.seen[i].path);
	free(w.seen);
	struct stream s = { .sha = sha };
	stream_digest(&s, info->digest);
	info->layers = 1;
	return r;
}

/* ---- which kind of source ---- */

static bool is_hex64(const char *s, size_t n) { return n == 64 && strspn(s, "0123456789abcdef") >= 64; }

/* Could name be part of a save archive (docker, podman, OCI)? Those hold only manifest.json,
 * repositories, index.json, oci-layout, blobs/sha256/<hex>, <hex>.json, <hex>.tar and <hex>/...;
 * the first other name (bin, etc/passwd...) shows a root file system. */
static bool save_like(const char *n)
{
	static const char *const top[] = { "manifest.json", "repositories", "index.json", "oci-layout", "blobs", "blobs/sha256", NULL };
	for (const char *const *t = top; *t; t++)
		if (!strcmp(n, *t))
			return true;
	if (!strncmp(n, "blobs/sha256/", 13))
		return is_hex64(n + 13, strlen(n + 13));
	size_t h = strcspn(n, "/.");
	return is_hex64(n, h) && (!n[h] || n[h] == '/' || !strcmp(n + h, ".json") || !strcmp(n + h, ".tar"));
}

/* A tar (compressed or not) holding manifest.json (docker) or oci-layout and index.json (OCI)?
 * Read until a name no save archive has: a root file system's tarball is not read through. */
static const char *tar_kind(const char *path)
{
	struct archive *ar = reader_new();
	struct archive_entry *e;
	bool manifest = false, layout = false, index = false, plain = false;
	if (archive_read_open_filename(ar, path, 1 << 16) == ARCHIVE_OK) {
		while (!plain && archive_read_next_header(ar, &e) == ARCHIVE_OK) {
			const char *why;
			_cleanup_free_ char *n = ientry_normalize(archive_entry_pathname(e), &why);
			plain = !n || !*n ? false : !save_like(n);
			manifest |= n && !strcmp(n, "manifest.json");
			layout |= n && !strcmp(n, "oci-layout");
			index |= n && !strcmp(n, "index.json");
		}
	}
	archive_read_free(ar);
	return plain ? "tar" : layout && index ? "oci-archive" : manifest ? "docker-archive" : "tar";
}

int image_source_apply(const char *source, struct apply *a, struct image_source_info *info, struct error *err)
{
	if (image_libs_load(err) < 0)
		return -ENOENT;
	_cleanup_close_ int fd = open(source, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return error_set(err, errno, "cannot read the image source %s", source);
	struct container c = { .dirfd = S_ISDIR(st.st_mode) ? fd : -1, .tar = source };
	if (S_ISDIR(st.st_mode)) {
		bool oci = faccessat(fd, "oci-layout", F_OK, AT_SYMLINK_NOFOLLOW) == 0 && faccessat(fd, "index.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
		bool docker = faccessat(fd, "manifest.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
		info->format = oci ? "oci-layout" : docker ? "docker-archive" : "directory";
		return oci ? oci_apply(&c, a, info, err) : docker ? docker_apply(&c, a, info, err) : dir_apply(fd, a, info, err);
	}
	if (!S_ISREG(st.st_mode))
		return error_set(err, 0, "the image source %s is neither a file nor a directory", source);
	info->format = tar_kind(source);
	if (!strcmp(info->format, "oci-archive"))
		return oci_apply(&c, a, info, err);
	if (!strcmp(info->format, "docker-archive"))
		return docker_apply(&c, a, info, err);
	/* a root file system as one tarball: its digest is the file's */
	struct stream s = { .fd = steal_fd(&fd), .name = source };
	sha256_init(&s.sha);
	int r = apply_tar(&s, a, err);
	stream_close(&s);
	stream_digest(&s, info->digest);
	info->layers = 1;
	return r;
}
