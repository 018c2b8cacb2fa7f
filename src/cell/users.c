/* SPDX-License-Identifier: Apache-2.0 */
/* users.c - passwd/group files for the cell: the image's own entries plus the run user, or the
 * image's files as they are when the image names the run user itself (the OCI face's cells:
 * `id -nu` is the image's name for the uid, as with any runtime). */
#include "cell/users.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cell/contract.h"
#include "util/fs.h"
#include "util/sys.h"

/* the most of an image's passwd or group file read */
#define USERS_DB_MAX (1 << 20)

/* The id (field 3) of a line of len bytes, or -1 when it has none. */
static long line_id(const char *line, size_t len)
{
	const char *c = memchr(line, ':', len);
	if (c)
		c = memchr(c + 1, ':', len - (size_t)(c + 1 - line));
	if (!c || c + 1 >= line + len || *(c + 1) < '0' || *(c + 1) > '9')
		return -1;
	return (long)strtoul(c + 1, NULL, 10);
}

/* Append to out every line of src whose name (field 1) and id (field 3) differ from ours. */
static void copy_filtered(FILE *out, const char *src, const char *name, unsigned id)
{
	if (!src)
		return;
	size_t nlen = strlen(name);
	const char *line = src;
	while (*line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		bool same_name = len > nlen && strncmp(line, name, nlen) == 0 && line[nlen] == ':';
		bool same_id = line_id(line, len) == (long)id;
		if (len && !same_name && !same_id)
			fprintf(out, "%.*s\n", (int)len, line);
		line = end ? end + 1 : line + len;
	}
}

char *users_name_of(const char *db, unsigned id)
{
	for (const char *line = db; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *colon = memchr(line, ':', len);
		if (colon && colon > line && line[0] != '#' && line_id(line, len) == (long)id)
			return xasprintf("%.*s", (int)(colon - line), line);
		line = end ? end + 1 : line + len;
	}
	return NULL;
}

char *users_image_db(const struct cell_spec *s, bool group)
{
	/* the image the gate judged (cell/spec.h spec_root_open), not whatever its path leads to
	 * now; a regular file of a bounded size (a FIFO there must not hold the cell's start) */
	_cleanup_close_ int rfd = s->rootfs ? spec_root_open(s) : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int fd = rfd < 0 ? -1 : sys_openat2(rfd, group ? "etc/group" : "etc/passwd", O_RDONLY | O_NONBLOCK | O_CLOEXEC,
							    RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > USERS_DB_MAX)
		return NULL;
	return read_fd(fd, NULL);
}

char *users_db(const struct cell_spec *s, bool group)
{
	_cleanup_free_ char *groups = group ? users_image_db(s, true) : NULL;
	_cleanup_free_ char *gnamed = group ? users_name_of(groups, s->gid) : NULL;
	/* (the group file: the passwd read only when the image has a group of that gid) */
	_cleanup_free_ char *passwd = !group || gnamed ? users_image_db(s, false) : NULL;
	/* the image names the run user (its line of that name and uid): its passwd stays as it is,
	 * and so does its group file when it has a group of the run user's gid */
	_cleanup_free_ char *named = users_name_of(passwd, s->uid);
	if (named && !strcmp(named, s->user_name))
		return group ? steal_pointer(&groups) : steal_pointer(&passwd);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (!out)
		return NULL;
	if (group) {
		copy_filtered(out, groups, s->user_name, s->gid);
		fprintf(out, "%s:x:%u:\n", s->user_name, (unsigned)s->gid);
	} else {
		copy_filtered(out, passwd, s->user_name, s->uid);
		fprintf(out, "%s:x:%u:%u:%s:%s:%s\n", s->user_name, (unsigned)s->uid, (unsigned)s->gid,
			s->user_name, s->home, CELL_SHELL_PATH);
	}
	fclose(out);
	return buf;
}
