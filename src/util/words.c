/* words.c - suggestions for mistyped keys and options (edit distance). */
#include "util/words.h"

#include <ctype.h>
#include <string.h>

#include "util/error.h"

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = xcalloc(lb + 1, sizeof *row);
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
			size_t best = prev + cost;
			if (row[j] + 1 < best) best = row[j] + 1;
			if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	size_t d = row[lb];
	free(row);
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
	size_t len = strlen(word);
	return best && bd <= (len > 6 ? 3 : 2) ? best : NULL;
}

