/* SPDX-License-Identifier: Apache-2.0 */
/* state.c - the state of one OCI container under the runtime's root: <root>/<id>/ holds
 * state.json (what `state` prints, with the supervisor's pid and start time) and ctl, the
 * supervisor's control socket; flock on the directory serialises create, start and delete. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "oci/internal.h"
#include "util/conf.h"
#include "util/fs.h"

/* The state directory, when it is there, is the caller's alone: another user who owns it or
 * may write in it could put a state.json of theirs under an id (the pid that delete kills, the
 * state directory that its gc reclaims) or a control socket of theirs, and a name made in
 * advance in /tmp (warren-oci-UID) would be theirs. */
static int root_owned(const char *root, struct error *err)
{
	struct stat st;
	_cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return errno == ENOENT ? 0 : error_set(err, errno, "--root %s: cannot open the state directory", root);
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return error_set(err, 0, "--root %s: the state directory is %s (owner uid %u, mode %04o); give a directory of your own that only you may write (mode 0700)",
				 root, st.st_uid != geteuid() ? "another user's" : "writable by others", (unsigned)st.st_uid,
				 (unsigned)(st.st_mode & 07777));
	return 0;
}

char *oci_root(bool make, struct error *err)
{
	char *root;
	const char *conf = conf_get("oci.root", NULL); /* warren.conf's, when --root is not given */
	if (oci_g.root)
		root = abs_path_would_be(oci_g.root);
	else if (conf)
		root = xstrdup(conf);
	else if (geteuid() == 0)
		root = xstrdup("/run/warren-oci");
	else {
		const char *x = getenv("XDG_RUNTIME_DIR");
		root = x && *x ? xasprintf("%s/warren-oci", x) : xasprintf("/tmp/warren-oci-%u", (unsigned)geteuid());
	}
	if (!root) {
		error_set(err, errno, "--root %s: cannot use it as the state directory", oci_g.root);
		return NULL;
	}
	int r = make ? mkdir_p(root, 0700) : 0;
	if (r < 0) {
		error_set(err, -r, "--root %s: cannot make the state directory", root);
		free(root);
		return NULL;
	}
	if (root_owned(root, err) < 0) {
		free(root);
		return NULL;
	}
	return root;
}

bool oci_valid_id(const char *id)
{
	size_t n = strlen(id);
	if (n == 0 || n > 1024 || !strcmp(id, ".") || !strcmp(id, ".."))
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("_+.-", *p)))
			return false;
	return true;
}

int oci_dir_open(const char *root, const char *id, struct error *err)
{
	if (!oci_valid_id(id))
		return error_set(err, 0, "invalid container id '%s': use letters, digits, '_', '+', '.' and '-'", id), -1;
	_cleanup_close_ int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = rfd < 0 ? -1 : openat(rfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		error_set(err, 0, "container %s does not exist (under %s)", id, root);
	return fd;
}

int oci_lock(int dfd)
{
	while (flock(dfd, LOCK_EX) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static char *jstr(json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? xstrdup(v) : NULL;
}

int oci_state_read(int dfd, struct oci_state *st, struct error *err)
{
	memset(st, 0, sizeof *st);
	_cleanup_free_ char *text = read_file_at(dfd, "state.json", NULL);
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;
	if (!j)
		return error_set(err, errno, "the container's state.json is missing or broken (a create that did not finish); delete it");
	st->id = jstr(j, "id");
	st->bundle = jstr(j, "bundle");
	st->run_id = jstr(j, "run");
	st->statedir = jstr(j, "warren_state");
	st->created = jstr(j, "created");
	st->status = jstr(j, "status");
	st->pid = (pid_t)json_integer_value(json_object_get(j, "pid"));
	st->start_time = (unsigned long long)json_integer_value(json_object_get(j, "start_time"));
	st->init_pid = (pid_t)json_integer_value(json_object_get(j, "init_pid"));
	st->freezer = jstr(j, "freezer");
	st->cgroup = json_is_true(json_object_get(j, "cgroup"));
	st->annotations = json_incref(json_object_get(j, "annotations"));
	json_decref(j);
	return 0;
}

int oci_state_write(int dfd, const struct oci_state *st)
{
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:s?, s:b, s:O}", "id", st->id, "bundle",
			      st->bundle, "run", st->run_id, "warren_state", st->statedir, "created", st->created, "status",
			      st->status, "pid", (json_int_t)st->pid, "start_time", (json_int_t)st->start_time,
			      "init_pid", (json_int_t)st->init_pid, "freezer", st->freezer, "cgroup", st->cgroup,
			      "annotations", st->annotations ? st->annotations : json_object());
	if (!j)
		return -EINVAL;
	char *text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	int r = write_file_atomic_at(dfd, "state.json", text, strlen(text), 0600);
	free(text);
	return r;
}

void oci_state_free(struct oci_state *st)
{
	free(st->id);
	free(st->bundle);
	free(st->run_id);
	free(st->statedir);
	free(st->created);
	free(st->status);
	free(st->freezer);
	json_decref(st->annotations);
	memset(st, 0, sizeof *st);
}

unsigned long long oci_pid_start_time(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	_cleanup_free_ char *s = read_file(path, NULL);
	char *p = s ? strrchr(s, ')') : NULL; /* the name may hold anything: fields follow its ')' */
	if (!p)
		return 0;
	/* after ')': state (3), then fields 4..22; starttime is field 22 */
	unsigned long long v = 0;
	p += 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		v = strtoull(p, NULL, 10);
	return v;
}

bool oci_pid_alive(pid_t pid, unsigned long long start_time)
{
	if (pid <= 0 || kill(pid, 0) < 0)
		return false;
	/* the same process, not another that got its number; a zombie is gone */
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	_cleanup_free_ char *s = read_file(path, NULL);
	char *p = s ? strrchr(s, ')') : NULL;
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return false;
	return oci_pid_start_time(pid) == start_time;
}

const char *oci_status(const struct oci_state *st)
{
	if (!oci_pid_alive(st->pid, st->start_time))
		return "stopped";
	if (st->status && !strcmp(st->status, "paused"))
		return "paused";
	return st->status && !strcmp(st->status, "created") ? "created"
	       : st->status && !strcmp(st->status, "stopped") ? "stopped" : "running";
}

void oci_ctl_addr(int dfd, struct sockaddr_un *a)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof a->sun_path, "/proc/self/fd/%d/ctl", dfd);
}

int oci_ctl(int dfd, const char *id, const char *cmd, struct error *err)
{
	struct sockaddr_un a;
	oci_ctl_addr(dfd, &a);
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0)
		return error_set(err, errno, "container not running: %s", id), -1;
	if (write(s, cmd, strlen(cmd)) < 0)
		return error_set(err, errno, "container not running: %s", id), -1;
	char buf[1024];
	ssize_t n = read(s, buf, sizeof buf - 1);
	if (n <= 0)
		return error_set(err, 0, "container not running: %s (its supervisor ended)", id), -1;
	buf[n] = 0;
	if (strcmp(buf, "ok"))
		return error_set(err, 0, "%s", buf), -1;
	return 0;
}

pid_t oci_job_pid(pid_t init)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)init, (int)init);
	errno = ESRCH;
	_cleanup_free_ char *list = init > 0 ? read_file(path, NULL) : NULL;
	return list ? (pid_t)strtol(list, NULL, 10) : -errno;
}

pid_t oci_job_pid_wait(pid_t init)
{
	pid_t job = 0;
	for (int i = 0; i < 200 && (job = oci_job_pid(init)) == 0; i++)
		usleep(10000);
	return job;
}
