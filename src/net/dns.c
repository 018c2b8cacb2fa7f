/* SPDX-License-Identifier: Apache-2.0 */
/* dns.c - warren's resolver for one run, in the supervisor's event loop. It listens on the
 * gateway, bound to the bridge (a port of its own; the run's DNS over UDP to <gateway>:53 is
 * redirected to it; TCP to the gateway is refused by the firewall), answers only the run's
 * own cell address, and forwards only what it builds itself: for a client's message of
 * exactly one question (else FORMERR, or NOTIMP for an opcode other than QUERY), a fresh
 * query with that one question in lower case, an id of its own, RD and warren's own EDNS
 * size, sent to the host's resolvers (from /etc/resolv.conf) from sockets of its own,
 * connected to each resolver, on a fresh port per query. Nothing else of the client's message
 * (its id, its other sections, its EDNS options, the case of its letters) leaves the machine.
 * Names are read and compared in wire form, label by label (dnsname.c): a name with a byte
 * other than a letter, a digit, '-' or '_' in a label is refused, and so is a name --net
 * allow= does not name. The answer must carry warren's id and its question; the client hears
 * only the records that answer that question (the CNAME chain from the question's name and
 * the records of the question's type owned by a name of the chain; none of a truncated
 * answer), and only those A records go to the run's allow set (net.c says which and for how
 * long) before the client hears of them. --net allow= asks only A and AAAA. Distinct names
 * are counted and refused past a cap (a tunnel through wildcard names would need many). DNS
 * messages are read and written with ldns. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <ldns/ldns.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/dnsname.h"
#include "net/internal.h"
#include "util/dl.h"
#include "util/fs.h"

/* libldns is loaded when the run's first DNS question arrives (it brings libcrypto: ~6 ms of
 * loading that a run which asks no name never pays; its static library would put that into
 * every run's start-up). */
#define LDNS_FUNCS(X) \
	X(ldns_wire2pkt) \
	X(ldns_pkt2wire) \
	X(ldns_pkt_free) \
	X(ldns_pkt_query_new) \
	X(ldns_pkt_question) \
	X(ldns_pkt_answer) \
	X(ldns_pkt_push_rr) \
	X(ldns_pkt_rd) \
	X(ldns_pkt_tc) \
	X(ldns_pkt_get_rcode) \
	X(ldns_pkt_edns) \
	X(ldns_pkt_edns_udp_size) \
	X(ldns_pkt_set_id) \
	X(ldns_pkt_set_rcode) \
	X(ldns_pkt_set_edns_udp_size) \
	X(ldns_rr_list_new) \
	X(ldns_rr_list_free) \
	X(ldns_rr_list_rr) \
	X(ldns_rr_list_rr_count) \
	X(ldns_rr_list_push_rr) \
	X(ldns_rr_clone) \
	X(ldns_rr_owner) \
	X(ldns_rr_get_type) \
	X(ldns_rr_get_class) \
	X(ldns_rr_ttl) \
	X(ldns_rr_rdf) \
	X(ldns_rdf_new_frm_data) \
	X(ldns_rdf_size) \
	X(ldns_rdf_data)

static struct {
	void *h;
#define X(f) __typeof__(f) *f;
	LDNS_FUNCS(X)
#undef X
} L;

static bool ldns_load(void)
{
#define X(f) { #f, (void **)&L.f },
	const struct dl_sym syms[] = { LDNS_FUNCS(X) };
#undef X
	return dl_load(&L.h, "libldns.so.3", syms, sizeof syms / sizeof syms[0], NULL, NULL, NULL) == 0;
}

#define MAX_PENDING 64     /* queries in flight; each holds a socket per upstream */
#define MAX_UPSTREAMS 3
#define MAX_CHAIN 8        /* CNAMEs followed from the question's name */
#define DNS_UDP_SIZE 1232  /* bytes of an answer over UDP warren asks for and offers */

/* The one question of a query, as the client asked it. */
struct question {
	uint8_t name[DNS_NAME_MAX]; /* wire form */
	size_t len;
	uint16_t type, class;
};

/* Who asked, and what its answer may be. */
struct client {
	struct sockaddr_in addr;
	uint16_t id;
	bool rd, edns;
	uint16_t udp_size; /* 512, or more as the client's EDNS allows (up to DNS_UDP_SIZE) */
};

