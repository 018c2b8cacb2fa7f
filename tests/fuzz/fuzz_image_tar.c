/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_image_tar.c - an archive of any bytes imported as an image (image_source_apply: the kind
 * found, the tar read, compressed or not, as a tarball or a save/OCI archive, the entries
 * applied): whatever it holds, nothing beside the tree is created, changed or removed (a
 * directory "outside" next to it keeps exactly its one file), and the import ends with 0 or
 * one error message. Works in build/fuzz/image-scratch/<pid>, removed at exit. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "image/source.h"
#include "util/fs.h"

static char *base;

static void check_outside(void)
{
	_cleanup_free_ char *victim = xasprintf("%s/outside/victim", base);
	_cleanup_free_ char *other = xasprintf("%s/outside/x", base);
	_cleanup_free_ char *txt = read_file(victim, NULL);
	struct stat st;
	if (!txt || strcmp(txt, "victim\n") || lstat(victim, &st) < 0 || st.st_nlink != 1 || path_exists(other)) {
		fprintf(stderr, "the archive changed %s/outside\n", base);
		abort();
	}
}

static void remove_base(void) { rm_tree(base); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!base) {
		atexit(remove_base);
		base = xasprintf("%s/build/fuzz/image-scratch/%d", getenv("PWD") ? getenv("PWD") : ".", (int)getpid());
		_cleanup_free_ char *outside = xasprintf("%s/outside", base);
		_cleanup_free_ char *victim = xasprintf("%s/victim", outside);
		if (mkdir_p(outside, 0755) < 0 || write_file(victim, "victim\n", 7) < 0)
			abort();
	}
	_cleanup_free_ char *input = xasprintf("%s/input.tar", base);
	_cleanup_free_ char *tree = xasprintf("%s/tree", base);
	if (write_file(input, (const char *)data, size) < 0 || mkdir(tree, 0755) < 0)
		abort();
	_cleanup_close_ int root = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct apply a;
	struct image_source_info info = { .format = "?" };
	struct error err = { 0 };
	apply_init(&a, root, geteuid() == 0, 1 << 20, 1000);
	if (image_source_apply(input, &a, &info, &err) == 0)
		apply_finish(&a, &err);
	else
		apply_free(&a);
	json_decref(info.config);   /* an OCI or docker archive's config */
	error_clear(&err);
	check_outside();
	if (rm_tree(tree) < 0)
		abort();
	return 0;
}
