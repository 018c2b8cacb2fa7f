/* SPDX-License-Identifier: Apache-2.0 */
/* relay.c - the job's output and the caller's streams: what the job writes is counted against
 * its output limit and passed on to the caller's stdout and stderr, which may take it later
 * than the job writes it (a sink: what waits for the caller, the job's stream out of the loop
 * meanwhile); the job's terminal (the caller's made raw, its size, what is typed to it); and
 * the streams the cell is given when it is made. */
#include "supervise/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/units.h"
#include "util/sys.h"

/* Count n more bytes of the job's output against the output limit (stopping the cell when it
 * is passed): how many of them may be passed on. */
size_t sup_output_pass(struct sup *u, size_t n)
{
	size_t pass = n;
	uint64_t lim = u->s->limits.output;
	if (lim && u->output + n > lim) {
		pass = u->output >= lim ? 0 : (size_t)(lim - u->output);
		if (!u->output_capped) {
			u->output_capped = true;
			char v[32];
			format_size(v, sizeof v, lim);
			sup_stop(u, RUN_LIMIT, "output", v, SIGTERM,
				  xasprintf("output limit %s reached (the job wrote more than %llu byte%s)", v,
					    (unsigned long long)lim, lim == 1 ? "" : "s"));
		}
	}
	u->output += (uint64_t)n;
	return pass;
}

/* The caller's stdout or stderr (fd) as the relay writes it. Where a write could wait for a
 * reader (a pipe, a terminal) the relay writes a descriptor of its own, opened non-blocking
 * (the caller's own is not made so: its open file is shared with the caller's shell); a socket
 * is sent to without waiting; a file or /dev/null is written as it is. A caller who does not
 * read (`| less` not scrolled, ^S on a terminal) held the supervisor in write(2) before, where
 * it kept no time limit, no signal and no `warren kill`; now what the caller has not taken
 * waits here, the job's stream is out of the loop meanwhile (the job waits on its full pipe,
 * as in any pipeline) and the loop goes on. Where the descriptor cannot be opened again (a
 * terminal of another user's, one opened exclusively) it is written as it is, waiting. */
static void sink_open(struct sup_sink *k, int fd)
{
	*k = (struct sup_sink){ .fd = fd };
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fstat(fd, &st) < 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		k->nb = k->sock = true;
		return;
	}
	if (!S_ISFIFO(st.st_mode) && (!S_ISCHR(st.st_mode) || st.st_rdev == makedev(1, 3)))
		return;  /* a file, /dev/null: nothing to wait for */
	char p[32];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	int n = open(p, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (fl & O_APPEND));
	if (n >= 0)
		k->fd = n, k->own = k->nb = true;
}

/* Both of the caller's streams: when stdout and stderr are one file (2>&1), one queue for both,
 * so that what one writes never lands inside a line of the other's. */
