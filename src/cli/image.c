/* SPDX-License-Identifier: Apache-2.0 */
/* image.c - `warren image import|pull|ls|inspect|tag|rm`: the image store (image/store.h) from the
 * command line; pull is cli/pull.c's. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/pull.h"
#include "image/store.h"
#include "run/rundir.h"
#include "util/units.h"

static const char IMAGE_HELP[] =
	"usage: warren image import [--replace] [--max-size SIZE] [--max-entries N] NAME SOURCE\n"
	"       warren image pull [--insecure] [--creds USER[:PASS]] [--authfile FILE] [--cert-dir DIR]\n"
	"                         [--replace] [--max-size SIZE] [--max-entries N] REF [NAME]\n"
	"       warren image ls [--json]\n"
	"       warren image inspect [--json] NAME\n"
	"       warren image tag [--replace] SRC DST\n"
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
	"of it, at most 1G). pull fetches REF (registry/repo:tag or @sha256:...) from an OCI or\n"
	"docker registry with skopeo (Debian package skopeo; its auth file, REGISTRY_AUTH_FILE, are\n"
	"used) and imports it as an OCI layout; NAME defaults to the repository's last part. An\n"
	"image's Env, WorkingDir, User, Entrypoint and Cmd are kept and are a run's defaults.\n"
	"An existing NAME is refused unless --replace. See docs/images.md.\n";

struct image_args {
	const char *state;
	bool json;
	struct image_import_opts limits;
	struct pull_opts pull;
};

static int parse(int argc, char **argv, struct image_args *a)
{
	enum { O_STATE = 256, O_JSON, O_MAX_SIZE, O_MAX_ENTRIES, O_HELP, O_REPLACE, O_INSECURE, O_CREDS, O_AUTHFILE, O_CERT_DIR };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "json", no_argument, NULL, O_JSON },
					      { "replace", no_argument, NULL, O_REPLACE },
					      { "insecure", no_argument, NULL, O_INSECURE },
					      { "creds", required_argument, NULL, O_CREDS },
					      { "authfile", required_argument, NULL, O_AUTHFILE },
					      { "cert-dir", required_argument, NULL, O_CERT_DIR },
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
		case O_REPLACE: a->limits.replace = true; break;
		case O_INSECURE: a->pull.insecure = true; break;
		case O_CREDS: a->pull.creds = optarg; break;
		case O_AUTHFILE: a->pull.authfile = optarg; break;
		case O_CERT_DIR: a->pull.cert_dir = optarg; break;
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

static void print_imported(const char *what, json_t *info)
{
	char size[32];
	format_size(size, sizeof size, (uint64_t)json_integer_value(json_object_get(info, "size")));
	printf("%s %s: %s, %s in %lld entries, %lld layer%s (%s)\n", what, json_string_value(json_object_get(info, "name")),
	       json_string_value(json_object_get(info, "digest")), size, json_integer_value(json_object_get(info, "entries")),
	       json_integer_value(json_object_get(info, "layers")), json_integer_value(json_object_get(info, "layers")) == 1 ? "" : "s",
	       json_string_value(json_object_get(info, "format")));
	json_decref(info);
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
	print_imported("imported", info);
	return 0;
}

static int image_pull_cmd(int argc, char **argv, int i, struct image_args *a)
{
	if (argc - i != 1 && argc - i != 2)
		return cli_usage_error("image", "image pull takes REF and an optional NAME");
	_cleanup_free_ char *name = argc - i == 2 ? xstrdup(argv[i + 1]) : pull_default_name(argv[i]);
	if (!name)
		return cli_usage_error("image", "image pull %s: no image name can be made of it; give one: warren image pull %s NAME", argv[i], argv[i]);
	_cleanup_error_ struct error err = { 0 };
	_cleanup_free_ char *state = statedir_default(a->state);
	struct statedir sd;
	if (statedir_open(&sd, state, true, &err) < 0)
		return cli_fail(&err);
	json_t *info = NULL;
	a->pull.import = a->limits;
	a->pull.progress = isatty(STDERR_FILENO);
	int r = image_pull(sd.fd, sd.path, argv[i], name, &a->pull, &info, &err);
	statedir_close(&sd);
	if (r < 0)
		return cli_fail(&err);
	print_imported("pulled", info);
	return 0;
}

static void print_config(const json_t *c)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)c, k, v) {
		if (json_is_string(v)) {
			printf("  %-11s %s\n", k, json_string_value(v));
			continue;
		}
		_cleanup_free_ char *t = json_dumps(v, JSON_COMPACT);
		if (strcmp(k, "Env")) {
			printf("  %-11s %s\n", k, t);
			continue;
		}
		size_t n;
		json_t *e;
		json_array_foreach(v, n, e)
			printf("  %-11s %s\n", n ? "" : k, json_string_value(e));
	}
}

static int image_inspect_cmd(int argc, char **argv, int i, struct image_args *a)
{
	if (argc - i != 1)
		return cli_usage_error("image", "image inspect takes one image name");
	struct statedir sd;
	int rc = cli_state_open(a->state, &sd);
	if (rc)
		return rc;
	json_t *j = image_record(sd.fd, argv[i]);
	statedir_close(&sd);
	if (!j) {
		fprintf(stderr, "warren: image inspect %s: no such image (see 'warren image ls')\n", argv[i]);
		return 125;
	}
	if (!json_object_get(j, "config"))
		json_object_set_new(j, "config", json_object());
	if (a->json) {
		char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("%s\n", t);
		free(t);
	} else {
		char size[32];
		format_size(size, sizeof size, (uint64_t)json_integer_value(json_object_get(j, "size")));
		static const char *const keys[] = { "name", "digest", "source", "format", "created", "tagged_from", NULL };
		for (const char *const *k = keys; *k; k++)
			if (json_string_value(json_object_get(j, *k)))
				printf("%-13s %s\n", *k, json_string_value(json_object_get(j, *k)));
		printf("%-13s %s in %lld entries, %lld layer%s\n", "size", size, json_integer_value(json_object_get(j, "entries")),
		       json_integer_value(json_object_get(j, "layers")), json_integer_value(json_object_get(j, "layers")) == 1 ? "" : "s");
		json_t *c = json_object_get(j, "config");
		printf("config%s\n", json_object_size(c) ? ":" : "       (none: the image sets no Env, WorkingDir, User, Entrypoint or Cmd)");
		print_config(c);
	}
	json_decref(j);
	return 0;
}

static int image_tag_cmd(int argc, char **argv, int i, struct image_args *a)
{
	if (argc - i != 2)
		return cli_usage_error("image", "image tag takes SRC and DST");
	_cleanup_error_ struct error err = { 0 };
	struct statedir sd;
	int rc = cli_state_open(a->state, &sd);
	if (rc)
		return rc;
	int r = image_tag(sd.fd, sd.path, argv[i], argv[i + 1], a->limits.replace, &err);
	statedir_close(&sd);
	if (r < 0)
		return cli_fail(&err);
	printf("tagged %s as %s\n", argv[i], argv[i + 1]);
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
	if (!strcmp(sub, "pull"))
		return image_pull_cmd(argc, argv, i, &a);
	if (!strcmp(sub, "ls") || !strcmp(sub, "list"))
		return image_ls_cmd(argc, i, &a);
	if (!strcmp(sub, "inspect"))
		return image_inspect_cmd(argc, argv, i, &a);
	if (!strcmp(sub, "tag"))
		return image_tag_cmd(argc, argv, i, &a);
	if (!strcmp(sub, "rm") || !strcmp(sub, "remove"))
		return image_rm_cmd(argc, argv, i, &a);
	return cli_usage_error("image", "image: unknown subcommand '%s'; the subcommands are import, pull, ls, inspect, tag, rm", sub);
}
