/* alert.h - threshold conditions on rates, link load and drops, and when they fire
 *
 * A condition is one of
 *
 *   link A-B util > 80%          utilization of the busier direction (needs a speed)
 *   link A-B bps > 5M            load of the busier direction, bits per second
 *   flow SRC[:PORT] > DST[:PORT] bps > 5M   the summed rate of the matching flows
 *   drops > 10/s                 dropped traces per second
 *   retx > 5/s                   retransmitted TCP samples per second
 *
 * with '>' or '<'. The parser is strict: the first wrong word is named with
 * its column and nothing is kept. Conditions are evaluated when the rate
 * estimates are recomputed (every HS_ALERT_TICK_NS of capture time, as
 * samples arrive); a condition that becomes true fires once, and is armed
 * again when it is found false.
 */
#ifndef HS_ALERT_H
#define HS_ALERT_H

#include "hs.h"
#include "rates.h"
#include "topo.h"

#define HS_ALERT_MAX 64
#define HS_ALERT_TEXT 160
#define HS_ALERT_TICK_NS (50 * 1000000ULL)

enum hs_akind { HS_AK_LINK, HS_AK_FLOW, HS_AK_DROPS, HS_AK_RETX };
enum hs_ametric { HS_AM_BPS, HS_AM_UTIL, HS_AM_PER_SEC };

struct hs_acond {
	int kind;		/* enum hs_akind */
	int metric;		/* enum hs_ametric */
	bool above;		/* '>' (else '<') */
	double threshold;	/* bps, percent or per second: the unit of the value */
	/* link: names as typed, resolved against the topology */
	char a[HS_NAME_MAX], b[HS_NAME_MAX];
	int link;		/* topology link, -1 when the topology has none */
	/* flow */
	struct hs_addr src, dst;
	int sport, dport;	/* -1: any */
};

/* 0, or -1 with "what, at column N" in err. A link condition needs topo
 * (its switches and link must exist there). */
int hs_acond_parse(const char *text, const struct hs_topo *topo, struct hs_acond *c, char *err,
		   size_t errlen);
/* find the link again in a new topology (-1 when it is gone) */
void hs_acond_resolve(struct hs_acond *c, const struct hs_topo *topo);
/* the condition's value over the window ending at now, from the rates as
 * last computed; false when it cannot be measured (no such link, no speed) */
bool hs_acond_measure(const struct hs_acond *c, const struct hs_rates *r, uint64_t now,
		      uint64_t window, double *value);
bool hs_acond_holds(const struct hs_acond *c, double value);
/* the value with its unit: "93.2%", "9.80M", "12.0/s" */
const char *hs_acond_fmt(const struct hs_acond *c, double value, char *buf, size_t len);

struct hs_alert {
	uint32_t id;
	char text[HS_ALERT_TEXT];	/* the condition as typed, blanks normalised */
	struct hs_acond c;
	bool armed;			/* fires when next found true */
	uint64_t fired;
	bool measured;
	double value;			/* at the last evaluation */
	uint64_t fired_ts;		/* capture time it last fired */
};

struct hs_alerts {
	struct hs_alert a[HS_ALERT_MAX];
	int n;
	uint32_t next_id;
};

void hs_alerts_init(struct hs_alerts *as);
/* the new alert's id, or -1 with err set (nothing added) */
int hs_alerts_add(struct hs_alerts *as, const char *text, const struct hs_topo *topo, char *err,
		  size_t errlen);
int hs_alerts_del(struct hs_alerts *as, uint32_t id);	/* 0 or -1 */
void hs_alerts_resolve(struct hs_alerts *as, const struct hs_topo *topo);

typedef void (*hs_alert_fire_cb)(void *arg, const struct hs_alert *a, double value, uint64_t ts);
/* evaluate every alert at capture time now; fire() for each that becomes true */
void hs_alerts_eval(struct hs_alerts *as, const struct hs_rates *r, uint64_t now, uint64_t window,
		    hs_alert_fire_cb fire, void *arg);

#endif
