#!/bin/bash
# stats: on the live lab, with leaf1 dropping half of what it sends to
# spine2, 'stats by switch' prints per-second rows for the fabric's switches
# as the windows close, and the drops it counts fall on leaf1 (the last
# switch the lost packets were seen at), as many as the dropped traces whose
# last hop falls in those windows; 'export ndjson' streams the live traces
# and 'export pcap' says a live capture keeps no packets.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope hs-agent

lab up >/dev/null 2>&1 || fail "up failed"
lab traffic start --rate 20 --flows 0 --duration 30 >/dev/null || fail "traffic start failed"
lab fault drop leaf1-spine2 50% >/dev/null || fail "fault drop failed"

st=0
"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/history.db" \
	-c "sleep 2s; stats by switch window 1s for 8s --json; capture stop; traces outcome dropped limit 100000 --json; export ndjson $LAB_STATE/live.ndjson; export pcap $LAB_STATE/live.pcapng" \
	>"$LAB_STATE/stats.out" 2>"$LAB_STATE/stats.err" </dev/null || st=$?
# the last line fails on purpose: a live capture cannot be exported as pcap
[ "$st" = 1 ] || fail "hopscope exited $st: $(head -c 600 "$LAB_STATE/stats.err")"
grep -q "export pcap: the packets of live capture" "$LAB_STATE/stats.err" ||
	fail "export pcap on a live capture: $(head -c 300 "$LAB_STATE/stats.err")"
[ ! -e "$LAB_STATE/live.pcapng" ] || fail "export pcap on a live capture left a file"
if grep -q "not counted\|printed early" "$LAB_STATE/stats.err"; then
	fail "stats lost records: $(grep warning "$LAB_STATE/stats.err" | head -n 3)"
fi

python3 - "$LAB_STATE/stats.out" "$LAB_STATE/live.ndjson" <<'PY' || fail "stats on the live lab"
import collections, json, sys
rows, dropped = [], []
for line in open(sys.argv[1]):
    if not line.startswith("{"):	# the text of verbs without --json
        continue
    o = json.loads(line)
    if "window_start_ns" in o:	# stats streams a row a line
        rows.append(o)
    if isinstance(o.get("traces"), list):	# the document of 'traces'
        dropped += [t for t in o["traces"] if t["outcome"] == "dropped"]
def die(msg):
    print("stats: " + msg)
    for r in rows[:8]:
        print("  %s" % json.dumps(r))
    sys.exit(1)
if not rows:
    die("no rows")
starts = sorted({r["window_start_ns"] for r in rows})
if not 6 <= len(starts) <= 10:
    die("%d windows in 8 s" % len(starts))
if any(s % 10**9 for s in starts):
    die("windows not on whole seconds: %s" % starts[:3])
switches = {r["switch"] for r in rows}
if len(switches) < 4 or not all(s.startswith(("leaf", "spine")) for s in switches):
    die("switches %s" % sorted(switches))
drops = collections.Counter()
for r in rows:
    drops[r["switch"]] += r["drops"]
if drops["leaf1"] < 1 or max(drops, key=drops.get) != "leaf1":
    die("drops by switch %s" % dict(drops))
# the dropped traces whose last hop falls in the windows printed as they
# closed (the last three went out when 'for' ended, before all their traces
# could close)
lo, hi = starts[0], starts[-1] + (1 - 3) * 10**9
closed = sum(r["drops"] for r in rows if r["window_start_ns"] < hi)
inwin = [t for t in dropped if lo <= t["hops"][-1]["ts_ns"] < hi]
if closed != len(inwin) or closed == 0:
    die("%d drops, %d dropped traces end in the windows" % (closed, len(inwin)))
kinds = collections.Counter(json.loads(l)["type"] for l in open(sys.argv[2]))
if kinds["trace"] < 10 or kinds["packet"] < kinds["trace"]:
    die("export ndjson of the live traces: %s" % dict(kinds))
print("stats: %d windows, switches %s, drops %s; export: %s" % (
    len(starts), sorted(switches), dict(+drops), dict(kinds)))
PY
ok "stats by switch on the live lab: windows on whole seconds, drops on leaf1 as many as the dropped traces"
lab fault clear >/dev/null
lab traffic stop >/dev/null 2>&1 || true
