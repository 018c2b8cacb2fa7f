/* SPDX-License-Identifier: Apache-2.0 */
/* libs.h - libarchive and nettle's SHA-256, loaded with dlopen when an image is read
 * (util/dl.h): linked into the binary, nettle's and liblzma's start-up code (CPU probes, a VM
 * exit each) ran at every exec of warren, 65-110 us of each `warren run` here. Included by the
 * image code only: its calls keep their names and go through the loaded functions. */
#ifndef WARREN_IMAGE_LIBS_H
#define WARREN_IMAGE_LIBS_H

#include <archive.h>
#include <archive_entry.h>
#include <nettle/sha2.h>

#include "util/error.h"

#define IMAGE_ARCHIVE_FUNCS(X) \
	X(archive_entry_gid) X(archive_entry_hardlink) X(archive_entry_mode) X(archive_entry_mtime) \
	X(archive_entry_mtime_nsec) X(archive_entry_pathname) X(archive_entry_size) X(archive_entry_symlink) \
	X(archive_entry_uid) X(archive_errno) X(archive_error_string) X(archive_read_data) X(archive_read_free) \
	X(archive_read_new) X(archive_read_next_header) X(archive_read_open) X(archive_read_open_filename) \
	X(archive_read_support_filter_bzip2) X(archive_read_support_filter_gzip) X(archive_read_support_filter_xz) \
	X(archive_read_support_filter_zstd) X(archive_read_support_format_tar) X(archive_set_error)
#define IMAGE_NETTLE_FUNCS(X) X(nettle_sha256_init) X(nettle_sha256_update) X(nettle_sha256_digest)

struct image_libs {
	void *archive, *nettle;
#define X(f) __typeof__(f) *f;
	IMAGE_ARCHIVE_FUNCS(X)
	IMAGE_NETTLE_FUNCS(X)
#undef X
};
extern struct image_libs image_libs;

/* Load both (once): 0, or one line saying which Debian package to install. */
int image_libs_load(struct error *err);

#ifndef IMAGE_LIBS_NO_NAMES
#define IMAGE_LIB(f) (*image_libs.f)
#define archive_entry_gid IMAGE_LIB(archive_entry_gid)
#define archive_entry_hardlink IMAGE_LIB(archive_entry_hardlink)
#define archive_entry_mode IMAGE_LIB(archive_entry_mode)
#define archive_entry_mtime IMAGE_LIB(archive_entry_mtime)
#define archive_entry_mtime_nsec IMAGE_LIB(archive_entry_mtime_nsec)
#define archive_entry_pathname IMAGE_LIB(archive_entry_pathname)
#define archive_entry_size IMAGE_LIB(archive_entry_size)
#define archive_entry_symlink IMAGE_LIB(archive_entry_symlink)
#define archive_entry_uid IMAGE_LIB(archive_entry_uid)
#define archive_errno IMAGE_LIB(archive_errno)
#define archive_error_string IMAGE_LIB(archive_error_string)
#define archive_read_data IMAGE_LIB(archive_read_data)
#define archive_read_free IMAGE_LIB(archive_read_free)
#define archive_read_new IMAGE_LIB(archive_read_new)
#define archive_read_next_header IMAGE_LIB(archive_read_next_header)
#define archive_read_open IMAGE_LIB(archive_read_open)
#define archive_read_open_filename IMAGE_LIB(archive_read_open_filename)
#define archive_read_support_filter_bzip2 IMAGE_LIB(archive_read_support_filter_bzip2)
#define archive_read_support_filter_gzip IMAGE_LIB(archive_read_support_filter_gzip)
#define archive_read_support_filter_xz IMAGE_LIB(archive_read_support_filter_xz)
#define archive_read_support_filter_zstd IMAGE_LIB(archive_read_support_filter_zstd)
#define archive_read_support_format_tar IMAGE_LIB(archive_read_support_format_tar)
#define archive_set_error IMAGE_LIB(archive_set_error)
#undef sha256_init
#undef sha256_update
#undef sha256_digest
#define sha256_init IMAGE_LIB(nettle_sha256_init)
#define sha256_update IMAGE_LIB(nettle_sha256_update)
#define sha256_digest IMAGE_LIB(nettle_sha256_digest)
#endif

#endif
