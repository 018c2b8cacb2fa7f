/* SPDX-License-Identifier: Apache-2.0 */
/* source.h - reading an image from what a user has: a tarball (tar, tar.gz, tar.xz, tar.zst,
 * tar.bz2), a directory, an OCI image layout (a directory, or a tar of one as `podman save
 * --format oci-archive` writes), or a `docker save` / `podman save` archive; the layers are
 * applied in order (apply.h) and the image's digest computed. */
#ifndef WARREN_IMAGE_SOURCE_H
#define WARREN_IMAGE_SOURCE_H

#include <jansson.h>

#include "image/apply.h"

struct image_source_info {
	char digest[72];     /* "sha256:<hex>": the manifest's (OCI), the config's = the image id
	                        (docker save), the file's (tarball), the tree's (directory) */
	const char *format;  /* "tar", "directory", "oci-layout", "oci-archive", "docker-archive" */
	unsigned layers;
	json_t *config;      /* OCI and docker images: the config's Env, WorkingDir, User, Entrypoint
	                        and Cmd (image/config.h); NULL for a tarball or a directory */
};

/* Apply the image at source (a path) to a; 0 or -errno + err. */
int image_source_apply(const char *source, struct apply *a, struct image_source_info *info, struct error *err);

#endif
