/* SPDX-License-Identifier: Apache-2.0 */
/* run.c - `warren run`: parse options into a cell spec, check them, hand it to the supervisor;
 * with --session, to a job's runner instead (a job of no steps whose commands come later:
 * job/session.h). */
#include <ctype.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cli/cli.h"
#include "cli/config.h"
#include "cli/opts.h"
#include "cli/history.h"
#include "cli/spec.h"
#include "image/config.h"
#include "job/jobfile.h"
#include "job/runner.h"
#include "run/limits.h"
#include "run/rundir.h"
#include "supervise/supervise.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/units.h"
#include "util/words.h"

static const char RUN_HELP[] =
	"usage: warren run [OPTIONS] -- COMMAND [ARG...]\n"
	"\n"
	"Run COMMAND in a fresh cell: its own /tmp (mode 01777, also $TMPDIR), home, user,\n"
	"processes, network (loopback only) and limits. Its scratch is reclaimed when it ends;\n"
	"its record stays in <state>/runs/<id>/ (see 'warren show').\n"
	"\n"
	"the cell:\n"
	"  --rootfs DIR        use the image DIR as the root (an overlay: writes go to the run, the\n"
	"                      image is never changed); default: the host's / read-only\n"
	"  --image NAME        use the stored image NAME as the root, as --rootfs (see 'warren image');\n"
	"                      its Env, WorkingDir and User are defaults under the options here, and\n"
	"                      with no COMMAND its Entrypoint and Cmd run (a COMMAND replaces Cmd)\n"
	"  --entrypoint WORD   instead of the image's Entrypoint ('' for none; its Cmd is dropped)\n"
	"  --work DIR          the worktree, read-write at the same path and the working directory\n"
	"                      (default: the current directory)\n"
	"  --work none         no worktree: the job starts in its home (or --workdir)\n"
	"  --work-ro           the worktree read-only (the job writes under $TMPDIR instead)\n"
	"  --workdir PATH      the job's working directory in the cell (absolute; it must exist there)\n"
	"  --hostname NAME     the cell's host name (default: the run id)\n"
	"  --bind SRC[:DST]    the host's SRC read-write at DST in the cell (default DST: SRC;\n"
	"                      repeatable; DST is created in the cell, never on the host)\n"
	"  --ro-bind SRC[:DST] the same, read-only (e.g. a tool cache: ~/.cache/pip)\n"
	"  --externals DIR     DIR read-only at " CELL_EXTERNALS_PATH " ($" CELL_EXTERNALS_ENV ")\n"
	"  --user UID[:GID]    the run user (default: 1000 'warren' when started by root, your own\n"
	"                      uid otherwise); 0 is root of the cell's user namespace only\n"
	"  --env K=V           set a variable (repeatable); TMPDIR is always /tmp; --env K alone\n"
	"                      passes the caller's K (nothing when it is unset, as docker does)\n"
	"  --env-file FILE     set the K=V lines of FILE: 'export' allowed, \"double\" or 'single'\n"
	"                      quotes, '#' comments and blank lines skipped; a K alone as --env K\n"
	"  --pass-env K        pass the caller's K (repeatable); nothing else of it leaks in\n"
	"  -i, -t              accepted for docker's habit (-it): the job always reads warren's\n"
	"                      stdin, and has a terminal of its own when warren runs in one\n"
	"  --session           no command: the cell stays up for commands sent later ('warren exec\n"
	"                      RUN -- CMD', the API, 'warren mcp') until 'warren end RUN', its idle\n"
	"                      time or its maximum life (the run id is printed first; start it in\n"
	"                      the background: warren run --session ... &)\n"
	"  --session-idle D    end the session after D without an exec (default 10m)\n"
	"  --session-max D     end the session after D whatever it does (default 8h)\n"
	"  --keep              keep the scratch for inspection and print where it is\n"
	"  --state DIR         the state directory (default: $WARREN_STATE, /var/lib/warren for\n"
	"                      root, ~/.local/state/warren otherwise)\n"
	"  --via unix:PATH|tcp:HOST:PORT   send the run to a 'warren serve' there (--token-file F):\n"
	"                      a warm cell of its shape takes it at once, else it starts cold\n"
	"                      (said on stderr); the options are those of 'warren submit', the\n"
	"                      output is printed when it ended (docs/api.md)\n"
	"\n"
	"limits (each names itself when it stops the run; 'none' lifts one; without a flag a run\n"
	"gets the defaults 'warren selfcheck' prints, from the host's size, /etc/warren/defaults\n"
	"and <state>/defaults):\n"
	"  --time D            wall-clock limit, e.g. 30s, 10m, 1h30m (exit 124; default none)\n"
	"  --cpu-time D        CPU time of all processes of the cell (exit 124; default none)\n"
	"  --memory SIZE       memory + swap of the cell, e.g. 512M, 2G (default half the RAM)\n"
	"  --pids N            processes and threads of the cell (default 4096)\n"
	"  --output SIZE       bytes the job may write to stdout + stderr (default 1G)\n"
	"  --scratch SIZE      bytes the run may write to /tmp, /var/tmp, /dev/shm, $HOME and the\n"
	"                      root: a tmpfs of the run's own (default a quarter of the RAM; with\n"
	"                      --keep the scratch is on disk and kept, uncapped unless given)\n"
	"  --grace D           from SIGTERM to SIGKILL when stopping (default 5s)\n"
	"  --cpus N            N CPUs' worth of time (e.g. 0.5, 1.5): the CFS quota of N * 100ms\n"
	"                      per 100ms; the record says how long the run was throttled\n"
	"  --cpuset LIST       the CPUs its processes may run on (e.g. 0, 0-1, 0,2), a subset of\n"
	"                      the host's online CPUs (default: none of either)\n"
	"\n"
	"defences (all on by default; see docs/hardening.md):\n"
	"  --seccomp FILE      use the seccomp profile FILE instead of the default one (warren's\n"
	"                      format, or JSON: OCI, docker, podman, containerd)\n"
	"  --seccomp-print     print the seccomp profile the options before it select, and exit\n"
	"  --allow-nested      let the job create user namespaces (unshare -U, sandboxes inside)\n"
	"  --require-landlock  refuse to start when the kernel has no Landlock\n"
	"  --protect PATH      keep PATH of the worktree read-only (repeatable; .git/hooks and\n"
	"                      .git/config always are)\n"
	"  --core              allow core dumps (off by default)\n"
	"  --no-sys            no /sys in the cell\n"
	"  --no-refused-writes do not record the writes the cell refuses (the record and the\n"
	"                      end line name them and where to write instead; a job that needs\n"
	"                      its own seccomp listener inside needs this)\n"
	"\n"
	"network (default none: loopback only; see docs/network.md):\n"
	"  --net MODE          none, nat (a link of its own, NAT to the host's uplink; not the host\n"
	"                      nor private ranges), nat,lan (private ranges too), nat,allow=ADDRS\n"
	"                      (private addresses or CIDRs too, e.g. nat,allow=10.1.2.3:5432), or\n"
	"                      allow=LIST (egress only to LIST: names, *.names, addresses, CIDRs,\n"
	"                      each with an optional :port, e.g. pypi.org:443,10.1.2.0/24;\n"
	"                      lan,allow=LIST: names may also resolve to private addresses)\n"
	"  --publish [ADDR:]HOSTPORT:CELLPORT  expose a TCP port of the cell on the host\n"
	"                      (ADDR default 127.0.0.1; implies --net nat unless --net is given;\n"
	"                      with --net none the cell gets a link for its published ports only:\n"
	"                      it answers on them and starts no connection of its own);\n"
	"                      the service must listen on the cell's address (0.0.0.0), not only\n"
	"                      on 127.0.0.1\n"
	"  --dns-max-names N   distinct names the run may ask warren's resolver (default 1000)\n"
	"\n"
	"the record:\n"
	"  --result FILE       also write result.json to FILE\n"
	"  --result-fd N       also write result.json to file descriptor N\n"
	"  --quiet             no cause line on stderr (still in the record)\n"
	HIST_HELP
	"  --driver D          container (default: Linux namespaces) or vm (a qemu microVM; docs/vm.md)\n"
	"\n"
	"exit status: the job's own; 128+N when signal N killed it; 124 when --time or --cpu-time\n"
	"stopped it; 125 when warren failed; 126 not executable; 127 not found.\n";

