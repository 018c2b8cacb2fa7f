/* SPDX-License-Identifier: Apache-2.0 */
/* contract.h - the constants of the cell contract, shared by every driver and a future guest
 * side: modes, mount points, environment names, ids. Change a value here and every side
 * follows. See DESIGN.md, "The contract of a cell". */
#ifndef WARREN_CELL_CONTRACT_H
#define WARREN_CELL_CONTRACT_H

#include <sys/stat.h>

/* The cell's /tmp: world-writable and sticky, like GitHub's runners. */
#define CELL_TMP_PATH      "/tmp"
#define CELL_VARTMP_PATH   "/var/tmp"
#define CELL_TMP_MODE      01777
#define CELL_TMP_IFMODE    (S_IFDIR | CELL_TMP_MODE)
/* $TMPDIR is set to this, last, after every other variable. */
#define CELL_TMPDIR_ENV    "TMPDIR"
#define CELL_TMPDIR_VALUE  CELL_TMP_PATH

/* --externals DIR: the read-only tool caches, always at this path in the cell (the vm driver's
 * guest gets them as a read-only 9p share mounted here), named by this variable in the job's environment. */
#define CELL_EXTERNALS_PATH "/opt/warren/externals"
#define CELL_EXTERNALS_ENV  "WARREN_EXTERNALS"

/* A run's id, as every side names it: "run_" + a ULID of 26 characters (run/id.h makes and
 * reads them). */
#define RUN_ID_PREFIX      "run_"
#define RUN_ID_LEN         (4 + 26)

/* The run user when warren is started by root. */
#define CELL_DEFAULT_UID   1000
#define CELL_DEFAULT_GID   1000
#define CELL_DEFAULT_USER  "warren"
#define CELL_HOME_PARENT   "/home"
#define CELL_HOME_MODE     0700
#define CELL_SHELL_PATH    "/bin/sh"
#define CELL_PATH_ENV      "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

/* When root starts warren, cell ids 0..65535 are host ids BASE..BASE+65535: nothing in a
 * cell is a host user, and cell uid 1000 is host uid 1000001000 (easy to read in ls -ln). */
#define CELL_ROOT_ID_BASE  1000000000u
#define CELL_ID_RANGE      65536u

/* A container cell's end by force, once its job runs: instead of SIGKILLing the cell's init,
 * the supervisor writes this byte on the pipe that let the job go (its write end is the
 * supervisor's alone; a signal could be forged from inside the cell: with pid 1's
 * RLIMIT_SIGPENDING used up, a kill() from the job arrives as SI_USER from pid 0). Init then
 * SIGKILLs every other process of the cell and reaps them before it ends, so that their CPU
 * time reaches the record (processes the kernel reaps after pid 1 is gone are accounted to
 * no one). The supervisor SIGKILLs init itself if it is not gone CELL_KILL_BACKSTOP_MS later. */
#define CELL_KILL_BYTE         'k'
#define CELL_KILL_BACKSTOP_MS  2000

/* Names of the run directory's parts (see run/rundir.h). */
#define RUN_TMP_DIR        "tmp"
#define RUN_VARTMP_DIR     "var-tmp"
#define RUN_SHM_DIR        "shm"      /* the cell's /dev/shm: scratch like /tmp */
#define RUN_HOME_DIR       "home"
#define RUN_UPPER_DIR      "upper"
#define RUN_WORK_DIR       "work"
#define RUN_ROOT_DIR       "root"
#define RUN_LOWER_DIR      "lower"
#define RUN_ETC_DIR        "etc"

