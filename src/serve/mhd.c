/* mhd.c - load libmicrohttpd with dlopen (see mhd.h for why). */
#include "serve/mhd.h"

#include <dlfcn.h>

struct mhd_api mhd;

#define MHD_LIB "libmicrohttpd.so.12"

int mhd_load(struct error *err)
{
	if (mhd.start_daemon)
		return 0;
	void *lib = dlopen(MHD_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		return error_set(err, 0, "warren serve needs %s: %s; install the Debian package libmicrohttpd12", MHD_LIB, dlerror());
	struct { void **fn; const char *name; } syms[] = {
		{ (void **)&mhd.start_daemon, "MHD_start_daemon" },
		{ (void **)&mhd.stop_daemon, "MHD_stop_daemon" },
		{ (void **)&mhd.response_from_buffer, "MHD_create_response_from_buffer" },
		{ (void **)&mhd.response_from_callback, "MHD_create_response_from_callback" },
		{ (void **)&mhd.add_header, "MHD_add_response_header" },
		{ (void **)&mhd.queue_response, "MHD_queue_response" },
		{ (void **)&mhd.destroy_response, "MHD_destroy_response" },
		{ (void **)&mhd.lookup, "MHD_lookup_connection_value" },
		{ (void **)&mhd.connection_info, "MHD_get_connection_info" },
	};
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		*syms[i].fn = dlsym(lib, syms[i].name);
		if (!*syms[i].fn) {
			mhd.start_daemon = NULL;
			return error_set(err, 0, "%s has no %s; install libmicrohttpd12 0.9.71 or newer", MHD_LIB, syms[i].name);
		}
	}
	return 0;
}
