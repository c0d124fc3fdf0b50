#!/bin/sh
# control.sh - the control log: 'control --json' of the golden BGP, RoCEv2
# and PAUSE/PFC captures (plain and mirrored) field by field against TShark
# (and of any shared-corpus capture that holds such traffic); text output,
# filters, counters, undecodable messages, switch names from a topology.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is missing"
G=$top_srcdir/tests/golden
corpus=${HS_CORPUS:-$top_srcdir/../shared/corpus}
db="--db $tmp/h.db"

json() { # json PYTHON-EXPR-ON-LINES: true when it holds for the JSON lines of $tmp/out
	python3 - "$tmp/out" "$1" <<'PY'
import json, sys
L = [r for l in open(sys.argv[1]) if l.strip() for r in json.loads(l).get("messages", [])]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

# --- against TShark ------------------------------------------------------------------
FIELDS="frame.number frame.time_epoch frame.protocols ip.src
bgp.type bgp.length bgp.open.version bgp.open.myas bgp.open.holdtime bgp.open.identifier
bgp.cap.4as bgp.notify.major_error bgp.notify.minor_error bgp.notify.minor_error_open
bgp.notify.minor_error_update bgp.notify.minor_error_expired bgp.notify.minor_error_state
bgp.notify.minor_error_cease bgp.notify.minor_error_capability
bgp.update.withdrawn_routes.length bgp.update.path_attributes.length bgp.prefix_length
infiniband.bth.opcode infiniband.bth.se infiniband.bth.m infiniband.bth.padcnt
infiniband.bth.tver infiniband.bth.p_key infiniband.bth.destqp
infiniband.bth.a infiniband.bth.psn infiniband.aeth.syndrome infiniband.aeth.msn
infiniband.aeth.syndrome.opcode infiniband.aeth.syndrome.error_code
infiniband.aeth.syndrome.timer
macc.opcode macc.pause_time macc.cbfc.enbv macc.cbfc.pause_time.c0 macc.cbfc.pause_time.c1
macc.cbfc.pause_time.c2 macc.cbfc.pause_time.c3 macc.cbfc.pause_time.c4
macc.cbfc.pause_time.c5 macc.cbfc.pause_time.c6 macc.cbfc.pause_time.c7"
tshark_tsv() { # FILE: TShark's fields, no reassembly (each segment on its own)
	file=$1
	set --
	for fld in $FIELDS; do set -- "$@" -e "$fld"; done
	tshark -n -r "$file" -o tcp.desegment_tcp_streams:FALSE \
		-o tcp.analyze_sequence_numbers:FALSE \
		-T fields -E header=y -E separator=/t -E occurrence=a -E aggregator=, "$@" 2>/dev/null
}
compare() { # FILE: our records against TShark's decode
	b=${1##*/}
	tshark_tsv "$1" >"$tmp/$b.tsv"
	hs $db --json -r "$1" control limit 1000000
	cp "$tmp/out" "$tmp/$b.jsonl"
	if python3 "$top_srcdir/tests/e2e/control.py" "$b" "$tmp/$b.tsv" "$tmp/$b.jsonl" \
		>"$tmp/cmp" 2>"$tmp/err"; then
		ok "$(cat "$tmp/cmp")"
	else
		not_ok "$b: control --json differs from tshark: $(head -n 5 "$tmp/err" | tr '\n' ';')"
	fi
}

if command -v tshark >/dev/null 2>&1; then
	for b in bgp bgp-erspan roce roce-erspan pfc pfc-erspan pfc-gre-teb; do
		compare "$G/$b.pcap"
	done
	# the shared corpus: every capture TShark finds control traffic in
	if [ -d "$corpus" ]; then
		found=0
		for f in "$corpus"/*.pcap "$corpus"/*.pcapng; do
			[ -f "$f" ] || continue
			if tshark -n -r "$f" -T fields -e frame.protocols 2>/dev/null |
				grep -q -E '(^|:)(bgp|infiniband|macc)(:|$)'; then
				found=$((found + 1))
				compare "$f"
			fi
		done
		echo "# shared corpus: $found captures with BGP, RoCEv2 or MAC control"
	else
		echo "# SKIP (corpus): '$corpus' is absent" >&2
	fi
else
	echo "# SKIP (tshark): tshark not found; the TShark comparison did not run" >&2
fi

# --- decode --json carries the same fields as the records TShark agreed with --------
for b in bgp-erspan roce pfc-gre-teb control-truncated; do
	hs decode --json "$G/$b.pcap"
	cp "$tmp/out" "$tmp/$b.decode"
	hs $db --json -r "$G/$b.pcap" control limit 1000
	check "decode --json $b.pcap: ctl keys agree with control --json" \
		python3 - "$tmp/$b.decode" "$tmp/out" <<'PY'
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
recs = [r for l in open(sys.argv[2]) if l.startswith("{") for r in json.loads(l).get("messages", [])][::-1]
got = []
for f in frames:
    if "ctl" not in f:
        continue
    if f["ctl"] == "bgp":
        got += [("bgp", t) for t in f.get("bgp_types", [])]
    elif "ctl_error" not in f:
        if f["ctl"] == "roce":
            got.append(("roce", f["roce_opcode"], f["qp"], f["psn"], f.get("syndrome"), f.get("nak")))
        else:
            got.append(("pfc", f["pfc_opcode"], f.get("pfc_class_enable"), f["quanta"]))
want = []
for r in recs:
    if r["proto"] == "bgp":
        want.append(("bgp", r["bgp_type"]))
    elif r["proto"] == "roce":
        want.append(("roce", r["roce_opcode"], r["qp"], r["psn"], r.get("syndrome"), r.get("nak")))
    else:
        want.append(("pfc", r["pfc_opcode"], r.get("pfc_class_enable"), r["quanta"]))
sys.exit(0 if got == want and got else 1)
PY
done
errs=$(grep -o '"ctl_error":"[a-z-]*"' "$tmp/control-truncated.decode" | tr '\n' ' ')
check "decode --json: each cut message has its reason" \
	[ "$errs" = '"ctl_error":"truncated-bgp" "ctl_error":"bgp-split" "ctl_error":"truncated-aeth" "ctl_error":"truncated-mac-control" ' ]

# --- what the golden captures hold, checked on their own ----------------------------
hs $db --json -r "$G/roce-erspan.pcap" control
check "roce: seven records, newest first" json 'len(L) == 7 and L[0]["roce_op"] == "cnp" and L[-1]["roce_op"] == "rc-send-only"'
check "roce: a PSN sequence NAK on QP 0x34, PSN 1001" \
	json 'any(o.get("nak") == "psn-sequence-error" and o["qp"] == 0x34 and o["psn"] == 1001 for o in L)'
check "roce: an RNR NAK with its timer, a remote access NAK" \
	json 'any(o.get("ack") == "rnr-nak" and o["rnr_timer"] == 14 for o in L) and any(o.get("nak") == "remote-access-error" for o in L)'
check "roce: mirrored by 192.0.2.11" json 'all(o["switch"] == "192.0.2.11" for o in L)'

hs $db --json -r "$G/bgp.pcap" control bgp limit 3
check "control bgp limit 3: the three messages of the last segment" \
	json '[o["bgp_type"] for o in L] == ["route-refresh", "update", "keepalive"]'
check "bgp: plain SPAN copies have no switch" json 'all(o["switch"] is None for o in L)'
hs $db --json -r "$G/bgp.pcap" control
check "bgp: OPEN with AS 65001, four-octet AS, hold 90, id 10.0.0.1" \
	json 'any(o["bgp_type"] == "open" and o["as"] == 65001 and o["as4"] == 4200000001 and o["hold"] == 90 and o["bgp_id"] == "10.0.0.1" for o in L)'
check "bgp: NOTIFICATION cease / administrative shutdown" \
	json 'any(o["bgp_type"] == "notification" and (o["error_code"], o["error_subcode"]) == (6, 2) for o in L)'
check "bgp: UPDATE with one withdrawn and two announced prefixes" \
	json 'any(o["bgp_type"] == "update" and o["withdrawn"] == 1 and o["nlri"] == 2 for o in L)'

hs $db --json -r "$G/pfc-gre-teb.pcap" control pfc
check "pfc: PFC on priority 3 with 65535 quanta, then released, and a PAUSE" \
	json '[o["pfc_kind"] for o in L] == ["pause", "pfc", "pfc"] and L[2]["pfc_class_enable"] == 8 and L[2]["quanta"][3] == 65535 and L[0]["quanta"] == [4096]'

# switch names come from the topology
printf 'switch leaf1 role leaf mirror 192.0.2.11 loopback 10.254.0.1\nanalyzer 192.0.2.250\n' >"$tmp/t.topo"
hs $db --json -r "$G/pfc-erspan.pcap" --topo "$tmp/t.topo" control
check "pfc-erspan: the switch is named from the topology" \
	json 'len(L) == 3 and all(o["switch"] == "leaf1" for o in L)'
hs $db -r "$G/pfc-erspan.pcap" --topo "$tmp/t.topo" control
check "text: one line per record under a header" \
	sh -c "grep -c ' leaf1 .* pfc ' '$tmp/out' | grep -qx 3 && head -n 1 '$tmp/out' | grep -q '^time'"
check "text: the summary counts PAUSE and PFC" has "pfc: pause 1, pfc 2" "$tmp/out"

# filters: one protocol, since (capture time)
hs $db --json -r "$G/roce.pcap" control bgp
check "control bgp on a RoCEv2 capture lists nothing" json 'L == []'
hs $db --json -r "$G/roce.pcap" control since 2us
check "since 2us: the records within 2 us of the newest" json 'len(L) == 2'
hs $db -r "$G/roce.pcap" control roce limit 2
check "limit 2 of 7, counted" has "2 of 7 roce control records shown" "$tmp/out"
check "the summary counts acks, naks by code, RNR naks, CNPs" \
	has "roce: ack 1, rnr-nak 1, nak 2 (psn-sequence-error 1, remote-access-error 1), cnp 1" "$tmp/out"

# cut messages: counted by reason, never listed
hs $db -r "$G/control-truncated.pcap" control
check "truncated: only the whole KEEPALIVE is listed" \
	sh -c "grep -c ' bgp  *10\.0\.0\.1:179 > 10\.0\.0\.2:51000  keepalive' '$tmp/out' | grep -qx 1 && [ \$(grep -c ' bgp  *10\.' '$tmp/out') -eq 1 ]"
check "truncated: every reason counted" \
	has "undecoded: truncated-bgp 1, bgp-split 1, truncated-aeth 1, truncated-mac-control 1" "$tmp/out"

# a new capture starts a new log; nothing before any capture
hs $db -c "capture start $G/pfc.pcap; sleep 0.3; capture start $G/roce.pcap; sleep 0.3; control"
check "a second capture replaces the first one's records" \
	sh -c "grep -q 'seen: bgp 0, roce 7, pfc 0' '$tmp/out' && ! grep -q ' pfc .*quanta' '$tmp/out'"
hs $db control
check "control before any capture: nothing, status 0" \
	sh -c "[ $st -eq 0 ] && grep -q '^0 of 0 control records' '$tmp/out'"

# --- the history keeps every decoded message ----------------------------------------
hdb="--db $tmp/ctl.db"
: >"$tmp/ring.jsonl"
for b in bgp roce-erspan pfc-gre-teb control-truncated; do
	hs $hdb --json -r "$G/$b.pcap" control limit 1000000
	cat "$tmp/out" >>"$tmp/ring.jsonl"
done
hs $hdb --json history control limit 1000000
cp "$tmp/out" "$tmp/hist.jsonl"
hs $hdb --json sql 'select proto, count(*) as n from control group by proto'
cp "$tmp/out" "$tmp/sql.jsonl"
check "history control and sql count what control listed, by protocol" \
	python3 - "$tmp/ring.jsonl" "$tmp/hist.jsonl" "$tmp/sql.jsonl" <<'PY'
import collections, json, sys
def rows(p): # the rows of each document: messages, control, rows
    return [r for l in open(p) if l.startswith("{") for d in [json.loads(l)]
            for k in ("messages", "control", "rows") for r in d.get(k, [])]
ring = collections.Counter(o["proto"] for o in rows(sys.argv[1]) if "proto" in o)
hist = collections.Counter(o["proto"] for o in rows(sys.argv[2]))
sql = {o["proto"]: o["n"] for o in rows(sys.argv[3])}
print("# ring", dict(ring), "history", dict(hist), "sql", sql)
sys.exit(0 if ring == hist == sql and sorted(ring) == ["bgp", "pfc", "roce"] else 1)
PY
check "history control: kind, switch, endpoints and detail of the stored rows" \
	python3 - "$tmp/hist.jsonl" <<'PY'
import json, sys
L = [r for l in open(sys.argv[1]) if l.startswith("{") for r in json.loads(l).get("control", [])]
nak = [o for o in L if o["proto"] == "roce" and "psn-sequence-error" in o["detail"]]
pfc = [o for o in L if o["proto"] == "pfc" and o["kind"] == "pause"]
ka = [o for o in L if o["kind"] == "keepalive"]
ok = (len(nak) == 1 and nak[0]["switch"] == "192.0.2.11" and " psn 1001 " in nak[0]["detail"]
      and pfc and pfc[0]["src"] is None and pfc[0]["detail"] == "pause quanta 4096"
      and ka and ka[0]["switch"] is None and ka[0]["sport"] == 179
      and all(isinstance(o["ts_ns"], int) and o["session"] >= 1 for o in L))
sys.exit(0 if ok else 1)
PY
hs $hdb -r "$G/roce.pcap" control roce limit 1
line=$(grep ' roce ' "$tmp/out" | sed 's/.*4791  //')
hs $hdb history control limit 1
check "history control text: the detail is the line control prints" \
	sh -c "[ -n \"\$1\" ] && grep -qF -- \"\$1\" '$tmp/out'" sh "$line"
hs $hdb -r "$G/roce.pcap" --again capture status
check "capture status counts the control rows as written" \
	has "history        9 rows written, 0 not stored" "$tmp/out"

hs --db "$tmp/off.db" -c "set history off; capture start $G/bgp.pcap; sleep 0.3; control"
check "history off: control still lists the messages" has "seen: bgp 7" "$tmp/out"
check "history off: no history is made" [ ! -e "$tmp/off.db" ]
hs --db "$tmp/off.db" sql 'select count(*) from control'
check "history off: sql says there is none (status $st)" \
	sh -c "[ $st -eq 1 ] && grep -q \"no history at '$tmp/off.db'\" '$tmp/err'"

finish
