/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_units.c - durations and sizes as people write them (parse_duration_ms, parse_size,
 * parse_uint), and the printing of what they parse to: a printed duration reads back as the
 * same number of milliseconds. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "util/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *s = fuzz_string(data, size);
	char b[32];
	uint64_t ms, bytes, n, again;
	if (parse_duration_ms(s, &ms) == 0) {
		format_duration_ms(b, sizeof b, ms);
		if (parse_duration_ms(b, &again) < 0 || again != ms) {
			fprintf(stderr, "'%s' is %llu ms, printed '%s', read back as %llu\n", s, (unsigned long long)ms, b,
				(unsigned long long)again);
			abort();
		}
		format_seconds(b, sizeof b, (double)ms / 1000);
	}
	if (parse_size(s, &bytes) == 0)
		format_size(b, sizeof b, bytes);
	if (parse_uint(s, &n) == 0)
		format_size(b, sizeof b, n);
	return 0;
}
