/* SPDX-License-Identifier: Apache-2.0 */
/* ct.c - forget the kernel's connection tracking of a run's address. The addresses of warren's
 * subnet are given to one run after another, and the host's conntrack table outlives a run: an
 * entry of an earlier run at the same address (a UDP flow lives 30-180 s, a TCP connection cut
 * without FIN or RST five days) takes a later run's packet of the same ports for its own: past
 * the firewall's "established" (to a destination the later run is not allowed), or to the
 * earlier run's NAT (a question to the gateway sent to the earlier run's resolver port: lost).
 * So when a run lets its address go (its teardown, or the reclaim of a lease whose run is
 * gone), the entries of the address are deleted: those whose original source is the address
 * (the cell's own connections, its questions) and those whose reply source is (connections to
 * the cell, published ports' included).
 *
 * Plain ctnetlink: two dumps filtered in the kernel (CTA_FILTER; from Linux 5.16, where its
 * reply filter works; before, one dump of all IPv4 entries), the address checked here too,
 * then a delete of each entry by its original tuple, zone and id, each answered. A delete
 * without a tuple would flush the whole table: each one sent carries the tuple the dump gave.
 * A dump walks every bucket of the table however few entries match (262144 buckets on a host
 * of 4 GiB or more: ~3.5 ms here, two dumps a run); one unfiltered dump costs about that too
 * on a small table, but grows with it (~90 ms with 60000 entries). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/fs.h"

#define CT_FILTER_IP_SRC (1u << 0) /* CTA_FILTER_F_CTA_IP_SRC (the kernel's nf_internals.h) */
#define CT_SEND_MAX 16384          /* bytes of delete requests a send */
#define CT_RECV_SIZE 32768         /* a dump's batch */
#define CT_WAIT_S 5                /* the longest wait for an answer of the kernel */
#define CT_DELETE_SEQ 0x7fff0000u  /* the deletes' sequence number (the dumps': 1 and 2) */

struct nlb {
	uint8_t *b;
	size_t len, cap;
};

static void *nlb_room(struct nlb *m, size_t n)
{
	n = NLMSG_ALIGN(n);
	if (m->len + n > m->cap) {
		m->cap = m->len + n > 2 * m->cap ? m->len + n : 2 * m->cap;
		m->b = xrealloc(m->b, m->cap);
	}
	void *p = m->b + m->len;
	memset(p, 0, n);
	m->len += n;
	return p;
}

static struct nlmsghdr *msg_start(struct nlb *m, uint16_t type, uint16_t flags, uint32_t seq)
{
	struct nlmsghdr *h = nlb_room(m, NLMSG_HDRLEN);
	*h = (struct nlmsghdr){ .nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type, .nlmsg_flags = NLM_F_REQUEST | flags,
				.nlmsg_seq = seq };
	struct nfgenmsg *g = nlb_room(m, sizeof *g);
	*g = (struct nfgenmsg){ .nfgen_family = AF_INET, .version = NFNETLINK_V0 };
	return h;
}

/* An attribute (data may be NULL: a nest, closed by attr_end with its offset). */
static size_t attr(struct nlb *m, uint16_t type, const void *data, size_t len)
{
	size_t at = m->len;
	struct nlattr *a = nlb_room(m, NLA_HDRLEN + len);
	a->nla_type = type | (data ? 0 : NLA_F_NESTED);
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (data)
		memcpy((uint8_t *)a + NLA_HDRLEN, data, len);
	return at;
}

/* A copy of attribute a (its header, flags and all). */
static void attr_copy(struct nlb *m, const struct nlattr *a)
{
	memcpy(nlb_room(m, a->nla_len), a, a->nla_len);
}

static void attr_end(struct nlb *m, size_t at)
{
	((struct nlattr *)(m->b + at))->nla_len = (uint16_t)(m->len - at);
}

/* The attribute of type in [p, p + len) (the nested flag ignored), or NULL. */
static const struct nlattr *attr_find(const uint8_t *p, size_t len, uint16_t type)
{
	while (len >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
			return NULL;
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		size_t step = NLA_ALIGN(a->nla_len);
		if (step >= len)
			return NULL;
		p += step;
		len -= step;
	}
	return NULL;
}

static const uint8_t *attr_data(const struct nlattr *a)
{
	return (const uint8_t *)a + NLA_HDRLEN;
}

