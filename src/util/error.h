/* SPDX-License-Identifier: Apache-2.0 */
/* error.h - the error value that carries errno and one clear message up to the user.
 *
 * Functions below cli/ return 0 or -errno (or NULL) and fill a struct error
 * with the sentence a user should read; main prints it as "warren: <msg>"
 * and exits 125. Modelled on crun's libcrun_error. */
#ifndef WARREN_UTIL_ERROR_H
#define WARREN_UTIL_ERROR_H

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>

struct error {
	int errnum;  /* errno of the failure, 0 if none applies */
	int status;  /* exit status main should use (default 125) */
	char *msg;   /* heap string, NULL when no error */
};

/* Record an error; appends ": strerror(errnum)" when errnum != 0. Returns -errnum (or -EINVAL). */
int error_set(struct error *err, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Same, but with a custom exit status (126, 127, ...). */
int error_set_status(struct error *err, int status, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Prefix an existing message: "<prefix>: <old>". */
void error_prefix(struct error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void error_clear(struct error *err);

/* The one path of warren's own lines to the user (warnings, notes, and the error main prints):
 * "warren: <msg>" on stderr, or to the handler set (which gets msg alone, without prefix or
 * newline; NULL sets stderr back). Modelled on crun's libcrun_warning. */
void warn_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn_vline(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
void warn_set_handler(void (*handler)(const char *msg, void *data), void *data);

static inline void freep(void *p) { free(*(void **)p); }
/* close and reset to -1 (a descriptor closed twice may be someone else's by then) */
static inline void closep(int *fd) { if (*fd >= 0) { int e = errno; close(*fd); errno = e; *fd = -1; } }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void error_clearp(struct error *e) { error_clear(e); }

/* unused: clang warns of a variable whose only use is its cleanup (gcc counts the cleanup) */
#define _cleanup_(f) __attribute__((cleanup(f), unused))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_error_ _cleanup_(error_clearp)

/* Move ownership out of a cleanup variable. */
#define steal_pointer(pp) ({ __typeof__(*(pp)) _p = *(pp); *(pp) = NULL; _p; })
#define steal_fd(fdp) ({ int _f = *(fdp); *(fdp) = -1; _f; })

/* Allocation that cannot fail (aborts on out-of-memory, like git's xmalloc). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
