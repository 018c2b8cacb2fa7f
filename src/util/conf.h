/* SPDX-License-Identifier: Apache-2.0 */
/* conf.h - warren's configuration files: /etc/warren/warren.conf, then the caller's own
 * ($XDG_CONFIG_HOME/warren/warren.conf, default ~/.config/warren/warren.conf; root reads only
 * /etc's), or the one file $WARREN_CONFIG names instead of both ("none": no file). Lines
 * "key = value", '#' comments; the keys and the checks of their values are the caller's (a
 * table, cli/config.c), so this layer knows no word of the layers above. A file must belong to
 * root (or to the caller, for the caller's own) and be writable by nobody else. What a later
 * file sets wins; the environment and the command line win over both (their readers ask
 * conf_get only when they have nothing of their own). */
#ifndef WARREN_UTIL_CONF_H
#define WARREN_UTIL_CONF_H

#include <stdbool.h>

#include "util/error.h"

#define CONF_SYSTEM_FILE "/etc/warren/warren.conf"
#define CONF_ENV "WARREN_CONFIG"

/* A key a file may hold: its name, what its value looks like (for messages), and its check (0,
 * or -1 with *why, heap, saying what is wrong with the value and naming it; NULL: any value but
 * empty). */
struct conf_key {
	const char *name;
	const char *expects;
	int (*check)(const char *key, const char *value, char **why);
};

/* The files the caller reads, in order (NULL-terminated, heap; free with strv_free). */
char **conf_files(void);
/* Read the files (conf_files) against keys (ending with a NULL name): 0, or -EINVAL with err
 * holding one line "FILE:LINE: ..." (an unknown key with the nearest known one, a bad value,
 * a line that is not key = value) or naming the file's owner or mode. Once per process; a
 * second call replaces what the first read. */
int conf_load(const struct conf_key *keys, struct error *err);
/* Read one file's text (path for messages) against keys into the store: for tests and conf_load. */
int conf_load_text(const char *path, const char *text, const struct conf_key *keys, struct error *err);
/* Forget everything read. */
void conf_reset(void);
/* The value of key from the files, or NULL; *from (when not NULL) gets "FILE:LINE". */
const char *conf_get(const char *key, const char **from);
/* The keys set, in the order first set (NULL-terminated, the store's own strings; free the array). */
const char **conf_keys(void);
/* Can uid's file with this owner and mode be trusted (owner root or uid, writable by nobody
 * else)? NULL when it can, else why not (static text). */
const char *conf_file_untrusted(unsigned owner, unsigned gid, unsigned mode, unsigned uid);

#endif
