/* SPDX-License-Identifier: Apache-2.0 */
/* info.c - what the runtime says of itself: `features` (runtime-spec features.md), `spec` (a
 * default config.json that warren runs as it is) and `--version` (runc's three lines, as
 * go-runc parses them). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "oci/internal.h"
#include "util/fs.h"

#ifndef WARREN_VERSION
#define WARREN_VERSION "unknown"
#endif

int oci_version(void)
{
	printf("runc version %s (warren)\ncommit: warren-%s\nspec: %s\n", WARREN_VERSION, WARREN_VERSION, OCI_SPEC_VERSION);
	return 0;
}

static json_t *strs(const char *const *v)
{
	json_t *a = json_array();
	for (; *v; v++)
		json_array_append_new(a, json_string(*v));
	return a;
}

int oci_features(void)
{
	static const char *const mount_opts[] = { "bind", "rbind", "ro", "rw", "nosuid", "nodev", "noexec", "private", "rprivate", "slave", "rslave", NULL };
	static const char *const ns[] = { "cgroup", "ipc", "mount", "network", "pid", "user", "uts", NULL };
	static const char *const none[] = { NULL };
	static const char *const seccomp_actions[] = { "SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", NULL };
	json_t *j = json_pack("{s:s, s:s, s:o, s:o, s:{s:o, s:[], s:{s:b, s:b, s:b, s:b}, s:{s:b, s:o, s:o, s:o, s:o}, s:{s:b}, s:{s:b}, s:{s:b}}, s:{s:s, s:s}}",
			      "ociVersionMin", "1.0.0", "ociVersionMax", OCI_SPEC_VERSION,
			      "hooks", strs(none), "mountOptions", strs(mount_opts),
			      "linux",
			      "namespaces", strs(ns), "capabilities",
			      "cgroup", "v1", 1, "v2", 1, "systemd", 0, "systemdUser", 0,
			      "seccomp", "enabled", 1, "actions", strs(seccomp_actions), "operators", strs(none), "archs", strs(none),
			      "knownFlags", strs(none),
			      "apparmor", "enabled", 0, "selinux", "enabled", 0, "intelRdt", "enabled", 0,
			      "annotations", "org.opencontainers.runc.version", WARREN_VERSION, "io.github.warren.runtime", "warren");
	if (!j)
		return oci_fail("features: cannot build the answer");
	char *t = json_dumps(j, JSON_INDENT(4));
	printf("%s\n", t);
	free(t);
	json_decref(j);
	return 0;
}

/* A config.json warren runs as it is: a shell as root of the cell, the cell's own mounts. */
static const char DEFAULT_SPEC[] =
	"{\n"
	"\t\"ociVersion\": \"" OCI_SPEC_VERSION "\",\n"
	"\t\"process\": {\n"
	"\t\t\"terminal\": true,\n"
	"\t\t\"user\": { \"uid\": 0, \"gid\": 0 },\n"
	"\t\t\"args\": [ \"sh\" ],\n"
	"\t\t\"env\": [ \"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\", \"TERM=xterm\" ],\n"
	"\t\t\"cwd\": \"/\",\n"
	"\t\t\"noNewPrivileges\": true\n"
	"\t},\n"
	"\t\"root\": { \"path\": \"rootfs\", \"readonly\": false },\n"
	"\t\"hostname\": \"warren\",\n"
	"\t\"mounts\": [\n"
	"\t\t{ \"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\" },\n"
	"\t\t{ \"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [ \"nosuid\", \"strictatime\", \"mode=755\", \"size=65536k\" ] },\n"
	"\t\t{ \"destination\": \"/dev/pts\", \"type\": \"devpts\", \"source\": \"devpts\", \"options\": [ \"nosuid\", \"noexec\", \"newinstance\", \"ptmxmode=0666\", \"mode=0620\" ] },\n"
	"\t\t{ \"destination\": \"/dev/shm\", \"type\": \"tmpfs\", \"source\": \"shm\", \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"mode=1777\", \"size=65536k\" ] },\n"
	"\t\t{ \"destination\": \"/sys\", \"type\": \"sysfs\", \"source\": \"sysfs\", \"options\": [ \"nosuid\", \"noexec\", \"nodev\", \"ro\" ] }\n"
	"\t],\n"
	"\t\"linux\": {\n"
	"\t\t\"namespaces\": [ { \"type\": \"pid\" }, { \"type\": \"network\" }, { \"type\": \"ipc\" }, { \"type\": \"uts\" }, { \"type\": \"mount\" }, { \"type\": \"cgroup\" }, { \"type\": \"user\" } ]\n"
	"\t}\n"
	"}\n";

int oci_spec(int argc, char **argv)
{
	const char *bundle = ".";
	for (int i = 0; i < argc; i++) {
		if ((!strcmp(argv[i], "--bundle") || !strcmp(argv[i], "-b")) && i + 1 < argc)
			bundle = argv[++i];
		else if (!strncmp(argv[i], "--bundle=", 9))
			bundle = argv[i] + 9;
		else if (strcmp(argv[i], "--rootless"))
			return oci_fail("spec: unknown option '%s'", argv[i]);
	}
	_cleanup_free_ char *path = xasprintf("%s/config.json", bundle);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return oci_fail(errno == EEXIST ? "File %s exists. Remove it first" : "cannot write %s: %s", path, strerror(errno));
	int r = write_all(fd, DEFAULT_SPEC, strlen(DEFAULT_SPEC));
	close(fd);
	return r < 0 ? oci_fail("cannot write %s: %s", path, strerror(-r)) : 0;
}
