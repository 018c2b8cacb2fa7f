/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - dispatch of subcommands only. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/words.h"
#include "cli/mcp.h"
#include "oci/oci.h"

static const char USAGE[] =
	"usage: warren COMMAND [OPTIONS]\n"
	"\n"
	"Run untrusted jobs in a fresh cell of their own: private sticky /tmp (also $TMPDIR),\n"
	"private home, an unprivileged user, own processes and network, named limits, and\n"
	"nothing left behind.\n"
	"\n"
	"commands:\n"
	"  run [OPTIONS] -- COMMAND [ARG...]   run one command in a fresh cell\n"
	"  ps                                 list live runs\n"
	"  history [--label K=V] [--status S] list live and past runs (also 'ps -a')\n"
	"  serve [--listen unix:P|tcp:A:P]    runs in slots behind an HTTP API (docs/api.md)\n"
	"  submit [--via V] -- COMMAND        queue a command (or --job FILE) on warren serve\n"
	"  show [RUN]                         show a run's record (default: the latest)\n"
	"  gc [--older-than D] [RUN...]       reclaim what dead runs left; prune old records\n"
	"  job run FILE                       run a job file: services and steps in one cell\n"
	"  job check FILE                     report every mistake in a job file\n"
	"  logs RUN [STEP] [--follow]         print a run's step logs (live with --follow)\n"
	"  kill RUN                           stop a live run from another terminal\n"
	"  exec RUN -- COMMAND                run a command in a live session (session: in a job file)\n"
	"  end RUN                            end a live session\n"
	"  files get|put|ls RUN PATH          read, write or list a live session's files\n"
	"  policy RUN PATH [--write|--read|--exec]   may the run write (read, run) PATH?\n"
	"  selfcheck [--rootfs DIR]           check this host (and an image) for running cells\n"
	"  image import|ls|rm                 store root file systems for run --image NAME\n"
	"  mcp [--via V]                      an MCP server on stdio: coding agents' tools for sessions\n"
	"  oci COMMAND                        runc's command line over cells (also as warren-runc)\n"
	"\n"
	"'warren COMMAND --help' describes a command's options. Exit status of 'run': the job's\n"
	"own, 128+N when signal N killed it, 124 when --time or --cpu-time stopped it, 125 when\n"
	"warren itself failed, 126/127 when the command cannot be run or is not found.\n";

/* the commands a bad warren.conf does not stop */
static bool config_free_command(int argc, char **argv)
{
	if (argc < 2)
		return true;
	static const char *const FREE[] = { "--help", "-h", "help", "--version", "version", "selfcheck", NULL };
	for (size_t i = 0; FREE[i]; i++)
		if (!strcmp(argv[1], FREE[i]))
			return true;
	return argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"));
}

int main(int argc, char **argv)
{
	proc_args_save(argc, argv);
	/* a write past the caller's RLIMIT_FSIZE fails (EFBIG) and is said, instead of killing
	 * warren silently between the job's end and its record (the job gets SIGXFSZ back) */
	signal(SIGXFSZ, SIG_IGN);
	/* a standard descriptor the caller left closed: /dev/null (util/proc.h), before anything
	 * is opened (a host directory's descriptor became the job's stdin; with Landlock missing
	 * ".." from it walked the host's tree) */
	if (!std_fds_open()) {
		static const char m[] = "warren: cannot open /dev/null for a standard descriptor the caller left closed\n";
		if (fcntl(2, F_GETFD) >= 0)
			(void)!write(2, m, sizeof m - 1);
		return 125;
	}
	/* warren.conf (cli/config.h): a file that is wrong stops every command, naming its line,
	 * but help, version and selfcheck (what a user reaches for to mend it), which only warn */
	struct error cerr = { 0 };
	if (cli_config_load(&cerr) < 0) {
		if (!config_free_command(argc, argv))
			return cli_fail(&cerr);
		warn_line("%s", cerr.msg);
		error_clear(&cerr);
	}
	/* called as warren-runc: the OCI runtime face (oci/oci.h), runc's command line */
	const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
	if (argc > 0 && !strcmp(slash ? slash + 1 : argv[0], "warren-runc"))
		return cmd_oci(argc, argv);
	if (argc < 2) {
		fputs(USAGE, stderr);
		return 125;
	}
	const char *c = argv[1];
	char *av[3];
	if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
		if (argc > 2 && strcmp(c, "help") == 0) {
			av[0] = argv[2];
			av[1] = (char *)"--help";
			av[2] = NULL;
			argv = av;
			argc = 2;
			c = av[0];
		} else {
			fputs(USAGE, stdout);
			return 0;
		}
	} else {
		argc--;
		argv++;
	}
	if (!strcmp(c, "--version") || !strcmp(c, "version"))
		return cmd_version(argc, argv);
	if (!strcmp(c, "run"))
		return cmd_run(argc, argv);
	if (!strcmp(c, "ps"))
		return cmd_ps(argc, argv);
	if (!strcmp(c, "show"))
		return cmd_show(argc, argv);
	if (!strcmp(c, "gc"))
		return cmd_gc(argc, argv);
	if (!strcmp(c, "selfcheck"))
		return cmd_selfcheck(argc, argv);
	if (!strcmp(c, "job"))
		return cmd_job(argc, argv);
	if (!strcmp(c, "logs"))
		return cmd_logs(argc, argv);
	if (!strcmp(c, "kill"))
		return cmd_kill(argc, argv);
	if (!strcmp(c, "exec"))
		return cmd_exec(argc, argv);
	if (!strcmp(c, "end"))
		return cmd_end(argc, argv);
	if (!strcmp(c, "files"))
		return cmd_files(argc, argv);
	if (!strcmp(c, "policy"))
		return cmd_policy(argc, argv);
	if (!strcmp(c, "image"))
		return cmd_image(argc, argv);
	if (!strcmp(c, "history"))
		return cmd_history(argc, argv);
	if (!strcmp(c, "serve"))
		return cmd_serve(argc, argv);
	if (!strcmp(c, "submit"))
		return cmd_submit(argc, argv);
	if (!strcmp(c, "oci"))
		return cmd_oci(argc, argv);
	if (!strcmp(c, "mcp"))
		return cmd_mcp(argc, argv);
	if (!strcmp(c, "vm-image"))
		return cmd_vm_image(argc, argv);
	static const char *const commands[] = { "run", "job", "logs", "kill", "exec", "end", "files", "policy", "ps", "show", "gc", "selfcheck", "image",
						"history", "serve", "submit", "oci", "mcp", "version", "help", NULL };
	const char *near = closest_word(c, commands);
	_cleanup_free_ char *name = printable_name(c);
	if (near)
		warn_line("no command '%s'; did you mean '%s'? (see 'warren --help')", name, near);
	else
		warn_line("no command '%s'; the commands are run, job, logs, kill, exec, end, files, policy, ps, show, gc, selfcheck, image, history, serve, submit, oci, mcp (see 'warren --help')",
			  name);
	return 125;
}
