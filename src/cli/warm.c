/* SPDX-License-Identifier: Apache-2.0 */
/* warm.c - the worker half of a warm cell (`warren job run --warm-fd N`, started by
 * `warren serve --warm`; the server's half is serve/warm.c): say the cell waits, take the run
 * the server sends into it, or start that run cold under the same id, and say how it ended. */
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/history.h"
#include "cli/warm.h"
#include "util/fs.h"
#include "util/strv.h"

static void warm_say(struct warm *w, json_t *j)
{
	_cleanup_free_ char *t = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (t && send(w->fd, t, strlen(t), MSG_NOSIGNAL) < 0) {
		/* the server is gone: we die with it (PR_SET_PDEATHSIG) */
	}
}

/* The run the server sent, loaded and its spec made; false when it cannot be (the cold start
 * then says why, as a plain `job run` would). */
static bool warm_load(struct warm *w, json_t *req)
{
	const char *file = json_string_value(json_object_get(req, "job"));
	const char *work = json_string_value(json_object_get(req, "work"));
	/* the job's text comes in the message (a file of that name is not written) unless it
	 * is too large for one */
	const char *text = json_string_value(json_object_get(req, "job_text"));
	if (!file || cli_job_load_text(file, text, work, true, &w->job) < 0)
		return false;
	w->loaded = true;
	_cleanup_(hist_opts_free) struct hist_opts h = { .run_id = w->run_id, .db = w->db };
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(req, "labels"), i, v)
		if (hist_opt_parse(&h, 0, json_string_value(v), &w->err) < 0)
			return false;
	h.name = json_string_value(json_object_get(req, "name"));
	w->command = strv_from_json(json_object_get(req, "command"), true);
	return job_cell_spec(w->a, &w->job, &h, &w->s, &w->err) == 0;
}

/* The run's plain command, started as the cell's job itself, or NULL (job_plain_command). */
static char **warm_direct(struct warm *w)
{
	return job_plain_command(&w->job, w->command);
}

#define SWAP(a, b) do { __typeof__(a) t_ = (a); (a) = (b); (b) = t_; } while (0)

/* The run's own fields into the warm cell's spec s: what the cell was not made with (its
 * limits: written into its cgroup by the supervisor before the job starts, sup_go). */
static void warm_fill(struct cell_spec *s, struct cell_spec *r)
{
	s->claimed = cell_spec_claims(s, r);
	SWAP(s->argv, r->argv);
	SWAP(s->env, r->env);
	SWAP(s->name, r->name);
	SWAP(s->labels, r->labels);
	SWAP(s->image_fd, r->image_fd);  /* the run holds its image's lock */
	s->limits = r->limits;  /* all the run's (cell_spec_shape_diff: the rest is the same) */
	/* its ports and allow list (its network's mode is the cell's): net_claim */
	s->net.npublish = r->net.npublish;
	memcpy(s->net.publish, r->net.publish, sizeof s->net.publish);
	s->net.allow = r->net.allow;  /* (r's job's, which outlives the run: warm_free) */
	s->keep = r->keep;
	s->start = "warm";
}

/* The take of a plain command rehearsed before the cell says it waits, and undone: its run's
 * spec made from the job the server makes of a command, compared with the cell's, freed. What
 * a process does the first time costs it several times more (its lazy symbol bindings, code
 * and heap pages touched for the first time: the load and spec of a take 61 and ~80 us the
 * first time, 17 and ~25 the second); rehearsed, the run's own take is a second time. Nothing
 * is written: the state directory and the worktree are only looked at, as a take does; what it
 * would say (notes on the worktree) is not said, they are the run's to say. */
static void silent(const char *msg, void *data)
{
	(void)msg;
	(void)data;
}

static void warm_rehearse(struct warm *w, const struct cell_spec *s)
{
	char *const argv[] = { "true", NULL };
	json_t *job = job_command_json(argv);
	_cleanup_free_ char *text = job_json_text(job);
	json_decref(job);
	_cleanup_free_ char *file = xasprintf("%s/serve/%s.job.json", s->statedir, w->run_id);
	json_t *req = json_pack("{s:s,s:s,s:s,s:[],s:[s]}", "job", file, "job_text", text, "work", w->a->work, "labels",
				"command", "true");
	struct warm r = { .fd = -1, .end_fd = -1, .a = w->a, .run_id = w->run_id, .db = w->db };
	warn_set_handler(silent, NULL);
	if (req && warm_load(&r, req))
		(void)cell_spec_shape_diff(s, &r.s);
	warn_set_handler(NULL, NULL);
	json_decref(req);
	warm_free(&r);
}

