/* SPDX-License-Identifier: Apache-2.0 */
/* image.c - `warren image import|ls|rm`: the image store (image/store.h) from the command line. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "image/store.h"
#include "run/rundir.h"
#include "util/units.h"

static const char IMAGE_HELP[] =
	"usage: warren image import [--max-size SIZE] [--max-entries N] NAME SOURCE\n"
	"       warren image ls [--json]\n"
	"       warren image rm NAME...\n"
	"       (each takes --state DIR)\n"
	"\n"
	"Store root file systems for 'warren run --image NAME' (and 'image: NAME' in a job file):\n"
	"a run mounts the image as the lower layer of its overlay, shared and never written.\n"
	"SOURCE is a tarball (tar, tar.gz, tar.xz, tar.zst, tar.bz2), a directory, an OCI image\n"
	"layout (a directory, or a tar of one: podman save --format oci-archive), or a docker save /\n"
	"podman save archive; layers are applied in order with their whiteouts. Entries with\n"
	"absolute names, '..', control characters, or ways through symlinks are refused; device\n"
	"nodes left out; setuid/setgid bits and file capabilities dropped. --max-size (default 32G)\n"
	"and --max-entries (default 2000000) stop an archive that would fill the disk; the size\n"
	"limit is at most the free space of the state directory's file system less a reserve (5%\n"
	"of it, at most 1G). See docs/images.md.\n";

struct image_args {
	const char *state;
	bool json;
	struct image_import_opts limits;
};

static int parse(int argc, char **argv, struct image_args *a)
{
	enum { O_STATE = 256, O_JSON, O_MAX_SIZE, O_MAX_ENTRIES, O_HELP };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "json", no_argument, NULL, O_JSON },
					      { "max-size", required_argument, NULL, O_MAX_SIZE },
					      { "max-entries", required_argument, NULL, O_MAX_ENTRIES },
					      { "help", no_argument, NULL, O_HELP },
					      { NULL, 0, NULL, 0 } };
	opterr = 0;
	optind = 1;
	int c;
	/* options anywhere (warren image --state DIR ls, warren image ls --json): GNU getopt
	 * moves the operands, the subcommand first, to the end */
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_STATE: a->state = optarg; break;
		case O_JSON: a->json = true; break;
		case O_MAX_SIZE:
			if (parse_size(optarg, &a->limits.max_bytes) < 0 || !a->limits.max_bytes)
				return cli_usage_error("image", "--max-size: '%s' is not a size (e.g. 2G, 500M)", optarg), -1;
			a->limits.max_bytes_given = true;
			break;
		case O_MAX_ENTRIES:
			if (parse_uint(optarg, &a->limits.max_entries) < 0 || !a->limits.max_entries)
				return cli_usage_error("image", "--max-entries: '%s' is not a positive number", optarg), -1;
			break;
		case 'h':
		case O_HELP: fputs(IMAGE_HELP, stdout); return -2;
		default: return cli_usage_error("image", "image: unknown option or missing value '%s'", argv[optind - 1]), -1;
		}
	}
	return optind;
}

static int image_import_cmd(int argc, char **argv, int i, struct image_args *a)
{
	if (argc - i != 2)
		return cli_usage_error("image", "image import takes NAME and SOURCE");
	_cleanup_error_ struct error err = { 0 };
	_cleanup_free_ char *state = statedir_default(a->state);
	struct statedir sd;
	if (statedir_open(&sd, state, true, &err) < 0)
		return cli_fail(&err);
	json_t *info = NULL;
	int r = image_import(sd.fd, sd.path, argv[i], argv[i + 1], &a->limits, &info, &err);
	statedir_close(&sd);
	if (r < 0)
		return cli_fail(&err);
	char size[32];
	format_size(size, sizeof size, (uint64_t)json_integer_value(json_object_get(info, "size")));
	printf("imported %s: %s, %s in %lld entries, %lld layer%s (%s)\n", argv[i], json_string_value(json_object_get(info, "digest")),
	       size, json_integer_value(json_object_get(info, "entries")), json_integer_value(json_object_get(info, "layers")),
	       json_integer_value(json_object_get(info, "layers")) == 1 ? "" : "s", json_string_value(json_object_get(info, "format")));
	json_decref(info);
	return 0;
}

