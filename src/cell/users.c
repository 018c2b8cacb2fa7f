/* users.c - passwd/group files for the cell: the image's own entries plus the run user. */
#include "cell/users.h"

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

static int write_db(const struct cell_spec *s, const char *file, bool group, struct error *err)
{
	const char *root = s->rootfs ? s->rootfs : "";
	_cleanup_free_ char *src_path = xasprintf("%s/etc/%s", root, file);
	_cleanup_free_ char *src = read_file(src_path, NULL);
	_cleanup_free_ char *out_path = xasprintf("%s/etc/%s", s->rundir, file);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	if (!out)
		return error_set(err, errno, "cannot build %s", out_path);
	if (group) {
		copy_filtered(out, src, s->user_name, s->gid);
		fprintf(out, "%s:x:%u:\n", s->user_name, (unsigned)s->gid);
	} else {
		copy_filtered(out, src, s->user_name, s->uid);
		fprintf(out, "%s:x:%u:%u:%s:%s:%s\n", s->user_name, (unsigned)s->uid, (unsigned)s->gid,
			s->user_name, s->home, CELL_SHELL_PATH);
	}
	fclose(out);
	int r = write_file(out_path, buf, len);
	free(buf);
	if (r == 0 && geteuid() == 0 && chown(out_path, spec_host_root_uid(s), spec_host_root_uid(s)) < 0)
		r = -errno;
	if (r < 0)
		return error_set(err, -r, "cannot write %s", out_path);
	return 0;
}

int users_write(const struct cell_spec *s, struct error *err)
{
	int r = write_db(s, "passwd", false, err);
	if (r < 0)
		return r;
	return write_db(s, "group", true, err);
}
