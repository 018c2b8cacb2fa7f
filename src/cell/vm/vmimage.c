/* SPDX-License-Identifier: Apache-2.0 */
/* vmimage.c - what the vm driver boots, made by warren from the host's Debian kernel package
 * and cached in the state directory: the uncompressed ELF vmlinux (booted through PVH), cut
 * out of the bzImage as the kernel's scripts/extract-vmlinux does (the first xz or zstd stream
 * in it that decompresses to an ELF file), and the initramfs (a newc cpio written here: the
 * static guest init and the modules it needs with their dependencies from modules.dep,
 * decompressed). Each is keyed by the identity of the files it is made of, and written
 * atomically: a run that finds it made uses it as it is. */
#include "cell/vm.h"

#include <dirent.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <zstd.h>

#include "cell/contract.h"
#include "util/dl.h"
#include "util/fs.h"

/* The modules the guest loads (with what they need), unless the kernel has them built in. */
static const char *const vm_modules[] = { "virtio_mmio", "virtio_console", "9pnet_virtio", "9p", NULL };
/* The NIC's (--net nat, allow=) and overlay's (an image), in lists of their own: each module
 * costs the boot its loading (tens of ms under TCG), so a VM loads only what it uses. */
static const char *const vm_net_modules[] = { "virtio_net", NULL };
static const char *const vm_overlay_modules[] = { "overlay", NULL };

/* ---- decompression ---- */

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void buf_grow(struct buf *b, size_t want)
{
	if (b->cap - b->len >= want)
		return;
	while (b->cap - b->len < want)
		b->cap = b->cap ? b->cap * 2 : 1 << 20;
	b->p = xrealloc(b->p, b->cap);
}

/* liblzma and libzstd, loaded when a VM's files are made (util/dl.h): linked in, liblzma's
 * start-up code (a CPU probe) ran at every exec of warren */
#define DECOMP_LZMA(X) X(lzma_stream_decoder) X(lzma_code) X(lzma_end)
#define DECOMP_ZSTD(X) X(ZSTD_createDStream) X(ZSTD_decompressStream) X(ZSTD_isError) X(ZSTD_freeDStream)
static struct {
	void *lzma, *zstd;
#define X(f) __typeof__(f) *f;
	DECOMP_LZMA(X)
	DECOMP_ZSTD(X)
#undef X
} dz;

static int decomp_load(struct error *err)
{
#define X(f) { #f, (void **)&dz.f },
	const struct dl_sym lzma[] = { DECOMP_LZMA(X) }, zstd[] = { DECOMP_ZSTD(X) };
#undef X
	if (dl_load(&dz.lzma, "liblzma.so.5", lzma, sizeof lzma / sizeof lzma[0], "the vm driver", "liblzma5", err) < 0 ||
	    dl_load(&dz.zstd, "libzstd.so.1", zstd, sizeof zstd / sizeof zstd[0], "the vm driver", "libzstd1", err) < 0)
		return -ENOENT;
	return 0;
}
#define lzma_stream_decoder (*dz.lzma_stream_decoder)
#define lzma_code (*dz.lzma_code)
#define lzma_end (*dz.lzma_end)
#define ZSTD_createDStream (*dz.ZSTD_createDStream)
#define ZSTD_decompressStream (*dz.ZSTD_decompressStream)
#define ZSTD_isError (*dz.ZSTD_isError)
#define ZSTD_freeDStream (*dz.ZSTD_freeDStream)