struct pending {
	bool used;
	uint16_t up_id;
	int fd[MAX_UPSTREAMS]; /* connected to upstream[i]; -1: none */
	struct client c;
	struct question q;
};

struct refused {
	char *name;
	unsigned count;
};

struct net_dns {
	int fd;                /* the questions' socket, on the gateway */
	int ep;                /* epoll of the pending queries' sockets */
	uint32_t cell;         /* the one address it answers */
	bool loaded, unloadable; /* libldns */
	uint16_t port;
	struct sockaddr_in upstream[MAX_UPSTREAMS];
	int nup;
	enum net_mode mode;
	const struct net_allow *allow;
	size_t nallow;
	unsigned max_names;
	dns_allow_fn fn;
	void *ctx;
	struct pending pending[MAX_PENDING];
	unsigned next;
	char **names;          /* distinct names asked for */
	size_t nnames, cap;
	unsigned over_cap;     /* questions refused because of the cap */
	struct refused *refused;
	size_t nrefused;
};

static void read_upstreams(struct net_dns *d)
{
	_cleanup_free_ char *rc = read_file("/etc/resolv.conf", NULL);
	for (char *save = NULL, *l = rc ? strtok_r(rc, "\n", &save) : NULL; l && d->nup < MAX_UPSTREAMS;
	     l = strtok_r(NULL, "\n", &save)) {
		char a[64];
		struct in_addr in;
		if (sscanf(l, " nameserver %63s", a) == 1 && inet_pton(AF_INET, a, &in) == 1) {
			d->upstream[d->nup] = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(53), .sin_addr = in };
			d->nup++;
		}
	}
}

struct net_dns *dns_open(uint32_t gw, uint32_t cell, enum net_mode mode, const struct net_allow *allow, size_t nallow,
			 unsigned max_names, dns_allow_fn fn, void *ctx, struct error *err)
{
	struct net_dns *d = xcalloc(1, sizeof *d);
	*d = (struct net_dns){ .fd = -1, .ep = -1, .cell = cell, .mode = mode, .allow = allow, .nallow = nallow,
			       .max_names = max_names, .fn = fn, .ctx = ctx };
	for (size_t i = 0; i < MAX_PENDING; i++)
		for (size_t k = 0; k < MAX_UPSTREAMS; k++)
			d->pending[i].fd[k] = -1;
	read_upstreams(d);
	d->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	d->ep = epoll_create1(EPOLL_CLOEXEC);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = gw };
	socklen_t sl = sizeof sa;
	/* bound to the bridge: what reaches the gateway's address by another way (the uplink, the
	 * host's own loopback) is not delivered to it */
	if (d->fd < 0 || d->ep < 0 || setsockopt(d->fd, SOL_SOCKET, SO_BINDTODEVICE, NET_BRIDGE, sizeof NET_BRIDGE) < 0 ||
	    bind(d->fd, (struct sockaddr *)&sa, sizeof sa) < 0 || getsockname(d->fd, (struct sockaddr *)&sa, &sl) < 0) {
		error_set(err, errno, "cannot open warren's resolver on the gateway");
		dns_close(d);
		return NULL;
	}
	d->port = ntohs(sa.sin_port);
	return d;
}

void dns_set_allow(struct net_dns *d, const struct net_allow *allow, size_t nallow)
{
	if (d) {
		d->allow = allow;
		d->nallow = nallow;
	}
}

uint16_t dns_port(const struct net_dns *d)
{
	return d->port;
}

int dns_fd(const struct net_dns *d, int which)
{
	return which == 0 ? d->fd : d->ep;
}

/* Count name among the distinct names; false when it is new and the cap is reached. */
static bool count_name(struct net_dns *d, const char *name)
{
	for (size_t i = 0; i < d->nnames; i++)
		if (!strcmp(d->names[i], name))
			return true;
	if (d->nnames >= d->max_names) {
		d->over_cap++;
		return false;
	}
	if (d->nnames == d->cap)
		d->names = xrealloc(d->names, (d->cap = d->cap ? d->cap * 2 : 64) * sizeof *d->names);
	d->names[d->nnames++] = xstrdup(name);
	return true;
}

static void note_refused(struct net_dns *d, const char *name)
{
	for (size_t i = 0; i < d->nrefused; i++)
		if (!strcmp(d->refused[i].name, name)) {
			d->refused[i].count++;
			return;
		}
	if (d->nrefused >= 1000)
		return;
	d->refused = xrealloc(d->refused, (d->nrefused + 1) * sizeof *d->refused);
	d->refused[d->nrefused++] = (struct refused){ xstrdup(name), 1 };
}

