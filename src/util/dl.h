/* SPDX-License-Identifier: Apache-2.0 */
/* dl.h - a shared library loaded with dlopen where warren uses it, not by each exec: what a
 * library does when it is loaded (its constructors, its relocations, its pages) is paid only
 * by the commands that need it. libmicrohttpd (warren serve), libnftables (--net), libldns
 * (the cell's resolver), libarchive (images), liblzma and libzstd (a VM's kernel modules). */
#ifndef WARREN_UTIL_DL_H
#define WARREN_UTIL_DL_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* One function of a library: its name and where its address goes. */
struct dl_sym {
	const char *name;
	void **slot;
};

/* Load lib (RTLD_NOW | RTLD_LOCAL) into *h once and fill each sym's slot: 0, or -ENOENT with
 * nothing kept (*h stays NULL) and, when err is not NULL, one line: "<what> needs <lib>: <why>;
 * install the Debian package <pkg>", or "<lib> has no <function>; install a newer <pkg>" (with
 * err NULL, dlerror() tells why). Safe from several threads. */
int dl_load(void **h, const char *lib, const struct dl_sym *syms, size_t n, const char *what, const char *pkg,
	    struct error *err);

#endif
