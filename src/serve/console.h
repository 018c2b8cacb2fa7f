/* SPDX-License-Identifier: Apache-2.0 */
/* console.h - the web console of `warren serve`: its files (compiled into the binary from
 * src/serve/console/ by scripts/embed-assets), the browser's login and the CSRF check. */
#ifndef WARREN_SERVE_CONSOLE_H
#define WARREN_SERVE_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* One embedded file; the generated table ends with { NULL }. */
struct console_asset {
	const char *name;        /* its name under src/serve/console/ */
	const unsigned char *data;
	size_t len;
};
extern const struct console_asset console_assets[];

/* The asset called name, NULL when there is none. */
const struct console_asset *console_asset_find(const char *name);
/* Its Content-Type, from the name's extension. */
const char *console_content_type(const char *name);

/* The decisions, pure (tests/unit/test_console.c). The token of a cookie value: lowercase hex
 * of at least one byte, no NUL; malloc'd, NULL otherwise. */
char *console_unhex(const char *v);
/* May a request of method carrying these headers (NULL: absent) go on? GET and HEAD: yes;
 * others: Sec-Fetch-Site, when sent, same-origin (or none); Origin, when sent, this server's
 * (http(s):// and host); none sent: only when the cookie is not what authorised it. */
bool console_origin_ok(const char *method, const char *origin, const char *host, const char *fetch_site,
		       bool by_cookie);

/* The routes (api.c calls them; they need the server's types). */
struct listener;
/* GET /?token=T on TCP: T right sets the cookie (303 to /), wrong gets 401. True: answered. */
bool console_login(struct listener *l, struct MHD_Connection *c, const char *url, const char *method,
		   enum MHD_Result *ret);
/* The token in the console's cookie (malloc'd), NULL without one. */
char *console_cookie_token(struct MHD_Connection *c);
/* A request that changes something and comes from a browser must come from this origin (CSRF);
 * false: 403 answered. */
bool console_same_origin(struct listener *l, struct MHD_Connection *c, const char *method, enum MHD_Result *ret);
/* GET / and /console/NAME: the page and its files. True: answered. */
bool console_route(struct MHD_Connection *c, const char *url, const char *method, enum MHD_Result *ret);

#endif
