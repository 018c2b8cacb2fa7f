/* SPDX-License-Identifier: Apache-2.0 */
/* logname.c - step and service names as safe file names in log/, and back (see logname.h). */
#include "job/logname.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

/* '.' too is encoded: "service-<name>.ready.log" is the probe's log, never a service's */
static bool plain(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '+' || c == ',' || c == '-';
}

char *logname_encode(const char *name)
{
	size_t n = strlen(name);
	char *out = xmalloc(3 * n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		size_t need = plain(c) ? 1 : 3;
		if ((size_t)(o - out) + need > LOGNAME_MAX)
			break;
		if (need == 1)
			*o++ = (char)c;
		else
			o += sprintf(o, "%%%02X", c);
	}
	*o = '\0';
	return out;
}

static int hexval(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : isxdigit((unsigned char)c) ? (tolower((unsigned char)c) - 'a' + 10) : -1;
}

char *logname_decode(const char *enc, size_t len)
{
	char *out = xmalloc(len + 1), *o = out;
	for (size_t i = 0; i < len; i++) {
		int h, l;
		if (enc[i] == '%' && i + 2 < len && (h = hexval(enc[i + 1])) >= 0 && (l = hexval(enc[i + 2])) >= 0) {
			*o++ = (char)(h * 16 + l);
			i += 2;
		} else {
			*o++ = enc[i];
		}
	}
	*o = '\0';
	return out;
}
