/* out.c - one call renders text or JSON
 *
 * Text mode prints the value through the caller's printf format; JSON mode
 * prints "key":value, separating members with commas and ending a line when
 * the outermost object or array closes. Containers are not tracked in text
 * mode beyond their depth, so verbs end their text lines with out_nl().
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out.h"

void out_init(struct hs_out *o, FILE *fp, FILE *err, bool json)
{
	memset(o, 0, sizeof(*o));
	o->fp = fp;
	o->err = err;
	o->json = json;
}

/* slot of the innermost open container (depth >= 1) */
static int slot(const struct hs_out *o)
{
	int d = o->depth - 1;

	if (d < 0)
		return 0;
	return d < HS_OUT_MAX_DEPTH ? d : HS_OUT_MAX_DEPTH - 1;
}

/* the length of the well-formed UTF-8 character at p (RFC 3629: no
 * overlong form, no surrogate, nothing past U+10FFFF), 0 when it is not
 * one; a NUL ends the string before any byte past it is read */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	n = p[0] < 0xe0 ? 2 : p[0] < 0xf0 ? 3 : 4;
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* JSON is UTF-8: a byte that does not begin a well-formed character
 * (a capture's or a history's bytes, a mistyped argument) is written as
 * U+FFFD, so every line stays valid JSON */
void out_json_string(FILE *fp, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	putc('"', fp);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '"':  fputs("\\\"", fp); break;
		case '\\': fputs("\\\\", fp); break;
		case '\b': fputs("\\b", fp); break;
		case '\f': fputs("\\f", fp); break;
		case '\n': fputs("\\n", fp); break;
		case '\r': fputs("\\r", fp); break;
		case '\t': fputs("\\t", fp); break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fputs("\\u00", fp);
				putc(hex[*p >> 4], fp);
				putc(hex[*p & 15], fp);
			} else if (*p < 0x80) {
				putc(*p, fp);
			} else {
				size_t n = utf8_len(p);
				if (n == 0) {
					fputs("\\ufffd", fp);
				} else {
					fwrite(p, 1, n, fp);
					p += n - 1;
				}
			}
		}
	}
	putc('"', fp);
}

/* Start a JSON member: comma, then "key": inside an object. Returns false
 * when the member is to be skipped (no key inside an object). */
static bool member(struct hs_out *o, const char *key)
{
	if (o->depth > 0) {
		int s = slot(o);

		if (!o->is_array[s] && !key)
			return false;
		if (!o->first[s])
			putc(',', o->fp);
		o->first[s] = false;
		if (!o->is_array[s]) {
			out_json_string(o->fp, key);
			putc(':', o->fp);
		}
	}
	return true;
}

/* a bare value at depth 0 is a line of its own */
static void value_end(struct hs_out *o)
{
	if (o->depth == 0)
		putc('\n', o->fp);
}

static void open_container(struct hs_out *o, const char *key, bool array)
{
	if (!o->json) {
		o->depth++;
		return;
	}
	member(o, key);
	putc(array ? '[' : '{', o->fp);
	o->depth++;
	o->first[slot(o)] = true;
	o->is_array[slot(o)] = array;
}

static void close_container(struct hs_out *o, bool array)
{
	if (o->depth == 0)
		return;
	o->depth--;
	if (!o->json)
		return;
	putc(array ? ']' : '}', o->fp);
	if (o->depth == 0)
		putc('\n', o->fp);
}

void out_obj_open(struct hs_out *o, const char *key)
{
	/* a keyless object inside an object gets an empty key rather than
	 * producing invalid JSON */
	if (o->json && o->depth > 0 && !o->is_array[slot(o)] && !key)
		key = "";
	open_container(o, key, false);
}

void out_arr_open(struct hs_out *o, const char *key)
{
	if (o->json && o->depth > 0 && !o->is_array[slot(o)] && !key)
		key = "";
	open_container(o, key, true);
}

void out_obj_close(struct hs_out *o) { close_container(o, false); }
void out_arr_close(struct hs_out *o) { close_container(o, true); }

void out_list_open(struct hs_out *o, const char *key)
{
	out_obj_open(o, NULL);
	out_arr_open(o, key);
}

void out_list_close(struct hs_out *o)
{
	out_arr_close(o);
	out_obj_close(o);
}

void out_str(struct hs_out *o, const char *key, const char *fmt, const char *val)
{
	if (!o->json) {
		if (fmt)
			fprintf(o->fp, fmt, val ? val : "");
		return;
	}
	if (!member(o, key))
		return;
	if (val)
		out_json_string(o->fp, val);
	else
		fputs("null", o->fp);
	value_end(o);
}

void out_uint(struct hs_out *o, const char *key, const char *fmt, uint64_t val)
{
	if (!o->json) {
		if (fmt)
			fprintf(o->fp, fmt, val);
		return;
	}
	if (!member(o, key))
		return;
	fprintf(o->fp, "%llu", (unsigned long long)val);
	value_end(o);
}

