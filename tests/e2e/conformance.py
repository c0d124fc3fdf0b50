#!/usr/bin/env python3
"""Compare `hopscope decode --json FILE` with TShark's field decode of FILE.

usage: conformance.py [--hopscope BIN] FILE.pcap FILE.tsv

The TSV is TShark's `-T fields` output made with the command documented in
the corpus (expected/README.txt): one row per frame, a header row, repeated
fields comma-separated outermost first. Every frame is compared field by
field; each mismatch is printed as FILE:FRAME: FIELD ours=X tshark=Y, and the
exit status is 1 when there is any that the quirk list below does not cover.

What is compared:
  ts                vs frame.time_epoch
  mirror_src/dst    vs the first ip.src/ip.dst (ipv6.* for an IPv6 outer
                    header), when encap is not "none"
  erspan_ver        vs erspan.version, session vs erspan.spanid (vxlan.vni
  hw_ts             or geneve.vni when VXLAN or Geneve is the mirror's
                    encapsulation), hw_ts vs erspan.timestamp
  src dst ttl       vs the innermost ip.* / ipv6.* values: the last ones, or
  ip_id proto len   the one before when the innermost packet is an ICMP error
                    (TShark lists the quoted header as one more value)
  sport dport       vs the last tcp.* / udp.* ports
  tcp_flags seq     vs tcp.flags (low eight bits: hs_pkt keeps those) and tcp.seq
  mpls              labels vs the first mpls.label values (TShark lists every
                    stack's; hopscope the outermost), where the TSV has them

A frame hopscope reports with an error is compared at the IP header where
its decode stopped (the one whose addresses it reports); when TShark went
deeper than that, the frame is a mismatch ("stopped early") unless a quirk
below explains it.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

# TShark's own quirks (expected/README.txt), per file and explicitly.
QUIRKS = {
    "gre-pptp.pcap": {
        "fields": {"stopped early"},
        "protocols": "ppp",
        "reason": "GRE version 1 is PPTP's, carrying PPP: no mirror format, which "
                  "hopscope counts as unsupported-gre and decodes no further",
    },
    "various_gre.pcap": {
        "fields": {"stopped early"},
        "protocols": "cmd",
        "reason": "TShark decodes GRE type 0x8909 as Cisco MetaData and the IPv4 "
                  "after it; hopscope does not decode that type",
    },
}

ICMP4_ERRORS = {3, 4, 5, 11, 12}
ICMP6_ERRORS = {1, 2, 3, 4}
PROTO_BY_NAME = {"tcp": 6, "udp": 17, "icmp": 1, "icmpv6": 58, "gre": 47,
                 "ip": 4, "ipv6": 41, "pim": 103, "ospf": 89}
IP6_EXT = {"ipv6.hopopts", "ipv6.dstopts", "ipv6.routing", "ipv6.fraghdr", "ah"}


def values(row, name):
    v = row.get(name, "")
    return v.split(",") if v else []


def num(s):
    return int(s, 16) if s.lower().startswith("0x") else int(s)


def upper_proto(protocols):
    """protocol after the innermost IPv6 header and its extension headers"""
    p = protocols.split(":")
    idx = [i for i, x in enumerate(p) if x == "ipv6"]
    if not idx:
        return None
    i = idx[-1] + 1
    while i < len(p) and p[i] in IP6_EXT:
        i += 1
    if i < len(p) and p[i] in PROTO_BY_NAME and i > idx[-1] + 1:
        return PROTO_BY_NAME[p[i]]
    return None


def compare(name, ours, row, problems):
    frame = ours["frame"]

    def bad(field, a, b):
        problems.append((frame, field, a, b))

    # integer nanoseconds against TShark's 9 decimals, as text to keep every digit
    ts = "%d.%09d" % (ours["ts_ns"] // 10**9, ours["ts_ns"] % 10**9)
    if ts != row["frame.time_epoch"]:
        bad("ts", ts, row["frame.time_epoch"])

    if ours["encap"] != "none":
        six = ":" in ours.get("mirror_src", "")
        fam = "ipv6" if six else "ip"
        for k, f in (("mirror_src", "src"), ("mirror_dst", "dst")):
            tv = values(row, "%s.%s" % (fam, f))
            if not tv or ours.get(k) != tv[0]:
                bad(k, ours.get(k), tv[0] if tv else None)

    sess = {"vxlan": "vxlan.vni", "geneve": "geneve.vni"}.get(ours["encap"],
                                                               "erspan.spanid")
    for k, f in (("erspan_ver", "erspan.version"), ("session", sess),
                 ("hw_ts", "erspan.timestamp")):
        tv = values(row, f)
        if k in ours or tv:
            if not tv or k not in ours or ours[k] != num(tv[0]):
                bad(k, ours.get(k), tv[0] if tv else None)

    if "mpls.label" in row:
        mine = [l["label"] for l in ours.get("mpls", [])]
        theirs = [num(v) for v in values(row, "mpls.label")]
        if mine != theirs[:len(mine)] or (theirs and not mine):
            bad("mpls", mine, theirs)

    if "src" not in ours:
        # nothing decoded at IP: TShark must not have an IP address either,
        # unless hopscope reported why it stopped before it
        if (values(row, "ip.src") or values(row, "ipv6.src")) and "error" not in ours:
            bad("src", None, (values(row, "ip.src") or values(row, "ipv6.src"))[-1])
        return

    six = ":" in ours["src"]
    fam = "ipv6" if six else "ip"
    srcs, dsts = values(row, fam + ".src"), values(row, fam + ".dst")
    quoted = 0
    if ours.get("proto") == (58 if six else 1):
        t = values(row, "icmpv6.type" if six else "icmp.type")
        errs = ICMP6_ERRORS if six else ICMP4_ERRORS
        if t and num(t[-1]) in errs and len(srcs) >= 2:
            quoted = 1
    deepest = len(srcs) - 1 - quoted

    if "error" in ours:
        at = [i for i in range(len(srcs))
              if srcs[i] == ours["src"] and i < len(dsts) and dsts[i] == ours["dst"]]
        if not at:
            bad("src", ours["src"], srcs[-1] if srcs else None)
            return
        i = at[-1]
        if i < deepest:
            bad("stopped early", "%s at layer %d" % (ours["error"], i + 1),
                "%d layers" % (deepest + 1))
    else:
        i = deepest
        if i < 0:
            bad("src", ours["src"], None)
            return
    if i >= len(srcs) or srcs[i] != ours["src"]:
        bad("src", ours["src"], srcs[i] if i < len(srcs) else None)
    if i >= len(dsts) or dsts[i] != ours["dst"]:
        bad("dst", ours["dst"], dsts[i] if i < len(dsts) else None)

    fields = [("ttl", "ipv6.hlim" if six else "ip.ttl")]
    if not six:
        fields += [("ip_id", "ip.id"), ("proto", "ip.proto"), ("len", "ip.len")]
    for k, f in fields:
        tv = values(row, f)
        if i >= len(tv) or k not in ours or ours[k] != num(tv[i]):
            bad(k, ours.get(k), tv[i] if i < len(tv) else None)
    if six and "error" not in ours:
        want = upper_proto(row.get("frame.protocols", ""))
        if want is None:
            nxt = values(row, "ipv6.nxt")
            want = num(nxt[i]) if i < len(nxt) else None
        if want is not None and ours["proto"] != want:
            bad("proto", ours["proto"], want)

    if "sport" in ours:
        l4 = {6: "tcp", 17: "udp"}.get(ours["proto"])
        if l4:
            for k, f in (("sport", l4 + ".srcport"), ("dport", l4 + ".dstport")):
                tv = values(row, f)
                if not tv or ours[k] != num(tv[-1]):
                    bad(k, ours[k], tv[-1] if tv else None)
    elif "error" not in ours and ours["proto"] in (6, 17):
        bad("sport", None, "present")
    if "tcp_flags" in ours:
        tv = values(row, "tcp.flags")
        if not tv or ours["tcp_flags"] != num(tv[-1]) & 0xff:
            bad("tcp_flags", ours["tcp_flags"], tv[-1] if tv else None)
        tv = values(row, "tcp.seq")
        if not tv or ours["seq"] != num(tv[-1]):
            bad("seq", ours["seq"], tv[-1] if tv else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hopscope", default=os.environ.get("HOPSCOPE") or os.path.join(
        os.environ.get("top_builddir", "."), "hopscope"))
    ap.add_argument("pcap")
    ap.add_argument("tsv")
    a = ap.parse_args()
    name = os.path.basename(a.pcap)

    run = subprocess.run([a.hopscope, "decode", "--json", a.pcap],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        sys.stderr.write("%s: hopscope decode failed (%d): %s\n"
                         % (name, run.returncode, run.stderr.strip()))
        return 1
    ours = [json.loads(l, parse_float=str) for l in run.stdout.splitlines() if l.startswith("{")]
    with open(a.tsv, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))

    problems = []
    if len(ours) != len(rows):
        problems.append((0, "frames", len(ours), len(rows)))
    for o, r in zip(ours, rows):
        if o.get("frame") != int(r["frame.number"]):
            problems.append((o.get("frame"), "frame", o.get("frame"), r["frame.number"]))
            continue
        mine = []
        compare(name, o, r, mine)
        q = QUIRKS.get(name)
        for p in mine:
            if q and p[1] in q["fields"] and (
                    q["protocols"] is None or q["protocols"] in r["frame.protocols"].split(":")):
                print("%s:%s: %s (quirk: %s)" % (name, p[0], p[1], q["reason"]))
                continue
            problems.append(p)

    for frame, field, a_, b in problems:
        print("%s:%s: %s ours=%s tshark=%s" % (name, frame, field, a_, b))
    print("%s: %d frames, %d mismatches" % (name, len(rows), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
