#!/usr/bin/env python3
"""control.py CAPTURE TSV JSONL - hopscope's 'control --json' records of a
capture against TShark's decode of it, field by field.

TSV: tshark -T fields -E header=y -E occurrence=a -E aggregator=, with the
fields of control.sh. JSONL: 'hopscope --json -r CAPTURE control limit N'
(one document, its records newest first). Prints one summary line; exit 1 on any mismatch."""
import json
import sys

cap, tsv, jsonl = sys.argv[1:4]
rows = [l.rstrip("\n").split("\t") for l in open(tsv)]
head, rows = rows[0], rows[1:]
docs = [json.loads(l, parse_float=str) for l in open(jsonl) if l.startswith("{")]
recs = [r for d in docs for r in d.get("messages", [])]
recs = [r for r in recs if "proto" in r and r["proto"] in ("bgp", "roce", "pfc")]
recs.reverse()  # capture order
bad = []
BGP_TYPES = {1: "open", 2: "update", 3: "notification", 4: "keepalive", 5: "route-refresh"}
MINOR = [h for h in head if h.startswith("bgp.notify.minor_error")]


def epoch(ns):
    """integer nanoseconds as TShark's frame.time_epoch writes them"""
    return "%d.%09d" % (ns // 10**9, ns % 10**9)


def num(v):
    v = v.strip()
    if v in ("True", "true"):
        return 1
    if v in ("False", "false"):
        return 0
    return int(v, 16) if v.startswith("0x") else int(v)


def vals(row, field):
    v = row[head.index(field)]
    return [x for x in v.split(",") if x != ""] if v else []


def same(what, ours, theirs, frame):
    if ours != theirs:
        bad.append("frame %s: %s: hopscope %r, tshark %r" % (frame, what, ours, theirs))


expected = 0
i = 0
for row in rows:
    fno = row[head.index("frame.number")]
    protos = row[head.index("frame.protocols")].split(":")
    ts = row[head.index("frame.time_epoch")]
    ipsrc = vals(row, "ip.src")
    mirrored = "erspan" in protos or "gre" in protos
    sw = ipsrc[0] if mirrored and ipsrc else None
    if "bgp" in protos:
        types = [num(t) for t in vals(row, "bgp.type")]
        lens = [num(t) for t in vals(row, "bgp.length")]
        it = {f: iter(vals(row, f)) for f in head}
        minors = iter([v for f in MINOR for v in vals(row, f)])
        prefixes = len(vals(row, "bgp.prefix_length"))
        counted = 0
        for k, t in enumerate(types):
            expected += 1
            if i >= len(recs):
                bad.append("frame %s: no record for BGP message %d" % (fno, k + 1))
                continue
            r = recs[i]
            i += 1
            same("proto", r["proto"], "bgp", fno)
            same("ts", epoch(r["ts_ns"]), ts, fno)
            same("switch", r["switch"], sw, fno)
            same("bgp_type", r.get("bgp_type"), BGP_TYPES.get(t, "type-%d" % t), fno)
            same("bgp_len", r.get("bgp_len"), lens[k], fno)
            if t == 1:
                same("version", r.get("version"), num(next(it["bgp.open.version"])), fno)
                same("as", r.get("as"), num(next(it["bgp.open.myas"])), fno)
                same("hold", r.get("hold"), num(next(it["bgp.open.holdtime"])), fno)
                same("bgp_id", r.get("bgp_id"), next(it["bgp.open.identifier"]), fno)
                as4 = next(it["bgp.cap.4as"], None)
                same("as4", r.get("as4"), num(as4) if as4 else None, fno)
            elif t == 3:
                same("error_code", r.get("error_code"),
                     num(next(it["bgp.notify.major_error"])), fno)
                same("error_subcode", r.get("error_subcode"), num(next(minors)), fno)
            elif t == 2:
                same("withdrawn_len", r.get("withdrawn_len"),
                     num(next(it["bgp.update.withdrawn_routes.length"])), fno)
                same("attr_len", r.get("attr_len"),
                     num(next(it["bgp.update.path_attributes.length"])), fno)
                counted += r.get("withdrawn", 0) + r.get("nlri", 0)
        same("prefixes (withdrawn + nlri)", counted, prefixes, fno)
    elif "infiniband" in protos:
        expected += 1
        if i >= len(recs):
            bad.append("frame %s: no record for the RoCEv2 packet" % fno)
            continue
        r = recs[i]
        i += 1
        same("proto", r["proto"], "roce", fno)
        same("ts", epoch(r["ts_ns"]), ts, fno)
        same("switch", r["switch"], sw, fno)
        for ours, theirs in (("roce_opcode", "opcode"), ("se", "se"), ("migreq", "m"),
                             ("padcnt", "padcnt"), ("tver", "tver"), ("pkey", "p_key"),
                             ("qp", "destqp"), ("ackreq", "a"), ("psn", "psn")):
            v = vals(row, "infiniband.bth." + theirs)
            o = r.get(ours)
            same(ours, int(o) if isinstance(o, bool) else o, num(v[0]) if v else None, fno)
        syn = vals(row, "infiniband.aeth.syndrome")
        same("syndrome", r.get("syndrome"), num(syn[0]) if syn else None, fno)
        msn = vals(row, "infiniband.aeth.msn")
        same("msn", r.get("msn"), num(msn[0]) if msn else None, fno)
        op = vals(row, "infiniband.aeth.syndrome.opcode")
        kind = {0: "ack", 1: "rnr-nak", 3: "nak", 2: "reserved"}.get(num(op[0])) if op else None
        same("ack", r.get("ack"), kind, fno)
        code = vals(row, "infiniband.aeth.syndrome.error_code")
        same("nak_code", r.get("nak_code"), num(code[0]) if code and kind == "nak" else None, fno)
        timer = vals(row, "infiniband.aeth.syndrome.timer")
        same("rnr_timer", r.get("rnr_timer"), num(timer[0]) if timer else None, fno)
    elif "macc" in protos:
        op = vals(row, "macc.opcode")
        if not op or num(op[0]) not in (1, 0x101):
            continue
        expected += 1
        if i >= len(recs):
            bad.append("frame %s: no record for the MAC control frame" % fno)
            continue
        r = recs[i]
        i += 1
        same("proto", r["proto"], "pfc", fno)
        same("ts", epoch(r["ts_ns"]), ts, fno)
        same("switch", r["switch"], sw, fno)
        same("pfc_opcode", r.get("pfc_opcode"), num(op[0]), fno)
        if num(op[0]) == 1:
            same("pfc_kind", r.get("pfc_kind"), "pause", fno)
            same("quanta", r.get("quanta"), [num(vals(row, "macc.pause_time")[0])], fno)
        else:
            same("pfc_kind", r.get("pfc_kind"), "pfc", fno)
            same("pfc_class_enable", r.get("pfc_class_enable"),
                 num(vals(row, "macc.cbfc.enbv")[0]), fno)
            q = [num(vals(row, "macc.cbfc.pause_time.c%d" % c)[0]) for c in range(8)]
            same("quanta", r.get("quanta"), q, fno)
if i != len(recs):
    bad.append("%d records of hopscope not in tshark's decode" % (len(recs) - i))
for b in bad:
    print("%s: %s" % (cap, b), file=sys.stderr)
print("%s: %d control messages, %d records, %d mismatches" % (cap, expected, len(recs), len(bad)))
sys.exit(1 if bad else 0)