/* One xz stream at in (what follows it is ignored). 0, or -EINVAL when it is not one. */
static int unxz(const unsigned char *in, size_t len, struct buf *out)
{
	lzma_stream z = LZMA_STREAM_INIT;
	if (lzma_stream_decoder(&z, UINT64_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	z.next_in = in;
	z.avail_in = len;
	lzma_ret r;
	do {
		buf_grow(out, 1 << 20);
		z.next_out = out->p + out->len;
		z.avail_out = out->cap - out->len;
		r = lzma_code(&z, LZMA_FINISH);
		out->len = out->cap - z.avail_out;
	} while (r == LZMA_OK);
	lzma_end(&z);
	return r == LZMA_STREAM_END ? 0 : -EINVAL;
}

/* One zstd frame at in. 0, or -EINVAL. */
static int unzstd(const unsigned char *in, size_t len, struct buf *out)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	if (!z)
		return -ENOMEM;
	ZSTD_inBuffer zi = { in, len, 0 };
	size_t r;
	do {
		buf_grow(out, 1 << 20);
		ZSTD_outBuffer zo = { out->p + out->len, out->cap - out->len, 0 };
		r = ZSTD_decompressStream(z, &zo, &zi);
		out->len += zo.pos;
	} while (!ZSTD_isError(r) && r != 0 && (zi.pos < zi.size || out->len == out->cap));
	ZSTD_freeDStream(z);
	return !ZSTD_isError(r) && r == 0 ? 0 : -EINVAL;
}

/* The vmlinux inside a bzImage: the first compressed stream that gives an ELF file. */
static int extract_vmlinux(const unsigned char *img, size_t len, struct buf *out)
{
	static const struct { const char *magic; size_t n; int (*fn)(const unsigned char *, size_t, struct buf *); } kinds[] = {
		{ "\xfd" "7zXZ\0", 6, unxz },
		{ "\x28\xb5\x2f\xfd", 4, unzstd },
	};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		for (const unsigned char *p = img; (p = memmem(p, len - (size_t)(p - img), kinds[k].magic, kinds[k].n)); p++) {
			out->len = 0;
			if (kinds[k].fn(p, len - (size_t)(p - img), out) == 0 && out->len > 4 && !memcmp(out->p, "\x7f" "ELF", 4))
				return 0;
		}
	}
	return -ENOEXEC;
}

/* ---- the cache ---- */

static int write_product(const char *path, struct buf *b, int r, struct error *err);

static char *identity(const char *path, struct error *err)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		error_set(err, errno, "cannot read %s", path);
		return NULL;
	}
	return xasprintf("%llx-%llx-%llx-%lx", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			 (unsigned long long)st.st_size, (long)st.st_mtim.tv_sec ^ st.st_mtim.tv_nsec);
}

/* The cached file <cache>/<name>, made by make() when it is not there yet. */
static int cached(const char *cache, const char *name, char **path, int (*make)(const struct vm_kernel *, struct buf *, struct error *),
		  const struct vm_kernel *k, struct error *err)
{
	*path = xasprintf("%s/%s", cache, name);
	if (access(*path, R_OK) == 0)
		return 0;
	int r = mkdir_p(cache, 0700);
	if (r < 0)
		return error_set(err, -r, "cannot make the vm cache %s", cache);
	struct buf b = { 0 };
	return write_product(*path, &b, make(k, &b, err), err);
}

static int make_vmlinux(const struct vm_kernel *k, struct buf *out, struct error *err)
{
	size_t len;
	_cleanup_free_ unsigned char *img = (unsigned char *)read_file(k->image, &len);
	if (!img)
		return error_set(err, errno, "cannot read the kernel %s", k->image);
	if (decomp_load(err) < 0)
		return -ENOENT;
	if (extract_vmlinux(img, len, out) < 0)
		return error_set(err, ENOEXEC, "no xz or zstd stream with an ELF vmlinux in the kernel %s; give a Debian kernel (WARREN_VM_KERNEL)", k->image);
	return 0;
}

/* ---- the initramfs ---- */

/* A newc cpio entry (name, mode, data). */
static void cpio_add(struct buf *b, const char *name, mode_t mode, const void *data, size_t len)
{
	static unsigned ino = 1;
	size_t nl = strlen(name) + 1;
	buf_grow(b, 110 + nl + len + 8);
	b->len += (size_t)sprintf((char *)b->p + b->len, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X",
				  ino++, (unsigned)mode, 0u, 0u, S_ISDIR(mode) ? 2u : 1u, 0u, len, 0u, 0u, 0u, 0u, nl, 0u);
	memcpy(b->p + b->len, name, nl);
	b->len += nl;
	while (b->len % 4)
		b->p[b->len++] = 0;
	if (len)
		memcpy(b->p + b->len, data, len);
	b->len += len;
	while (b->len % 4)
		b->p[b->len++] = 0;
}

/* The module name of a path in modules.dep ("kernel/net/9p/9pnet_virtio.ko.xz" -> 9pnet_virtio). */
static char *module_name(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *n = xstrdup(base);
	n[strcspn(n, ".")] = '\0';
	for (char *c = n; *c; c++)
		*c = *c == '-' ? '_' : *c;
	return n;
}

struct modctx {
	char *dep;          /* modules.dep, whole */
	char *builtin;      /* modules.builtin, whole */
	const char *moddir;
	struct buf *cpio;
	struct buf order;   /* file names in load order */
};

