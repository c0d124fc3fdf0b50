#!/bin/sh
# rates.sh - Planck's rates and alerts on a capture with known rates
# (tests/tools/hs-ratecap): flow A at 40 Mbit/s over leaf1 > spine1 > leaf2
# across the sequence wrap with a few retransmissions, flow B at 10 Mbit/s
# over leaf1 > spine2 > leaf2, flow C dropped after leaf1 20 times a second.
# rates --json gives those figures, link sums and utilization where the
# topology has a speed; alerts added in a runbook fire once, print above
# the prompt and land in the history's events table; the topology's speed
# is shown by topo show, and files without it still load.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is missing"
RATECAP=$top_builddir/tests/tools/hs-ratecap
[ -x "$RATECAP" ] || hard "'$RATECAP' is not built"
"$RATECAP" "$tmp/r.pcap" || hard "hs-ratecap failed"
cat >"$tmp/r.topo" <<'EOF'
switch spine1 role spine mirror 10.255.0.1 loopback 10.254.0.1
switch spine2 role spine mirror 10.255.0.2 loopback 10.254.0.2
switch leaf1 role leaf mirror 10.255.0.3 loopback 10.254.0.3
switch leaf2 role leaf mirror 10.255.0.4 loopback 10.254.0.4
link leaf1 spine1 spine1 leaf1 speed 100M
link leaf1 spine2 spine2 leaf1
link leaf2 spine1 spine1 leaf2 speed 1G
link leaf2 spine2 spine2 leaf2 speed 1gbit
subnet leaf1 10.1.1.0/24
subnet leaf2 10.1.2.0/24
analyzer 10.255.0.254
EOF
S="--db $tmp/h.db --topo $tmp/r.topo"

