/* SPDX-License-Identifier: Apache-2.0 */
/* vm.h - the vm driver: a cell that is a qemu microVM with a kernel of its own (Debian's, booted
 * as an uncompressed vmlinux through PVH), an initramfs warren builds (the static guest init of
 * src/guest/ and the modules it needs), the host's / shared read-only and the worktree
 * read-write over 9p. The guest init reports how the job ended as one JSON line on a
 * virtio-serial port; the host turns it into the container driver's struct cell_report, so the
 * supervisor and the record read the same for both drivers. */
#ifndef WARREN_CELL_VM_H
#define WARREN_CELL_VM_H

#include <stdbool.h>
#include <jansson.h>

#include "cell/container.h"
#include "cell/spec.h"
#include "util/error.h"

/* The guest's RAM without a memory limit, at most (a TCG guest's boot grows with its RAM), the
 * least it boots with, and what qemu itself may use on top of it in the run's cgroup. */
#define VM_DEFAULT_MEMORY  (512ull << 20)
#define VM_MAX_MEMORY      (2048ull << 20)
#define VM_MIN_MEMORY      (128ull << 20)
#define VM_QEMU_OVERHEAD   (256ull << 20)
#define VM_QEMU            "qemu-system-x86_64"
/* Extra mounts a VM may have: each is a 9p device, and qemu's microvm has 24 virtio-mmio slots
 * (the serial ports and three shares take four; some are kept for a NIC and disks). */
#define VM_MAX_BINDS       16

/* What the VM boots: the kernel package's files and warren's cached products of them. */
struct vm_kernel {
	char *image;       /* the bzImage: $WARREN_VM_KERNEL or the newest /boot/vmlinuz-* */
	char *version;     /* its modules are /lib/modules/<version> */
	char *moddir;
	char *init;        /* the guest init: $WARREN_GUEST_INIT or beside the warren binary */
	char *vmlinux;     /* <state>/vm-cache/vmlinux-<version>-<identity of image> */
	char *initramfs;   /* <state>/vm-cache/initramfs-<version>-<image>-<init>.cpio */
};

/* Find the kernel and make (or find made) its vmlinux and initramfs under statedir. */
int vm_kernel_prepare(struct vm_kernel *k, const char *statedir, struct error *err);
void vm_kernel_free(struct vm_kernel *k);
/* warren gc: remove the entries of <statedir>/vm-cache made of a kernel no longer there or of
 * another guest init than this warren's (its accel- answer with its vmlinux); *removed counts
 * them. 0, or -errno of the last failure. */
int vm_cache_prune(const char *statedir, int *removed);

/* What an initramfs holds (the vm driver's, or make check-v2's guest, tests/v2/): init at
 * VM_INIT_PATH, the modules of moddir (with what they need, decompressed, in VM_MOD_DIR, their
 * load order in VM_MOD_LIST) and the host's files at their places. */
struct vm_initramfs_file {
	const char *dst;   /* in the initramfs, relative ("bin/busybox"); NULL ends the list */
	const char *src;   /* on the host */
};
struct vm_initramfs {
	const char *init;
	const char *moddir;                 /* /lib/modules/<version> */
	const char *const *modules;         /* names, NULL-terminated */
	const char *const *net_modules;     /* the NIC's, loaded only with a network (or NULL) */
	const char *const *overlay_modules; /* overlay's, loaded only for an overlay root (or NULL) */
	const struct vm_initramfs_file *files; /* or NULL */
};
/* Write it (atomically) to path. */
int vm_write_initramfs(const struct vm_initramfs *spec, const char *path, struct error *err);
/* The ELF vmlinux of the bzImage image, written (atomically) to path. */
int vm_write_vmlinux(const char *image, const char *path, struct error *err);

/* KVM when it boots this kernel (tried once with qemu walled in as the run s's, then
 * remembered in s's state directory's cache), else TCG; $WARREN_VM_ACCEL (kvm or tcg) decides
 * instead. "kvm" or "tcg". */
const char *vm_accel(const struct vm_kernel *k, const struct cell_spec *s);

/* What the vm driver's guest cannot carry yet (or too many binds, too little memory), refused
 * with one line before anything is made. */
int vm_check_spec(const struct cell_spec *s, bool job, struct error *err);
/* The limits of the run's cgroup on the host, which holds qemu: the guest's RAM plus qemu's
 * own, no process limit (qemu's threads are not the job's processes). */
/* The guest's RAM: the memory limit, at most VM_MAX_MEMORY, in MiB. */
unsigned long long vm_guest_memory(const struct cell_spec *s);
void vm_host_limits(const struct cell_spec *s, struct limits *out);

