/* SPDX-License-Identifier: Apache-2.0 */
/* serve.c - `warren serve`: parse its options and hand them to the server (serve/serve.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "serve/serve.h"
#include "util/units.h"

static const char SERVE_HELP[] =
	"usage: warren serve [--listen unix:PATH|tcp:ADDR:PORT]... [--slots N] [--state DIR] [--db PATH]\n"
	"                    [--token-file FILE] [--keep-runs N] [--keep-for D]\n"
	"                    [--warm N --warm-work DIR [--warm-image NAME] [--warm-net MODE]]\n"
	"\n"
	"Run submitted runs in slots behind an HTTP API (docs/api.md): each an ordinary warren run\n"
	"(a job of this binary, its record in <state>/runs, its row in the history). A kill -9 of\n"
	"the server kills its runs; the next start marks them interrupted and reclaims them, and\n"
	"starts the queued ones. The web console is at / (docs/console.md; over TCP, open\n"
	"/?token=TOKEN once in the browser).\n"
	"\n"
	"  --listen unix:PATH     a unix socket (default <state>/serve.sock); a user sees and\n"
	"                         controls only their own runs there, root all of them\n"
	"  --listen tcp:ADDR:PORT TCP, with the bearer token of --token-file (repeatable)\n"
	"  --slots N              runs at once (default: the number of CPUs)\n"
	"  --warm N               keep N cells made in advance (warm) for runs of one shape: worktree\n"
	"                         --warm-work DIR, root the host's / or --warm-image NAME, network\n"
	"                         --warm-net none (default), nat, nat,lan, allow or lan,allow, the\n"
	"                         server's user; a run of that shape takes one (once), with its own\n"
	"                         env, labels, limits, published ports and allow list; the others\n"
	"                         start cold; the record says which (docs/api.md)\n"
	"  --token-file FILE      the token TCP clients send ('Authorization: Bearer ...');\n"
	"                         FILE must be mode 0600 and the server user's\n"
	"  --keep-runs N          keep the records of the newest N ended runs, prune older ones\n"
	"  --keep-for D           prune the records of runs that ended more than D ago (7d)\n"
	"  --state DIR, --db PATH the state directory and the history database\n";

int cmd_serve(int argc, char **argv)
{
	enum { O_LISTEN = 256, O_SLOTS, O_STATE, O_DB, O_TOKEN, O_KEEP_RUNS, O_KEEP_FOR, O_HELP, O_WARM, O_WARM_WORK,
	       O_WARM_IMAGE, O_WARM_NET };
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, O_LISTEN }, { "slots", required_argument, NULL, O_SLOTS },
		{ "state", required_argument, NULL, O_STATE }, { "db", required_argument, NULL, O_DB },
		{ "token-file", required_argument, NULL, O_TOKEN }, { "keep-runs", required_argument, NULL, O_KEEP_RUNS },
		{ "keep-for", required_argument, NULL, O_KEEP_FOR }, { "help", no_argument, NULL, O_HELP },
		{ "warm", required_argument, NULL, O_WARM }, { "warm-work", required_argument, NULL, O_WARM_WORK },
		{ "warm-image", required_argument, NULL, O_WARM_IMAGE }, { "warm-net", required_argument, NULL, O_WARM_NET },
		{ NULL, 0, NULL, 0 },
	};
	struct serve_opts o = { 0 };
	_cleanup_free_ char **listen = xcalloc((size_t)argc + 1, sizeof *listen);
	o.listen = listen;
	uint64_t n;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_LISTEN: listen[o.nlisten++] = optarg; break;
		case O_SLOTS:
			if (parse_uint(optarg, &n) < 0 || n < 1 || n > 4096)
				return cli_usage_error("serve", "--slots: '%s' is not a number from 1 to 4096", optarg);
			o.slots = (long)n;
			break;
		case O_STATE: o.state = optarg; break;
		case O_WARM: {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 0 || n > 64)
				return cli_usage_error("serve", "--warm: '%s' is not a number of warm cells from 0 to 64", optarg);
			o.warm = n;
			break;
		}
		case O_WARM_WORK: o.warm_work = optarg; break;
		case O_WARM_IMAGE: o.warm_image = optarg; break;
		case O_WARM_NET: o.warm_net = optarg; break;
		case O_DB: o.db = optarg; break;
		case O_TOKEN: o.token_file = optarg; break;
		case O_KEEP_RUNS:
			if (parse_uint(optarg, &n) < 0 || n < 1 || n > 100000000)
				return cli_usage_error("serve", "--keep-runs: '%s' is not a number of runs (1 or more)", optarg);
			o.keep_runs = (long)n;
			break;
		case O_KEEP_FOR:
			if (parse_duration_ms(optarg, &o.keep_for_ms) < 0 || !o.keep_for_ms)
				return cli_usage_error("serve", "--keep-for: '%s' is not a duration (e.g. 12h, 7d)", optarg);
			break;
		case 'h':
		case O_HELP: fputs(SERVE_HELP, stdout); return 0;
		default: return cli_usage_error("serve", "serve: unknown option or missing value '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("serve", "serve takes no operands, got '%s'", argv[optind]);
	_cleanup_error_ struct error err = { 0 };
	if (serve_run(&o, &err) < 0)
		return cli_fail(&err);
	return 0;
}