/* The line of modules.dep for module name, or NULL. */
static char *dep_line(const struct modctx *m, const char *name)
{
	for (char *l = m->dep; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		size_t pl = strcspn(l, ":");
		_cleanup_free_ char *path = strndup(l, pl);
		_cleanup_free_ char *n = path ? module_name(path) : NULL;
		if (n && !strcmp(n, name))
			return strndup(l, strcspn(l, "\n"));
	}
	return NULL;
}

static bool order_has(const struct modctx *m, const char *file)
{
	size_t fl = strlen(file);
	for (const char *p = (const char *)m->order.p; p && p < (const char *)m->order.p + m->order.len; p += strcspn(p, "\n") + 1)
		if (strcspn(p, "\n") == fl && !strncmp(p, file, fl))
			return true;
	return false;
}

/* Add the module file at path (relative to moddir), decompressed, once. */
static int add_module_path(struct modctx *m, const char *path, int depth, struct error *err);

/* Add module name after what it needs: modules.dep lists all of that, the last to load first. */
static int add_module(struct modctx *m, const char *name, int depth, struct error *err)
{
	_cleanup_free_ char *line = dep_line(m, name);
	if (!line) {
		_cleanup_free_ char *ko = xasprintf("/%s.ko\n", name);
		if (m->builtin && strstr(m->builtin, ko))
			return 0;
		return error_set(err, ENOENT, "the kernel's modules in %s have no %s; the vm driver needs it", m->moddir, name);
	}
	line[strcspn(line, ":")] = '\0';
	const char *deps = line + strlen(line) + 1;
	/* dependencies, the last listed first */
	_cleanup_free_ char *copy = xstrdup(deps);
	char *words[64];
	size_t n = 0;
	for (char *s = NULL, *w = strtok_r(copy, " ", &s); w && n < 64; w = strtok_r(NULL, " ", &s))
		words[n++] = w;
	while (n--)
		if (add_module_path(m, words[n], depth + 1, err) < 0)
			return -EINVAL;
	return add_module_path(m, line, depth, err);
}

static int add_module_path(struct modctx *m, const char *path, int depth, struct error *err)
{
	_cleanup_free_ char *name = module_name(path);
	_cleanup_free_ char *file = xasprintf("%s.ko", name);
	if (order_has(m, file))
		return 0;
	if (depth > 16)
		return error_set(err, ELOOP, "modules.dep of %s loops at %s", m->moddir, name);
	_cleanup_free_ char *full = xasprintf("%s/%s", m->moddir, path);
	size_t len;
	_cleanup_free_ unsigned char *raw = (unsigned char *)read_file(full, &len);
	if (!raw)
		return error_set(err, errno, "cannot read the module %s", full);
	struct buf plain = { 0 };
	int r = 0;
	size_t pl = strlen(path);
	bool xz = pl > 3 && !strcmp(path + pl - 3, ".xz"), zst = pl > 4 && !strcmp(path + pl - 4, ".zst");
	if ((xz || zst) && decomp_load(err) < 0)
		return -ENOENT;
	if (xz)
		r = unxz(raw, len, &plain);
	else if (zst)
		r = unzstd(raw, len, &plain);
	if (r < 0) {
		free(plain.p);
		return error_set(err, -r, "cannot decompress the module %s", full);
	}
	_cleanup_free_ char *dst = xasprintf("%s/%s", &VM_MOD_DIR[1], file);
	cpio_add(m->cpio, dst, S_IFREG | 0644, plain.p ? plain.p : raw, plain.p ? plain.len : len);
	free(plain.p);
	buf_grow(&m->order, strlen(file) + 2);
	m->order.len += (size_t)sprintf((char *)m->order.p + m->order.len, "%s\n", file);
	return 0;
}