json() { # json PYTHON-EXPR: true when it holds for L, the JSON documents of $tmp/out (one a line), and R, the rows of the first
	python3 - "$tmp/out" "$1" <<'PY'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
R = L[0].get("rows", []) if L and isinstance(L[0], dict) else []
def flow(o, sport): return [f for f in o["flows"] if f["sport"] == sport][0]
def link(o, a, b): return [l for l in o["links"] if l["a"] == a and l["b"] == b][0]
near = lambda x, want, tol=0.02: abs(x - want) <= tol * want
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

# --- rates --------------------------------------------------------------------
hs $S -r "$tmp/r.pcap" --json rates
check "rates --json runs" [ "$st" -eq 0 ]
check "rates: one object, three flows with a rate" json 'len(L) == 1 and len(L[0]["flows"]) == 3'
check "rates: flow A at 40 Mbit/s across the sequence wrap" \
	json 'near(flow(L[0], 40000)["bps"], 40e6) and flow(L[0], 40000)["src"] == "10.1.1.11" and flow(L[0], 40000)["dst"] == "10.1.2.11" and flow(L[0], 40000)["dport"] == 5001'
check "rates: flow B at 10 Mbit/s" json 'near(flow(L[0], 40001)["bps"], 10e6)'
check "rates: A's late segments are retransmissions, B has none" \
	json 'flow(L[0], 40000)["retx"] == 6 and flow(L[0], 40001)["retx"] == 0'
check "rates: flows ranked highest first" \
	json 'all(a["bps"] >= b["bps"] for a, b in zip(L[0]["flows"], L[0]["flows"][1:])) and L[0]["flows"][0]["sport"] == 40000'
check "rates: A's path from its traces" json 'flow(L[0], 40000)["path"] == ["leaf1", "spine1", "leaf2"]'
check "rates: leaf1 > spine1 carries A, 40% of its 100M" \
	json 'near(link(L[0], "leaf1", "spine1")["bps"], 40e6) and near(link(L[0], "leaf1", "spine1")["util"], 0.4) and link(L[0], "leaf1", "spine1")["flows"] == 1'
check "rates: spine1 > leaf2 is 4% of 1G" json 'near(link(L[0], "spine1", "leaf2")["util"], 0.04)'
check "rates: leaf1 > spine2 has no speed, so no util" \
	json 'near(link(L[0], "leaf1", "spine2")["bps"], 10e6) and link(L[0], "leaf1", "spine2")["util"] is None and link(L[0], "leaf1", "spine2")["speed"] is None'
check "rates: only the four directed links that carry flows, highest first" \
	json 'len(L[0]["links"]) == 4 and all(a["bps"] >= b["bps"] for a, b in zip(L[0]["links"], L[0]["links"][1:]))'
check "rates: 20 drops a second" json 'near(L[0]["drops_per_sec"], 20, 0.1)'
check "rates: the speed is the topology's, and none is assumed" \
	json 'link(L[0], "leaf1", "spine1")["speed_source"] == "topology" and link(L[0], "leaf1", "spine2")["speed_source"] is None'
check "rates: each figure says how many samples in the window it rests on" \
	json 'flow(L[0], 40000)["samples"] >= 10 and not flow(L[0], 40000)["rough"] and link(L[0], "leaf1", "spine1")["samples"] == flow(L[0], 40000)["samples"] and not link(L[0], "leaf1", "spine1")["rough"]'

hs $S -r "$tmp/r.pcap" -c 'rates limit 1 window 500ms'
check "rates text: the top flow and its rate" \
	sh -c "grep -Eq '^10\.1\.1\.11:40000 > 10\.1\.2\.11:5001 +40\.0M ' '$tmp/out'"
check "rates text: limit 1 says what it left out" has "(1 of 3 flows; rates limit N)" "$tmp/out"
check "rates text: the top link with its util" \
	sh -c "grep -Eq '^leaf1 > spine1 +(39\.[5-9]|40\.0)M +(39\.[5-9]|40\.0)% +100M +topology +1 +[0-9]+$' '$tmp/out'"
check "rates text: window 500ms" has "rates over 500.000ms to 2023-11-14 22:13:23\." "$tmp/out"

hs --db "$tmp/s.db" -r "$top_srcdir/share/sample/sample.pcap" --topo "$top_srcdir/share/sample/sample.topo" -c 'rates'
check "rates on flows seen at SYN and FIN: no rate, and the load says what it counts" \
	sh -c "grep -Eq '^10\.1\.[0-9.]+:[0-9]+ > 10\.1\.[0-9.]+:5001 +n/a +1025 +2 +0$' '$tmp/out' && grep -q '^link load: the bytes between samples inside the window' '$tmp/out'"

hs --db "$tmp/e.db" -c 'rates'
check "rates before any sample says where rates come from" has "no TCP samples yet" "$tmp/out"

# --- alerts in a runbook ------------------------------------------------------------
cat >"$tmp/rb.hs" <<EOF
alert add link leaf1-spine1 util > 30%
alert add 'link leaf1-spine2 bps > 20M'
alert add drops > 5/s
alert add flow 10.1.1.12 > 10.1.2.12:5001 bps > 5M
alert add retx > 100/s
capture start $tmp/r.pcap
alert list
EOF
hs --db "$tmp/ev.db" --topo "$tmp/r.topo" -f "$tmp/rb.hs"
check "runbook with alerts runs" [ "$st" -eq 0 ]
# the load is the bytes of the last second: 40% of 100M passes 30% once
# three quarters of the first second are in the window
check "alert 1 fired once as the window filled, with the value and capture time" \
	sh -c "[ \$(grep -c '^alert 1: ' '$tmp/out') -eq 1 ] && grep -Eq '^alert 1: link leaf1-spine1 util > 30% \(3[0-3]\.[0-9]%\) at 2023-11-14 22:13:20\.(7[5-9]|8)' '$tmp/out'"
check "the flow alert fired once" \
	sh -c "[ \$(grep -c '^alert 4: flow 10.1.1.12 > 10.1.2.12:5001 bps > 5M (10.0M)' '$tmp/out') -eq 1 ]"
check "the drops alert fired once" sh -c "[ \$(grep -c '^alert 3: drops > 5/s' '$tmp/out') -eq 1 ]"
check "alerts whose condition stayed false did not fire" \
	sh -c "! grep -Eq '^alert (2|5):' '$tmp/out'"
check "alert list: states and counts" \
	sh -c "grep -Eq '^ +1 firing +1 +40\.0% +link leaf1-spine1 util > 30%$' '$tmp/out' && grep -Eq '^ +2 armed +0 +(9\.9[0-9]|10\.0)M +link leaf1-spine2 bps > 20M$' '$tmp/out'"

hs --db "$tmp/ev2.db" --topo "$tmp/r.topo" --json -f "$tmp/rb.hs"
check "with --json, a runbook's alerts are JSON lines among its output" \
	json '[(o["alert"], o["cond"]) for o in L if o.get("event") == "alert"] == [(4, "flow 10.1.1.12 > 10.1.2.12:5001 bps > 5M"), (3, "drops > 5/s"), (1, "link leaf1-spine1 util > 30%")] and 30 < [o for o in L if o.get("event")][2]["value"] < 34 and 1700000000 * 10**9 <= [o for o in L if o.get("event")][2]["ts_ns"] < 1700000001 * 10**9'
check "with --json, no alert text on standard error" sh -c "! grep -q '^alert' '$tmp/err'"
hs --db "$tmp/ev.db" --json -c "sql 'select session, ts, alert, cond, value from events order by id'"
check "events: one row per firing, in the history" json 'len(L[0]["rows"]) == 3 and [o["alert"] for o in L[0]["rows"]] == [4, 3, 1]'
check "events: capture time of the sample, condition and measured value" \
	json 'R[2]["ts"] >= 1700000000 * 10**9 and R[2]["ts"] < 1700000001 * 10**9 and R[2]["cond"] == "link leaf1-spine1 util > 30%" and 30 < R[2]["value"] < 34 and R[2]["session"] == 1'
hs --db "$tmp/ev.db" -c 'history events'
check "history events lists them" \
	sh -c "grep -Eq '^[0-9]+ +1 +2023-11-14 22:13:20\.[0-9]{6} +1 +link leaf1-spine1 util > 30% +3[0-3]' '$tmp/out'"

# re-armed when the condition goes false: the file read twice gives a second firing
cat >"$tmp/rb2.hs" <<EOF
alert add link leaf1-spine1 bps > 30M
capture start $tmp/r.pcap
capture start $tmp/r.pcap
alert list --json
EOF
hs --db "$tmp/h2.db" --topo "$tmp/r.topo" -f "$tmp/rb2.hs"
check "an alert fires again in a new capture (re-armed)" \
	sh -c "[ \$(grep -c '^alert 1: link leaf1-spine1 bps > 30M' '$tmp/out') -eq 2 ]"

# --- alert add / list / del ------------------------------------------------------------
hs $S --json -c "alert add link leaf1-spine1 util > 80%; alert add 'drops > 10/s'; alert del 1; alert list"
check "alert add/del/list --json" \
	json 'L[0] == {"id": 1, "cond": "link leaf1-spine1 util > 80%"} and L[2] == {"id": 1, "deleted": True} and len(L) == 4 and [a["id"] for a in L[3]["alerts"]] == [2] and L[3]["alerts"][0]["state"] == "armed" and L[3]["alerts"][0]["value"] is None'
hs $S -c "alert add drops > 10/s; alert add 'link leaf1-spine1 util > 80x'; alert list" --keep-going
check "a bad condition adds nothing" \
	sh -c "grep -q \"bad threshold '80x' at column 26\" '$tmp/err' && [ \$(grep -c 'drops > 10/s' '$tmp/out') -eq 2 ] && ! grep -q '80x' '$tmp/out'"

# --- topology speed --------------------------------------------------------------------
hs --db "$tmp/t.db" --topo "$tmp/r.topo" --json -c 'topo show'
check "topo show --json: speed in bits per second, null without" \
	json '[l["speed"] for l in L[0]["links"]] == [100e6, None, 1e9, 1e9]'
hs --db "$tmp/t.db" --topo "$tmp/r.topo" -c 'topo show'
check "topo show: a speed column" sh -c "grep -Eq '^leaf1 +spine1 +spine1 +leaf1 +100M$' '$tmp/out' && grep -Eq '^leaf1 +spine2 +spine2 +leaf1 +-$' '$tmp/out'"
hs --db "$tmp/t.db" --topo "$top_srcdir/share/sample/sample.topo" --json -c 'topo show'
check "a topology without speeds still loads" json 'len(L[0]["links"]) == 8'

finish
