/* SPDX-License-Identifier: Apache-2.0 */
/* words.c - suggestions for mistyped keys and options (edit distance), printable names. */
#include "util/words.h"

#include <ctype.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/error.h"

/* The edits from a to b (case-insensitive): letters inserted, deleted, replaced, or two
 * neighbours swapped ("rnu" is one edit from "run"). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	/* three rows of the table: i - 2, i - 1 and i */
	size_t *rows = xcalloc(3 * (lb + 1), sizeof *rows);
	size_t *before = rows, *prev = rows + lb + 1, *row = rows + 2 * (lb + 1);
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		row[0] = i;
		int ca = tolower((unsigned char)a[i - 1]);
		for (size_t j = 1; j <= lb; j++) {
			int cb = tolower((unsigned char)b[j - 1]);
			size_t best = prev[j - 1] + (ca != cb);
			if (prev[j] + 1 < best) best = prev[j] + 1;
			if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) && tolower((unsigned char)a[i - 2]) == cb &&
			    before[j - 2] + 1 < best)
				best = before[j - 2] + 1;
			row[j] = best;
		}
		size_t *t = before;
		before = prev;
		prev = row;
		row = t;
	}
	size_t d = prev[lb];
	free(rows);
	return d;
}

const char *closest_word(const char *word, const char *const *names)
{
	const char *best = NULL;
	size_t bd = (size_t)-1;
	for (const char *const *n = names; *n; n++) {
		size_t d = edit_distance(word, *n);
		if (d < bd) {
			bd = d;
			best = *n;
		}
	}
	/* close: at most one edit in three letters (one at least), never the whole word */
	size_t len = strlen(word), most = len / 3 ? len / 3 : 1;
	return best && bd <= most && bd < len ? best : NULL;
}


static char *escape_name(const char *p, bool ascii)
{
	size_t n = strlen(p);
	char *out = xmalloc(4 * n + 1), *o = out;
	const unsigned char *u = (const unsigned char *)p;
	for (size_t i = 0; i < n;) {
		size_t len = u[i] < 0x80 ? 1 : (u[i] & 0xe0) == 0xc0 && u[i] >= 0xc2 ? 2 : (u[i] & 0xf0) == 0xe0 ? 3
			   : (u[i] & 0xf8) == 0xf0 && u[i] <= 0xf4 ? 4 : 0;
		bool ok = len > 0 && i + len <= n && (!ascii || len == 1);
		for (size_t k = 1; ok && k < len; k++)
			ok = (u[i + k] & 0xc0) == 0x80;
		if (ok && len == 1 && (u[i] < 0x20 || u[i] == 0x7f || u[i] == '\\'))
			ok = false;
		if (ok) {
			memcpy(o, p + i, len);
			o += len;
			i += len;
		} else {
			o += sprintf(o, "\\x%02x", u[i]);
			i++;
		}
	}
	*o = '\0';
	return out;
}

char *printable_name(const char *p)
{
	char *s = escape_name(p, false);
	json_t *valid = json_string(s);   /* jansson's UTF-8 is stricter (overlong forms) */
	if (!valid) {
		free(s);
		s = escape_name(p, true);
	}
	json_decref(valid);
	return s;
}

json_t *json_string_lossy(const char *s)
{
	json_t *j = json_string(s);
	if (j || !s)
		return j;
	char *p = printable_name(s);
	j = json_string(p);
	free(p);
	return j;
}

bool json_text_ok(const char *s)
{
	json_t *j = json_string(s);
	json_decref(j);
	return j != NULL;
}
