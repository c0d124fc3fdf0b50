#!/bin/bash
# rates: Planck's rates in the lab, its links shaped to 1gbit (so the
# topology knows their speed).
# 1. A bulk TCP flow from h1 to h8 over leaf1 > spine1 > leaf4, every packet
#    of it mirrored, with leaf1 shaping what it sends to spine1 to RATE:
#    'rates' shows the flow and the link leaf1 > spine1 capped near RATE
#    (and its utilization of the 1gbit), and an alert on the link fires
#    once and is stored in the history.
# 2. Steady streaming traffic, one flow of FLOW_BPS from every host, every
#    packet mirrored: over the same interval, every link's load agrees with
#    the switches' port counters (snapshot diff) within a factor of 1.5,
#    and every streaming flow's rate is within 20% of FLOW_BPS.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
RATE=10mbit
RATE_BPS=10000000
FLOW_BPS=2000000
lab_init
need_built hopscope hs-agent
command -v python3 >/dev/null 2>&1 || hard "python3 is missing (it sends the bulk flow)"

# the server and the sender end by themselves; killed early on failure
PIDS=""
rates_cleanup() {
	local st=$?
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	# lab_cleanup reads the status from $?; under set -e a failing one
	# would end this handler before the fabric is taken down
	set +e
	(exit "$st")
	lab_cleanup
}
trap rates_cleanup EXIT

lab up --link-speed 1gbit >/dev/null 2>&1 || fail "up failed"
grep -Eq '^link leaf1 spine1 spine1 leaf1 speed 1gbit$' "$LAB_STATE/topo" ||
	fail "the lab's topology gives leaf1-spine1 no speed: $(grep '^link' "$LAB_STATE/topo" | head -n 2)"
tc -n hs-spine2 qdisc show dev leaf3 | grep -q 'tbf.*rate 1Gbit' ||
	fail "spine2 > leaf3 is not shaped to 1gbit: $(tc -n hs-spine2 qdisc show dev leaf3)"
h1=$(host_addr h1)
h8=$(host_addr h8)
map_addresses

# a source port whose flow h1 -> h8 crosses spine1 (ECMP hashes the 5-tuple)
sport=""
for p in $(seq 43000 43031); do
	path=$(on h1 trace "$h8" --tcp 5001 --sport "$p" | trace_path)
	if [ "$path" = "leaf1 spine1 leaf4 =$h8" ]; then
		sport=$p
		break
	fi
done
[ -n "$sport" ] || fail "no source port takes h1 -> h8 over spine1"

lab fault ratelimit leaf1-spine1 "$RATE" >/dev/null || fail "fault ratelimit failed"
ip netns exec hs-h8 "$TRAFFIC" serve --bind "$h8" --port 5001 --duration 40s \
	>"$LAB_STATE/serve.log" 2>&1 </dev/null &
PIDS+=" $!"
sleep 0.3
# as much as TCP will carry, for 14 s, from the chosen port
ip netns exec hs-h1 python3 - "$h1" "$sport" "$h8" 14 >"$LAB_STATE/send.log" 2>&1 </dev/null <<'PY' &
import socket, sys, time
src, sport, dst, secs = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((src, sport))
s.connect((dst, 5001))
buf = b"\0" * 65536
sent, end = 0, time.time() + secs
while time.time() < end:
    sent += s.send(buf)
s.close()
print("sent", sent)
PY
PIDS+=" $!"

st=0
"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/history.db" -c "
	mirror add flow tcp $h1:$sport $h8:5001
	alert add link leaf1-spine1 bps > 5M
	alert add 'link leaf1-spine1 util > 0.5%'
	alert add 'link leaf1-spine2 bps > 5M'
	sleep 9s
	rates window 2s --json
	alert list --json
	capture stop
	history events --json" >"$LAB_STATE/console.out" 2>"$LAB_STATE/console.err" </dev/null || st=$?
[ "$st" = 0 ] || fail "hopscope exited $st: $(head -c 600 "$LAB_STATE/console.err")"

# what both checks read: the console's JSON lines and its one rates object
cat >"$LAB_STATE/console_json.py" <<'PY'
import json, sys
def load(path):
    text = open(path).read()
    objs = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
    def die(msg):
        print("rates: " + msg)
        print(text[:3000])
        sys.exit(1)
    reps = [o for o in objs if "flows" in o and "links" in o]
    if not reps:
        die("no rates object")
    return text, objs, reps[0], die
PY

PYTHONPATH=$LAB_STATE python3 - "$LAB_STATE/console.out" "$h1" "$h8" "$sport" "$RATE_BPS" <<'PY' ||
import re, sys
from console_json import load
path, h1, h8, sport, rate = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
text, objs, rep, die = load(path)
fl = [f for f in rep["flows"] if f["src"] == h1 and f["dst"] == h8 and f["sport"] == sport]
if not fl:
    die("the bulk flow has no rate")
f = fl[0]
# capped near RATE: generous bounds, TCP over a token bucket
if not 0.5 * rate <= f["bps"] <= 1.3 * rate:
    die("the flow runs at %.0f bps, not near %.0f" % (f["bps"], rate))
if f["path"] != ["leaf1", "spine1", "leaf4"]:
    die("the flow's path is %s" % f["path"])
lk = [l for l in rep["links"] if l["a"] == "leaf1" and l["b"] == "spine1"]
if not lk:
    die("no load on leaf1 > spine1")