static bool name_allowed(const struct net_dns *d, const struct question *q)
{
	if (d->mode == NET_NAT)
		return true;
	for (size_t i = 0; i < d->nallow; i++)
		if (net_allow_name_matches(&d->allow[i], q->name, q->len))
			return true;
	return false;
}

/* The types warren asks upstream: A and AAAA for --net allow= (the allow set holds IPv4, and
 * the cell has no IPv6); in nat, any type but the meta ones (OPT, AXFR, ANY, ...). */
static bool type_asked(const struct net_dns *d, uint16_t type)
{
	if (d->mode == NET_ALLOW)
		return type == LDNS_RR_TYPE_A || type == LDNS_RR_TYPE_AAAA;
	return type != LDNS_RR_TYPE_OPT && type < 128;
}

/* The fields of a message's header that are looked at before it is parsed. */
struct header {
	uint16_t id, qdcount;
	bool qr;
	uint8_t opcode;
};

static struct header header_of(const uint8_t *b)
{
	return (struct header){ .id = (uint16_t)(b[0] << 8 | b[1]), .qr = b[2] >> 7, .opcode = (b[2] >> 3) & 0xf,
				.qdcount = (uint16_t)(b[4] << 8 | b[5]) };
}

/* Answer a message warren does not take with a header only: its id, opcode and RD, and rcode. */
static void reply_header(struct net_dns *d, const uint8_t *msg, uint8_t rcode, const struct sockaddr_in *to)
{
	uint8_t h[12] = { msg[0], msg[1], (uint8_t)(0x80 | (msg[2] & 0x79)), (uint8_t)(0x80 | rcode) };
	sendto(d->fd, h, sizeof h, 0, (const struct sockaddr *)to, sizeof *to);
}

/* The first question of p; false when it has none. */
static bool question_of(ldns_pkt *p, struct question *q)
{
	ldns_rr *rr = L.ldns_rr_list_rr(L.ldns_pkt_question(p), 0);
	ldns_rdf *owner = rr ? L.ldns_rr_owner(rr) : NULL;
	if (!owner || L.ldns_rdf_size(owner) > sizeof q->name)
		return false;
	q->len = L.ldns_rdf_size(owner);
	memcpy(q->name, L.ldns_rdf_data(owner), q->len);
	q->type = (uint16_t)L.ldns_rr_get_type(rr);
	q->class = (uint16_t)L.ldns_rr_get_class(rr);
	return true;
}

static bool same_question(const struct question *a, const struct question *b)
{
	return a->type == b->type && a->class == b->class && dns_name_equal(a->name, a->len, b->name, b->len);
}

/* A new message of the one question q, with flags (LDNS_RD, ...). */
static ldns_pkt *message_of(const struct question *q, uint16_t flags)
{
	return L.ldns_pkt_query_new(L.ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, q->len, q->name),
				    (ldns_rr_type)q->type, (ldns_rr_class)q->class, flags);
}

/* Answer client c about q with rcode, tc and the records of answers (NULL: none). An answer
 * longer than the client takes goes without records, truncated. */
static void reply(struct net_dns *d, const struct client *c, const struct question *q, uint8_t rcode, bool tc,
		  const ldns_rr_list *answers)
{
	ldns_pkt *r = message_of(q, LDNS_QR | LDNS_RA | (c->rd ? LDNS_RD : 0) | (tc ? LDNS_TC : 0));
	if (!r)
		return;
	L.ldns_pkt_set_id(r, c->id);
	L.ldns_pkt_set_rcode(r, rcode);
	if (c->edns)
		L.ldns_pkt_set_edns_udp_size(r, DNS_UDP_SIZE);
	for (size_t i = 0; answers && i < L.ldns_rr_list_rr_count(answers); i++)
		L.ldns_pkt_push_rr(r, LDNS_SECTION_ANSWER, L.ldns_rr_clone(L.ldns_rr_list_rr(answers, i)));
	uint8_t *wire = NULL;
	size_t len = 0;
	ldns_status st = L.ldns_pkt2wire(&wire, r, &len);
	if (st == LDNS_STATUS_OK && len > c->udp_size && answers)
		reply(d, c, q, rcode, true, NULL);
	else if (st == LDNS_STATUS_OK)
		sendto(d->fd, wire, len, 0, (const struct sockaddr *)&c->addr, sizeof c->addr);
	free(wire);
	L.ldns_pkt_free(r);
}

