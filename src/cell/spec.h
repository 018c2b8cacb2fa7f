/* spec.h - the driver-independent description of one cell: what to run, where, as whom, with
 * which limits. The CLI and the job layer fill it; the supervisor and a driver read it. */
#ifndef WARREN_CELL_SPEC_H
#define WARREN_CELL_SPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "net/net.h"     /* struct net_opts (--net, --publish) */
#include "run/id.h"

/* Limits; 0 means "not set". */
struct limits {
	uint64_t time_ms;     /* wall clock */
	uint64_t cpu_ms;      /* CPU time over all processes of the cell */
	uint64_t memory;      /* bytes, memory + swap */
	uint64_t pids;        /* processes and threads */
	uint64_t output;      /* bytes written to stdout + stderr */
	uint64_t scratch;     /* bytes in tmp + home + upper */
	uint64_t grace_ms;    /* SIGTERM -> SIGKILL */
};

/* How the cell is made: Linux namespaces (cell/container.h) or a microVM (cell/vm.h). */
enum cell_driver { CELL_DRIVER_CONTAINER = 0, CELL_DRIVER_VM };

struct cell_spec {
	char id[RUN_ID_LEN + 1];
	enum cell_driver driver;
	char **argv;          /* NULL-terminated */
	char **env;           /* final environment, TMPDIR last; NULL-terminated */
	char *rootfs;         /* absolute, or NULL for the host's / read-only */
	char *worktree;       /* absolute, symlink-free */
	int worktree_fd;      /* O_PATH of the worktree, opened once: what is mounted is what was
	                         checked, whatever happens to the path later (-1 until opened) */
	char *rundir;         /* absolute <state>/runs/<id> */
	char *statedir;       /* absolute <state> (masked inside the cell) */
	int runs_fd;          /* <state>/runs and the run directory, opened once (run/rundir.h);
	                         the supervisor writes the record through them (0: not open) */
	int rundir_fd;
	char state_tag[9];    /* the state directory's identity, in the run's cgroup names */

	uid_t uid;            /* the run user inside the cell */
	gid_t gid;
	char *user_name;
	char *home;           /* the home path inside the cell */

	bool rootless;        /* started by a non-root user */
	uid_t host_uid;       /* the caller */
	gid_t host_gid;
	uid_t id_base;        /* root mode: cell id N is host id id_base + N */

	bool keep;
	bool tty;             /* give the job a pseudo-terminal of its own */
	struct limits limits;
	struct policy_opts policy; /* seccomp, Landlock, masks, protected paths (policy/policy.h) */
	struct net_opts net;  /* --net, --publish, --dns-max-names (net/net.h); mode 0: none */
};

/* The host uid/gid the run user's files carry. */
uid_t spec_host_uid(const struct cell_spec *s);
gid_t spec_host_gid(const struct cell_spec *s);
/* Host id of cell root (root mode) or of the caller (rootless). */
uid_t spec_host_root_uid(const struct cell_spec *s);
void cell_spec_free(struct cell_spec *s);

#endif
