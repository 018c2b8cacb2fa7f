/* words.h - "did you mean ...?": the closest of a list of names to a word a user typed. */
#ifndef WARREN_UTIL_WORDS_H
#define WARREN_UTIL_WORDS_H

/* The closest of the NULL-terminated names to word by edit distance (case-insensitive), or
 * NULL when none is close enough to be a likely typo. */
const char *closest_word(const char *word, const char *const *names);

#endif