/* Close the sockets of a pending query (out of the epoll set with them) and free its slot. */
static void pending_end(struct pending *p)
{
	for (size_t i = 0; i < MAX_UPSTREAMS; i++)
		closep(&p->fd[i]);
	p->used = false;
}

/* Send wire to upstream i from a socket of its own, connected to it (the kernel takes only
 * the upstream's answers on it) on a port the kernel picks at random: an off-path spoofer has
 * the port and the id to guess. The socket goes into d->ep, tagged with its slot. */
static bool send_upstream(struct net_dns *d, size_t slot, int i, const uint8_t *wire, size_t len)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)(slot * MAX_UPSTREAMS + (size_t)i) };
	if (fd < 0 || connect(fd, (const struct sockaddr *)&d->upstream[i], sizeof d->upstream[i]) < 0 ||
	    send(fd, wire, len, 0) < 0 || epoll_ctl(d->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		closep(&fd);
		return false;
	}
	d->pending[slot].fd[i] = fd;
	return true;
}

/* Ask the host's resolvers a query of warren's own: q only, in lower case, a random id, RD,
 * warren's EDNS size. The oldest query still waiting gives its slot up when all are taken. */
static void forward(struct net_dns *d, const struct client *c, const struct question *q)
{
	struct question lq = *q;
	dns_name_lower(lq.name, lq.len);
	ldns_pkt *up = message_of(&lq, LDNS_RD);
	if (!up)
		return;
	size_t slot = d->next++ % MAX_PENDING;
	struct pending *p = &d->pending[slot];
	pending_end(p);
	p->used = true;
	p->c = *c;
	p->q = *q;
	if (getrandom(&p->up_id, sizeof p->up_id, 0) != sizeof p->up_id)
		p->up_id = (uint16_t)(d->next * 7919u);
	L.ldns_pkt_set_id(up, p->up_id);
	L.ldns_pkt_set_edns_udp_size(up, DNS_UDP_SIZE);
	uint8_t *wire = NULL;
	size_t len = 0;
	bool sent = false;
	if (L.ldns_pkt2wire(&wire, up, &len) == LDNS_STATUS_OK)
		for (int i = 0; i < d->nup; i++)
			sent |= send_upstream(d, slot, i, wire, len);
	free(wire);
	L.ldns_pkt_free(up);
	if (!sent) {
		reply(d, c, q, LDNS_RCODE_SERVFAIL, false, NULL);
		pending_end(p);
	}
}

/* The question of client c: refused (a name not allowed, or not safe, or past the cap),
 * answered without records (a type warren does not ask, or no upstream), or forwarded. */
static void ask(struct net_dns *d, const struct client *c, const struct question *q)
{
	_cleanup_free_ char *text = dns_name_text(q->name, q->len);
	bool counted = text && count_name(d, text);
	if (!counted || !dns_name_safe(q->name, q->len) || q->class != LDNS_RR_CLASS_IN || !name_allowed(d, q)) {
		if (counted)
			note_refused(d, text);
		reply(d, c, q, LDNS_RCODE_REFUSED, false, NULL);
	} else if (!type_asked(d, q->type) || !d->nup) {
		reply(d, c, q, d->nup ? LDNS_RCODE_NOERROR : LDNS_RCODE_SERVFAIL, false, NULL);
	} else {
		forward(d, c, q);
	}
}

static void on_question(struct net_dns *d, const uint8_t *buf, size_t len, const struct sockaddr_in *from)
{
	if (len < 12 || from->sin_addr.s_addr != d->cell)
		return; /* only the run's own cell is answered: no open resolver for others */
	struct header h = header_of(buf);
	if (h.qr)
		return; /* not a question: no answer, so no loop */
	ldns_pkt *p = NULL;
	struct question q;
	if (h.opcode != LDNS_PACKET_QUERY) {
		reply_header(d, buf, LDNS_RCODE_NOTIMPL, from);
	} else if (h.qdcount != 1 || L.ldns_wire2pkt(&p, buf, len) != LDNS_STATUS_OK || !question_of(p, &q)) {
		reply_header(d, buf, LDNS_RCODE_FORMERR, from);
	} else {
		struct client c = { .addr = *from, .id = h.id, .rd = L.ldns_pkt_rd(p), .edns = L.ldns_pkt_edns(p), .udp_size = 512 };
		if (c.edns && L.ldns_pkt_edns_udp_size(p) > 512)
			c.udp_size = L.ldns_pkt_edns_udp_size(p) < DNS_UDP_SIZE ? L.ldns_pkt_edns_udp_size(p) : DNS_UDP_SIZE;
		ask(d, &c, &q);
	}
	if (p)
		L.ldns_pkt_free(p);
}

