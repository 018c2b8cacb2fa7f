/* SPDX-License-Identifier: Apache-2.0 */
/* console.c - the web console at / (docs/console.md): the embedded page and its files, sent
 * with headers that keep the browser strict (CSP: scripts from this server only, no inline
 * code; nosniff; no framing), the browser's login on TCP (/?token= once: the token goes into
 * an HttpOnly SameSite=Strict cookie, hex-encoded), and the check that a browser's request that
 * changes something comes from the console's own origin (CSRF). */
#include "serve/console.h"

#include <stdio.h>
#include <string.h>

#include "serve/internal.h"

#define COOKIE "warren_token"
#define CSP "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " \
	    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const struct console_asset *console_asset_find(const char *name)
{
	for (const struct console_asset *a = console_assets; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

const char *console_content_type(const char *name)
{
	static const char *const types[][2] = {
		{ ".html", "text/html; charset=utf-8" }, { ".js", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },   { ".svg", "image/svg+xml" },
	};
	const char *dot = strrchr(name, '.');
	for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
		if (!strcmp(dot, types[i][0]))
			return types[i][1];
	return "application/octet-stream";
}

/* Queue an answer with the console's headers; data is copied unless static. */
static enum MHD_Result answer(struct MHD_Connection *c, int status, const char *type, const void *data, size_t len,
			      bool is_static, const char *cookie, const char *location)
{
	struct MHD_Response *r = mhd.response_from_buffer(len, (void *)data,
							  is_static ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_COPY);
	mhd.add_header(r, "Content-Type", type);
	mhd.add_header(r, "Content-Security-Policy", CSP);
	mhd.add_header(r, "X-Content-Type-Options", "nosniff");
	mhd.add_header(r, "X-Frame-Options", "DENY");
	mhd.add_header(r, "Referrer-Policy", "no-referrer");
	mhd.add_header(r, "Cache-Control", "no-store");
	if (cookie)
		mhd.add_header(r, "Set-Cookie", cookie);
	if (location)
		mhd.add_header(r, "Location", location);
	enum MHD_Result ret = mhd.queue_response(c, (unsigned)status, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result answer_text(struct MHD_Connection *c, int status, const char *text)
{
	if (status >= 400) {
		/* the server's log line: the words after "warren: ", without the newline */
		const char *p = text + (strncmp(text, "warren: ", 8) ? 0 : 8);
		_cleanup_free_ char *why = strndup(p, strcspn(p, "\n"));
		api_note_refused(c, status, why);
	}
	return answer(c, status, "text/plain; charset=utf-8", text, strlen(text), false, NULL, NULL);
}

bool console_login(struct listener *l, struct MHD_Connection *c, const char *url, const char *method,
		   enum MHD_Result *ret)
{
	const char *t = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "token");
	if (!l->tcp || strcmp(url, "/") || strcmp(method, "GET") || !t)
		return false;
	struct server *s = l->s;
	if (!same_secret(t, strlen(t), s->token, s->token_len)) {
		*ret = answer_text(c, 401, "warren: the token in /?token= is not this server's; open /?token=TOKEN with the "
					   "contents of its --token-file (URL-encoded)\n");
		return true;
	}
	/* hex: any byte of the token is safe in a cookie */
	char *hex = xmalloc(2 * s->token_len + 1);
	for (size_t i = 0; i < s->token_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)s->token[i]);
	_cleanup_free_ char *cookie = xasprintf(COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict", hex);
	explicit_bzero(hex, 2 * s->token_len);
	free(hex);
	*ret = answer(c, 303, "text/plain; charset=utf-8", "", 0, true, cookie, "/");
	return true;
}

static int unhex(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

char *console_unhex(const char *v)
{
	size_t n = v ? strlen(v) : 0;
	if (!n || n % 2)
		return NULL;
	char *t = xmalloc(n / 2 + 1);
	for (size_t i = 0; i < n / 2; i++) {
		int hi = unhex(v[2 * i]), lo = unhex(v[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			free(t);
			return NULL;
		}
		t[i] = (char)(hi << 4 | lo);
	}
	t[n / 2] = '\0';
	if (strlen(t) != n / 2) {  /* a NUL byte inside: not a token */
		free(t);
		return NULL;
	}
	return t;
}

char *console_cookie_token(struct MHD_Connection *c)
{
	return console_unhex(mhd.lookup(c, MHD_COOKIE_KIND, COOKIE));
}

/* Is origin (scheme://host[:port]) this server as the browser reached it (host)? */
static bool is_own_origin(const char *origin, const char *host)
{
	const char *rest = !strncmp(origin, "http://", 7) ? origin + 7 : !strncmp(origin, "https://", 8) ? origin + 8 : NULL;
	return rest && host && !strcmp(rest, host);
}

bool console_origin_ok(const char *method, const char *origin, const char *host, const char *fetch_site,
		       bool by_cookie)
{
	if (!strcmp(method, "GET") || !strcmp(method, "HEAD"))
		return true;
	if (fetch_site && strcmp(fetch_site, "same-origin") && strcmp(fetch_site, "none"))
		return false;
	/* the cookie is the browser's credential: a request it authorises must say where it is from */
	return origin ? is_own_origin(origin, host) : !by_cookie;
}

bool console_same_origin(struct listener *l, struct MHD_Connection *c, const char *method, enum MHD_Result *ret)
{
	bool ok = console_origin_ok(method, mhd.lookup(c, MHD_HEADER_KIND, "Origin"), mhd.lookup(c, MHD_HEADER_KIND, "Host"),
				    mhd.lookup(c, MHD_HEADER_KIND, "Sec-Fetch-Site"),
				    l->tcp && !mhd.lookup(c, MHD_HEADER_KIND, "Authorization"));
	if (!ok)
		*ret = answer_text(c, 403, "warren: a request from another site (its Origin is not this server's); "
					   "use the console's own page, or the API with 'Authorization: Bearer TOKEN'\n");
	return ok;
}

bool console_route(struct MHD_Connection *c, const char *url, const char *method, enum MHD_Result *ret)
{
	const char *name = !strcmp(url, "/") ? "index.html" : !strncmp(url, "/console/", 9) ? url + 9 : NULL;
	if (!name || (strcmp(method, "GET") && strcmp(method, "HEAD")))
		return false;
	const struct console_asset *a = console_asset_find(name);
	if (!a) {
		*ret = answer_text(c, 404, "warren: no such file of the console\n");
		return true;
	}
	*ret = answer(c, 200, console_content_type(a->name), a->data, a->len, true, NULL, NULL);
	return true;
}