/* A host file in the initramfs at dst (relative), with the directories on its way. */
static int add_file(struct buf *out, const char *dst, const char *src, mode_t mode, struct error *err)
{
	size_t len;
	_cleanup_free_ char *data = read_file(src, &len);
	if (!data)
		return error_set(err, errno, "cannot read %s for the initramfs", src);
	_cleanup_free_ char *dirs = xstrdup(dst);
	for (char *slash = strchr(dirs, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		cpio_add(out, dirs, S_IFDIR | 0755, NULL, 0); /* a directory again is harmless */
		*slash = '/';
	}
	cpio_add(out, dst, S_IFREG | mode, data, len);
	return 0;
}

static int build_initramfs(const struct vm_initramfs *spec, struct buf *out, struct error *err)
{
	_cleanup_free_ char *dep_path = xasprintf("%s/modules.dep", spec->moddir);
	_cleanup_free_ char *builtin_path = xasprintf("%s/modules.builtin", spec->moddir);
	struct modctx m = { .dep = read_file(dep_path, NULL), .builtin = read_file(builtin_path, NULL),
			    .moddir = spec->moddir, .cpio = out };
	int r = m.dep ? 0 : error_set(err, errno, "cannot read %s (the kernel's modules)", dep_path);
	if (r == 0 && access(spec->init, R_OK) < 0)
		r = error_set(err, errno, "cannot read the guest init %s; build it with make", spec->init);
	if (r == 0)
		r = add_file(out, &VM_INIT_PATH[1], spec->init, 0755, err);
	cpio_add(out, &VM_MOD_DIR[1], S_IFDIR | 0755, NULL, 0);
	for (size_t i = 0; r == 0 && spec->modules[i]; i++)
		r = add_module(&m, spec->modules[i], 0, err);
	size_t base = m.order.len;
	for (size_t i = 0; r == 0 && spec->net_modules && spec->net_modules[i]; i++)
		r = add_module(&m, spec->net_modules[i], 0, err);
	size_t net_end = m.order.len;
	for (size_t i = 0; r == 0 && spec->overlay_modules && spec->overlay_modules[i]; i++)
		r = add_module(&m, spec->overlay_modules[i], 0, err);
	for (size_t i = 0; r == 0 && spec->files && spec->files[i].dst; i++)
		r = add_file(out, spec->files[i].dst, spec->files[i].src, 0755, err);
	if (r == 0) {
		cpio_add(out, &VM_MOD_LIST[1], S_IFREG | 0644, m.order.p, base);
		if (spec->net_modules)
			cpio_add(out, &VM_MOD_NET_LIST[1], S_IFREG | 0644, m.order.p + base, net_end - base);
		if (spec->overlay_modules)
			cpio_add(out, &VM_MOD_OVERLAY_LIST[1], S_IFREG | 0644, m.order.p + net_end, m.order.len - net_end);
		cpio_add(out, "TRAILER!!!", 0, NULL, 0);
	}
	free(m.dep);
	free(m.builtin);
	free(m.order.p);
	return r;
}

static int make_initramfs(const struct vm_kernel *k, struct buf *out, struct error *err)
{
	struct vm_initramfs spec = { .init = k->init, .moddir = k->moddir, .modules = vm_modules,
				     .net_modules = vm_net_modules, .overlay_modules = vm_overlay_modules };
	return build_initramfs(&spec, out, err);
}

/* One product written atomically to path. */
static int write_product(const char *path, struct buf *b, int r, struct error *err)
{
	if (r == 0 && (r = write_file_atomic(path, (const char *)b->p, b->len, 0644)) < 0)
		error_set(err, -r, "cannot write %s", path);
	free(b->p);
	return r;
}

int vm_write_initramfs(const struct vm_initramfs *spec, const char *path, struct error *err)
{
	struct buf b = { 0 };
	return write_product(path, &b, build_initramfs(spec, &b, err), err);
}

int vm_write_vmlinux(const char *image, const char *path, struct error *err)
{
	struct vm_kernel k = { .image = (char *)image };
	struct buf b = { 0 };
	return write_product(path, &b, make_vmlinux(&k, &b, err), err);
}

/* ---- the kernel ---- */

/* $WARREN_VM_KERNEL, else the newest /boot/vmlinuz-<version> with /lib/modules/<version>. */
static char *find_kernel(struct error *err)
{
	const char *env = getenv("WARREN_VM_KERNEL");
	if (env && *env)
		return xstrdup(env);
	DIR *d = opendir("/boot");
	struct dirent *e;
	char *best = NULL;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "vmlinuz-", 8))
			continue;
		_cleanup_free_ char *mods = xasprintf("/lib/modules/%s/modules.dep", e->d_name + 8);
		if (access(mods, R_OK) < 0 || (best && strverscmp(e->d_name, best) <= 0))
			continue;
		free(best);
		best = xstrdup(e->d_name);
	}
	if (d)
		closedir(d);
	if (!best) {
		error_set(err, ENOENT, "no kernel for the vm driver: no /boot/vmlinuz-VERSION with /lib/modules/VERSION; install linux-image-amd64 or set WARREN_VM_KERNEL");
		return NULL;
	}
	char *path = xasprintf("/boot/%s", best);
	free(best);
	return path;
}

