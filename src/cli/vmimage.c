/* SPDX-License-Identifier: Apache-2.0 */
/* vmimage.c - `warren vm-image`, a hidden subcommand for the project's own tools: the vm
 * driver's boot products (cell/vm/vmimage.c) written where a caller asks, so that make check-v2's
 * guest (tests/v2/check) boots what warren makes instead of a second copy in shell.
 *
 *   warren vm-image vmlinux BZIMAGE OUT
 *   warren vm-image initramfs KVER INIT OUT [DST=SRC...] [MODULE...]
 *
 * DST=SRC puts the host's file SRC at DST in the initramfs (bin/busybox=/bin/busybox); each
 * MODULE is loaded with what it needs (in /modules, their order in /modules/order). */
#include <stdio.h>
#include <string.h>

#include "cell/vm.h"
#include "cli/cli.h"
#include "util/fs.h"

static const char VM_IMAGE_USAGE[] =
	"usage: warren vm-image vmlinux BZIMAGE OUT\n"
	"       warren vm-image initramfs KVER INIT OUT [DST=SRC...] [MODULE...]\n";

static int vm_image_initramfs(int argc, char **argv, struct error *err)
{
	_cleanup_free_ char *moddir = xasprintf("/lib/modules/%s", argv[2]);
	const char **mods = xcalloc((size_t)argc, sizeof *mods);
	struct vm_initramfs_file *files = xcalloc((size_t)argc, sizeof *files);
	size_t nm = 0, nf = 0;
	for (int i = 5; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (eq) {
			*eq = '\0';
			files[nf++] = (struct vm_initramfs_file){ argv[i], eq + 1 };
		} else {
			mods[nm++] = argv[i];
		}
	}
	struct vm_initramfs spec = { .init = argv[3], .moddir = moddir, .modules = mods, .files = files };
	int r = vm_write_initramfs(&spec, argv[4], err);
	free(mods);
	free(files);
	return r;
}

int cmd_vm_image(int argc, char **argv)
{
	struct error err = { 0 };
	int r;
	/* argv[0] is "vm-image" (main.c) */
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return fputs(VM_IMAGE_USAGE, stdout), 0;
	if (argc == 4 && !strcmp(argv[1], "vmlinux"))
		r = vm_write_vmlinux(argv[2], argv[3], &err);
	else if (argc >= 5 && !strcmp(argv[1], "initramfs"))
		r = vm_image_initramfs(argc, argv, &err);
	else
		return fputs(VM_IMAGE_USAGE, stderr), 125;
	return r < 0 ? cli_fail(&err) : 0;
}
