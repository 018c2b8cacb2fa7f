/* SPDX-License-Identifier: Apache-2.0 */
/* mhd.h - libmicrohttpd, loaded with dlopen when `warren serve` starts: linked into the binary
 * it would load GnuTLS and its kin into every `warren run` (2-3 ms each). The functions the
 * server uses, as pointers of the library's own types. */
#ifndef WARREN_SERVE_MHD_H
#define WARREN_SERVE_MHD_H

#include <microhttpd.h>

#include "util/error.h"

struct mhd_api {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_create_response_from_buffer) *response_from_buffer;
	__typeof__(MHD_create_response_from_callback) *response_from_callback;
	__typeof__(MHD_add_response_header) *add_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup;
	__typeof__(MHD_get_connection_info) *connection_info;
	__typeof__(MHD_set_connection_option) *set_connection_option;
};
extern struct mhd_api mhd;

/* Load the library (once). */
int mhd_load(struct error *err);

#endif
