/* SPDX-License-Identifier: Apache-2.0 */
/* users.h - the passwd and group entries a cell's job sees, so that id, whoami, git and ssh
 * find the run user. */
#ifndef WARREN_CELL_USERS_H
#define WARREN_CELL_USERS_H

#include <stdbool.h>

#include "cell/spec.h"
#include "util/error.h"

/* The cell's /etc/passwd (or /etc/group): the image's entries (from <root>/etc, where root is
 * the rootfs or "/") minus any that clash with the run user, plus the run user; the image's
 * file as it is when it names the run user itself (a line of its name and uid; for the group
 * file, when it has a group of the run user's gid too). Heap string. */
char *users_db(const struct cell_spec *s, bool group);
/* The image's passwd (or group) file of s's root, a regular file of at most 1 MiB: heap, or
 * NULL. */
char *users_image_db(const struct cell_spec *s, bool group);
/* The name (field 1) of the first entry of db (passwd or group lines) whose id (field 3) is
 * id: heap, or NULL. */
char *users_name_of(const char *db, unsigned id);

#endif
