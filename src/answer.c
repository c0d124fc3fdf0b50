/* answer.c - a driver's answer, one JSON document (answer.h) */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "answer.h"
#include "hs.h"

json_t *hs_answer_parse(const char *text, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *doc;

	if (len > HS_ANSWER_MAX) {
		hs_errf(err, errlen, "longer than %u bytes", HS_ANSWER_MAX);
		return NULL;
	}
	/* duplicate members are refused: two values for one name is a driver's bug */
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		if (len == 0 || strspn(text, " \t\r\n") == len)
			hs_errf(err, errlen, "an empty answer (a JSON object was expected)");
		else
			hs_errf(err, errlen, "line %d column %d: %s", je.line, je.column, je.text);
		/* jansson quotes the bad token, which may hold a newline: one line */
		for (char *c = err; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		return NULL;
	}
	if (!json_is_object(doc)) {
		json_decref(doc);
		hs_errf(err, errlen, "not a JSON object");
		return NULL;
	}
	return doc;
}

/* whether s (n bytes) holds a control character: never shown in an error */
static bool has_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return true;
	return false;
}

static const json_t *member(const json_t *o, const char *name, char *err, size_t errlen)
{
	const json_t *v = json_object_get(o, name);

	if (!v)
		hs_errf(err, errlen, "%s: missing", name);
	return v;
}

int hs_answer_uint(const json_t *o, const char *name, uint64_t max, uint64_t *v, char *err,
		   size_t errlen)
{
	const json_t *x = member(o, name, err, errlen);
	json_int_t n;

	if (!x)
		return -1;
	if (!json_is_integer(x))
		return hs_errf(err, errlen, "%s: not an integer", name);
	n = json_integer_value(x);
	if (n < 0 || (uint64_t)n > max)
		return hs_errf(err, errlen, "%s: %" PRId64 " is out of range (0 to %" PRIu64 ")",
			       name, (int64_t)n, max);
	*v = (uint64_t)n;
	return 0;
}

int hs_answer_str(const json_t *o, const char *name, char *buf, size_t len, char *err,
		  size_t errlen)
{
	const json_t *x = member(o, name, err, errlen);
	const char *s;
	size_t n;

	if (!x)
		return -1;
	if (!json_is_string(x))
		return hs_errf(err, errlen, "%s: not a string", name);
	s = json_string_value(x);
	n = json_string_length(x);
	if (n == 0 || n >= len)
		return hs_errf(err, errlen, "%s: %s", name, n ? "too long" : "empty");
	if (has_control(s, n))
		return hs_errf(err, errlen, "%s: a control character", name);
	memcpy(buf, s, n + 1);
	return 0;
}

const json_t *hs_answer_arr(const json_t *o, const char *name, char *err, size_t errlen)
{
	const json_t *x = member(o, name, err, errlen);

	if (x && !json_is_array(x)) {
		hs_errf(err, errlen, "%s: not an array", name);
		return NULL;
	}
	return x;
}

int hs_answer_only(const json_t *o, const char *const *names, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)o, key, v) {
		size_t i;

		for (i = 0; names[i] && strcmp(names[i], key) != 0; i++)
			;
		if (!names[i] && has_control(key, strlen(key)))
			return hs_errf(err, errlen, "an unknown member, its name with a control "
				       "character");
		if (!names[i])
			return hs_errf(err, errlen, "unknown member '%.40s'", key);
	}
	return 0;
}
