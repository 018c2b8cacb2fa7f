/* dns.c - warren's resolver for one run, in the supervisor's event loop. It listens on the
 * gateway (a port of its own; the run's DNS to <gateway>:53 is redirected to it), answers
 * A/AAAA questions for allowed names by asking the host's resolvers (from /etc/resolv.conf)
 * and puts the answered IPv4 addresses into the run's allow set for their TTL plus a little
 * slack. Names not allowed are answered REFUSED and never leave the machine; distinct names
 * are counted and refused past a cap (a tunnel through wildcard names would need many). DNS
 * messages are read and written with ldns. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <ldns/ldns.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/fs.h"

/* libldns is loaded when the run's first DNS question arrives (it brings libcrypto: ~6 ms of
 * loading that a run which asks no name never pays; its static library would put that into
 * every run's start-up). */
#define LDNS_FUNCS(X) \
	X(ldns_wire2pkt) \
	X(ldns_pkt_qr) \
	X(ldns_pkt_question) \
	X(ldns_rr_list_rr) \
	X(ldns_rr_get_type) \
	X(ldns_rdf2str) \
	X(ldns_rr_owner) \
	X(ldns_pkt_free) \
	X(ldns_pkt_new) \
	X(ldns_pkt_set_id) \
	X(ldns_pkt_id) \
	X(ldns_pkt_set_qr) \
	X(ldns_pkt_set_rd) \
	X(ldns_pkt_rd) \
	X(ldns_pkt_set_ra) \
	X(ldns_pkt_set_opcode) \
	X(ldns_pkt_get_opcode) \
	X(ldns_pkt_set_rcode) \
	X(ldns_rr_list_clone) \
	X(ldns_rr_list_deep_free) \
	X(ldns_pkt_set_question) \
	X(ldns_pkt_set_qdcount) \
	X(ldns_rr_list_rr_count) \
	X(ldns_pkt2wire) \
	X(ldns_pkt_answer) \
	X(ldns_rr_rdf) \
	X(ldns_rdf_size) \
	X(ldns_rdf_data) \
	X(ldns_rr_ttl)

static struct {
	void *h;
#define X(f) __typeof__(f) *f;
	LDNS_FUNCS(X)
#undef X
} L;

