/* fuzz_dns.c - warren's resolver (src/net/dns.c) on a client's message and on the upstream
 * answer to what it forwarded: on_question (refuse, answer empty, or build warren's own
 * query) and on_answer (match the pending query, select the records, fill the allow set,
 * build the client's answer), with libldns loaded as the supervisor loads it.
 *
 * dns.c is included, not linked: its handlers are static, and their only effects outside
 * memory are sendto() on the resolver's two sockets, which here are -1 (nothing is sent).
 *
 * The input: byte 0 chooses the mode (bit 0: allow= rather than nat) and the cap on names
 * (the other bits); bytes 1-2 the length of the client's message, then the message; the rest
 * is the upstream's answer, given the id of warren's query when it made one. */
#include "net/dns.c"

static void allow_addr(void *ctx, uint32_t addr, uint16_t port, uint32_t ttl)
{
	(void)ctx, (void)addr, (void)port, (void)ttl;
}

static struct net_allow allow[] = {
	{ .name = "example.com" },
	{ .name = "*.example.org", .port = 443 },
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ldns_load()) {
		fprintf(stderr, "fuzz_dns: cannot load libldns.so.3 (%s); install libldns3\n", dlerror());
		abort();
	}
	if (size < 3)
		return 0;
	struct net_dns *d = xcalloc(1, sizeof *d);
	*d = (struct net_dns){ .fd = -1, .up = -1, .mode = data[0] & 1 ? NET_ALLOW : NET_NAT, .allow = allow,
			       .nallow = sizeof allow / sizeof allow[0], .max_names = data[0] >> 1, .fn = allow_addr,
			       .nup = 1, .loaded = true };
	d->upstream[0] = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(53),
					       .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in client = { .sin_family = AF_INET, .sin_port = htons(40000), .sin_addr.s_addr = htonl(0x0a000002) };
	size_t qlen = (size_t)(data[1] << 8 | data[2]);
	if (qlen > size - 3)
		qlen = size - 3;
	on_question(d, data + 3, qlen, &client);
	size_t alen = size - 3 - qlen;
	if (alen) {
		_cleanup_free_ uint8_t *answer = xmalloc(alen);
		memcpy(answer, data + 3 + qlen, alen);
		if (alen >= 2 && d->pending[0].used) {
			answer[0] = (uint8_t)(d->pending[0].up_id >> 8);
			answer[1] = (uint8_t)d->pending[0].up_id;
		}
		on_answer(d, answer, alen, &d->upstream[0]);
	}
	dns_close(d);
	return 0;
}
