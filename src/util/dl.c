/* SPDX-License-Identifier: Apache-2.0 */
/* dl.c - see dl.h. */
#include "util/dl.h"

#include <dlfcn.h>
#include <pthread.h>

static pthread_mutex_t dl_mu = PTHREAD_MUTEX_INITIALIZER;

int dl_load(void **h, const char *lib, const struct dl_sym *syms, size_t n, const char *what, const char *pkg,
	    struct error *err)
{
	if (__atomic_load_n(h, __ATOMIC_ACQUIRE))
		return 0;
	int r = 0;
	pthread_mutex_lock(&dl_mu);
	if (!*h) {
		void *lh = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		size_t i = 0;
		while (lh && i < n && (*syms[i].slot = dlsym(lh, syms[i].name)))
			i++;
		if (lh && i == n) {
			__atomic_store_n(h, lh, __ATOMIC_RELEASE);
		} else {
			r = -ENOENT;
			if (err && !lh)
				error_set(err, 0, "%s needs %s: %s; install the Debian package %s", what, lib, dlerror(), pkg);
			else if (err)
				error_set(err, 0, "%s has no %s; install a newer %s", lib, syms[i].name, pkg);
			for (size_t j = 0; lh && j < n; j++)
				*syms[j].slot = NULL;
			if (lh)
				dlclose(lh);
		}
	}
	pthread_mutex_unlock(&dl_mu);
	return r;
}
