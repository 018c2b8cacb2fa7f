/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h - the subcommands and what they share: the state directory option, die-with-message. */
#ifndef WARREN_CLI_CLI_H
#define WARREN_CLI_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "util/error.h"

int cmd_run(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_selfcheck(int argc, char **argv);
int cmd_job(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_kill(int argc, char **argv);
int cmd_exec(int argc, char **argv);     /* cli/exec.c */
int cmd_end(int argc, char **argv);      /* cli/exec.c */
int cmd_files(int argc, char **argv);    /* cli/files.c */
int cmd_policy(int argc, char **argv);
int cmd_version(int argc, char **argv);
const char *warren_version(void);       /* cli/version.c: debian/changelog's version */
int cmd_image(int argc, char **argv);
int cmd_history(int argc, char **argv);  /* cli/history.c */
int cmd_serve(int argc, char **argv);    /* cli/serve.c */
/* cli/submit.c: against a running warren serve (--via unix:PATH|tcp:HOST:PORT) */
int cmd_submit(int argc, char **argv);
int cmd_vm_image(int argc, char **argv); /* hidden: the vm driver's boot products for the project's tools */
/* (help: the command's own --help text, printed for --help or -h) */
int cmd_logs_via(int argc, char **argv, const char *help);
int cmd_run_via(int argc, char **argv);
int cmd_kill_via(int argc, char **argv, const char *help);
bool cli_has_via(int argc, char **argv);
/* One line of a session socket's answer from fd (heap, without its \n; NULL at the end), read
 * byte by byte: what follows it (a file's bytes, an exec's stream) stays unread (cli/exec.c). */
char *cli_line_from(int fd);
/* One request to the warren serve of via (NULL: the default socket of state), with body (NULL:
 * none): the connection after the answer's head, its status in *status and what came after
 * the head in *rest (heap, *rlen bytes); -1 after err. */
int cli_via_request(const char *via, const char *state, const char *token_file, const char *method, const char *path,
		    const char *body, int *status, char **rest, size_t *rlen, struct error *err);
/* The same with len bytes of body (binary) of the Content-Type type. */
int cli_via_request_n(const char *via, const char *state, const char *token_file, const char *method, const char *path,
		      const char *type, const char *body, size_t len, int *status, char **rest, size_t *rlen,
		      struct error *err);

struct statedir;
/* Open the state directory of --state (opt), $WARREN_STATE or the default, to read runs from
 * (run/rundir.h: one the caller or root owns, on a way nobody else can change). One that does
 * not exist yet opens as having no runs. 0, or an exit code after one line on stderr. */
int cli_state_open(const char *opt, struct statedir *sd);
/* The run with the id or prefix (NULL: the latest) in the state directory of opt, opened as a
 * directory (*rfd); its full id, and the state directory's path in *state when not NULL. NULL
 * after one line on stderr, *rc the exit code. */
char *cli_run_open(const char *opt, const char *prefix, int *rfd, char **state, int *rc);

/* `warren show`: the rows of the record of run id, in where: spec (spec.json, or result.json,
 * which holds it) and r (result.json, or NULL when there is none; live: the run goes on). */
void show_record(FILE *out, const char *id, const char *where, json_t *spec, json_t *r, bool live);

/* Print "warren: <msg>" and return 125 (or err->status). */
int cli_fail(struct error *err);
/* Print "warren: <fmt>" and a hint to the subcommand's help; return 125. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
