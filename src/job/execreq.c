/* SPDX-License-Identifier: Apache-2.0 */
/* execreq.c - the pure parts of a session's execs (job/session.h): an exec request parsed (one
 * line for each mistake; a NUL only in stdin), its command as the record keeps it (cut to a
 * bound), and output shown as UTF-8 (invalid bytes as U+FFFD). */
#include "job/session.h"

#include <errno.h>
#include <string.h>

#include "util/error.h"
#include "util/strv.h"
#include "util/units.h"

char *utf8_lossy(const char *b, size_t n, size_t *out_len)
{
	char *o = xmalloc(n * 3 + 1);
	size_t k = 0;
	const unsigned char *p = (const unsigned char *)b;
	for (size_t i = 0; i < n;) {
		unsigned c = p[i];
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		bool ok = len && i + len <= n && c != 0;
		for (size_t j = 1; ok && j < len; j++)
			ok = (p[i + j] & 0xc0) == 0x80;
		if (ok && len > 1) {
			/* no overlong forms, surrogates or code points past U+10FFFF */
			unsigned cp = c & (0x7f >> len);
			for (size_t j = 1; j < len; j++)
				cp = (cp << 6) | (p[i + j] & 0x3f);
			ok = cp >= (len == 2 ? 0x80u : len == 3 ? 0x800u : 0x10000u) && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
		}
		if (ok) {
			memcpy(o + k, p + i, len);
			k += len;
			i += len;
		} else {
			memcpy(o + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		}
	}
	o[k] = '\0';
	*out_len = k;
	return o;
}

json_t *session_command_json(char **argv, size_t max, size_t *bytes, bool *cut)
{
	json_t *a = json_array();
	size_t used = 0;
	*bytes = 0;
	*cut = false;
	for (char **p = argv; p && *p; p++) {
		size_t n = strlen(*p), take = used + n <= max ? n : max - used;
		*bytes += n + 1;
		if (*cut)
			continue;
		if (take < n) {
			*cut = true;
			while (take && ((unsigned char)(*p)[take] & 0xc0) == 0x80)
				take--;  /* (not inside a UTF-8 sequence) */
			if (!take)
				continue;
		}
		json_t *str = json_stringn(*p, take);
		json_array_append_new(a, str ? str : json_string("\xef\xbf\xbd"));
		used += take;
	}
	return a;
}

/* Does the JSON string s hold a NUL (\u0000, JSON_ALLOW_NUL)? */
static bool has_nul(json_t *s)
{
	return json_is_string(s) && strlen(json_string_value(s)) != json_string_length(s);
}

static char **env_of(json_t *v, const char **why)
{
	if (!v || json_is_null(v))
		return xcalloc(1, sizeof(char *));
	char **env = xcalloc((json_is_object(v) ? json_object_size(v) : json_is_array(v) ? json_array_size(v) : 0) + 1, sizeof *env);
	size_t n = 0;
	if (json_is_object(v)) {
		const char *k;
		json_t *e;
		json_object_foreach(v, k, e) {
			if (!json_is_string(e) || !*k || strchr(k, '=') || has_nul(e)) {
				*why = "env: each entry must be \"NAME\": \"VALUE\" (a name without '=', a value without NUL)";
				strv_free(env);
				return NULL;
			}
			env[n++] = xasprintf("%s=%s", k, json_string_value(e));
		}
	} else if (json_is_array(v)) {
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e) {
			const char *s = json_string_value(e);
			if (!s || !strchr(s, '=') || *s == '=' || has_nul(e)) {
				*why = "env: each entry must be a string NAME=VALUE (without NUL)";
				strv_free(env);
				return NULL;
			}
			env[n++] = xstrdup(s);
		}
	} else {
		*why = "env must be an object {\"NAME\": \"VALUE\"} or a list of NAME=VALUE";
		strv_free(env);
		return NULL;
	}
	return env;
}

int session_parse_exec(json_t *req, struct exec_req *x, const char **why)
{
	*x = (struct exec_req){ 0 };
	json_t *cmd = json_object_get(req, "command");
	if (!json_is_array(cmd) || !json_array_size(cmd)) {
		*why = "command must be a non-empty list of strings (e.g. [\"sh\", \"-c\", \"make test\"])";
		return -EINVAL;
	}
	x->argv = strv_from_json(cmd, true);
	if (!x->argv) {
		*why = "command must be a non-empty list of strings (e.g. [\"sh\", \"-c\", \"make test\"])";
		return -EINVAL;
	}
	size_t i;
	json_t *a;
	json_array_foreach(cmd, i, a)
		if (has_nul(a)) {
			*why = "command: an argument holds a NUL character (\\u0000), which no program's argument can";
			goto bad;
		}
	x->env = env_of(json_object_get(req, "env"), why);
	json_t *cwd = json_object_get(req, "cwd"), *in = json_object_get(req, "stdin"), *t = json_object_get(req, "timeout");
	json_t *st = json_object_get(req, "stream");
	if (!x->env)
		goto bad;
	if (cwd && !json_is_null(cwd) && (!json_is_string(cwd) || !*json_string_value(cwd) || has_nul(cwd))) {
		*why = "cwd must be a directory's path (relative to the worktree, or absolute)";
		goto bad;
	}
	x->cwd = json_is_string(cwd) ? xstrdup(json_string_value(cwd)) : NULL;
	if (in && !json_is_null(in) && !json_is_string(in)) {
		*why = "stdin must be a string (the command's standard input)";
		goto bad;
	}
	if (json_is_string(in)) {
		x->stdin_len = json_string_length(in);
		x->stdin_text = xmalloc(x->stdin_len + 1);
		memcpy(x->stdin_text, json_string_value(in), x->stdin_len + 1);
	}
	if (json_is_integer(t) && json_integer_value(t) > 0) {
		x->timeout_ms = (uint64_t)json_integer_value(t);
	} else if (json_is_string(t)) {
		if (parse_duration_ms(json_string_value(t), &x->timeout_ms) < 0 || !x->timeout_ms) {
			*why = "timeout must be a duration (e.g. 30s, 10m) or milliseconds";
			goto bad;
		}
	} else if (t && !json_is_null(t)) {
		*why = "timeout must be a duration (e.g. 30s, 10m) or milliseconds";
		goto bad;
	}
	if (st && !json_is_boolean(st)) {
		*why = "stream must be true or false";
		goto bad;
	}
	x->stream = json_is_true(st);
	json_t *keep = json_object_get(req, "keep");
	if (keep && !json_is_boolean(keep)) {
		*why = "keep must be true or false";
		goto bad;
	}
	x->keep = json_is_true(keep);
	json_t *tty = json_object_get(req, "tty");
	if (tty && !json_is_boolean(tty)) {
		*why = "tty must be true or false";
		goto bad;
	}
	x->tty = json_is_true(tty);
	json_t *soc = json_object_get(req, "stop_on_close");
	if (soc && !json_is_boolean(soc)) {
		*why = "stop_on_close must be true or false";
		goto bad;
	}
	x->stop_on_close = json_is_true(soc);
	if (x->tty && (!x->stream || x->stdin_text)) {
		*why = "tty: a terminal's input is the caller's (no stdin), its output streamed (stream: true)";
		goto bad;
	}
	return 0;
bad:
	exec_req_free(x);
	return -EINVAL;
}

void exec_req_free(struct exec_req *x)
{
	strv_free(x->argv);
	strv_free(x->env);
	free(x->cwd);
	free(x->stdin_text);
	*x = (struct exec_req){ 0 };
}