const struct job *warm_take(void *ctx, struct cell_spec *s, char ***direct)
{
	struct warm *w = ctx;
	/* the cell holds no lock on its image while it waits ('warren image rm' is not refused
	 * for it): a run checks at its take that the image is still the one the cell has */
	if (s->image_fd > 0)
		close(s->image_fd);
	s->image_fd = 0;
	tzset();  /* the clock shown of its steps: the zone read now, not when its run comes */
	warm_rehearse(w, s);
	warm_say(w, json_pack("{s:b,s:o}", "ready", 1, "digest", s->image_digest ? json_string(s->image_digest) : json_null()));
	char buf[65536];
	ssize_t n = fd_recv(w->fd, 0, buf, sizeof buf, &w->end_fd);
	if (n <= 0)
		return NULL;  /* discarded, or the server is gone */
	json_t *req = json_loadb(buf, (size_t)n, 0, NULL);
	bool ok = req && warm_load(w, req);
	json_decref(req);
	w->why = !ok ? "its job could not be made ready" : cell_spec_shape_diff(s, &w->s);
	if (w->why) {
		warm_say(w, json_pack("{s:s}", "cold", w->why));
		return NULL;
	}
	warm_fill(s, &w->s);
	*direct = warm_direct(w);
	return &w->job;
}

/* Wait (at most 30 s) for the server's message naming key ("row": the run's row is written;
 * "ack": it took the run's end); at once when the server is gone. */
static void warm_wait_for(struct warm *w, const char *key)
{
	char buf[256];
	struct pollfd p = { .fd = w->fd, .events = POLLIN };
	while (poll(&p, 1, 30000) == 1) {
		ssize_t n = recv(w->fd, buf, sizeof buf - 1, 0);
		if (n <= 0)
			return;
		buf[n] = '\0';
		if (strstr(buf, key))
			return;
	}
}

void warm_ended(void *ctx, const struct run_result *r, bool gone)
{
	struct warm *w = ctx;
	if (w->ended)
		return;
	json_t *end = json_pack("{s:i,s:s,s:s}", "exit_code", r->exit_code, "status", run_status_name(r->status), "start",
				w->why ? "cold" : "warm");
	if (w->end_fd >= 0) {
		/* the waiting connection first (it answers); the server's loop (its books) once the
		 * cell is gone: told now, it would take the server's lock the answer needs while the
		 * cell's teardown takes the CPUs */
		_cleanup_free_ char *t = json_dumps(end, JSON_COMPACT);
		bool told = t && send(w->end_fd, t, strlen(t), MSG_NOSIGNAL | MSG_DONTWAIT) >= 0;
		closep(&w->end_fd);
		if (told && !gone) {
			json_decref(end);
			return;
		}
		/* (else no one waits: the request did not ask to, or the server is gone) */
	}
	w->ended = true;
	warm_say(w, end);
	/* the server writes the run's row while it starts: its end is written once it says so */
	warm_wait_for(w, "ack");
}

int warm_cold(struct warm *w, struct job_run_opts *o, struct error *err)
{
	if (!w->loaded)
		return 0;
	warm_wait_for(w, "row");  /* the server's row first: the cold start updates it */
	if (w->err.msg) {
		/* as its cold start would have: e.g. its image is gone */
		*err = w->err;
		w->err = (struct error){ 0 };
		return -EINVAL;
	}
	w->s.start = "cold";
	w->s.start_why = xasprintf("the warm cell did not fit: %s", w->why);
	o->take = NULL;
	o->direct = warm_direct(w);
	if (policy_prepare(&w->s.policy, err) < 0)
		return -EINVAL;
	return job_run(&w->job, &w->s, o, err);
}

void warm_free(struct warm *w)
{
	if (w->loaded) {
		cell_spec_free(&w->s);
		job_free(&w->job);
	}
	strv_free(w->command);
	error_clear(&w->err);
	closep(&w->end_fd);
}