/* Root mode: the idmaps' user namespaces of the worktree and the binds (cell_owner_idmap: their
 * owners are the run user's host ids to qemu, on those shares only), made before any
 * descriptor of the run exists, as a container's; the driver's state in c made first. */
void vm_prepare(const struct cell_spec *s, struct cell *c);
/* The driver, in the container driver's shape (container.h): start qemu, stopped before it
 * executes until vm_release() (the supervisor places it in the run's cgroup first). */
int vm_start(const struct cell_spec *s, const struct cell_io *io, struct cell *c, struct error *err);
/* The driver's state in c (vm_prepare makes it first; vm_close frees it). */
void vm_cell_init(struct cell *c);
int vm_release(struct cell *c);
/* SIGKILL ends qemu; any other signal goes to the job inside (the control port). */
int vm_signal(struct cell *c, int sig);
/* The next report of the guest, read from c->report_fd: 1 (r and *msg filled), 0 when none
 * is complete yet. */
int vm_read_report(struct cell *c, struct cell_report *r, char **msg);
/* Why the run has no report: the VM failed (qemu's wait status, the end of its console). */
char *vm_missing_report(const struct cell_spec *s, const struct cell *c, int qemu_status);
/* "vm" in the record: {"accel": ..., "kernel": ..., "memory": bytes}. */
void vm_record(const struct cell *c, json_t **extra);
void vm_close(struct cell *c);

/* qemu's confinement, in its child before it executes (vm/vmjail.c): root mode leaves root for
 * the run user's host ids (the group of /dev/kvm kept when kvm); a user and mount namespace of
 * its own, where the run user is those ids and the host's / is read-only with the state
 * directory, /tmp, /var/tmp, /dev/shm, /run, /home and /root empty; no capability,
 * no_new_privs. What qemu shares are private copies in its view, every kernel file system in
 * them covered: the root share at fd root_fd (the view, or with --rootfs the image's directory
 * open there; -1: no root share), the worktree at work_fd (open there; -1: none) and the
 * binds' sources, open from fd bind_fd0 on (see vm_fd_is_file): each fd is the copy's then.
 * idmaps (root mode; NULL or -1: none): the userns fds of vm_prepare's idmaps, the worktree's
 * then each bind's, which its copy is idmapped through; closed here. */
int vm_jail(const struct cell_spec *s, bool kvm, int root_fd, int work_fd, int bind_fd0, const int *idmaps, struct error *err);
/* Is a bind's source (open as fd) a file, not a directory? A 9p share is a directory: vm_jail
 * gives qemu a directory of its view holding that file alone (VM_BIND_FILE_NAME) in place of
 * the bind's descriptor (bind i at bind_fd0 + i), and the guest binds the file from it. */
bool vm_fd_is_file(int fd);
/* The logs' sizes: their first HEAD bytes and their last TAIL are kept (a guest that prints
 * for ever, or makes qemu complain for ever, cannot fill the disk), the cut between them named. */
#define VM_CONSOLE_HEAD (512u << 10)
#define VM_CONSOLE_TAIL (512u << 10)
#define VM_QEMU_LOG_HEAD (64u << 10)
#define VM_QEMU_LOG_TAIL (64u << 10)
#define VM_QEMU_LOG_FILE "qemu.log"
/* A keeper process that copies what is written to *write_end into <rundir>/vm/<file>, bounded
 * (head, tail); it ends (and writes the kept end) when the last writer closes. Its pid, or
 * -errno. */
pid_t vm_log_start(const struct cell_spec *s, const char *file, size_t head, size_t tail, int *write_end, struct error *err);
/* A job's executor across the wall (vmexec.h): a relay process, as the run user's ids, between
 * the runner's socket and *port, the host's end of the VM_PORT_EXEC port it makes (for qemu).
 * Its pid (reaped with the cell's helpers), or -errno. */
pid_t vm_exec_relay_start(const struct cell_spec *s, int runner, int *port, struct error *err);
/* The host's end of the job's terminal (a socket), when the job has one: the supervisor's to
 * relay to the caller's terminal (-1 when none; once). */
int vm_take_tty(struct cell *c);
/* The job's terminal's size (the control port; the guest sets it on its console). */
void vm_winsize(struct cell *c, unsigned short rows, unsigned short cols);
/* The keeper's copy from in to out: head bytes, then the last tail bytes at the end. */
void vm_console_keep(int in, int out, size_t head, size_t tail);

#endif