enum {
	O_ROOTFS = 256, O_WORK, O_USER, O_ENV, O_ENV_FILE, O_PASS_ENV, O_KEEP, O_STATE,
	O_LIMIT, /* --time, --cpu-time, --memory, --pids, --output, --scratch, --grace, --cpus, --cpuset (cli/spec.h) */
	O_RESULT, O_RESULT_FD, O_QUIET, O_HELP,
	O_SECCOMP, O_SECCOMP_PRINT, O_ALLOW_NESTED, O_REQUIRE_LANDLOCK, O_PROTECT, O_CORE, O_NO_SYS, O_NO_REFUSED,
	O_NET, O_PUBLISH, O_DNS_MAX_NAMES, /* network (net/net.h) */
	O_WORK_RO, O_CELL_OPT, /* --work-ro; --bind, --ro-bind, --externals, --workdir, --hostname (cli/spec.h) */
	O_IMAGE, O_ENTRYPOINT, /* --image, --entrypoint (image/store.h, image/config.h) */
	O_LABEL, O_NAME, O_DB, O_RUN_ID, /* the history (cli/history.h) */
	O_DRIVER, /* --driver container|vm (cell/vm.h) */
	O_SESSION, O_SESSION_IDLE, O_SESSION_MAX, /* --session (job/session.h) */
};

