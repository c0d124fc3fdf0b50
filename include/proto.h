/* proto.h - the attach protocol: frames between a console and the daemon
 *
 * A console attached to 'hopscope serve' speaks over a Unix stream socket
 * in frames: a 4-byte length (big-endian, of what follows it), a type
 * byte, then the payload. A frame is at most HS_PROTO_MAX bytes after
 * its length; a longer one, a length of 0 or a type not listed here is
 * malformed: the reader closes the connection.
 *
 *   HELLO   both ways first: protocol number (1 byte), flags (1 byte),
 *           the program's version (text); the daemon answers with its own
 *   LINE    console > daemon: one command line (text, no newline)
 *   OUT     daemon > console: bytes of the line's results
 *   ERR     daemon > console: bytes of its errors and progress
 *   DONE    daemon > console: the line ended; status (1 byte: 0 ok, 1 failed)
 *   INTR    console > daemon: cancel this console's pending line (Ctrl-C)
 *   BYE     either way: the end; an optional reason (text)
 *   AUTH    console > daemon, over TCP only, once TLS is up and before
 *           HELLO: the shared secret (its bytes), when the console has no
 *           certificate that says who it is
 *   WATCH   console > daemon: send this console the feed (watch is up)
 *   UNWATCH console > daemon: stop sending it
 *   TRACE   daemon > console, fed: one closed trace (hs_feed_trace_pack),
 *           and, to a console that takes them, the analyzers that stored it
 *           an empty one: the traces before are gone (a new capture
 *           began, or the traces kept were replaced: the recent ones follow)
 *   EVENT   daemon > console, fed: one line of what happened (text)
 *   STATUS  daemon > console, fed: capture status (hs_feed_status_pack)
 *   TOPO    daemon > console: the topology as a file would give it (text;
 *           empty: none), after hello and whenever it changes
 *   NAMES   console > daemon: the trace names TAB may offer (hs_names_ask_pack:
 *           a number, which names, the word begun); daemon > console, at
 *           once: the same number, then those names (hs_names_pack)
 *   LOAD    daemon > console, fed, after each STATUS: the load of each
 *           directed link of the topology it sent (hs_feed_load_pack)
 *
 * NAMES, LOAD and the analyzers of a TRACE are optional parts of protocol
 * 2: the console's hello lists those it takes in its flags, the daemon's
 * keeps those it gives. A daemon that keeps none (an older one) is asked
 * none and sends none; a console that lists none (an older one) is sent
 * none.
 *
 * The feed is what the daemon streams to a console while its watch is up;
 * it is best effort: a console that does not read fast enough is sent
 * fewer traces, and STATUS says how many it was not sent.
 */
#ifndef HS_PROTO_H
#define HS_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HS_PROTO_VERSION	2
#define HS_PROTO_HDR		5		/* length and type */
#define HS_PROTO_MAX		(1u << 20)	/* type and payload, at most */

enum hs_frame_type {
	HS_FR_HELLO = 1,
	HS_FR_LINE,
	HS_FR_OUT,
	HS_FR_ERR,
	HS_FR_DONE,
	HS_FR_INTR,
	HS_FR_BYE,
	HS_FR_AUTH,
	HS_FR_WATCH,
	HS_FR_UNWATCH,
	HS_FR_TRACE,
	HS_FR_EVENT,
	HS_FR_STATUS,
	HS_FR_TOPO,
	HS_FR_NAMES,
	HS_FR_LOAD,
	HS_FR_LAST = HS_FR_LOAD,	/* the highest type */
};

/* HELLO flags */
#define HS_HELLO_JSON	0x01		/* the console's verbs print JSON (--json) */
#define HS_HELLO_NAMES	0x02		/* NAMES: the console asks, the daemon answers */
#define HS_HELLO_LOAD	0x04		/* LOAD: the daemon sends, the console takes */
#define HS_HELLO_ANALYZER 0x08		/* a TRACE names the analyzers that stored it */

struct hs_frame {
	uint8_t type;
	const uint8_t *data;		/* the payload, valid until the next read */
	uint32_t len;
};

/* bytes read from a connection, split into frames */
struct hs_proto_rd {
	uint8_t *buf;
	size_t len, cap, off;		/* off: where the next frame begins */
	bool bad;			/* a malformed frame was read */
};

const char *hs_frame_name(uint8_t type);	/* "hello", ..., "?" */

/* header of a frame of type with a payload of len bytes into hdr; 0, or
 * -1 when the frame would be longer than HS_PROTO_MAX */
int hs_frame_header(uint8_t hdr[HS_PROTO_HDR], uint8_t type, size_t len);

void hs_proto_rd_init(struct hs_proto_rd *r);
void hs_proto_rd_free(struct hs_proto_rd *r);
/* add n bytes read */
void hs_proto_rd_feed(struct hs_proto_rd *r, const void *data, size_t n);
/* the next whole frame: 1 with *f, 0 when more bytes are needed, -1 for a
 * malformed one (err says what: its length, its type), after which the
 * reader reads nothing more */
