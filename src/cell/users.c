/* SPDX-License-Identifier: Apache-2.0 */
/* users.c - passwd/group files for the cell: the image's own entries plus the run user. */
#include "cell/users.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cell/contract.h"
#include "util/fs.h"

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
		unsigned lid = 0;
		const char *c = memchr(line, ':', len);
		if (c && (c = memchr(c + 1, ':', len - (size_t)(c + 1 - line))))
			lid = (unsigned)strtoul(c + 1, NULL, 10);
		bool same_id = c && lid == id;
		if (len && !same_name && !same_id)
			fprintf(out, "%.*s\n", (int)len, line);
		line = end ? end + 1 : line + len;
	}
}

char *users_db(const struct cell_spec *s, bool group)
{
	const char *file = group ? "group" : "passwd";
	_cleanup_free_ char *rel = xasprintf("etc/%s", file);
	/* the image the gate judged (cell/spec.h spec_root_open), not whatever its path leads to now */
	_cleanup_close_ int rfd = s->rootfs ? spec_root_open(s) : open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *src = rfd >= 0 ? read_file_in_root_fd(rfd, rel, NULL) : NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (!out)
		return NULL;
	if (group) {
		copy_filtered(out, src, s->user_name, s->gid);
		fprintf(out, "%s:x:%u:\n", s->user_name, (unsigned)s->gid);
	} else {
		copy_filtered(out, src, s->user_name, s->uid);
		fprintf(out, "%s:x:%u:%u:%s:%s:%s\n", s->user_name, (unsigned)s->uid, (unsigned)s->gid,
			s->user_name, s->home, CELL_SHELL_PATH);
	}
	fclose(out);
	return buf;
}