l = lk[0]
if not 0.5 * rate <= l["bps"] <= 1.3 * rate or l["speed"] != 1e9 or l["speed_source"] != "topology":
    die("leaf1 > spine1 carries %.0f bps (speed %s from %s)" % (l["bps"], l["speed"], l["speed_source"]))
if abs(l["util"] - l["bps"] / 1e9) > 1e-9:
    die("util %s is not bps / 1G" % l["util"])
if rep["links"][0]["bps"] < l["bps"] * 0.99 or rep["flows"][0]["bps"] < f["bps"] * 0.99:
    die("not ranked highest first")
# the alerts on the shaped link fired once each, the one on the idle link not
fired = re.findall(r"^alert (\d+): (.*) \(([^)]*)\) at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6})$", text, re.M)
ids = sorted(int(i) for i, _, _, _ in fired)
if ids != [1, 2]:
    die("alerts fired: %s" % fired)
alerts = [a for o in objs for a in o.get("alerts", [])]
if [a["fired"] for a in alerts] != [1, 1, 0]:
    die("alert list: %s" % alerts)
events = [e for o in objs for e in o.get("events", [])]
if sorted(e["alert"] for e in events) != [1, 2]:
    die("history events: %s" % events)
ev = [e for e in events if e["alert"] == 1][0]
if not ev["value"] > 5e6 or not ev["ts_ns"] > 1e18:
    die("event: %s" % ev)
print("rates: flow %.2f Mbit/s, leaf1 > spine1 %.2f Mbit/s (%.2f%% of 1G) with %s; alerts 1, 2 fired once and are in the history" % (
    f["bps"] / 1e6, l["bps"] / 1e6, 100 * l["util"], "tbf " + str(rate / 1e6) + "M"))
PY
	fail "rates or alerts wrong in the lab"
ok "ratelimit leaf1-spine1 $RATE: rates caps the flow and the link near it, the link's alerts fire once"
# the bulk flow ends here: the traffic of part 2 is all there is
for p in $PIDS; do kill "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
PIDS=""
lab fault clear >/dev/null
tc -n hs-leaf1 qdisc show dev spine1 | grep -q 'tbf.*rate 1Gbit' ||
	fail "clearing the rate limit did not shape leaf1 > spine1 back to 1gbit"

# --- 2. steady streaming traffic against the port counters -----------------------------
lab traffic start --flows 1 --flow-rate "$FLOW_BPS" --rate 2 --duration 20 >/dev/null ||
	fail "traffic start failed"
st=0
"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/steady.db" -c "
	mirror add flow tcp any any:5001
	sleep 2s
	snapshot take
	sleep 5s
	snapshot take
	rates window 5s limit 1000 --json
	snapshot diff 1 2 --json" >"$LAB_STATE/steady.out" 2>"$LAB_STATE/steady.err" </dev/null || st=$?
lab traffic stop >/dev/null
[ "$st" = 0 ] || fail "hopscope exited $st: $(head -c 600 "$LAB_STATE/steady.err")"

PYTHONPATH=$LAB_STATE python3 - "$LAB_STATE/steady.out" "$LAB_STATE/topo" "$FLOW_BPS" <<'PY' ||
import sys
from console_json import load
path, topo, want = sys.argv[1], sys.argv[2], float(sys.argv[3])
text, objs, rep, die = load(path)
switches = {l.split()[1] for l in open(topo) if l.startswith("switch ")}
# a directed link's truth: what switch a sent out of its port toward b
counters = {(o["switch"], o["port"]): o["tx_bps"] for d in objs for o in d.get("deltas", [])
            if o.get("switch") in switches and o.get("port") in switches}
if len(counters) < 8:
    die("snapshot diff gave %d switch-to-switch ports" % len(counters))
load = {(l["a"], l["b"]): l for l in rep["links"]}
bad, carrying = [], 0
for (a, b), truth in sorted(counters.items()):
    est = load[(a, b)]["bps"] if (a, b) in load else 0.0
    if truth < 1e6 and est < 1e6:
        continue	# acknowledgements and short connections only
    carrying += 1
    if not (truth / 1.5 <= est <= truth * 1.5):
        bad.append("%s > %s: rates %.2f Mbit/s, counters %.2f Mbit/s" % (a, b, est / 1e6, truth / 1e6))
    l = load.get((a, b))
    if l and (l["speed"] != 1e9 or l["speed_source"] != "topology" or abs(l["util"] - l["bps"] / 1e9) > 1e-9):
        bad.append("%s > %s: util %s of speed %s from %s" % (a, b, l["util"], l["speed"], l["speed_source"]))
if carrying < 4:
    die("only %d links carry traffic" % carrying)
if bad:
    die("; ".join(bad))
# the streaming flows: every flow with a rate that is not rough
rated = [f for f in rep["flows"] if f["bps"] is not None and not f["rough"] and f["dport"] == 5001]
if len(rated) < 4:
    die("%d streaming flows have a rate" % len(rated))
off = [f for f in rated if abs(f["bps"] - want) > 0.2 * want]
if off:
    die("flows not within 20%% of %.0f bps: %s" % (want, [(f["src"], f["sport"], f["bps"], f["samples"]) for f in off]))
if any(f["bps"] is not None for f in rep["flows"] if f["samples"] < 3):
    die("a flow with fewer than 3 samples has a rate")
print("rates: %d links within 1.5x of the port counters, %d flows within 20%% of %.1f Mbit/s" % (
    carrying, len(rated), want / 1e6))
PY
	fail "rates disagree with the port counters"
ok "steady traffic: link load agrees with the port counters, flow rates with the sender's"
