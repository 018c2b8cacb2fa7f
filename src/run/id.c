/* SPDX-License-Identifier: Apache-2.0 */
/* id.c - ULID-based run ids: 48 bits of milliseconds then 80 random bits, Crockford base32. */
#include "run/id.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static const char B32[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

void run_id_format(char *out, uint64_t ms, const uint8_t rnd[10])
{
	uint8_t b[16];
	for (int i = 0; i < 6; i++)
		b[i] = (uint8_t)(ms >> (40 - 8 * i));
	memcpy(b + 6, rnd, 10);
	memcpy(out, RUN_ID_PREFIX, 4);
	/* 128 bits -> 26 symbols: the first symbol carries the top 3 bits (2 pad bits). */
	for (int i = 0; i < 26; i++) {
		int bit = i * 5 - 2; /* position of this symbol's first bit */
		int v = 0;
		for (int k = 0; k < 5; k++) {
			int pos = bit + k;
			v <<= 1;
			if (pos >= 0)
				v |= (b[pos / 8] >> (7 - pos % 8)) & 1;
		}
		out[4 + i] = B32[v];
	}
	out[RUN_ID_LEN] = '\0';
}

int run_id_new(char *out)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	uint8_t rnd[10];
	if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd)
		return -errno;
	run_id_format(out, ms, rnd);
	return 0;
}

static int b32val(char c)
{
	const char *p = strchr(B32, c);
	return (c && p) ? (int)(p - B32) : -1;
}

bool run_id_valid(const char *s)
{
	if (!s || strlen(s) != RUN_ID_LEN || strncmp(s, RUN_ID_PREFIX, 4) != 0)
		return false;
	if (b32val(s[4]) < 0 || b32val(s[4]) > 7)
		return false;
	for (int i = 5; i < RUN_ID_LEN; i++)
		if (b32val(s[i]) < 0)
			return false;
	return true;
}

uint64_t run_id_time_ms(const char *id)
{
	if (!run_id_valid(id))
		return 0;
	uint64_t ms = 0;
	for (int i = 0; i < 10; i++)
		ms = (ms << 5) | (uint64_t)b32val(id[4 + i]);
	return ms;
}