int hs_proto_rd_next(struct hs_proto_rd *r, struct hs_frame *f, char *err, size_t errlen);

/* HELLO's payload: into buf (at least 2 + strlen(version)), its length */
size_t hs_hello_make(uint8_t *buf, size_t len, uint8_t flags, const char *version);
/* a HELLO's payload: 0 with *proto, *flags and the version (NUL-ended,
 * cut to vlen), or -1 when it is too short or its version is not text */
int hs_hello_parse(const struct hs_frame *f, uint8_t *proto, uint8_t *flags, char *version,
		   size_t vlen);

/* ---- the feed ---------------------------------------------------------------- */

struct hs_trace;

/* a packed trace is at most this long, the analyzers' names at most
 * HS_FEED_ANALYZER_MAX - 1 bytes of it */
#define HS_FEED_TRACE_MAX	1024
#define HS_FEED_ANALYZER_MAX	128

/* t packed into buf (at least HS_FEED_TRACE_MAX bytes), then, when
 * analyzer is not NULL, those names (a length byte and the text, cut to
 * HS_FEED_ANALYZER_MAX - 1): its length */
size_t hs_feed_trace_pack(uint8_t *buf, const struct hs_trace *t, const char *analyzer);
/* a TRACE's payload into *t: 0, or -1 when it is not a whole trace (a
 * length, a count or a value out of range); nsw: switches of the console's
 * topology, a hop's switch beyond it is unknown (-1). analyzer (alen at
 * least HS_FEED_ANALYZER_MAX), when not NULL, takes the analyzers'
 * names that follow the trace ("" none); NULL: nothing may follow it */
int hs_feed_trace_unpack(const uint8_t *p, size_t n, int nsw, struct hs_trace *t,
			 char *analyzer, size_t alen);

/* the capture's status, as the watch's status line shows it */
#define HS_FS_CAPTURE	0x01	/* there is or was a capture: source names it */
#define HS_FS_FILE	0x02	/* it reads a file */
#define HS_FS_ENDED	0x04	/* it ended */

struct hs_feed_status {
	uint8_t flags;
	uint64_t packets, kernel_drops, decode_errors, not_ip, open, stored, unstored;
	uint64_t not_shown;	/* traces the daemon did not send this console */
	int64_t session;	/* history session of the traces (0 none) */
	char source[256];
};

/* into buf (at least sizeof(struct hs_feed_status) + 16 bytes): its length */
size_t hs_feed_status_pack(uint8_t *buf, const struct hs_feed_status *s);
/* 0, or -1 when the payload is not a status */
int hs_feed_status_unpack(const uint8_t *p, size_t n, struct hs_feed_status *s);

/* ---- names for TAB ------------------------------------------------------------- */

#define HS_NAMES_WORD_MAX	200	/* the word begun, at most */
#define HS_NAMES_ITEM_MAX	64	/* a name, with its NUL, at most */

/* a NAMES question into buf (at least 5 + HS_NAMES_WORD_MAX bytes): seq,
 * the history's traces (stored) or those in memory, the word begun (cut
 * to HS_NAMES_WORD_MAX); its length */
size_t hs_names_ask_pack(uint8_t *buf, uint32_t seq, bool stored, const char *word);
/* a question's payload: 0 with *seq, *stored and the word (NUL-ended; wlen
 * at least HS_NAMES_WORD_MAX + 1), or -1 when it is not one */
int hs_names_ask_unpack(const uint8_t *p, size_t n, uint32_t *seq, bool *stored, char *word,
			size_t wlen);
/* an answer into buf (len bytes): seq, then each of the n names that fits,
 * ended by a newline; its length */
size_t hs_names_pack(uint8_t *buf, size_t len, uint32_t seq, char *const *list, int n);
/* an answer's payload: 0 with *seq and each name given to add, or -1 when it
 * is not one (a name empty, of HS_NAMES_ITEM_MAX bytes or more, or not text); nothing is
 * given to add then */
int hs_names_unpack(const uint8_t *p, size_t n, uint32_t *seq,
		    void (*add)(void *arg, const char *name), void *arg);

/* ---- link load, for the watch's Links pane ---------------------------------------- */

#define HS_LOAD_TEXT	24		/* a directed link's load as shown ("45%", "~9.8M") */

/* the loads of a topology of nlinks links, text[2 * link + (0 from its a
 * side, 1 from its b side)], "" for none, into buf (at least 4 + nlinks *
 * 2 * (5 + HS_LOAD_TEXT) bytes): its length */
size_t hs_feed_load_pack(uint8_t *buf, int nlinks, const char (*text)[HS_LOAD_TEXT]);
/* a LOAD's payload into text (2 * nlinks of them): 0; 1 when it is of a
 * topology of another number of links (text untouched: the console has
 * not the one it was made for); -1 when it is not one */
int hs_feed_load_unpack(const uint8_t *p, size_t n, int nlinks, char (*text)[HS_LOAD_TEXT]);

#endif
