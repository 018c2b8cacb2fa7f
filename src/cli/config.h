/* SPDX-License-Identifier: Apache-2.0 */
/* config.h - warren.conf's keys for the command line (config.c; the parser is util/conf.h). */
#ifndef WARREN_CLI_CONFIG_H
#define WARREN_CLI_CONFIG_H

#include "net/opts.h"
#include "util/conf.h"
#include "util/error.h"

/* Read the configuration files (conf_files) once, at the start of every command: 0, or -EINVAL
 * with one line in err naming the file and line. */
int cli_config_load(struct error *err);
/* The keys a file may hold (NULL-name terminated), for tests and selfcheck. */
const struct conf_key *cli_config_keys(void);
/* A run that named no network (--net, a job's network:) gets warren.conf's net = MODE. */
int cli_net_default(struct net_opts *o, struct error *err);

#endif
