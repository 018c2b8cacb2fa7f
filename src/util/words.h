/* SPDX-License-Identifier: Apache-2.0 */
/* words.h - words for people: "did you mean ...?" (the closest of a list of names to a word a
 * user typed), and names made safe to print and to put in JSON. */
#ifndef WARREN_UTIL_WORDS_H
#define WARREN_UTIL_WORDS_H

#include <jansson.h>
#include <stdbool.h>

/* The closest of the NULL-terminated names to word by edit distance (case-insensitive), or
 * NULL when none is close enough to be a likely typo. */
const char *closest_word(const char *word, const char *const *names);

/* A file name or path as it may be printed (heap): control bytes, DEL, backslash and bytes
 * that are not valid UTF-8 as \xNN, so that a name cannot forge a line on the terminal, and
 * the result is always a valid JSON string (all non-ASCII escaped when jansson's stricter
 * UTF-8 check would refuse it). */
char *printable_name(const char *p);

/* A JSON string of s: s itself when it is valid UTF-8, else its printable_name (a record
 * keeps a command's argument or a variable that is not UTF-8 in escaped form, rather than
 * losing it or failing). */
json_t *json_string_lossy(const char *s);

/* Is s a string JSON can hold (valid UTF-8, by jansson's strict check)? */
bool json_text_ok(const char *s);

#endif