static const struct option OPTS[] = {
	{ "rootfs", required_argument, NULL, O_ROOTFS }, { "work", required_argument, NULL, O_WORK },
	{ "user", required_argument, NULL, O_USER }, { "env", required_argument, NULL, O_ENV },
	{ "env-file", required_argument, NULL, O_ENV_FILE }, { "pass-env", required_argument, NULL, O_PASS_ENV },
	{ "keep", no_argument, NULL, O_KEEP }, { "state", required_argument, NULL, O_STATE },
	LIMIT_OPTIONS(O_LIMIT), { "result", required_argument, NULL, O_RESULT },
	{ "result-fd", required_argument, NULL, O_RESULT_FD }, { "quiet", no_argument, NULL, O_QUIET },
	{ "help", no_argument, NULL, O_HELP },
	{ "seccomp", required_argument, NULL, O_SECCOMP }, { "seccomp-print", no_argument, NULL, O_SECCOMP_PRINT },
	{ "allow-nested", no_argument, NULL, O_ALLOW_NESTED }, { "require-landlock", no_argument, NULL, O_REQUIRE_LANDLOCK },
	{ "protect", required_argument, NULL, O_PROTECT }, { "core", no_argument, NULL, O_CORE },
	{ "no-sys", no_argument, NULL, O_NO_SYS }, { "no-refused-writes", no_argument, NULL, O_NO_REFUSED },
	{ "net", required_argument, NULL, O_NET }, { "publish", required_argument, NULL, O_PUBLISH },
	{ "dns-max-names", required_argument, NULL, O_DNS_MAX_NAMES },
	{ "work-ro", no_argument, NULL, O_WORK_RO }, { "bind", required_argument, NULL, O_CELL_OPT },
	{ "ro-bind", required_argument, NULL, O_CELL_OPT }, { "externals", required_argument, NULL, O_CELL_OPT },
	{ "workdir", required_argument, NULL, O_CELL_OPT }, { "hostname", required_argument, NULL, O_CELL_OPT },
	{ "image", required_argument, NULL, O_IMAGE }, { "entrypoint", required_argument, NULL, O_ENTRYPOINT }, HIST_OPTIONS(O_LABEL), { "driver", required_argument, NULL, O_DRIVER },
	{ "session", no_argument, NULL, O_SESSION }, { "session-idle", required_argument, NULL, O_SESSION_IDLE },
	{ "session-max", required_argument, NULL, O_SESSION_MAX }, { NULL, 0, NULL, 0 },
};

/* ---- the environment ---- */

/* ---- options ---- */

struct run_opts {
	const char *rootfs, *work, *user, *state, *result;
	int result_fd;
	bool keep, quiet;
	struct limits limits;
	struct envb env;
	struct policy_opts policy;
	struct net_opts net;       /* --net, --publish, --dns-max-names */
	bool work_ro;
	struct cell_opts cell;     /* --bind, --ro-bind, --externals, --workdir, --hostname */
	const char *image;         /* --image NAME */
	const char *entrypoint;    /* --entrypoint WORD ("": none) */
	struct hist_opts hist;     /* --label, --name, --db (cli/history.h) */
	enum cell_driver driver;   /* --driver */
	bool session;              /* --session */
	uint64_t idle_ms, max_ms;  /* --session-idle, --session-max (0: not given) */
};