/* Does tuple (CTA_TUPLE_ORIG or _REPLY) have addr as its IPv4 source? */
static bool tuple_src_is(const struct nlattr *tuple, uint32_t addr)
{
	const struct nlattr *ip = attr_find(attr_data(tuple), tuple->nla_len - NLA_HDRLEN, CTA_TUPLE_IP);
	const struct nlattr *src = ip ? attr_find(attr_data(ip), ip->nla_len - NLA_HDRLEN, CTA_IP_V4_SRC) : NULL;
	return src && src->nla_len == NLA_HDRLEN + 4 && !memcmp(attr_data(src), &addr, 4);
}

static int send_all(int fd, const uint8_t *b, size_t len)
{
	return send(fd, b, len, 0) == (ssize_t)len ? 0 : -errno;
}

/* The messages of one recv, each given to fn until it returns other than 0 (that is returned);
 * 0 when the batch is done, or -errno. Only the kernel's messages reach the socket (it is
 * connected to the kernel, and only CAP_NET_ADMIN could send to it anyway). */
static int recv_batch(int fd, uint8_t *buf, int (*fn)(const struct nlmsghdr *m, void *arg), void *arg)
{
	ssize_t got;
	do
		got = recv(fd, buf, CT_RECV_SIZE, 0);
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return -errno;
	size_t left = (size_t)got;
	for (const uint8_t *p = buf; left >= NLMSG_HDRLEN;) {
		const struct nlmsghdr *m = (const struct nlmsghdr *)p;
		if (m->nlmsg_len < NLMSG_HDRLEN || m->nlmsg_len > left)
			break;
		int r = fn(m, arg);
		if (r)
			return r;
		size_t step = NLMSG_ALIGN(m->nlmsg_len);
		if (step >= left)
			break;
		p += step;
		left -= step;
	}
	return 0;
}

struct dump_ctx {
	uint32_t addr, seq;
	uint16_t dir; /* the tuple whose source is addr (CTA_TUPLE_ORIG or _REPLY), or 0: either */
	struct nlb *del;
};

/* A message of the dump: a delete request appended for an entry of the address; 1 at its end. */
static int on_entry(const struct nlmsghdr *m, void *arg)
{
	struct dump_ctx *c = arg;
	if (m->nlmsg_seq != c->seq)
		return 0;
	if (m->nlmsg_type == NLMSG_DONE)
		return 1;
	if (m->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(m);
		return m->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error < 0 ? e->error : -EIO;
	}
	if (m->nlmsg_type != ((NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW) ||
	    m->nlmsg_len < NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct nfgenmsg))))
		return 0;
	const uint8_t *p = (const uint8_t *)NLMSG_DATA(m) + NLMSG_ALIGN(sizeof(struct nfgenmsg));
	size_t len = m->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct nfgenmsg)));
	const struct nlattr *orig = attr_find(p, len, CTA_TUPLE_ORIG), *reply = attr_find(p, len, CTA_TUPLE_REPLY);
	if (!orig)
		return 0;
	bool ours = c->dir == CTA_TUPLE_ORIG ? tuple_src_is(orig, c->addr)
		  : c->dir == CTA_TUPLE_REPLY ? reply && tuple_src_is(reply, c->addr)
		  : tuple_src_is(orig, c->addr) || (reply && tuple_src_is(reply, c->addr));
	if (!ours)
		return 0; /* (a kernel that did not filter: another address's) */
	/* the original tuple, the zone and the id that the dump gave: never a delete without a
	 * tuple (a flush) */
	size_t at = c->del->len;
	msg_start(c->del, IPCTNL_MSG_CT_DELETE, NLM_F_ACK, CT_DELETE_SEQ);
	attr_copy(c->del, orig);
	const struct nlattr *zone = attr_find(p, len, CTA_ZONE), *id = attr_find(p, len, CTA_ID);
	if (zone)
		attr_copy(c->del, zone);
	if (id)
		attr_copy(c->del, id);
	((struct nlmsghdr *)(c->del->b + at))->nlmsg_len = (uint32_t)(c->del->len - at);
	return 0;
}

/* Dump the IPv4 entries whose tuple dir has addr as its source (dir 0: either tuple; not
 * filtered in the kernel then) and append a delete request for each to del. 0 or -errno. */
