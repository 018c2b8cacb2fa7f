/* SPDX-License-Identifier: Apache-2.0 */
/* logname.h - the file names of a job's logs in the record's log/: "<n>-<step>.log" and
 * "service-<name>.log", each name percent-encoded so that any step or service name (spaces,
 * slashes, dots, any byte) is one safe file name and comes back whole. */
#ifndef WARREN_JOB_LOGNAME_H
#define WARREN_JOB_LOGNAME_H

#include <stddef.h>

/* name with every byte outside [A-Za-z0-9_+,-] as %XX ('.' too: a name cannot end in .ready), at most
 * LOGNAME_MAX bytes (cut before an escape; the record keeps the whole name). Heap. */
#define LOGNAME_MAX 200
char *logname_encode(const char *name);
/* The name of the first len bytes of an encoded name (a %XX that is not one stays). Heap. */
char *logname_decode(const char *enc, size_t len);

#endif