static int image_ls_cmd(int argc, int i, struct image_args *a)
{
	if (i < argc)
		return cli_usage_error("image", "image ls takes no operands");
	struct statedir sd;
	int rc = cli_state_open(a->state, &sd);
	if (rc)
		return rc;
	json_t *all = image_list(sd.fd), *j;
	statedir_close(&sd);
	if (a->json) {
		char *t = json_dumps(all, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("%s\n", t);
		free(t);
	} else {
		printf("%-24s %10s  %-19s  %s\n", "NAME", "SIZE", "DIGEST", "CREATED");
		size_t k;
		json_array_foreach(all, k, j) {
			char size[32];
			format_size(size, sizeof size, (uint64_t)json_integer_value(json_object_get(j, "size")));
			const char *d = json_string_value(json_object_get(j, "digest"));
			printf("%-24s %10s  %-19.19s  %s\n", json_string_value(json_object_get(j, "name")), size, d ? d : "?",
			       json_string_value(json_object_get(j, "created")));
		}
	}
	json_decref(all);
	return 0;
}

/* The live run that uses image name (from its spec.json), or NULL. */
static char *run_using(const struct statedir *sd, const char *name)
{
	char **ids = runs_list(sd), *found = NULL;
	for (char **id = ids; *id && !found; id++) {
		_cleanup_close_ int dir = rundir_open(sd, *id, NULL);
		if (dir < 0 || !rundir_is_live(dir))
			continue;
		_cleanup_free_ char *txt = rundir_read(dir, "spec.json");
		json_t *spec = txt ? json_loads(txt, 0, NULL) : NULL;
		const char *img = json_string_value(json_object_get(json_object_get(spec, "image"), "name"));
		if (img && !strcmp(img, name))
			found = xstrdup(*id);
		json_decref(spec);
	}
	runs_list_free(ids);
	return found;
}

static int image_rm_cmd(int argc, char **argv, int i, struct image_args *a)
{
	if (i >= argc)
		return cli_usage_error("image", "image rm takes one or more image names");
	struct statedir sd;
	int rc = cli_state_open(a->state, &sd);
	for (; !rc && i < argc; i++) {
		_cleanup_error_ struct error err = { 0 };
		int r = image_remove(sd.fd, argv[i], &err);
		if (r == -EBUSY) {
			_cleanup_free_ char *run = run_using(&sd, argv[i]);
			error_set(&err, 0, "image rm %s: the live run %s uses it; wait for it to end (or 'warren kill %s') and remove it then",
				  argv[i], run ? run : "(starting now)", run ? run : "RUN");
		}
		if (r < 0)
			rc = cli_fail(&err);
		else
			printf("removed %s\n", argv[i]);
	}
	statedir_close(&sd);
	return rc;
}

int cmd_image(int argc, char **argv)
{
	struct image_args a = { .limits = { .max_bytes = IMAGE_DEFAULT_MAX_BYTES, .max_entries = IMAGE_DEFAULT_MAX_ENTRIES } };
	int i = parse(argc, argv, &a);
	if (i < 0)
		return i == -2 ? 0 : 125;
	if (i >= argc) {
		fputs(IMAGE_HELP, stderr);
		return 125;
	}
	const char *sub = argv[i++];
	if (!strcmp(sub, "import"))
		return image_import_cmd(argc, argv, i, &a);
	if (!strcmp(sub, "ls") || !strcmp(sub, "list"))
		return image_ls_cmd(argc, i, &a);
	if (!strcmp(sub, "rm") || !strcmp(sub, "remove"))
		return image_rm_cmd(argc, argv, i, &a);
	return cli_usage_error("image", "image: unknown subcommand '%s'; the subcommands are import, ls, rm", sub);
}
