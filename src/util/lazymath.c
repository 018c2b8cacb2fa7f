/* SPDX-License-Identifier: Apache-2.0 */
/* lazymath.c - the libm functions SQLite's static archive names (its SQL math functions:
 * acos(), pow(), ...), looked up in libm.so.6 at their first call, so that warren is not linked
 * against libm: a shared library mapped and relocated by each exec of warren cost every run
 * 0.6-0.9 ms of CPU and 14 page faults here (perf stat -r 300 warren --version), and none of
 * warren's queries calls a math function. A static libm does not link beside a dynamic libc
 * (it needs ld.so's private _dl_x86_cpu_features). A function SQLite names that is missing
 * here fails the link, never a run. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/error.h"

/* the real function named name, from libm.so.6 (loaded once); a process without it stops */
static void *real(const char *name)
{
	static void *libm;
	void *h = __atomic_load_n(&libm, __ATOMIC_ACQUIRE);
	if (!h) {
		h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			warn_line("cannot load libm.so.6 for %s(): %s; reinstall libc6", name, dlerror());
			abort();
		}
		__atomic_store_n(&libm, h, __ATOMIC_RELEASE);
	}
	void *f = dlsym(h, name);
	if (!f) {
		warn_line("libm.so.6 has no %s(); reinstall libc6", name);
		abort();
	}
	return f;
}

#define LAZY1(f)                                                          \
	double f(double x)                                                \
	{                                                                 \
		static double (*p)(double);                               \
		double (*q)(double) = __atomic_load_n(&p, __ATOMIC_ACQUIRE); \
		if (!q) {                                                 \
			q = (double (*)(double))real(#f);                 \
			__atomic_store_n(&p, q, __ATOMIC_RELEASE);        \
		}                                                         \
		return q(x);                                              \
	}
#define LAZY2(f)                                                                  \
	double f(double x, double y)                                              \
	{                                                                         \
		static double (*p)(double, double);                              \
		double (*q)(double, double) = __atomic_load_n(&p, __ATOMIC_ACQUIRE); \
		if (!q) {                                                         \
			q = (double (*)(double, double))real(#f);                 \
			__atomic_store_n(&p, q, __ATOMIC_RELEASE);                \
		}                                                                 \
		return q(x, y);                                                   \
	}

/* the list: nm -u of Debian 12's libsqlite3.a, the libm part */
LAZY1(acos) LAZY1(acosh) LAZY1(asin) LAZY1(asinh) LAZY1(atan) LAZY1(atanh) LAZY1(cos) LAZY1(cosh)
LAZY1(exp) LAZY1(log) LAZY1(sin) LAZY1(sinh) LAZY1(sqrt) LAZY1(tan) LAZY1(tanh) LAZY1(trunc)
LAZY2(atan2) LAZY2(fmod) LAZY2(pow)