/* The guest init: $WARREN_GUEST_INIT, else warren-guest-init beside the warren binary. */
static char *find_init(void)
{
	const char *env = getenv("WARREN_GUEST_INIT");
	if (env && *env)
		return xstrdup(env);
	_cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
	if (!self)
		return xstrdup("warren-guest-init");
	*strrchr(self, '/') = '\0';
	return xasprintf("%s/warren-guest-init", self);
}

/* The cache's names of the vmlinux of kernel image (of version) and of the initramfs made of it
 * and the guest init: each keyed by the identity of the files it is made of. */
static int cache_names(const char *image, const char *version, const char *init, char **vname, char **iname,
		       struct error *err)
{
	_cleanup_free_ char *kid = identity(image, err);
	_cleanup_free_ char *iid = kid ? identity(init, err) : NULL;
	if (!iid)
		return -ENOENT;
	*vname = xasprintf("vmlinux-%s-%s", version, kid);
	*iname = xasprintf("initramfs-%s-%s-%s.cpio", version, kid, iid);
	return 0;
}

int vm_kernel_prepare(struct vm_kernel *k, const char *statedir, struct error *err)
{
	*k = (struct vm_kernel){ 0 };
	k->image = find_kernel(err);
	if (!k->image)
		return -ENOENT;
	const char *base = strrchr(k->image, '/') ? strrchr(k->image, '/') + 1 : k->image;
	k->version = xstrdup(strncmp(base, "vmlinuz-", 8) ? base : base + 8);
	k->moddir = xasprintf("/lib/modules/%s", k->version);
	k->init = find_init();
	_cleanup_free_ char *vname = NULL, *iname = NULL;
	if (cache_names(k->image, k->version, k->init, &vname, &iname, err) < 0)
		return error_prefix(err, "the vm driver"), -ENOENT;
	_cleanup_free_ char *cache = xasprintf("%s/vm-cache", statedir);
	if (cached(cache, vname, &k->vmlinux, make_vmlinux, k, err) < 0)
		return -EINVAL;
	return cached(cache, iname, &k->initramfs, make_initramfs, k, err) < 0 ? -EINVAL : 0;
}

void vm_kernel_free(struct vm_kernel *k)
{
	free(k->image);
	free(k->version);
	free(k->moddir);
	free(k->init);
	free(k->vmlinux);
	free(k->initramfs);
	*k = (struct vm_kernel){ 0 };
}

/* ---- warren gc: the cache's old entries ---- */

/* Is name what kernel image (as it is now) and init make? */
static bool made_of(const char *name, const char *image, const char *init)
{
	const char *base = strrchr(image, '/') ? strrchr(image, '/') + 1 : image;
	const char *version = strncmp(base, "vmlinuz-", 8) ? base : base + 8;
	_cleanup_free_ char *vname = NULL, *iname = NULL;
	struct error err = { 0 };
	bool same = cache_names(image, version, init, &vname, &iname, &err) == 0 &&
		    !strcmp(name, strncmp(name, "initramfs-", 10) ? vname : iname);
	error_clear(&err);
	return same;
}

/* Is name made of a kernel that is still there (a /boot/vmlinuz-* or $WARREN_VM_KERNEL as it
 * is now) and, for an initramfs, of the guest init as it is now? The KVM probe's answer for a
 * vmlinux (accel-<vmlinux name>) lives as long as it. */
static bool cache_current(const char *name, const char *init)
{
	if (!strncmp(name, "accel-", 6))
		name += 6;
	const char *env = getenv("WARREN_VM_KERNEL");
	if (env && *env && made_of(name, env, init))
		return true;
	DIR *d = opendir("/boot");
	struct dirent *e;
	bool found = false;
	while (!found && d && (e = readdir(d))) {
		_cleanup_free_ char *image = xasprintf("/boot/%s", e->d_name);
		found = !strncmp(e->d_name, "vmlinuz-", 8) && made_of(name, image, init);
	}
	if (d)
		closedir(d);
	return found;
}

int vm_cache_prune(const char *statedir, int *removed)
{
	_cleanup_free_ char *cache = xasprintf("%s/vm-cache", statedir);
	_cleanup_free_ char *init = find_init();
	DIR *d = opendir(cache);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	struct dirent *e;
	int r = 0;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		bool ours = !strncmp(n, "vmlinux-", 8) || !strncmp(n, "initramfs-", 10) || !strncmp(n, "accel-", 6);
		if (!ours || is_atomic_tmp_name(n) || cache_current(n, init))
			continue;
		if (unlinkat(dirfd(d), n, 0) < 0)
			r = -errno;
		else
			(*removed)++;
	}
	closedir(d);
	return r;
}
