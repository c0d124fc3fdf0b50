/* answer.h - what a driver answers: one JSON document (share/drivers/README)
 *
 * Every answer of a driver (add, del, list, snapshot) is one JSON object on
 * its stdout, read here with jansson, and nowhere else: a document that is
 * not well formed, is cut short, holds a duplicate member or one that is not
 * asked for, or a value of the wrong type or range, is refused whole with
 * one line saying where ("line 1 column 40: ...", "ports[3].rx_bytes: ...").
 * The readers of each answer (mirror.h, snapshot.h) check the values.
 */
#ifndef HS_ANSWER_H
#define HS_ANSWER_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#define HS_ANSWER_MAX	(8u << 20)	/* bytes of one answer: ~30000 ports */

/* text (len bytes) as one JSON object; NULL with err (one line) */
json_t *hs_answer_parse(const char *text, size_t len, char *err, size_t errlen);

/* Members of an object, by name; each -1 with "NAME: what" in err.
 * json_is_null() members are refused unless the reader allows them. */
int hs_answer_uint(const json_t *o, const char *name, uint64_t max, uint64_t *v, char *err,
		   size_t errlen);
/* a string of 1 to len - 1 printable characters, copied into buf */
int hs_answer_str(const json_t *o, const char *name, char *buf, size_t len, char *err,
		  size_t errlen);
/* an array (it stays o's) */
const json_t *hs_answer_arr(const json_t *o, const char *name, char *err, size_t errlen);
/* -1 with err when o has a member none of names (NULL-ended) */
int hs_answer_only(const json_t *o, const char *const *names, char *err, size_t errlen);

#endif
