/* topo.h - the fabric: switches, links, hosts, subnets behind each ToR
 *
 * File format (one record a line, '#' comments, words separated by blanks):
 *
 *   switch NAME role ROLE mirror ADDR loopback ADDR [driver lab|sonic] [redis ADDR]
 *   link   NAME PORT NAME PORT [speed RATE]   (RATE: 10G, 100M, 25gbit; per direction)
 *   host   NAME addr ADDR leaf NAME
 *   subnet NAME PREFIX                 (hosts behind ToR NAME)
 *   analyzer ADDR [iface IFNAME]       (where mirrored copies are sent)
 *
 * ROLE is leaf, spine, agg, core or tor. A switch's driver is lab unless
 * named; a sonic switch needs the address of its redis: unix:/PATH or
 * HOST:PORT (share/drivers/README). A wrong line is refused as a whole
 * with "FILE:LINE:COL: ..." and the topology already loaded is kept.
 */
#ifndef HS_TOPO_H
#define HS_TOPO_H

#include "hs.h"

#define HS_NAME_MAX 32
/* a topology with more switches is refused at the first one too many */
#define HS_TOPO_MAX_SWITCHES 4096

struct hs_switch {
	char name[HS_NAME_MAX];
	char role[16];
	struct hs_addr mirror;
	struct hs_addr loopback;
	char driver[8];			/* "lab" or "sonic" */
	char redis[108];		/* a sonic switch's redis: unix:/PATH or HOST:PORT */
};

struct hs_link {
	int a, b;		/* switch indexes */
	char a_port[HS_NAME_MAX], b_port[HS_NAME_MAX];
	double speed;		/* bits per second each way, 0 when not known */
};

struct hs_host {
	char name[HS_NAME_MAX];
	struct hs_addr addr;
	int leaf;		/* switch index */
};

struct hs_subnet {
	struct hs_addr net;
	int plen;
	int leaf;
};

struct hs_topo {
	char *path;
	int nsw, nlinks, nhosts, nsubnets;
	struct hs_switch *sw;
	struct hs_link *links;
	struct hs_host *hosts;
	struct hs_subnet *subnets;
	struct hs_addr analyzer;
	char analyzer_iface[HS_NAME_MAX];
	/* derived: hop distances between switches, nsw*nsw, -1 = unreachable */
	int16_t *dist;
	/* derived: hash indexes of host, mirror and loopback addresses, so a
	 * lookup per trace does not scan every host (NULL: scan) */
	struct hs_topo_aidx {
		int32_t *slot;	/* index into the array, -1 empty */
		uint32_t mask;
	} host_idx, mirror_idx, loop_idx,
	  name_idx;	/* switch names, grown as the switches are read */
};

/* NULL on error with a "FILE:LINE:COL: what" message in err */
struct hs_topo *hs_topo_load(const char *path, char *err, size_t errlen);
struct hs_topo *hs_topo_parse(const char *text, const char *name, char *err, size_t errlen);
void hs_topo_free(struct hs_topo *t);
/* t written in the file format, so hs_topo_parse() gives it back: a new
 * string (free it), *len its length */
char *hs_topo_text(const struct hs_topo *t, size_t *len);

int hs_topo_switch_by_name(const struct hs_topo *t, const char *name);
/* switch whose mirror (or, failing that, loopback) address is a; -1 if none */
int hs_topo_switch_by_addr(const struct hs_topo *t, const struct hs_addr *a);
/* ToR (leaf) serving address a, from hosts then subnets; -1 if unknown */
int hs_topo_leaf_for(const struct hs_topo *t, const struct hs_addr *a);
/* neighbours of sw on a shortest path to switch dst; returns how many, up to max */
int hs_topo_next_hops(const struct hs_topo *t, int sw, int dst, int *out, int max);
/* link index joining switches a and b (either order), -1 if none */
int hs_topo_link(const struct hs_topo *t, int a, int b);

#endif
