/* SPDX-License-Identifier: Apache-2.0 */
/* nftables: set up an nftables table from inside (the nf_tables attack surface): a netlink
 * batch NEWTABLE on NETLINK_NETFILTER, and `nft add table` when nft is in the cell. */
#include "attempt.h"
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <stdint.h>
#include <sys/wait.h>

#define ALIGN4(x) (((x) + 3) & ~3u)

static size_t put_msg(char *b, size_t off, uint16_t type, uint16_t flags, uint32_t seq, uint8_t family, uint16_t res_id,
		      const char *name)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(b + off);
	memset(h, 0, sizeof *h + sizeof(struct nfgenmsg));
	h->nlmsg_type = type;
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	h->nlmsg_seq = seq;
	struct nfgenmsg *g = (struct nfgenmsg *)(h + 1);
	g->nfgen_family = family;
	g->version = NFNETLINK_V0;
	g->res_id = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? __builtin_bswap16(res_id) : res_id; /* big-endian */
	size_t len = NLMSG_HDRLEN + sizeof *g;
	if (name) {
		struct nlattr *a = (struct nlattr *)(b + off + len);
		a->nla_type = NFTA_TABLE_NAME;
		a->nla_len = NLA_HDRLEN + strlen(name) + 1;
		memcpy((char *)a + NLA_HDRLEN, name, strlen(name) + 1);
		len += ALIGN4(a->nla_len);
	}
	h->nlmsg_len = len;
	return off + ALIGN4(len);
}


int main(void)
{
	a_start("nftables");
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (s < 0) {
		tried(false, "socket(NETLINK_NETFILTER): %s", en());
	} else {
		struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
		bind(s, (struct sockaddr *)&sa, sizeof sa);
		char b[1024] = { 0 };
		size_t off = put_msg(b, 0, NFNL_MSG_BATCH_BEGIN, 0, 1, AF_UNSPEC, NFNL_SUBSYS_NFTABLES, NULL);
		off = put_msg(b, off, (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_ACK, 2, NFPROTO_INET,
			      0, "warren_escape");
		off = put_msg(b, off, NFNL_MSG_BATCH_END, 0, 3, AF_UNSPEC, NFNL_SUBSYS_NFTABLES, NULL);
		ssize_t w = sendto(s, b, off, 0, (struct sockaddr *)&sa, sizeof sa);
		if (w < 0) {
			tried(false, "sending a NEWTABLE batch: %s", en());
		} else {
			struct timeval tv = { 2, 0 };
			setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
			char r[4096];
			ssize_t n = recv(s, r, sizeof r, 0);
			/* the answer: an error for any message of the batch, or the ack of NEWTABLE */
			int err = -1;
			for (struct nlmsghdr *h = (struct nlmsghdr *)r; n > 0 && NLMSG_OK(h, n); h = NLMSG_NEXT(h, n))
				if (h->nlmsg_type == NLMSG_ERROR) {
					int e = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
					if (e || (h->nlmsg_seq == 2 && err < 0))
						err = e;
				}
			if (err < 0)
				tried(false, "NEWTABLE warren_escape: no answer (%s)", n < 0 ? en() : "no ack");
			else
				tried(err == 0, "NEWTABLE inet warren_escape over netlink: %s",
				      err ? strerrorname_np(err) : "created");
		}
		close(s);
	}
	const char *nfts[] = { "/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft" };
	for (int i = 0; i < 3; i++) {
		if (access(nfts[i], X_OK) < 0)
			continue;
		pid_t c = fork();
		if (c == 0) {
			int dn = open("/dev/null", O_WRONLY);
			dup2(dn, 1);
			dup2(dn, 2);
			execl(nfts[i], "nft", "add", "table", "inet", "warren_escape_cli", (char *)NULL);
			_exit(127);
		}
		int st = 0;
		waitpid(c, &st, 0);
		tried(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s add table inet warren_escape_cli: exit %d", nfts[i],
		      WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		break;
	}
	finish();
}
