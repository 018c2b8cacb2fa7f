/* SPDX-License-Identifier: Apache-2.0 */
/* pull.c - `warren image pull REF [NAME]`: the registry protocol is skopeo's (token and basic
 * auth, manifest lists resolved to this host's platform, every blob's digest verified), called
 * as a helper as qemu and pasta are: `skopeo copy docker://REF oci:<scratch>:warren` into a
 * locked scratch directory of the image store, whose OCI layout then goes through the importer
 * as any untrusted layout does (hostile entries refused, the manifest's, the config's and each
 * layer's digest checked again). The scratch is removed at the end, or by `warren gc` when the
 * pull was killed. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/pull.h"
#include "image/entry.h"
#include "image/store.h"
#include "util/fs.h"

#define SKOPEO_ERR_MAX (64u << 10)

char *pull_default_name(const char *ref)
{
	const char *r = !strncmp(ref, "docker://", 9) ? ref + 9 : ref;
	size_t end = strcspn(r, "@");                 /* name@sha256:... */
	const char *slash = memrchr(r, '/', end);
	const char *base = slash ? slash + 1 : r;
	const char *colon = memchr(base, ':', (size_t)(r + end - base));   /* name:tag */
	char *name = strndup(base, colon ? (size_t)(colon - base) : (size_t)(r + end - base));
	return name && !image_name_problem(name) ? name : (free(name), NULL);
}

/* skopeo's last message, from its stderr: the msg="..." of a logrus line, else the last line. */
char *pull_skopeo_message(const char *text)
{
	const char *last = NULL;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (l[0] != '\n')
			last = l;
	if (!last)
		return xstrdup("it said nothing");
	_cleanup_free_ char *line = strndup(last, strcspn(last, "\n"));
	const char *m = strstr(line, "msg=\"");
	if (!m)
		return steal_pointer(&line);
	char *out = xmalloc(strlen(m)), *o = out;
	for (const char *p = m + 5; *p && *p != '"'; p++)
		*o++ = (*p == '\\' && p[1]) ? *++p : *p;
	*o = '\0';
	return out;
}

/* What to add to a failure skopeo reported: how to get past it. */
static const char *remedy(const char *msg, const struct pull_opts *o)
{
	if (strstr(msg, "HTTP response to HTTPS client"))
		return "; the registry speaks plain HTTP: give --insecure if you trust the network to it";
	if (strstr(msg, "x509:") || strstr(msg, "certificate"))
		return o->insecure ? "" : "; give --cert-dir DIR with the registry's CA certificate (ca.crt), or --insecure";
	if (strstr(msg, "unauthorized") || strstr(msg, "authentication required") || strstr(msg, "denied"))
		return "; give --creds USER[:PASSWORD] or --authfile FILE (skopeo login writes one; REGISTRY_AUTH_FILE names the default)";
	return "";
}

/* Run skopeo (argv) with its stderr to a pipe read into *text; its stdout is the terminal's
 * stderr for the progress, or /dev/null. The exit status, or -errno. */
static int skopeo_run(char **argv, const char *scratch, bool progress, char **text)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(progress ? 2 : null, 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		setenv("TMPDIR", scratch, 1);   /* what skopeo buffers goes to the store's scratch */
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	*text = xmalloc(SKOPEO_ERR_MAX + 1);
	ssize_t r;
	while ((r = read(p[0], *text + n, SKOPEO_ERR_MAX - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (progress)   /* a terminal sees skopeo's warnings as they come */
			(void)!write(2, *text + n, (size_t)r);
		n += (size_t)r;
		if (n == SKOPEO_ERR_MAX)   /* keep the tail */
			n = 0;
	}
	(*text)[n] = '\0';
	close(p[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char **skopeo_argv(const char *skopeo, const char *ref, const char *layout, const struct pull_opts *o, bool progress)
{
	char **v = xcalloc(16, sizeof *v);
	int n = 0;
	v[n++] = xstrdup(skopeo);
	v[n++] = xstrdup("copy");
	if (!progress)
		v[n++] = xstrdup("--quiet");
	if (o->insecure)
		v[n++] = xstrdup("--src-tls-verify=false");
	if (o->creds)
		v[n++] = xasprintf("--src-creds=%s", o->creds);
	if (o->authfile)
		v[n++] = xasprintf("--src-authfile=%s", o->authfile);
	if (o->cert_dir)
		v[n++] = xasprintf("--src-cert-dir=%s", o->cert_dir);
	v[n++] = xasprintf("docker://%s", !strncmp(ref, "docker://", 9) ? ref + 9 : ref);
	v[n++] = xasprintf("oci:%s:warren", layout);
	return v;
}

int image_pull(int statefd, const char *state, const char *ref, const char *name, const struct pull_opts *o,
	       json_t **info, struct error *err)
{
	*info = NULL;
	if (!*ref || ref[0] == '-' || strchr(ref, '\n') || strchr(ref, ' '))
		return error_set(err, 0, "image pull: '%s' is not an image reference (e.g. docker.io/library/debian:12, registry.example:5000/app@sha256:...)", ref);
	_cleanup_free_ char *skopeo = host_tool_find("skopeo");
	if (!skopeo)
		return error_set(err, ENOENT, "image pull needs skopeo (the registry protocol); install the Debian package skopeo");
	json_t *old = o->import.replace ? NULL : image_record(statefd, name);
	json_decref(old);
	if (old)
		return error_set(err, EEXIST, "image %s exists in %s (give --replace to replace it, or another NAME)", name, state);
	int sfd;
	_cleanup_free_ char *scratch = image_scratch(statefd, state, name, &sfd, err);
	if (!scratch)
		return -EIO;
	_cleanup_free_ char *layout = xasprintf("%s/layout", scratch);
	bool progress = o->progress;
	char **argv = skopeo_argv(skopeo, ref, layout, o, progress);
	_cleanup_free_ char *text = NULL;
	int r = skopeo_run(argv, scratch, progress, &text);
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
	if (r != 0) {
		_cleanup_free_ char *msg = r < 0 ? xstrdup(strerror(-r)) : pull_skopeo_message(text);
		error_set(err, 0, "image pull %s: skopeo could not fetch it: %s%s", ref, msg, remedy(msg, o));
		image_scratch_remove(statefd, scratch, &sfd);
		return -EIO;
	}
	if (progress)
		fprintf(stderr, "importing %s as %s\n", ref, name);
	struct image_import_opts io = o->import;
	_cleanup_free_ char *source = xasprintf("docker://%s", !strncmp(ref, "docker://", 9) ? ref + 9 : ref);
	io.source_name = source;
	r = image_import(statefd, state, name, layout, &io, info, err);
	image_scratch_remove(statefd, scratch, &sfd);
	return r;
}