/* ---- the vm driver: what the host (cell/vm/vm.c) and the guest init (guest/init.c) agree on ---- */
/* 9p tags of the shares: the host's / (read-only), the worktree, the run's orders */
#define VM_TAG_ROOT        "warren-root"
#define VM_TAG_WORK        "warren-work"
#define VM_TAG_RUN         "warren-run"
#define VM_TAG_BIND        "warren-bind"  /* + its index: a --bind, --ro-bind or --externals source */
/* In the run directory: the guest's orders (shared read-only as VM_TAG_RUN), and in it */
#define RUN_VM_DIR         "vm"
#define VM_SPEC_FILE       "spec"         /* "key=value\0" records, see VM_KEY_* */
#define VM_SECCOMP_FILE    "seccomp.bpf"  /* the job's seccomp program (struct sock_filter[]) */
#define VM_CONSOLE_FILE    "console.log"  /* the guest kernel's console, kept for a failed boot */
#define VM_KEY_ARG         "arg"          /* one per argv element, in order */
#define VM_KEY_ENV         "env"          /* one per variable, in order (TMPDIR last) */
#define VM_KEY_CWD         "cwd"
#define VM_KEY_UID         "uid"
#define VM_KEY_GID         "gid"
#define VM_KEY_HOME        "home"
#define VM_KEY_WORKTREE    "worktree"     /* where the worktree share is mounted */
#define VM_KEY_MASK        "mask"         /* a host path hidden under an empty read-only tmpfs */
#define VM_KEY_SCRATCH     "scratch"      /* bytes: the size of each scratch tmpfs (0: half the RAM) */
#define VM_KEY_PIDS        "pids"         /* the job's process limit, in a cgroup of the guest (0: none) */
#define VM_KEY_CORE        "core"         /* "1": keep core dumps (RLIMIT_CORE) */
#define VM_KEY_UMASK       "umask"        /* octal: the job's umask (the caller's; absent: 022) */
#define VM_KEY_IMAGE       "image"        /* the root share is an image (--rootfs, --image; its name for
                                             messages): the lower layer of an overlay in the VM's memory */
#define VM_KEY_WORK_RO     "work-ro"      /* "1": the worktree is read-only (--work-ro) */
#define VM_KEY_WORKDIR     "workdir"      /* --workdir: the job's working directory, which must exist */
#define VM_KEY_HOSTNAME    "hostname"     /* the cell's hostname (--hostname, else the run id) */
#define VM_KEY_NO_SYS      "no-sys"       /* "1": no /sys in the cell (--no-sys) */
#define VM_KEY_NO_REFUSED  "no-refused"   /* "1": no record of refused writes (--no-refused-writes) */
#define VM_KEY_BIND        "bind"         /* "<tag> <ro|rw>[-file] <destination>", one per extra mount, in order */
#define VM_BIND_FILE_SUFFIX "-file"       /* the bind is of a file: its share holds it alone, as VM_BIND_FILE_NAME */
#define VM_BIND_FILE_NAME  "file"
#define VM_KEY_LANDLOCK    "landlock"     /* "<access, hex> <path>": a Landlock rule of the job, one per path */
#define VM_KEY_LANDLOCK_ABI "landlock-abi" /* "<abi> <fs> <net> <scoped>" (hex): what the ruleset handles at that ABI */
#define VM_KEY_LANDLOCK_FILE "landlock-file" /* hex: the rights a rule on a file may carry */
#define VM_KEY_LANDLOCK_REQUIRE "landlock-require" /* "1": refuse to run without Landlock */
#define VM_KEY_KMASK       "kmask"        /* "<h|r|o> <path>": a kernel file masked (policy/mask.c: hidden, refusing, read-only) */
#define VM_KEY_PROTECT     "protect"      /* "<p|l> <path>": a worktree path pinned (its own mount) or protected (read-only) */
#define VM_KEY_EXECUTOR    "executor"     /* "1": the job is warren's executor (a job's steps and services), on VM_PORT_EXEC */
#define VM_KEY_TTY         "tty"          /* "<1|2> <rows> <columns>": the job's stdin and stdout are VM_TTY_DEV
                                             (2: its stderr too), of that size at the start */