static int parse(int argc, char **argv, struct run_opts *o, struct envb *late, struct error *err)
{
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, "+it", OPTS, "run", err)) != -1) {
		int r = 0;
		switch (c) {
		case O_WORK_RO: o->work_ro = true; break;
		case O_CELL_OPT: cell_opts_take(&o->cell, OPTS[cli_longindex].name, optarg); break;
		case O_ROOTFS: o->rootfs = optarg; break;
		case O_IMAGE: o->image = optarg; break;
		case O_ENTRYPOINT: o->entrypoint = optarg; break;
		case O_WORK: o->work = optarg; break;
		case O_USER: o->user = optarg; break;
		case O_STATE: o->state = optarg; break;
		case O_KEEP: o->keep = true; break;
		case O_QUIET: o->quiet = true; break;
		case O_ENV: r = env_add_arg(late, optarg, "--env", err); break;
		case O_ENV_FILE: r = env_add_file(late, optarg, err); break;
		case O_PASS_ENV: {
			if (!valid_env_name(optarg, strlen(optarg)))
				return error_set(err, 0, "--pass-env: '%s' is not a variable name", optarg);
			const char *v = getenv(optarg);
			if (v) {
				_cleanup_free_ char *kv = xasprintf("%s=%s", optarg, v);
				r = env_add_checked(late, kv, "--pass-env", err);
			}
			break;
		}
		case O_LIMIT: r = cellspec_limit_option(OPTS[cli_longindex].name, optarg, &o->limits, err); break;
		case O_RESULT: o->result = optarg; break;
		case O_RESULT_FD: {
			uint64_t fd;
			if (parse_uint(optarg, &fd) < 0 || fd > 1 << 20 || fcntl((int)fd, F_GETFD) < 0 || std_fd_was_closed((int)fd))
				r = error_set(err, 0, "--result-fd: '%s' is not an open file descriptor", optarg);
			o->result_fd = (int)fd;
			break;
		}
		case O_HELP: fputs(RUN_HELP, stdout); return 1;
		case O_NET: r = net_parse_mode(&o->net, optarg, err); break;
		case O_PUBLISH: r = net_parse_publish(&o->net, optarg, err); break;
		case O_DNS_MAX_NAMES: r = net_parse_max_names(&o->net, optarg, err); break;
		case O_DRIVER: r = cellspec_driver(&o->driver, optarg, err); break;
		case O_SESSION: o->session = true; break;
		case O_SESSION_IDLE: case O_SESSION_MAX:
			if (parse_duration_ms(optarg, c == O_SESSION_IDLE ? &o->idle_ms : &o->max_ms) < 0 ||
			    !(c == O_SESSION_IDLE ? o->idle_ms : o->max_ms))
				r = error_set(err, 0, "--%s: '%s' is not a duration (e.g. 10m, 8h)", OPTS[cli_longindex].name, optarg);
			break;
		case O_SECCOMP: r = policy_set_seccomp_file(&o->policy, optarg, err); break;
		case O_SECCOMP_PRINT:
			if (policy_seccomp_print(stdout, &o->policy, err) < 0)
				return -EINVAL;
			return 1;
		case O_ALLOW_NESTED: o->policy.allow_nested = true; break;
		case O_REQUIRE_LANDLOCK: o->policy.require_landlock = true; break;
		case O_PROTECT: r = policy_add_protect(&o->policy, optarg, err); break;
		case O_CORE: o->policy.core = true; break;
		case O_NO_SYS: o->policy.no_sys = true; break;
		case O_NO_REFUSED: o->policy.no_refused_writes = true; break;
		case O_LABEL: case O_NAME: case O_DB: case O_RUN_ID: r = hist_opt_parse(&o->hist, c - O_LABEL, optarg, err); break;
		case 'i': case 't': break; /* docker's -i and -t: what warren does anyway */
		default: return -EINVAL;   /* err names the option */
		}
		if (r < 0)
			return r;
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if ((o->idle_ms || o->max_ms) && !o->session)
		return error_set(err, 0, "--session-%s is a session's: add --session (a cell that stays up for 'warren exec')",
				 o->idle_ms ? "idle" : "max");
	if (o->session && (optind < argc || o->entrypoint))
		return error_set(err, 0, "--session takes no command: its commands come later ('warren exec RUN -- CMD'); "
				 "drop '%s', or drop --session to run it once", optind < argc ? argv[optind] : "--entrypoint");
	if (optind >= argc && !o->image && !o->session)   /* an image's Entrypoint and Cmd may be the command */
		return error_set(err, 0, "run: no command given; usage: warren run [OPTIONS] -- COMMAND [ARG...]");
	return 0;
}

/* --session: the spec s run as a job of no steps whose commands come later (job/session.h),
 * as a job file's session: is; its run id is printed first, then that it is ready. */
