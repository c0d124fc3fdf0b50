/* out.h - one call renders text or JSON
 *
 * Every verb prints through an hs_out. In text mode the fmt argument is used
 * (printf-style, with the value); in JSON mode the key is. Keys whose fmt is
 * NULL are JSON-only; out_text() prints text-only lines.
 *
 * In JSON a verb prints one document, on one line: an object for a single
 * thing, or its rows in the array of out_list_open() (an empty answer is
 * then {"KEY":[]}). Only verbs that stream (decode, stats) print a line per
 * record. Times are integer nanoseconds since the epoch and durations
 * integer nanoseconds, under keys that end in _ns (hopscope-json(7)).
 */
#ifndef HS_OUT_H
#define HS_OUT_H

#include <stdio.h>
#include <stdarg.h>
#include "hs.h"

#define HS_OUT_MAX_DEPTH 8

struct hs_out {
	FILE *fp;		/* results */
	FILE *err;		/* errors and progress */
	bool json;
	int depth;
	bool first[HS_OUT_MAX_DEPTH];	/* no member printed yet at this depth */
	bool is_array[HS_OUT_MAX_DEPTH];
	char where[96];		/* "FILE:LINE: " before errors of a runbook line, else "" */
};

void out_init(struct hs_out *o, FILE *fp, FILE *err, bool json);

void out_obj_open(struct hs_out *o, const char *key);	/* key NULL at top / in arrays */
void out_obj_close(struct hs_out *o);			/* ends the line at depth 0 */
void out_arr_open(struct hs_out *o, const char *key);
void out_arr_close(struct hs_out *o);
/* a verb's rows: {"KEY":[ ... ]} in JSON, nothing in text */
void out_list_open(struct hs_out *o, const char *key);
void out_list_close(struct hs_out *o);

void out_str(struct hs_out *o, const char *key, const char *fmt, const char *val);
void out_uint(struct hs_out *o, const char *key, const char *fmt, uint64_t val);
void out_int(struct hs_out *o, const char *key, const char *fmt, int64_t val);
void out_double(struct hs_out *o, const char *key, const char *fmt, double val);
void out_bool(struct hs_out *o, const char *key, const char *fmt, bool val);
void out_null(struct hs_out *o, const char *key);
/* a JSON number already formatted (e.g. a timestamp with 9 decimals) */
void out_raw(struct hs_out *o, const char *key, const char *fmt, const char *num);

/* a time: integer epoch nanoseconds in JSON (key ending in _ns),
 * hs_fmt_time in text */
void out_time(struct hs_out *o, const char *key, const char *fmt, uint64_t ts_ns);
/* a duration: integer nanoseconds in JSON (key ending in _ns),
 * hs_fmt_delta ("1.250ms", "-3.0us") in text */
void out_dur(struct hs_out *o, const char *key, const char *fmt, int64_t ns);
/* a share: the fraction in JSON (0.25), 100 times it through fmt in text
 * ("%5.1f%%": " 25.0%") */
void out_share(struct hs_out *o, const char *key, const char *fmt, double frac);
void out_text(struct hs_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void out_nl(struct hs_out *o);		/* newline in text mode only */

/* JSON string escaping into fp */
void out_json_string(FILE *fp, const char *s);

/* flush the results: 0, or -1 with one error when writing them failed
 * (a full disk, a closed pipe) since the last check */
int out_check(struct hs_out *o);
/* a verb that failed half-way through a JSON object still ends its line:
 * close what is open, then out_check */
int out_settle(struct hs_out *o);

/* "error: <msg>" (git style: lowercase, no full stop); returns -1 */
int out_err(struct hs_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void out_warn(struct hs_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