void sup_sinks_open(struct sup *u)
{
	sink_open(&u->sink[0], STDOUT_FILENO);
	sink_open(&u->sink[1], STDERR_FILENO);
	struct stat a, b;
	if (u->sink[0].nb && u->sink[1].nb && fstat(STDOUT_FILENO, &a) == 0 && fstat(STDERR_FILENO, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		if (u->sink[1].own)
			closep(&u->sink[1].fd);
		u->sink[1] = (struct sup_sink){ .fd = -1, .alias = true };
	}
}

struct sup_sink *sup_sink(struct sup *u, int i)
{
	return i && u->sink[1].alias ? &u->sink[0] : &u->sink[i];
}

void sup_sink_close(struct sup_sink *k)
{
	if (k->own)
		closep(&k->fd);
	free(k->pend);
	k->pend = NULL;
	k->len = 0;
}

/* Write b (n bytes) to k, or as much as it takes now; the rest waits in k->pend (empty before). */
static void sink_write(struct sup_sink *k, const char *b, size_t n)
{
	if (k->broken)
		return;
	if (!k->nb) {
		if (write_all(k->fd, b, n) == -EPIPE)
			k->broken = true;
		return;
	}
	while (n) {
		ssize_t w = k->sock ? send(k->fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL) : write(k->fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w < 0) {
			k->broken = errno == EPIPE;  /* (another error: this part is lost, as before) */
			return;
		}
		b += w;
		n -= (size_t)w;
	}
	if (n) {
		k->pend = xrealloc(k->pend, n);
		memmove(k->pend, b, n);
		k->len = n;
	}
}

void sup_sink_put(struct sup_sink *k, const char *b, size_t n)
{
	if (k->broken || !n)
		return;
	if (!k->len) {
		sink_write(k, b, n);
		return;
	}
	/* after what waits, in order */
	k->pend = xrealloc(k->pend, k->len + n);
	memcpy(k->pend + k->len, b, n);
	k->len += n;
}

/* Write what waits in k, as much as the caller takes now. */
void sup_sink_flush(struct sup_sink *k)
{
	if (k->broken)
		k->len = 0;
	if (!k->len)
		return;
	size_t n = k->len;
	k->len = 0;
	_cleanup_free_ char *b = k->pend;
	k->pend = NULL;
	sink_write(k, b, n);
	if (k->broken)
		k->len = 0;
}

/* The job's stream that sink i relays: stdout (or the terminal) for 0, stderr for 1. */
static int *sink_source(struct sup *u, int i, uint32_t *tag)
{
	*tag = i ? EV_ERR : u->out_r >= 0 ? EV_OUT : EV_PTY;
	return i ? &u->err_r : u->out_r >= 0 ? &u->out_r : &u->pty;
}

/* The job's stream i out of the loop (pause) or back in it. Out of it, not only unwatched for
 * input: epoll reports a hangup even for a descriptor watched for nothing, and a stream the
 * job closed while paused would wake the loop without end. */
static void source_pause(struct sup *u, int i, bool pause)
{
	uint32_t tag;
	int *src = sink_source(u, i, &tag);
	if (*src < 0 || pause == u->src_paused[i]) {
		u->src_paused[i] = *src >= 0 && pause;
		return;
	}
	u->src_paused[i] = pause;
	struct epoll_event ev = { .events = EPOLLIN | (tag == EV_PTY && u->in_len ? EPOLLOUT : 0), .data.u32 = tag };
	epoll_ctl(u->ep, pause ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, *src, pause ? NULL : &ev);
}

/* After a write to sink i: while something waits for the caller, the job's streams that feed it
 * are out of the loop and the caller's descriptor is watched until it takes more; a caller who
 * went away (EPIPE) closes them, and the job's next write gets SIGPIPE, as in a pipeline. */
static void sink_check(struct sup *u, int i)
{
	struct sup_sink *k = sup_sink(u, i);
	bool both = k == &u->sink[0] && u->sink[1].alias;
	int first = both ? 0 : i, last = both ? 1 : i;
	if (k->broken) {
		epoll_ctl(u->ep, EPOLL_CTL_DEL, k->fd, NULL);
		for (int j = first; j <= last; j++) {
			uint32_t tag;
			int *src = sink_source(u, j, &tag);
			if (u->src_paused[j])
				closep(src);
			else
				sup_unwatch_close(u, src);
			u->src_paused[j] = false;
		}
		return;
	}
	bool waiting = k->len != 0;
	for (int j = first; j <= last; j++)
		source_pause(u, j, waiting);
	struct epoll_event out = { .events = EPOLLOUT, .data.u32 = k == &u->sink[1] ? EV_SINK_ERR : EV_SINK_OUT };
	if (waiting && epoll_ctl(u->ep, EPOLL_CTL_ADD, k->fd, &out) < 0 && errno == EEXIST)
		epoll_ctl(u->ep, EPOLL_CTL_MOD, k->fd, &out);
	else if (!waiting)
		epoll_ctl(u->ep, EPOLL_CTL_DEL, k->fd, NULL);
}

void sup_sink_check(struct sup *u, int i)
{
	sink_check(u, i);
}

/* The record is written and the cell gone: what the caller has yet to take is waited for, as
 * long as no SIGINT, SIGTERM or SIGHUP says to give it up. */
void sup_sinks_flush_final(struct sup *u)
{
	for (int i = 0; i < 2; i++) {
		struct sup_sink *k = &u->sink[i];
		if (k->alias || k->fd < 0)
			continue;
		epoll_ctl(u->ep, EPOLL_CTL_DEL, k->fd, NULL);
		for (sup_sink_flush(k); k->len && !k->broken; sup_sink_flush(k)) {
			struct pollfd p[2] = { { .fd = k->fd, .events = POLLOUT }, { .fd = u->sfd, .events = POLLIN } };
			if (poll(p, u->sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
				break;
			struct signalfd_siginfo si;
			if ((p[1].revents & POLLIN) && read(u->sfd, &si, sizeof si) == (ssize_t)sizeof si &&
			    (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP)) {
				k->len = 0;
				break;
			}
		}
	}
}

/* Read what the job wrote on fd, count it in *count and pass it on to sink i, within the
 * output limit. The bytes read; 0 at the end (EOF, or EIO on a pty whose slave is gone); -1
 * when nothing is there now (or, unless drain, the caller has yet to take what was read
 * before; a drain queues what it reads behind that). */
static ssize_t relay(struct sup *u, int fd, int i, uint64_t *count, bool drain)
{
	struct sup_sink *k = sup_sink(u, i);
	if (k->len && !drain)
		return -1;
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (n <= 0)
		return 0;
	size_t pass = sup_output_pass(u, (size_t)n);
	*count += (uint64_t)n;
	if (pass)
		sup_sink_put(k, buf, pass);
	sup_log_keep(u, buf, pass, (size_t)n);
	return n;
}

/* The job's stream *fd has something (or its end): relayed to sink i, closed at its end. */
void sup_relay_event(struct sup *u, int *fd, int i, uint64_t *count)
{
	if (relay(u, *fd, i, count, false) == 0)
		sup_unwatch_close(u, fd);
	else
		sink_check(u, i);
}

void sup_output_held(struct sup *u, const char *stream, uint64_t bytes)
{
	if (!u->held)
		u->held = json_array();
	json_array_append_new(u->held, json_pack("{s:s,s:I}", "stream", stream, "bytes_read", (json_int_t)bytes));
}

/* Once the cell is gone nothing in it writes to fd any more: pass on what fd holds and close
 * it. A write end still open is held by a process outside the cell (passed out over a socket,
 * or to another run): then only what is queued now is taken, never waiting for more. */
void sup_drain_close(struct sup *u, int *fd, int i, uint64_t *count, const char *stream)
{
	if (*fd < 0)
		return;
	bool held = fd_writer_open(*fd);
	uint64_t queued = held ? fd_queued(*fd) : UINT64_MAX, got = 0;
	ssize_t n;
	/* queued behind what the caller has yet to take (bounded by the pipe's size): the record
	 * does not wait for the caller, the end does (sup_sinks_flush_final) */
	while (got < queued && (n = relay(u, *fd, i, count, true)) > 0)
		got += (uint64_t)n;
	if (held)
		sup_output_held(u, stream, *count);
	if (u->src_paused[i])
		closep(fd);
	else
		sup_unwatch_close(u, fd);
	u->src_paused[i] = false;
}

/* Room for n more bytes of input for the job's terminal after what waits (u->in_buf). */
char *sup_in_room(struct sup *u, size_t n)
{
	if (u->in_len == 0)
		u->in_off = 0;
	if (u->in_off + u->in_len + n > u->in_cap) {
		size_t need = u->in_off + u->in_len + n;
		u->in_cap = need > 2 * u->in_cap ? need : 2 * u->in_cap;
		u->in_buf = xrealloc(u->in_buf, u->in_cap);
	}
	return u->in_buf + u->in_off + u->in_len;
}

/* What the caller's terminal holds before warren makes it raw, read as its line discipline
 * made it: whole lines pass to the job's terminal as they are, an EOF typed (script(1) types
 * one when its input ends) as that terminal's EOF; left there, raw mode would read the EOF as
 * the NUL byte the line discipline keeps for it. The caller's terminal first stops making EOFs
 * and echoing: one typed from then on stays the byte ^D, which raw mode passes on as typed.
 * It waits in u->in_buf, which the job's terminal takes as it has room (sup_pty_input), like
 * what stdin gives later: more than that terminal holds, typed ahead, never blocks the
 * supervisor. True when the caller's terminal was changed. */
static bool pass_typed_ahead(struct sup *u)
{
	struct termios quiet = u->saved_tio;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	quiet.c_cc[VEOF] = _POSIX_VDISABLE;
	if (!(u->saved_tio.c_lflag & ICANON) || tcsetattr(STDIN_FILENO, TCSANOW, &quiet) < 0)
		return false;
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	for (int i = 0; i < 64 && poll(&p, 1, 0) == 1 && p.revents == POLLIN; i++) {
		ssize_t n = read(STDIN_FILENO, sup_in_room(u, 4096), 4096);
		if (n < 0)
			break;
		if (n == 0) { /* an EOF */
			*sup_in_room(u, 1) = (char)u->saved_tio.c_cc[VEOF];
			n = 1;
		}
		u->in_len += (size_t)n;
	}
	return true;
}

/* The job's terminal gets the caller's size (a VM's through its control port: u->pty is a
 * socket to the guest's console). */
void sup_job_winsize(struct sup *u)
{
	struct winsize ws;
	if (u->pty < 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
		return;
	u->drv->winsize(&u->cell, u->pty, &ws);
}

/* The caller's terminal made raw while the job has its own (u->pty). */
void sup_tty_raw(struct sup *u)
{
	sup_job_winsize(u);
	if (tcgetattr(STDIN_FILENO, &u->saved_tio) == 0) {
		struct termios raw = u->saved_tio;
		/* the job's terminal starts with the caller's settings */
		tcsetattr(u->pty, TCSANOW, &u->saved_tio);
		bool changed = pass_typed_ahead(u);
		cfmakeraw(&raw);
		if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0 || changed)
			u->tty_raw = true;
	}
}

/* The job's terminal is opened by init in the cell's devpts; its master comes back over a
 * socket. Until then the caller's terminal is left as it is. */
int sup_recv_console(struct sup *u, int sock)
{
	char byte;
	if (fd_recv(sock, 0, &byte, 1, &u->pty) <= 0 || u->pty < 0)
		return -1; /* init failed before: its report says why */
	sup_tty_raw(u);
	return 0;
}

void sup_restore_tty(struct sup *u)
{
	if (u->tty_raw) {
		tcsetattr(STDIN_FILENO, TCSADRAIN, &u->saved_tio);
		u->tty_raw = false;
	}
}

/* Pass on what stdin gave (u->in_buf) as far as the job's terminal takes it now: never wait
 * for a job that does not read its terminal (its limits are watched meanwhile). While some is
 * left, stdin is not read and the terminal is watched for room; a terminal that fails takes
 * no more. */
void sup_pty_input(struct sup *u)
{
	while (u->in_len) {
		ssize_t w = write(u->pty, u->in_buf + u->in_off, u->in_len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			break;
		if (w <= 0) {
			u->in_len = 0;
			break;
		}
		u->in_off += (size_t)w;
		u->in_len -= (size_t)w;
	}
	bool waiting = u->in_len != 0;
	struct epoll_event pe = { .events = EPOLLIN | (waiting ? EPOLLOUT : 0), .data.u32 = EV_PTY };
	if (!u->src_paused[0])  /* (out of the loop while the caller has output to take) */
		epoll_ctl(u->ep, EPOLL_CTL_MOD, u->pty, &pe);
	if (u->in_open) {
		struct epoll_event ie = { .events = EPOLLIN, .data.u32 = EV_IN };
		epoll_ctl(u->ep, waiting ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, STDIN_FILENO, &ie);
	}
}

void sup_ends_close(struct sup_ends *e)
{
	closep(&e->out_w);
	closep(&e->err_w);
	closep(&e->devnull);
	closep(&e->console);
	closep(&e->watch);
}

static int output_pipe(int *r, int *w, struct error *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_set(err, errno, "cannot create the output pipes");
	*r = p[0];
	*w = p[1];
	fcntl(*r, F_SETFL, O_NONBLOCK);
	return 0;
}

int sup_streams(struct sup *u, struct cell_io *io, struct sup_ends *e, struct error *err)
{
	const struct cell_spec *s = u->s;
	if (io->control >= 0) {
		/* a job: its steps get their own streams from the executor; nothing reads stdin */
		e->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (e->devnull < 0)
			return error_set(err, errno, "cannot open /dev/null");
		io->in = e->devnull;
	}
	if (s->tty && io->control < 0) {
		/* (a VM's terminal is its guest's console: vm_start makes its port) */
		int cs[2];
		bool console = u->drv->tty_over_console;
		if (console && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cs) < 0)
			return error_set(err, errno, "cannot create the console socket");
		if (console)
			u->console_sock = cs[0], io->console = e->console = cs[1];
		/* only the streams that are the terminal go through the job's: a stderr the caller
		 * redirected (2>err.txt) gets a pipe of its own, relayed to where it points */
		io->err = -1;
		if (!isatty(STDERR_FILENO) && !s->tty_stderr) {
			if (output_pipe(&u->err_r, &e->err_w, err) < 0)
				return -EIO;
			io->err = e->err_w;
		}
	} else {
		if (output_pipe(&u->out_r, &e->out_w, err) < 0 || output_pipe(&u->err_r, &e->err_w, err) < 0)
			return -EIO;
		io->out = e->out_w;
		io->err = e->err_w;
	}
	/* the write watch: the job sends its seccomp listener over this socket */
	io->watch = -1;
	if (u->drv->reports_refused_writes && !s->policy.no_refused_writes) {
		/* until the guest reports them (refused_add_guest) */
		u->refused.off = xstrdup("the VM's guest reported no refused writes (its kernel has no audit?)");
		u->refused.by_cell = true;
	} else if (!s->policy.no_refused_writes) {
		int w[2];
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, w) < 0)
			return error_set(err, errno, "cannot create the write watch's socket");
		io->watch = e->watch = w[1];
		u->refused.sock = w[0];
	}
	return 0;
}
