/* SPDX-License-Identifier: Apache-2.0 */
/* strv.h - NULL-terminated arrays of strings (an argv, an env): copied, freed, made of a JSON
 * array. */
#ifndef WARREN_UTIL_STRV_H
#define WARREN_UTIL_STRV_H

#include <stdbool.h>

#include <jansson.h>

/* A copy of v (heap; v NULL: an empty array). */
char **strv_copy(char *const *v);
/* Free v and its strings (NULL is fine). */
void strv_free(char **v);
static inline void strv_freep(char ***v) { strv_free(*v); }
#define _cleanup_strv_ __attribute__((cleanup(strv_freep)))

/* The strings of JSON array a (heap). strict: NULL unless a is a non-empty array of strings
 * only; else anything that is not a string is "" (and a non-array is an empty array). */
char **strv_from_json(json_t *a, bool strict);

#endif