static bool ldns_load(void)
{
	if (L.h)
		return true;
	void *h = dlopen("libldns.so.3", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
#define X(f) if (!(*(void **)&L.f = dlsym(h, #f))) { dlclose(h); return false; }
	LDNS_FUNCS(X)
#undef X
	L.h = h;
	return true;
}

#define MAX_PENDING 128
#define MAX_UPSTREAMS 3

struct pending {
	bool used;
	uint16_t up_id, client_id;
	struct sockaddr_in client;
	char *name;
	time_t at;
};

struct refused {
	char *name;
	unsigned count;
};

struct net_dns {
	int fd, up;
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

struct net_dns *dns_open(uint32_t gw, enum net_mode mode, const struct net_allow *allow, size_t nallow,
			 unsigned max_names, dns_allow_fn fn, void *ctx, struct error *err)
{
	struct net_dns *d = xcalloc(1, sizeof *d);
	*d = (struct net_dns){ .fd = -1, .up = -1, .mode = mode, .allow = allow, .nallow = nallow,
			       .max_names = max_names, .fn = fn, .ctx = ctx };
	read_upstreams(d);
	d->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	d->up = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = gw };
	socklen_t sl = sizeof sa;
	if (d->fd < 0 || d->up < 0 || bind(d->fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    getsockname(d->fd, (struct sockaddr *)&sa, &sl) < 0) {
		error_set(err, errno, "cannot open warren's resolver on the gateway");
		dns_close(d);
		return NULL;
	}
	d->port = ntohs(sa.sin_port);
	return d;
}

uint16_t dns_port(const struct net_dns *d)
{
	return d->port;
}

int dns_fd(const struct net_dns *d, int which)
{
	return which == 0 ? d->fd : d->up;
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

static bool name_allowed(const struct net_dns *d, const char *name)
{
	if (d->mode == NET_NAT)
		return true;
	for (size_t i = 0; i < d->nallow; i++)
		if (net_allow_name_matches(&d->allow[i], name))
			return true;
	return false;
}

/* Reply to the client with the question and rcode (REFUSED, or NOERROR without answers). */
static void reply_empty(struct net_dns *d, ldns_pkt *q, ldns_pkt_rcode rc, const struct sockaddr_in *to)
{
	ldns_pkt *r = L.ldns_pkt_new();
	L.ldns_pkt_set_id(r, L.ldns_pkt_id(q));
	L.ldns_pkt_set_qr(r, true);
	L.ldns_pkt_set_rd(r, L.ldns_pkt_rd(q));
	L.ldns_pkt_set_ra(r, true);
	L.ldns_pkt_set_opcode(r, L.ldns_pkt_get_opcode(q));
	L.ldns_pkt_set_rcode(r, (uint8_t)rc);
	ldns_rr_list *qs = L.ldns_rr_list_clone(L.ldns_pkt_question(q));
	L.ldns_rr_list_deep_free(L.ldns_pkt_question(r));
	L.ldns_pkt_set_question(r, qs);
	L.ldns_pkt_set_qdcount(r, (uint16_t)L.ldns_rr_list_rr_count(qs));
	uint8_t *wire = NULL;
	size_t len = 0;
	if (L.ldns_pkt2wire(&wire, r, &len) == LDNS_STATUS_OK)
		sendto(d->fd, wire, len, 0, (const struct sockaddr *)to, sizeof *to);
	free(wire);
	L.ldns_pkt_free(r);
}

/* The question's name, lower case, without the trailing dot. */
static char *question_name(ldns_pkt *p, ldns_rr_type *type)
{
	ldns_rr *q = L.ldns_rr_list_rr(L.ldns_pkt_question(p), 0);
	if (!q)
		return NULL;
	*type = L.ldns_rr_get_type(q);
	char *s = L.ldns_rdf2str(L.ldns_rr_owner(q));
	if (!s)
		return NULL;
	for (char *c = s; *c; c++)
		*c = (char)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c);
	size_t l = strlen(s);
	if (l > 1 && s[l - 1] == '.')
		s[l - 1] = '\0';
	return s;
}

static void on_question(struct net_dns *d, uint8_t *buf, size_t len, const struct sockaddr_in *from)
{
	ldns_pkt *q = NULL;
	if (len < 12 || L.ldns_wire2pkt(&q, buf, len) != LDNS_STATUS_OK)
		return;
	ldns_rr_type type = 0;
	_cleanup_free_ char *name = L.ldns_pkt_qr(q) ? NULL : question_name(q, &type);
	if (!name) {
		L.ldns_pkt_free(q);
		return;
	}
	bool counted = count_name(d, name);
	if (!counted || !name_allowed(d, name)) {
		if (counted)
			note_refused(d, name);
		reply_empty(d, q, LDNS_RCODE_REFUSED, from);
	} else if ((type != LDNS_RR_TYPE_A && type != LDNS_RR_TYPE_AAAA && d->mode == NET_ALLOW) || !d->nup) {
		/* an allowed name, but nothing to put in the set: no data (or no upstream: refused) */
		reply_empty(d, q, d->nup ? LDNS_RCODE_NOERROR : LDNS_RCODE_SERVFAIL, from);
	} else {
		struct pending *p = &d->pending[d->next++ % MAX_PENDING];
		free(p->name);
		*p = (struct pending){ .used = true, .client_id = L.ldns_pkt_id(q), .client = *from,
				       .name = steal_pointer(&name), .at = time(NULL) };
		if (getrandom(&p->up_id, sizeof p->up_id, 0) != sizeof p->up_id)
			p->up_id = (uint16_t)(d->next * 7919u);
		buf[0] = (uint8_t)(p->up_id >> 8);
		buf[1] = (uint8_t)p->up_id;
		for (int i = 0; i < d->nup; i++)
			sendto(d->up, buf, len, 0, (const struct sockaddr *)&d->upstream[i], sizeof d->upstream[i]);
	}
	L.ldns_pkt_free(q);
}

static void on_answer(struct net_dns *d, uint8_t *buf, size_t len, const struct sockaddr_in *from)
{
	bool known = false;
	for (int i = 0; i < d->nup; i++)
		known |= from->sin_addr.s_addr == d->upstream[i].sin_addr.s_addr && from->sin_port == d->upstream[i].sin_port;
	if (!known || len < 12)
		return;
	uint16_t id = (uint16_t)(buf[0] << 8 | buf[1]);
	struct pending *p = NULL;
	for (size_t i = 0; i < MAX_PENDING; i++)
		if (d->pending[i].used && d->pending[i].up_id == id)
			p = &d->pending[i];
	if (!p)
		return;
	ldns_pkt *a = NULL;
	if (L.ldns_wire2pkt(&a, buf, len) != LDNS_STATUS_OK)
		return;
	ldns_rr_type type;
	_cleanup_free_ char *qn = question_name(a, &type);
	if (!qn || strcmp(qn, p->name) != 0) {
		L.ldns_pkt_free(a);
		return;
	}
	/* the addresses go into the run's set before the cell hears of them */
	ldns_rr_list *ans = L.ldns_pkt_answer(a);
	for (size_t i = 0; d->mode == NET_ALLOW && i < L.ldns_rr_list_rr_count(ans); i++) {
		ldns_rr *rr = L.ldns_rr_list_rr(ans, i);
		if (L.ldns_rr_get_type(rr) != LDNS_RR_TYPE_A || L.ldns_rdf_size(L.ldns_rr_rdf(rr, 0)) != 4)
			continue;
		uint32_t addr;
		memcpy(&addr, L.ldns_rdf_data(L.ldns_rr_rdf(rr, 0)), 4);
		for (size_t k = 0; k < d->nallow; k++)
			if (net_allow_name_matches(&d->allow[k], p->name))
				d->fn(d->ctx, addr, d->allow[k].port, L.ldns_rr_ttl(rr) + NET_DNS_TTL_SLACK);
	}
	L.ldns_pkt_free(a);
	buf[0] = (uint8_t)(p->client_id >> 8);
	buf[1] = (uint8_t)p->client_id;
	sendto(d->fd, buf, len, 0, (const struct sockaddr *)&p->client, sizeof p->client);
	p->used = false;
	free(p->name);
	p->name = NULL;
}

void dns_dispatch(struct net_dns *d)
{
	uint8_t buf[4096];
	if (!d->loaded && !d->unloadable) {
		d->loaded = ldns_load();
		if (!d->loaded) {
			d->unloadable = true;
			fprintf(stderr, "warren: cannot load libldns.so.3 (%s): the run's DNS questions go unanswered; "
				"install the Debian package libldns3\n", dlerror());
		}
	}
	if (!d->loaded) {
		for (int which = 0; which < 2; which++)
			while (recv(which ? d->up : d->fd, buf, sizeof buf, 0) >= 0) {
			}
		return;
	}
	for (int which = 0; which < 2; which++) {
		for (int k = 0; k < 64; k++) {
			struct sockaddr_in from;
			socklen_t fl = sizeof from;
			ssize_t n = recvfrom(which ? d->up : d->fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
			if (n < 0)
				break;
			if (which)
				on_answer(d, buf, (size_t)n, &from);
			else
				on_question(d, buf, (size_t)n, &from);
		}
	}
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
	closep(&d->up);
	for (size_t i = 0; i < MAX_PENDING; i++)
		free(d->pending[i].name);
	for (size_t i = 0; i < d->nnames; i++)
		free(d->names[i]);
	free(d->names);
	for (size_t i = 0; i < d->nrefused; i++)
		free(d->refused[i].name);
	free(d->refused);
	free(d);
}