void out_int(struct hs_out *o, const char *key, const char *fmt, int64_t val)
{
	if (!o->json) {
		if (fmt)
			fprintf(o->fp, fmt, val);
		return;
	}
	if (!member(o, key))
		return;
	fprintf(o->fp, "%lld", (long long)val);
	value_end(o);
}

void out_double(struct hs_out *o, const char *key, const char *fmt, double val)
{
	if (!o->json) {
		if (fmt)
			fprintf(o->fp, fmt, val);
		return;
	}
	if (!member(o, key))
		return;
	if (isfinite(val)) {
		/* the shortest of 15 to 17 digits that reads back as the same
		 * double: 0.1, not 0.10000000000000001 */
		char buf[32];

		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, sizeof(buf), "%.*g", prec, val);
			if (strtod(buf, NULL) == val)
				break;
		}
		fputs(buf, o->fp);
	} else
		fputs("null", o->fp);	/* JSON has no NaN or infinity */
	value_end(o);
}

/* Text: a format with a conversion gets "true"/"false"; a plain format is
 * printed only when val is true (a flag word such as "UP "). */
void out_bool(struct hs_out *o, const char *key, const char *fmt, bool val)
{
	if (!o->json) {
		if (!fmt)
			return;
		if (strchr(fmt, '%'))
			fprintf(o->fp, fmt, val ? "true" : "false");
		else if (val)
			fputs(fmt, o->fp);
		return;
	}
	if (!member(o, key))
		return;
	fputs(val ? "true" : "false", o->fp);
	value_end(o);
}

void out_null(struct hs_out *o, const char *key)
{
	if (!o->json || !member(o, key))
		return;
	fputs("null", o->fp);
	value_end(o);
}

void out_raw(struct hs_out *o, const char *key, const char *fmt, const char *num)
{
	if (!o->json) {
		if (fmt)
			fprintf(o->fp, fmt, num ? num : "");
		return;
	}
	if (!member(o, key))
		return;
	fputs(num && *num ? num : "null", o->fp);
	value_end(o);
}

void out_time(struct hs_out *o, const char *key, const char *fmt, uint64_t ts_ns)
{
	char b[HS_TIMESTRLEN];

	if (o->json)
		out_uint(o, key, NULL, ts_ns);
	else if (fmt)
		out_raw(o, key, fmt, hs_fmt_time(ts_ns, b, sizeof(b)));
}

void out_dur(struct hs_out *o, const char *key, const char *fmt, int64_t ns)
{
	char b[40];

	if (o->json)
		out_int(o, key, NULL, ns);
	else if (fmt)
		out_str(o, key, fmt, hs_fmt_delta(ns, b, sizeof(b)));
}

void out_share(struct hs_out *o, const char *key, const char *fmt, double frac)
{
	out_double(o, key, o->json ? NULL : fmt, o->json ? frac : 100 * frac);
}

void out_text(struct hs_out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->json)
		return;
	va_start(ap, fmt);
	vfprintf(o->fp, fmt, ap);
	va_end(ap);
}

void out_nl(struct hs_out *o)
{
	if (!o->json)
		putc('\n', o->fp);
}

static void vreport(struct hs_out *o, const char *what, const char *fmt, va_list ap)
{
	FILE *fp = o->err ? o->err : stderr;

	/* results first, so a message never lands in the middle of them */
	if (o->fp)
		fflush(o->fp);
	fprintf(fp, "%s%s: ", o->where, what);
	vfprintf(fp, fmt, ap);
	putc('\n', fp);
	fflush(fp);
}

int out_err(struct hs_out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(o, "error", fmt, ap);
	va_end(ap);
	return -1;
}

void out_warn(struct hs_out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(o, "warning", fmt, ap);
	va_end(ap);
}

int out_check(struct hs_out *o)
{
	int e = 0;

	if (!o->fp)
		return 0;
	if (fflush(o->fp) != 0)
		e = errno;
	else if (!ferror(o->fp))
		return 0;
	/* stdio lost the failed write's errno, and the bytes with it: one
	 * byte written past it finds out what keeps failing */
	if (e == 0 && write(fileno(o->fp), "\n", 1) < 0)
		e = errno;
	clearerr(o->fp);
	if (e)
		return out_err(o, "cannot write %s: %s",
			       o->fp == stdout ? "standard output" : "the output", strerror(e));
	return out_err(o, "cannot write %s: some of it was lost",
		       o->fp == stdout ? "standard output" : "the output");
}

int out_settle(struct hs_out *o)
{
	while (o->depth > 0) {
		int d = o->depth - 1 < HS_OUT_MAX_DEPTH ? o->depth - 1 : HS_OUT_MAX_DEPTH - 1;
		if (o->is_array[d])
			out_arr_close(o);
		else
			out_obj_close(o);
	}
	return out_check(o);
}
