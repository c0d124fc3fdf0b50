#!/bin/bash
# rates: Planck's rates in the lab. A bulk TCP flow from h1 to h8 over
# leaf1 > spine1 > leaf4, every packet of it mirrored, with leaf1 shaping
# what it sends to spine1 to RATE: 'rates' shows the flow and the link
# leaf1 > spine1 capped near RATE (and its utilization of the lab's nominal
# 1G), and an alert on the link fires once and is stored in the history.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
RATE=10mbit
RATE_BPS=10000000
lab_init
need_built hopscope hs-agent
command -v python3 >/dev/null 2>&1 || hard "python3 is missing (it sends the bulk flow)"

# the server and the sender end by themselves; killed early on failure
PIDS=""
rates_cleanup() {
	local st=$?
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	(exit "$st")
	lab_cleanup
}
trap rates_cleanup EXIT

lab up >/dev/null 2>&1 || fail "up failed"
grep -Eq '^link leaf1 spine1 spine1 leaf1 speed 1G$' "$LAB_STATE/topo" ||
	fail "the lab's topology gives leaf1-spine1 no speed: $(grep '^link' "$LAB_STATE/topo" | head -n 2)"
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

python3 - "$LAB_STATE/console.out" "$h1" "$h8" "$sport" "$RATE_BPS" <<'PY' || fail "rates or alerts wrong in the lab"
import json, re, sys
path, h1, h8, sport, rate = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
text = open(path).read()
objs = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
def die(msg):
    print("rates: " + msg)
    print(text[:1500])
    sys.exit(1)
reps = [o for o in objs if "flows" in o and "links" in o]
if not reps:
    die("no rates object")
rep = reps[0]
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
if not 0.5 * rate <= l["bps"] <= 1.3 * rate or l["speed"] != 1e9:
    die("leaf1 > spine1 carries %.0f bps (speed %s)" % (l["bps"], l["speed"]))
if abs(l["util"] - l["bps"] / 1e9) > 1e-9:
    die("util %s is not bps / 1G" % l["util"])
if rep["links"][0]["bps"] < l["bps"] * 0.99 or rep["flows"][0]["bps"] < f["bps"] * 0.99:
    die("not ranked highest first")
# the alerts on the shaped link fired once each, the one on the idle link not
fired = re.findall(r"^alert (\d+): (.*) \(([^)]*)\) at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6})$", text, re.M)
ids = sorted(int(i) for i, _, _, _ in fired)
if ids != [1, 2]:
    die("alerts fired: %s" % fired)
alerts = [o for o in objs if "state" in o]
if [a["fired"] for a in alerts] != [1, 1, 0]:
    die("alert list: %s" % alerts)
events = [o for o in objs if "cond" in o and "value" in o and "alert" in o]
if sorted(e["alert"] for e in events) != [1, 2]:
    die("history events: %s" % events)
ev = [e for e in events if e["alert"] == 1][0]
if not ev["value"] > 5e6 or not ev["ts"] > 1e9:
    die("event: %s" % ev)
print("rates: flow %.2f Mbit/s, leaf1 > spine1 %.2f Mbit/s (%.2f%% of 1G) with %s; alerts 1, 2 fired once and are in the history" % (
    f["bps"] / 1e6, l["bps"] / 1e6, 100 * l["util"], "tbf " + str(rate / 1e6) + "M"))
PY
ok "ratelimit leaf1-spine1 $RATE: rates caps the flow and the link near it, the link's alerts fire once"
lab fault clear >/dev/null
