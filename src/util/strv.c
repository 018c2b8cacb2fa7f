/* SPDX-License-Identifier: Apache-2.0 */
/* strv.c - see strv.h. */
#include "util/strv.h"

#include <stdlib.h>

#include "util/error.h"

char **strv_copy(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	char **c = xcalloc(n + 1, sizeof *c);
	for (size_t i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

void strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

char **strv_from_json(json_t *a, bool strict)
{
	size_t n = json_array_size(a), i;
	if (strict && !n)
		return NULL;
	char **v = xcalloc(n + 1, sizeof *v);
	json_t *x;
	json_array_foreach(a, i, x) {
		if (strict && !json_is_string(x)) {
			strv_free(v);
			return NULL;
		}
		v[i] = xstrdup(json_is_string(x) ? json_string_value(x) : "");
	}
	return v;
}
