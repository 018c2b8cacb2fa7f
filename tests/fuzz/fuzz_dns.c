/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_dns.c - warren's resolver (src/net/dns.c) on a client's message and on the upstream
 * answer to what it would forward: on_question (refuse, answer empty, or take the question)
 * and on_answer (match the pending query, select the records, fill the allow set, build the
 * client's answer), with libldns loaded as the supervisor loads it.
 *
 * dns.c is included, not linked: its handlers are static. Nothing is sent: the resolver has
 * no upstream (so on_question answers what it would forward with SERVFAIL, to a socket of -1),
 * and the pending query on_answer matches is made here from the client's question, as
 * forward() makes it, with no socket of its own.
 *
 * The input: byte 0 chooses the mode (bit 0: allow= rather than nat) and the cap on names
 * (the other bits); bytes 1-2 the length of the client's message, then the message; the rest
 * is the upstream's answer, given the id of the pending query. */
#include "net/dns.c"

static void allow_addr(void *ctx, uint32_t addr, uint16_t port, uint32_t ttl)
{
	(void)ctx, (void)addr, (void)port, (void)ttl;
}

static struct net_allow allow[] = {
	{ .name = "example.com" },
	{ .name = "*.example.org", .port = 443 },
};

/* The pending query forward() would make for the client's message, in d->pending[0]. */
static bool pend(struct net_dns *d, const uint8_t *msg, size_t len, const struct sockaddr_in *from)
{
	ldns_pkt *p = NULL;
	struct pending *pe = &d->pending[0];
	bool ok = len >= 12 && L.ldns_wire2pkt(&p, msg, len) == LDNS_STATUS_OK && question_of(p, &pe->q);
	if (ok) {
		pe->used = true;
		pe->up_id = 0x5157;
		pe->c = (struct client){ .addr = *from, .id = header_of(msg).id, .udp_size = 512 };
	}
	if (p)
		L.ldns_pkt_free(p);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ldns_load()) {
		fprintf(stderr, "fuzz_dns: cannot load libldns.so.3 (%s); install libldns3\n", dlerror());
		abort();
	}
	if (size < 3)
		return 0;
	struct sockaddr_in client = { .sin_family = AF_INET, .sin_port = htons(40000), .sin_addr.s_addr = htonl(0x0a000002) };
	struct net_dns *d = xcalloc(1, sizeof *d);
	*d = (struct net_dns){ .fd = -1, .ep = -1, .cell = client.sin_addr.s_addr, .mode = data[0] & 1 ? NET_ALLOW : NET_NAT,
			       .allow = allow, .nallow = sizeof allow / sizeof allow[0], .max_names = data[0] >> 1,
			       .fn = allow_addr, .loaded = true };
	for (size_t i = 0; i < MAX_PENDING; i++)
		for (size_t k = 0; k < MAX_UPSTREAMS; k++)
			d->pending[i].fd[k] = -1;
	size_t qlen = (size_t)(data[1] << 8 | data[2]);
	if (qlen > size - 3)
		qlen = size - 3;
	on_question(d, data + 3, qlen, &client);
	size_t alen = size - 3 - qlen;
	if (alen >= 2 && pend(d, data + 3, qlen, &client)) {
		_cleanup_free_ uint8_t *answer = xmalloc(alen);
		memcpy(answer, data + 3 + qlen, alen);
		answer[0] = (uint8_t)(d->pending[0].up_id >> 8);
		answer[1] = (uint8_t)d->pending[0].up_id;
		on_answer(d, &d->pending[0], answer, alen);
	}
	dns_close(d);
	return 0;
}
