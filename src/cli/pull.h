/* SPDX-License-Identifier: Apache-2.0 */
/* pull.h - `warren image pull`: an image from an OCI or docker registry, fetched by skopeo into
 * a scratch directory of the image store and imported from there as an OCI layout. */
#ifndef WARREN_CLI_PULL_H
#define WARREN_CLI_PULL_H

#include <jansson.h>
#include <stdbool.h>

#include "image/store.h"
#include "util/error.h"

struct pull_opts {
	struct image_import_opts import;   /* --max-size, --max-entries, --replace */
	bool insecure;                     /* --insecure: plain HTTP or an unverified certificate */
	const char *creds;                 /* --creds USER[:PASSWORD] (skopeo's --src-creds) */
	const char *authfile;              /* --authfile FILE (skopeo's --src-authfile) */
	const char *cert_dir;              /* --cert-dir DIR (skopeo's --src-cert-dir) */
	bool progress;                     /* skopeo's progress on stderr (a terminal) */
};

/* Pull ref (docker://REF or REF) as the image name; the record in *info as image_import gives
 * it. 0 or -errno + err (one line: skopeo's own message and what to do). */
int image_pull(int statefd, const char *state, const char *ref, const char *name, const struct pull_opts *o,
	       json_t **info, struct error *err);
/* The name a pull gives when none is given: the last part of ref's repository
 * (registry:5000/team/app:1.2 -> app), or NULL when that is no image name. Heap. */
char *pull_default_name(const char *ref);
/* skopeo's message in its stderr text (its logrus msg="...", unquoted, or the last line). Heap. */
char *pull_skopeo_message(const char *text);

#endif
