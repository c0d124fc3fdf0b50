#!/bin/sh
# transports.sh - mirror transports beyond GRE: a VXLAN or Geneve copy is
# traced like an ERSPAN one (the mirror point from the outer header, the
# session from the VNI); MPLS label stacks, Ethernet pseudowires and MPLS in
# GRE are decoded down to IP; GRE version 1 is unsupported, not bad; a
# pcapng file mixing interfaces of several link types and snapshot lengths
# is read whole by capture, decode, stats and export, and the interface it
# cannot decode is named. On the golden captures hs-mkgolden writes.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is missing"
G=$top_srcdir/tests/golden

json() { # json PYTHON-EXPR-ON-LINES: true when it holds for the JSON lines of $tmp/out
	python3 - "$tmp/out" "$1" <<'PY'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
# a listing's document stands for its rows: {"traces":[...]}
L = [r for d in L for r in (d["traces"] if isinstance(d.get("traces"), list) else [d])]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

# the mirror points of the golden captures, as a topology names them
cat >"$tmp/t.topo" <<'TOPO'
switch tor1 role leaf mirror 192.0.2.11 loopback 10.254.0.11
switch agg1 role spine mirror 192.0.2.12 loopback 10.254.0.12
switch tor2 role leaf mirror 192.0.2.13 loopback 10.254.0.13
link tor1 agg1 agg1 tor1
link agg1 tor2 tor2 agg1
subnet tor1 10.1.1.0/24
subnet tor2 10.2.2.0/24
TOPO

# --- VXLAN and Geneve mirrors ---------------------------------------------------
hs --json decode "$G/vxlan.pcap"
check "vxlan: encap, mirror point and session (the VNI) of every copy" \
	json 'len(L) == 3 and all(o["encap"] == "vxlan" and o["session"] == 5001 and o["mirror_dst"] == "192.0.2.250" for o in L) and [o["mirror_src"] for o in L] == ["192.0.2.11", "192.0.2.12", "192.0.2.13"]'
hs --json decode "$G/geneve.pcap"
check "geneve: encap geneve, a 24-bit VNI as the session" \
	json 'len(L) == 2 and all(o["encap"] == "geneve" and o["session"] == 700001 for o in L)'
hs --json decode "$G/erspan2-geneve.pcap"
check "geneve inside ERSPAN is the tenant's: the session is ERSPAN's" \
	json 'len(L) == 1 and L[0]["encap"] == "erspan2" and L[0]["session"] == 17'
hs decode "$G/vxlan.pcap"
check "decode text: vxlan, the mirror point and the session" \
	has "^1 [0-9-]* [0-9:.]* vxlan 192.0.2.11>192.0.2.250 session 5001 | 10.1.1.10:40000 > 10.2.2.20:443" "$tmp/out"

hs --db "$tmp/h.db" -r "$G/vxlan.pcap" --topo "$tmp/t.topo" --json -c 'traces'
check "vxlan: one trace over the three switches the topology names" \
	json 'len(L) == 1 and [h["switch"] for h in L[0]["hops"]] == ["tor1", "agg1", "tor2"] and L[0]["outcome"] == "delivered"'
hs --db "$tmp/h.db" -r "$G/vxlan.pcap" --topo "$tmp/t.topo" -c 'traces show 1'
check "traces show: each hop's session is the VNI" \
	sh -c "[ \$(grep -Ec '^[123] +(tor1|agg1|tor2) .* 5001\$' '$tmp/out') -eq 3 ]"
hs --db "$tmp/h2.db" -r "$G/geneve.pcap" --topo "$tmp/t.topo" --json -c 'traces'
check "geneve: one trace, tor1 then agg1" \
	json 'len(L) == 1 and [h["switch"] for h in L[0]["hops"]] == ["tor1", "agg1"]'

# --- MPLS ---------------------------------------------------------------------
hs --json decode "$G/mpls.pcap"
check "mpls: every frame down to IP, the label stack top first" \
	json 'len(L) == 3 and all("src" in o and "error" not in o for o in L) and [[l["label"] for l in o["mpls"]] for o in L] == [[16000, 24001], [2], [1048575]] and [l["ttl"] for l in L[0]["mpls"]] == [64, 63]'
hs --json decode "$G/mpls-pw.pcap"
check "mpls: Ethernet pseudowires with and without a control word" \
	json 'len(L) == 2 and all(o.get("src") == "10.1.1.10" and o.get("dport") == 443 and len(o["mpls"]) == 2 for o in L)'
hs decode "$G/mpls.pcap"
check "decode text: the labels" has "^1 [0-9-]* [0-9:.]* none mpls 16000,24001 | 10.1.1.10:40000 > 10.2.2.20:443 tcp" "$tmp/out"
hs --db "$tmp/m.db" -r "$G/mpls.pcap" --json -c 'capture status'
check "capture of MPLS frames: no decode errors, three copies traced" \
	json 'L[0]["packets"] == 3 and L[0]["decode_errors"] == 0 and L[0]["copies"] == 3'
hs --db "$tmp/m2.db" -r "$G/gre-mpls.pcap" --topo "$tmp/t.topo" --json -c 'traces'
check "MPLS in GRE: a mirror transport, one trace over tor1 and agg1" \
	json 'len(L) == 1 and [h["switch"] for h in L[0]["hops"]] == ["tor1", "agg1"]'

# --- GRE version 1 --------------------------------------------------------------
hs --db "$tmp/p.db" -r "$G/gre-pptp.pcap" --json -c 'capture status'
check "GRE version 1 (PPTP) is counted as unsupported-gre, not bad-gre" \
	json 'L[0]["decode_errors_by_reason"] == {"unsupported-gre": 1}'

# --- a pcapng file of interfaces of several link types --------------------------
MX=$G/mixed.pcapng
hs --json decode "$MX"
check "mixed pcapng: decode reads every frame, each in its interface's link type" \
	json '[o.get("mirror_src") for o in L] == ["192.0.2.11", None, "192.0.2.12", "192.0.2.13"] and L[1]["error"] == "unsupported-linktype"'
check "mixed pcapng: the interface not decoded is named, with its frames" \
	has "warning: '$MX': interface 3 has link type USB_LINUX (189), which hopscope does not decode: 1 frames (unsupported-linktype)" "$tmp/err"
hs --db "$tmp/x.db" -r "$MX" --topo "$tmp/t.topo" --json -c 'traces; capture status'
check "mixed pcapng: capture joins the copies of the three interfaces into one trace" \
	json '[h["switch"] for h in L[0]["hops"]] == ["tor1", "agg1", "tor2"] and L[0]["outcome"] == "delivered"'
check "mixed pcapng: capture status counts the USB frame as unsupported-linktype" \
	json 'L[1]["packets"] == 4 and L[1]["copies"] == 3 and L[1]["decode_errors_by_reason"] == {"unsupported-linktype": 1}'
check "mixed pcapng: capture names the interface too" has "interface 3 has link type USB_LINUX" "$tmp/err"
hs --db "$tmp/x2.db" --topo "$tmp/t.topo" --json -c "stats by switch file $MX"
check "mixed pcapng: stats over the file counts a packet at each switch" \
	json 'sorted(o["switch"] for o in L) == ["agg1", "tor1", "tor2"] and all(o["packets"] == 1 for o in L)'
hs --db "$tmp/x3.db" -r "$MX" -c "export pcap $tmp/out.pcapng"
check "mixed pcapng: export takes the three inner packets from it" \
	has "exported to '$tmp/out.pcapng': pcapng, 1 traces, 3 packets" "$tmp/out"
hs --json decode "$tmp/out.pcapng"
check "mixed pcapng: what export wrote reads back" \
	json 'len(L) == 3 and all(o["src"] == "10.1.1.10" for o in L)'

finish