static int dump(int fd, uint8_t *buf, uint32_t addr, uint16_t dir, uint32_t seq, struct nlb *del)
{
	struct nlb q = { 0 };
	msg_start(&q, IPCTNL_MSG_CT_GET, NLM_F_DUMP, seq);
	if (dir) {
		size_t t = attr(&q, dir, NULL, 0), ip = attr(&q, CTA_TUPLE_IP, NULL, 0);
		attr(&q, CTA_IP_V4_SRC, &addr, 4);
		attr_end(&q, ip);
		attr_end(&q, t);
		size_t f = attr(&q, CTA_FILTER, NULL, 0);
		uint32_t flags = CT_FILTER_IP_SRC;
		attr(&q, dir == CTA_TUPLE_ORIG ? CTA_FILTER_ORIG_FLAGS : CTA_FILTER_REPLY_FLAGS, &flags, 4);
		attr_end(&q, f);
	}
	((struct nlmsghdr *)q.b)->nlmsg_len = (uint32_t)q.len;
	int r = send_all(fd, q.b, q.len);
	free(q.b);
	struct dump_ctx c = { addr, seq, dir, del };
	while (r == 0)
		r = recv_batch(fd, buf, on_entry, &c);
	return r < 0 ? r : 0;
}

struct ack_ctx {
	unsigned left;
	int err;
};

static int on_ack(const struct nlmsghdr *m, void *arg)
{
	struct ack_ctx *c = arg;
	if (m->nlmsg_seq != CT_DELETE_SEQ || m->nlmsg_type != NLMSG_ERROR || !c->left)
		return 0;
	const struct nlmsgerr *e = NLMSG_DATA(m);
	int err = m->nlmsg_len >= NLMSG_LENGTH(sizeof *e) ? e->error : -EIO;
	if (err < 0 && err != -ENOENT && !c->err)
		c->err = err; /* (ENOENT: gone meanwhile, or deleted by the other dump's request) */
	return --c->left ? 0 : 1;
}

/* Send the delete requests of del, whole messages of at most CT_SEND_MAX bytes a send, and
 * read the kernel's answer to each before the next send (the answers of all at once could
 * overrun the socket's buffer). 0, or the first error but ENOENT. */
static int send_deletes(int fd, uint8_t *buf, const struct nlb *del)
{
	size_t from = 0;
	int err = 0;
	while (from < del->len) {
		size_t to = from;
		unsigned n = 0;
		while (to < del->len) {
			const struct nlmsghdr *h = (const struct nlmsghdr *)(del->b + to);
			if (to > from && to + h->nlmsg_len - from > CT_SEND_MAX)
				break;
			to += NLMSG_ALIGN(h->nlmsg_len);
			n++;
		}
		int r = send_all(fd, del->b + from, to - from);
		if (r < 0)
			return r;
		struct ack_ctx c = { n, 0 };
		while (r == 0)
			r = recv_batch(fd, buf, on_ack, &c);
		if (r < 0)
			return r;
		err = err ? err : c.err;
		from = to;
	}
	return err;
}

/* The kernel filters a dump by a reply tuple right from Linux 5.16 (5.8-5.15 compared it
 * with the original flags: nothing matched; fixed in 5.10.83 and 5.15.6, taken as unfixed). */
static bool reply_filter_works(void)
{
	struct utsname u;
	unsigned maj = 0, min = 0;
	return uname(&u) == 0 && sscanf(u.release, "%u.%u", &maj, &min) == 2 && (maj > 5 || (maj == 5 && min >= 16));
}

/* A socket to the kernel's ctnetlink; what it waits for has a bound (a teardown never hangs
 * on an answer that does not come: EAGAIN). */
static int netlink_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	struct timeval t = { .tv_sec = CT_WAIT_S };
	if (fd >= 0 && (connect(fd, (struct sockaddr *)&k, sizeof k) < 0 ||
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t) < 0))
		closep(&fd);
	return fd;
}

int ct_forget(uint32_t addr)
{
	_cleanup_free_ uint8_t *buf = xmalloc(CT_RECV_SIZE);
	int r = -ENOBUFS;
	/* ENOBUFS: the socket's buffer overran during a dump (an answer lost); once more, on a
	 * socket of its own (the old one's dump is still going) */
	for (int round = 0; r == -ENOBUFS && round < 2; round++) {
		_cleanup_close_ int fd = netlink_open();
		if (fd < 0)
			return -errno;
		struct nlb del = { 0 };
		if (reply_filter_works()) {
			r = dump(fd, buf, addr, CTA_TUPLE_ORIG, 1, &del);
			if (r == 0)
				r = dump(fd, buf, addr, CTA_TUPLE_REPLY, 2, &del);
		} else {
			r = dump(fd, buf, addr, 0, 1, &del);
		}
		if (r == 0)
			r = send_deletes(fd, buf, &del);
		free(del.b);
	}
	return r;
}
