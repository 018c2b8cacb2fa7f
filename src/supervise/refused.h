/* SPDX-License-Identifier: Apache-2.0 */
/* refused.h - the write watch, supervisor side: looks at each write-side path call the job's
 * filter (policy/watch.c) hands over, lets it go on, and counts the ones the cell refuses, by
 * path, for result.json ("refused_writes") and the line at the end of the run that says
 * where the run may write instead; and the same for connects to the host's unix sockets
 * ("refused_connects"), which the cell cannot reach (cell/container/hostroot.c). */
#ifndef WARREN_SUPERVISE_REFUSED_H
#define WARREN_SUPERVISE_REFUSED_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy/policy.h"

struct cell_spec;

#define REFUSED_MAX_PATHS 100

struct refused_path {
	char *path;          /* printable: control bytes and invalid UTF-8 as \xNN */
	uint64_t count;
	bool is_protected;   /* a protected worktree path (.git/hooks...), not outside the run */
};

/* The refused calls of one kind, by path. */
struct refused_list {
	struct refused_path *paths;  /* the first REFUSED_MAX_PATHS distinct paths */
	size_t n;
	uint64_t total;          /* every refused call, listed or not */
};

struct refused {
	int sock;                /* the job's socket the listener comes over, -1 once read */
	int listener;            /* the seccomp listener, -1 until received */
	struct policy_ctx policy;  /* what policy_allows() needs of the cell spec */
	int landlock_abi;        /* what the job runs under (0: no Landlock) */
	char *off;               /* why refused writes are not recorded (NULL: they are) */
	bool by_cell;            /* the cell reports them itself (refused_add_guest): off until
	                            it does is no news worth a line */
	/* the record, written by the taker (under lock while it runs) */
	struct refused_list writes;
	struct refused_list connects;  /* connect() to a host socket (a unix pathname address) */
	uint64_t looked;         /* calls looked at (write-side calls and connects) */
	uint64_t unread;         /* of those, calls whose paths could not be read */
	/* the taker thread (see refused.c) */
	void *req, *resp;        /* seccomp_notif and seccomp_notif_resp, sized by the kernel */
	size_t req_size, resp_size;
	int mntns;               /* the cell's mount namespace, held while the taker runs */
	/* the cell's mounts where no name made or removed is refused (see refused.c), found at
	 * the first call */
	uint64_t free_mnt[8];
	size_t n_free;
	bool free_found;
	pthread_t taker;
	bool taker_on;
	bool taker_failed;       /* no thread to be had: the event loop serves the calls */
	pthread_mutex_t lock;
	bool stop, abandoned;
};

void refused_init(struct refused *r);
/* The event loop's part: refused_take_listener() when r->sock is readable (true: watch
 * r->listener); at the first call (r->listener readable), refused_start() the thread that
 * takes each call as it comes, lets it go on and judges it, and stop watching the listener;
 * if the thread cannot start (-errno), refused_serve_one() each call from the loop. */
bool refused_take_listener(struct refused *r);
int refused_start(struct refused *r, const struct cell_spec *s);
bool refused_serve_one(struct refused *r);   /* false: the listener is broken, stop watching it */
/* Stop and join the thread (after the cell is gone); idempotent. */
void refused_stop(struct refused *r);
/* "refused_writes": [{path, count}], "refused_writes_total": N, the same for
 * "refused_connects" (or both null and "refused_writes_off": why) into *extra; and, unless
 * quiet, the lines on stderr. */
void refused_record(const struct refused *r, const struct cell_spec *s, json_t **extra, bool quiet);
/* A VM's refused writes, as its guest reported them (cell/vm/vm.c): msg is the JSON array
 * [[path, count, protected]...], total every refused write. */
void refused_add_guest(struct refused *r, const char *msg, uint64_t total);
void refused_free(struct refused *r);

#endif
