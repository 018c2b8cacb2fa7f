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
 * Plain ctnetlink: a dump filtered in the kernel (CTA_FILTER, Linux 5.8; an older kernel
 * dumps all, and the address is checked here too), then a delete of each entry by its
 * original tuple, zone and id. A delete without a tuple would flush the whole table: each one
 * sent carries the tuple the dump gave. A dump walks every bucket of the table however few
 * entries match (262144 buckets on a host of 4 GiB or more: ~3.5 ms here, two dumps a run). */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/fs.h"

#define CT_FILTER_IP_SRC (1u << 0) /* CTA_FILTER_F_CTA_IP_SRC (the kernel's nf_internals.h) */
#define CT_SEND_MAX 16384          /* bytes of delete requests a send */
#define CT_RECV_SIZE 32768         /* a dump's batch */

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
	struct sockaddr_nl k = { .nl_family = AF_NETLINK };
	return sendto(fd, b, len, 0, (struct sockaddr *)&k, sizeof k) == (ssize_t)len ? 0 : -errno;
}

/* Dump the entries whose tuple of direction `dir` (CTA_TUPLE_ORIG or CTA_TUPLE_REPLY) has addr
 * as its source and append a delete request for each to del. 0, 1 when the dump was
 * interrupted by a change of the table (some may be missed), or -errno. */
static int dump(int fd, uint32_t addr, uint16_t dir, uint32_t seq, struct nlb *del)
{
	struct nlb q = { 0 };
	msg_start(&q, IPCTNL_MSG_CT_GET, NLM_F_DUMP, seq);
	size_t t = attr(&q, dir, NULL, 0), ip = attr(&q, CTA_TUPLE_IP, NULL, 0);
	attr(&q, CTA_IP_V4_SRC, &addr, 4);
	attr_end(&q, ip);
	attr_end(&q, t);
	size_t f = attr(&q, CTA_FILTER, NULL, 0);
	uint32_t flags = CT_FILTER_IP_SRC;
	attr(&q, dir == CTA_TUPLE_ORIG ? CTA_FILTER_ORIG_FLAGS : CTA_FILTER_REPLY_FLAGS, &flags, 4);
	attr_end(&q, f);
	((struct nlmsghdr *)q.b)->nlmsg_len = (uint32_t)q.len;
	int r = send_all(fd, q.b, q.len);
	free(q.b);
	if (r < 0)
		return r;
	_cleanup_free_ uint8_t *buf = xmalloc(CT_RECV_SIZE);
	int intr = 0;
	for (;;) {
		ssize_t n = recv(fd, buf, CT_RECV_SIZE, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == ENOBUFS ? 1 : -errno;
		for (struct nlmsghdr *m = (struct nlmsghdr *)buf; NLMSG_OK(m, (size_t)n); m = NLMSG_NEXT(m, n)) {
			if (m->nlmsg_seq != seq)
				continue; /* (an error of an earlier round's delete) */
			if (m->nlmsg_flags & NLM_F_DUMP_INTR)
				intr = 1;
			if (m->nlmsg_type == NLMSG_DONE)
				return intr;
			if (m->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(m);
				return m->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error ? e->error : -EIO;
			}
			if (m->nlmsg_len < NLMSG_LENGTH(sizeof(struct nfgenmsg)))
				continue;
			const uint8_t *p = (const uint8_t *)NLMSG_DATA(m) + NLMSG_ALIGN(sizeof(struct nfgenmsg));
			size_t len = m->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct nfgenmsg)));
			const struct nlattr *orig = attr_find(p, len, CTA_TUPLE_ORIG), *by = attr_find(p, len, dir);
			if (!orig || !by || !tuple_src_is(by, addr))
				continue; /* (a kernel without the filter: another address's) */
			/* seq 0: the errors of the deletes (an entry gone since) are not a dump's */
			size_t at = del->len;
			msg_start(del, IPCTNL_MSG_CT_DELETE, 0, 0);
			attr_copy(del, orig);
			const struct nlattr *zone = attr_find(p, len, CTA_ZONE), *id = attr_find(p, len, CTA_ID);
			if (zone)
				attr_copy(del, zone);
			if (id)
				attr_copy(del, id);
			((struct nlmsghdr *)(del->b + at))->nlmsg_len = (uint32_t)(del->len - at);
		}
	}
}

/* Send the delete requests of del, whole messages of at most CT_SEND_MAX bytes a send. The
 * kernel handles them as they are sent; an entry gone meanwhile is an error nobody reads. */
static int send_deletes(int fd, const struct nlb *del)
{
	size_t from = 0;
	while (from < del->len) {
		size_t to = from;
		while (to < del->len) {
			const struct nlmsghdr *h = (const struct nlmsghdr *)(del->b + to);
			if (to > from && to + h->nlmsg_len - from > CT_SEND_MAX)
				break;
			to += NLMSG_ALIGN(h->nlmsg_len);
		}
		int r = send_all(fd, del->b + from, to - from);
		if (r < 0)
			return r;
		from = to;
	}
	return 0;
}

int ct_forget(uint32_t addr)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return -errno;
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	int r = bind(fd, (struct sockaddr *)&me, sizeof me) < 0 ? -errno : 0;
	uint32_t seq = 1;
	for (int round = 0; r >= 0 && round < 3; round++) {
		struct nlb del = { 0 };
		int a = dump(fd, addr, CTA_TUPLE_ORIG, seq++, &del);
		int b = a < 0 ? a : dump(fd, addr, CTA_TUPLE_REPLY, seq++, &del);
		r = b < 0 ? b : send_deletes(fd, &del);
		free(del.b);
		if (r < 0 || (a == 0 && b == 0))
			break; /* a dump interrupted by a change of the table: once more */
	}
	close(fd);
	return r < 0 ? r : 0;
}
