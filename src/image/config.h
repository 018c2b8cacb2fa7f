/* SPDX-License-Identifier: Apache-2.0 */
/* config.h - an image's config as warren keeps it: Env, WorkingDir, User, Entrypoint and Cmd of
 * the OCI (or docker) config blob, checked and stored in image.json beside the tree; and the
 * pure decisions of using it: the command of a run (docker's meaning of Entrypoint and Cmd) and
 * the user the image names (numeric, or found in the image's own passwd and group). */
#ifndef WARREN_IMAGE_CONFIG_H
#define WARREN_IMAGE_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The part of a config blob ({"config": {...}} of OCI and docker) warren uses, checked: Env
 * (NAME=VALUE strings with a variable's name), WorkingDir (absolute), User, Entrypoint and Cmd
 * (arrays of strings); what is missing, empty or malformed is left out. Never NULL (an empty
 * object when the image sets nothing). */
json_t *image_config_pick(json_t *blob);

/* The command of a run of an image whose config is cfg: its Entrypoint (or entrypoint when
 * given: "" for none, else that one word), then the command given (cmd, n words) or, when none
 * is given, the image's Cmd (none when entrypoint is given, as docker does). Heap, NULL-
 * terminated; empty when there is nothing to run. */
char **image_command(const json_t *cfg, const char *entrypoint, char *const *cmd, size_t n);

/* The user an image's User names (NAME, UID, NAME:GROUP, UID:GID...): a number, or a name found
 * in the image's passwd (its text, or NULL) and group; without a group, the passwd entry's gid,
 * else the uid. 0, or -1 with *why (one phrase). */
int image_user_lookup(const char *user, const char *passwd, const char *group, uid_t *uid, gid_t *gid, const char **why);

#endif
