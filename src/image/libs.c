/* SPDX-License-Identifier: Apache-2.0 */
/* libs.c - see libs.h. */
#define IMAGE_LIBS_NO_NAMES
#include "image/libs.h"

#include "util/dl.h"

struct image_libs image_libs;

int image_libs_load(struct error *err)
{
#define X(f) { #f, (void **)&image_libs.f },
	const struct dl_sym archive[] = { IMAGE_ARCHIVE_FUNCS(X) }, nettle[] = { IMAGE_NETTLE_FUNCS(X) };
#undef X
	if (dl_load(&image_libs.nettle, "libnettle.so.8", nettle, sizeof nettle / sizeof nettle[0], "reading an image",
		    "libnettle8", err) < 0 ||
	    dl_load(&image_libs.archive, "libarchive.so.13", archive, sizeof archive / sizeof archive[0],
		    "reading an image", "libarchive13", err) < 0)
		return -ENOENT;
	return 0;
}
