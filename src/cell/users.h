/* SPDX-License-Identifier: Apache-2.0 */
/* users.h - the passwd and group entries a cell's job sees, so that id, whoami, git and ssh
 * find the run user. */
#ifndef WARREN_CELL_USERS_H
#define WARREN_CELL_USERS_H

#include <stdbool.h>

#include "cell/spec.h"
#include "util/error.h"

/* The cell's /etc/passwd (or /etc/group): the image's entries (from <root>/etc, where root is
 * the rootfs or "/") minus any that clash with the run user, plus the run user. Heap string. */
char *users_db(const struct cell_spec *s, bool group);

#endif