#define VM_PASSWD_FILE     "passwd"       /* in the orders: the cell's /etc/passwd and /etc/group (cell/users.h) */
#define VM_GROUP_FILE      "group"
/* virtio-serial port names (/sys/class/virtio-ports/<port>/name in the guest) */
#define VM_PORT_STDOUT     "warren.stdout"
#define VM_PORT_STDERR     "warren.stderr"
#define VM_PORT_REPORT     "warren.report" /* guest -> host: one JSON line, see VM_REPORT_* */
#define VM_PORT_CTL        "warren.ctl"    /* host -> guest: one byte per signal for the job */
#define VM_CTL_WINSIZE     0xff            /* on VM_PORT_CTL: then rows and columns, 16 bits each, little-endian */
#define VM_PORT_EXEC       "warren.exec"   /* both ways: the executor's frames (cell/vmexec.h) */
#define VM_TTY_DEV         "/dev/hvc1"     /* the job's terminal: the guest's second virtio console */
/* The report: {"started": true} once the job runs, then {"status": <wait status>} when the job ended, {"error": "...", "errno": N,
 * "code": C} when the guest could not start it. No report: the VM failed (the host says so). */
#define VM_REPORT_STARTED  "started"      /* {"started": true}: the job is running */
#define VM_REPORT_STATUS   "status"
#define VM_REPORT_PIDS_MAX "pids_max"     /* {"pids_max": N}: forks the process limit refused so far */
#define VM_REPORT_OOM_KILLS "oom_kills"   /* {"oom_kills": N}: processes the guest's OOM killer killed */
#define VM_REPORT_PIDS_PEAK "pids_peak"   /* {"pids_peak": N}: the most processes the job had at once */
#define VM_REPORT_SCRATCH  "scratch"      /* {"scratch": [used, free]}: bytes on the scratch's tmpfs mounts */
#define VM_REPORT_SCRATCH_FULL "full"     /* with "scratch": true once one of them is full */
#define VM_REPORT_REFUSED  "refused_writes" /* {"refused_writes": [[path, count, protected]...], */
#define VM_REPORT_REFUSED_TOTAL "total"   /*  "total": N}: the writes the guest's kernel refused */
#define VM_SCRATCH_FULL    65536          /* fewer free bytes than this on a scratch mount: it is full */
#define VM_REPORT_ERROR    "error"
#define VM_REPORT_ERRNO    "errno"
#define VM_REPORT_CODE     "code"         /* with "error": the exit code (125, 126, 127) */
/* In the initramfs: the init, the modules in load order (one file name a line, in VM_MOD_DIR) */
#define VM_INIT_PATH       "/init"
#define VM_MOD_DIR         "/modules"
#define VM_MOD_LIST        "/modules/order"
/* On the kernel command line: power off at once (the KVM probe, bench/vm's bare boot) */
#define VM_CMDLINE_POWEROFF "warren.poweroff"
/* On the kernel command line with --net nat or allow=: "warren.net=ADDR/PREFIX,GATEWAY"; the
 * guest init gives VM_NET_IF that address and a default route via the gateway, and writes
 * CELL_RESOLV_CONF naming the gateway (warren's resolver for the run) */
#define VM_CMDLINE_NET     "warren.net="
#define VM_NET_IF          "eth0"
#define CELL_RESOLV_CONF   "/etc/resolv.conf"
#define VM_RESOLV_COPY     "/run/warren-resolv.conf"  /* the guest's copy, bound over CELL_RESOLV_CONF */
#define VM_MOD_NET_LIST    "/modules/net"  /* the NIC's modules, loaded only with VM_CMDLINE_NET */
/* overlay's, loaded only when the root is one (an image, a bind's mount point missing) */
#define VM_MOD_OVERLAY_LIST "/modules/overlay"
/* The cell's resolv.conf with a network (both drivers): the gateway's address for %s */
#define CELL_RESOLV_FMT    "# warren: the run's own resolver, on the gateway\nnameserver %s\noptions edns0\n"
/* Where the guest mounts its shares before it enters the new root */
#define VM_NEWROOT         "/newroot"
#define VM_RUN_MNT         "/run-orders"
#define VM_FILE_BINDS_MNT  "/file-binds"  /* the shares of binds of files, each bound from there */
#define VM_LOWER_MNT       "/lower"       /* the root share, when it is an overlay's lower layer */
#define VM_UPPER_MNT       "/upper"       /* the tmpfs of that overlay's upper layer (in the VM's memory) */
#define VM_CGROUP_MNT      "/cgroup"      /* the guest's cgroup2, with the job's cgroup "job" */

#endif