static int run_session(const struct run_opts *o, struct cell_spec *s, struct error *err)
{
	struct job job = { .path = xstrdup("--session"), .name = xstrdup("session"), .driver = s->driver, .session = true,
			   .session_idle_ms = o->idle_ms ? o->idle_ms : JOB_SESSION_IDLE_MS,
			   .session_max_ms = o->max_ms ? o->max_ms : JOB_SESSION_MAX_MS,
			   .steps = xcalloc(1, sizeof(struct job_step)) };
	s->argv = xcalloc(3, sizeof *s->argv);
	s->argv[0] = xstrdup("warren-job");
	s->argv[1] = xstrdup(job.path);
	s->tty = false;
	const struct job_run_opts jo = { .quiet = o->quiet, .result_fd = o->result_fd, .result_file = o->result };
	int rc = job_run(&job, s, &jo, err);
	job_free(&job);
	return rc;
}

/* ---- the spec ---- */

/* Is --via among run's options? Read as parse() reads them (stopping at the command), so that
 * a --via among the command's own arguments (`warren run curl --via x`) never sends the run to
 * a server; nothing else of the options is taken here. */
static bool run_has_via(int argc, char **argv)
{
	enum { O_VIA = 1000 };
	size_t n = 0;
	while (OPTS[n].name)
		n++;
	_cleanup_free_ struct option *o = xcalloc(n + 3, sizeof *o);
	memcpy(o, OPTS, n * sizeof *o);
	o[n] = (struct option){ "via", required_argument, NULL, O_VIA };
	o[n + 1] = (struct option){ "token-file", required_argument, NULL, 0 };
	bool via = false;
	int c, oe = opterr;
	opterr = 0;
	optind = 1;
	while (!via && (c = getopt_long(argc, argv, "+it", o, NULL)) != -1)
		via = c == O_VIA;
	opterr = oe;
	optind = 1;
	return via;
}

int cmd_run(int argc, char **argv)
{
	if (run_has_via(argc, argv))
		return cmd_run_via(argc, argv); /* sent to a warren serve (cli/submit.c) */
	_cleanup_error_ struct error err = { 0 };
	struct run_opts o = { .result_fd = -1, .limits = { .grace_ms = 5000 } };
	struct envb late = { 0 };
	struct cell_spec s = { 0 };
	int rc = 125;
	int r = parse(argc, argv, &o, &late, &err);
	if (r == 1) {
		rc = 0;
		goto out;
	}
	if (r < 0)
		goto fail;
	s.limits = o.limits;
	s.net = o.net; /* network options (net/net.h) */
	s.driver = o.driver;
	s.policy = o.policy;
	memset(&o.policy, 0, sizeof o.policy);
	s.keep = o.keep;
	s.worktree_ro = o.work_ro;
	s.tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	s.statedir = statedir_default(o.state);
	hist_opts_apply(&o.hist, &s);
	if (result_file_check(o.result, &err) < 0 || cli_net_default(&s.net, &err) < 0 || net_opts_finish(&s.net, &err) < 0 ||
	    cellspec_user(&s, o.user, &err) < 0 || cellspec_paths(&s, o.rootfs, o.work, &err) < 0 ||
	    cellspec_cell_opts(&s, &o.cell, &err) < 0 ||
	    cellspec_finish(&s, &err) < 0 ||
	    cellspec_image(&s, o.image, &(struct image_given){ o.user, !o.session, o.entrypoint, argv + optind, (size_t)(argc - optind) }, &err) < 0 ||
	    policy_prepare(&s.policy, &err) < 0)
		goto fail;
	if (o.session) {
		cellspec_env(&s, &late);
		rc = run_session(&o, &s, &err);
		if (rc < 0)
			goto fail;
		goto out;
	}
	if (!s.argv) {   /* no image: the command, after --entrypoint when given */
		json_t *none = json_object();
		s.argv = image_command(none, o.entrypoint ? o.entrypoint : "", argv + optind, (size_t)(argc - optind));
		json_decref(none);
	}
	if (!s.argv[0]) {
		error_set(&err, 0, "run: no command given; usage: warren run [OPTIONS] -- COMMAND [ARG...]");
		goto fail;
	}
	cellspec_env(&s, &late);
	struct supervise_opts so = { .result_fd = o.result_fd, .result_file = o.result, .quiet = o.quiet };
	rc = supervise_run(&s, &so, &err);
	if (rc < 0)
		goto fail;
	goto out;
fail:
	rc = cli_fail(&err);
out:
	envb_free(&late);
	cell_opts_free(&o.cell);
	hist_opts_free(&o.hist);
	policy_opts_free(&o.policy);
	policy_opts_free(&s.policy);
	cell_spec_free(&s);
	return rc;
}