struct link {
	const uint8_t *name;
	size_t len;
};

static bool in_chain(const struct link *chain, size_t n, const ldns_rdf *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (dns_name_equal(chain[i].name, chain[i].len, L.ldns_rdf_data(name), L.ldns_rdf_size(name)))
			return true;
	return false;
}

/* The CNAME of ans owned by the chain's last name, or NULL. */
static ldns_rr *next_cname(const ldns_rr_list *ans, const struct link *last)
{
	for (size_t i = 0; i < L.ldns_rr_list_rr_count(ans); i++) {
		ldns_rr *rr = L.ldns_rr_list_rr(ans, i);
		if (L.ldns_rr_get_type(rr) == LDNS_RR_TYPE_CNAME && L.ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN &&
		    L.ldns_rr_rdf(rr, 0) && in_chain(last, 1, L.ldns_rr_owner(rr)))
			return rr;
	}
	return NULL;
}

/* Push onto keep the records of ans that answer q: the CNAMEs from q's name on (at most
 * MAX_CHAIN, no loop), then the records of q's type owned by a name of that chain. */
static void answers_select(const struct question *q, const ldns_rr_list *ans, ldns_rr_list *keep)
{
	struct link chain[MAX_CHAIN + 1] = { { q->name, q->len } };
	size_t n = 1;
	for (ldns_rr *rr; q->type != LDNS_RR_TYPE_CNAME && n <= MAX_CHAIN && (rr = next_cname(ans, &chain[n - 1]));) {
		ldns_rdf *target = L.ldns_rr_rdf(rr, 0);
		if (in_chain(chain, n, target))
			break;
		chain[n++] = (struct link){ L.ldns_rdf_data(target), L.ldns_rdf_size(target) };
		L.ldns_rr_list_push_rr(keep, rr);
	}
	for (size_t i = 0; i < L.ldns_rr_list_rr_count(ans); i++) {
		ldns_rr *rr = L.ldns_rr_list_rr(ans, i);
		ldns_rdf *rd = L.ldns_rr_rdf(rr, 0);
		if (L.ldns_rr_get_type(rr) == q->type && L.ldns_rr_get_class(rr) == LDNS_RR_CLASS_IN &&
		    in_chain(chain, n, L.ldns_rr_owner(rr)) && (q->type != LDNS_RR_TYPE_A || (rd && L.ldns_rdf_size(rd) == 4)))
			L.ldns_rr_list_push_rr(keep, rr);
	}
}

/* The A records among the kept answers go to the run's allow set (d->fn: which of them, and
 * for how long), with the ports of the allowed names that match the question. A CNAME from an
 * allowed name leads to a name of another zone (a CDN's): its addresses get the allowed
 * name's port. */
static void allow_answers(struct net_dns *d, const struct question *q, const ldns_rr_list *keep)
{
	for (size_t i = 0; d->mode == NET_ALLOW && i < L.ldns_rr_list_rr_count(keep); i++) {
		ldns_rr *rr = L.ldns_rr_list_rr(keep, i);
		if (L.ldns_rr_get_type(rr) != LDNS_RR_TYPE_A)
			continue;
		uint32_t addr;
		memcpy(&addr, L.ldns_rdf_data(L.ldns_rr_rdf(rr, 0)), 4);
		for (size_t k = 0; k < d->nallow; k++)
			if (net_allow_name_matches(&d->allow[k], q->name, q->len))
				d->fn(d->ctx, addr, d->allow[k].port, L.ldns_rr_ttl(rr));
	}
}

/* True when a is the answer to pending query p: warren's id and p's question. */
static bool answers_pending(const struct pending *p, uint16_t id, ldns_pkt *a)
{
	struct question q;
	return p->used && p->up_id == id && question_of(a, &q) && same_question(&p->q, &q);
}

