/* SPDX-License-Identifier: Apache-2.0 */
/* mhd.c - load libmicrohttpd with dlopen (see mhd.h for why). */
#include "serve/mhd.h"

#include "util/dl.h"

struct mhd_api mhd;

#define MHD_LIB "libmicrohttpd.so.12"

int mhd_load(struct error *err)
{
	static void *lib;
	const struct dl_sym syms[] = {
		{ "MHD_start_daemon", (void **)&mhd.start_daemon },
		{ "MHD_stop_daemon", (void **)&mhd.stop_daemon },
		{ "MHD_create_response_from_buffer", (void **)&mhd.response_from_buffer },
		{ "MHD_create_response_from_callback", (void **)&mhd.response_from_callback },
		{ "MHD_add_response_header", (void **)&mhd.add_header },
		{ "MHD_queue_response", (void **)&mhd.queue_response },
		{ "MHD_destroy_response", (void **)&mhd.destroy_response },
		{ "MHD_lookup_connection_value", (void **)&mhd.lookup },
		{ "MHD_get_connection_info", (void **)&mhd.connection_info },
		{ "MHD_set_connection_option", (void **)&mhd.set_connection_option },
	};
	return dl_load(&lib, MHD_LIB, syms, sizeof syms / sizeof syms[0], "warren serve", "libmicrohttpd12", err);
}
