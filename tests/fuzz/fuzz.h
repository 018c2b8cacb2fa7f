/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz.h - what the libFuzzer targets share: the input as a NUL-terminated string. */
#ifndef WARREN_FUZZ_H
#define WARREN_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/error.h"

/* The input up to its first NUL, as a heap string. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = xmalloc(size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