/* An answer on a socket of p (connected: it came from that upstream). A truncated answer
 * passes on truncated and without records, as warren's own (its records may be a part of the
 * set: none of them enters the allow set either). */
static void on_answer(struct net_dns *d, struct pending *p, const uint8_t *buf, size_t len)
{
	if (len < 12)
		return;
	struct header h = header_of(buf);
	ldns_pkt *a = NULL;
	if (!h.qr || h.opcode != LDNS_PACKET_QUERY || h.qdcount != 1 || L.ldns_wire2pkt(&a, buf, len) != LDNS_STATUS_OK)
		return;
	if (answers_pending(p, h.id, a)) {
		/* the addresses go into the run's set before the cell hears of them */
		ldns_rr_list *keep = L.ldns_rr_list_new();
		bool tc = L.ldns_pkt_tc(a);
		if (!tc) {
			answers_select(&p->q, L.ldns_pkt_answer(a), keep);
			allow_answers(d, &p->q, keep);
		}
		uint8_t rc = (uint8_t)L.ldns_pkt_get_rcode(a);
		reply(d, &p->c, &p->q, rc == LDNS_RCODE_NOERROR || rc == LDNS_RCODE_NXDOMAIN ? rc : LDNS_RCODE_SERVFAIL,
		      tc, tc ? NULL : keep);
		L.ldns_rr_list_free(keep);
		pending_end(p);
	}
	L.ldns_pkt_free(a);
}

/* The answers waiting on the pending queries' sockets (at most 64 per call; the epoll set
 * stays readable while more wait). */
static void take_answers(struct net_dns *d, uint8_t *buf, size_t size)
{
	struct epoll_event ev[16];
	for (int round = 0, n; round < 4 && (n = epoll_wait(d->ep, ev, 16, 0)) > 0; round++)
		for (int i = 0; i < n; i++) {
			struct pending *p = &d->pending[ev[i].data.u32 / MAX_UPSTREAMS];
			int fd = p->fd[ev[i].data.u32 % MAX_UPSTREAMS]; /* -1: ended by an earlier answer */
			ssize_t len = fd >= 0 ? recv(fd, buf, size, 0) : -1;
			if (len >= 0)
				on_answer(d, p, buf, (size_t)len);
		}
}

void dns_dispatch(struct net_dns *d)
{
	uint8_t buf[4096];
	if (!d->loaded && !d->unloadable) {
		d->loaded = ldns_load();
		if (!d->loaded) {
			d->unloadable = true;
			warn_line("cannot load libldns.so.3 (%s): the run's DNS questions go unanswered; "
				"install the Debian package libldns3", dlerror());
		}
	}
	if (!d->loaded) {
		while (recv(d->fd, buf, sizeof buf, 0) >= 0) {
		}
		return;
	}
	for (int k = 0; k < 64; k++) {
		struct sockaddr_in from;
		socklen_t fl = sizeof from;
		ssize_t n = recvfrom(d->fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
		if (n < 0)
			break;
		on_question(d, buf, (size_t)n, &from);
	}
	take_answers(d, buf, sizeof buf);
}

json_t *dns_record(struct net_dns *d, char **line)
{
	json_t *ref = json_array();
	for (size_t i = 0; i < d->nrefused; i++)
		json_array_append_new(ref, json_pack("{s:s,s:i}", "name", d->refused[i].name, "count", (int)d->refused[i].count));
	*line = NULL;
	if (d->over_cap)
		*line = xasprintf("refused %u DNS question%s past --dns-max-names %u (distinct names asked: more than %u; "
				  "a tunnel through DNS names?)", d->over_cap, d->over_cap == 1 ? "" : "s", d->max_names,
				  d->max_names);
	return json_pack("{s:i,s:i,s:b,s:o}", "names", (int)d->nnames, "names_cap", (int)d->max_names, "names_capped",
			 d->over_cap > 0, "refused", ref);
}

void dns_close(struct net_dns *d)
{
	if (!d)
		return;
	closep(&d->fd);
	for (size_t i = 0; i < MAX_PENDING; i++)
		pending_end(&d->pending[i]);
	closep(&d->ep);
	for (size_t i = 0; i < d->nnames; i++)
		free(d->names[i]);
	free(d->names);
	for (size_t i = 0; i < d->nrefused; i++)
		free(d->refused[i].name);
	free(d->refused);
	free(d);
}
