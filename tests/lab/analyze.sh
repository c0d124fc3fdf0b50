#!/bin/bash
# analyze: each analysis finds the fault it is for in the lab. With leaf1
# dropping half of what it sends to spine2, 'drops' and 'blame' put the
# leaf1-spine2 link first; with spine1 and leaf3 looping a host route,
# 'loops' names both switches.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope hs-agent

# console SECONDS NAME COMMANDS: capture the lab for SECONDS, then run COMMANDS
console() {
	local secs=$1 name=$2 cmds=$3 st=0
	"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/history.db" \
		-c "sleep ${secs}s; capture stop; $cmds" \
		>"$LAB_STATE/$name.out" 2>"$LAB_STATE/$name.err" </dev/null || st=$?
	[ "$st" = 0 ] || fail "$name: hopscope exited $st: $(head -c 600 "$LAB_STATE/$name.err")"
}

# judge.py FILE KIND: the first row of KIND's document names the faulty pair
cat >"$LAB_STATE/judge.py" <<'PY'
import json, sys

path, kind = sys.argv[1], sys.argv[2]
objs = []
for line in open(path):
    line = line.strip()
    if line.startswith("{"):
        objs.append(json.loads(line))

def die(msg):
    print("%s: %s" % (kind, msg))
    for o in objs[:6]:
        print("  %s" % json.dumps(o)[:300])
    sys.exit(1)

if kind == "drops":
    links = [l for o in objs if "dropped" in o for l in o["links"]]
    if not links:
        die("no dropped traces grouped by link")
    top = links[0]
    if (top["a"], top["b"]) != ("leaf1", "spine2"):
        die("first link is %s > %s, not leaf1 > spine2" % (top["a"], top["b"]))
    if top["drops"] < 1 or top["flows"] < 2:
        die("leaf1 > spine2 has %d drops of %d flows" % (top["drops"], top["flows"]))
    if "via leaf1,spine2" not in top["probe"]:
        die("the probe does not go over the link: %s" % top["probe"])
    print("drops: leaf1 > spine2 first, %d drops (%d ambiguous) of %d flows, %s, %s" % (
        top["drops"], top["ambiguous"], top["flows"], top["when"], top["scope"]))
elif kind == "blame":
    links = [l for o in objs for e in o.get("epochs", []) for l in e["links"]]
    if not links:
        die("no link above the noise")
    top = links[0]
    if sorted((top["a"], top["b"])) != ["leaf1", "spine2"]:
        die("first link is %s - %s, not leaf1 - spine2" % (top["a"], top["b"]))
    if not top["reported"] or top["flows"] < 2:
        die("leaf1 - spine2 not reported or voted by %d flows" % top["flows"])
    print("blame: leaf1 - spine2 first with %.2f votes from %d flows (%.0f%% of the votes)" % (
        top["votes"], top["flows"], 100 * top["share"]))
elif kind == "loops":
    loops = [l for o in objs for l in o.get("loops", [])]
    if not loops:
        die("no loop")
    if sorted(loops[0]["switches"]) != ["leaf3", "spine1"]:
        die("the first cycle is %s" % loops[0]["switches"])
    print("loops: cycle %s, %d traces" % (" > ".join(loops[0]["switches"]), loops[0]["traces"]))
PY

lab up >/dev/null 2>&1 || fail "up failed"
lab traffic start --rate 20 --flows 0 --duration 40 >/dev/null || fail "traffic start failed"

lab fault drop leaf1-spine2 50% >/dev/null || fail "fault drop failed"
console 12 drop "drops --json; blame --json --epoch 10m"
python3 "$LAB_STATE/judge.py" "$LAB_STATE/drop.out" drops || fail "drops missed the lossy link"
python3 "$LAB_STATE/judge.py" "$LAB_STATE/drop.out" blame || fail "blame missed the lossy link"
"$HOPSCOPE" --db "$LAB_STATE/history.db" --json sql "SELECT a, b, votes FROM blame" \
	</dev/null >"$LAB_STATE/stored" 2>&1 || fail "sql on the history failed: $(head -c 300 "$LAB_STATE/stored")"
grep -Eq '"a":"(leaf1|spine2)","b":"(leaf1|spine2)"' "$LAB_STATE/stored" ||
	fail "blame kept no leaf1-spine2 row in the history: $(head -c 300 "$LAB_STATE/stored")"
ok "drop leaf1-spine2 50%: drops and blame put leaf1-spine2 first; blame is in the history"
lab fault clear >/dev/null

lab fault loop spine1 leaf3 10.1.3.12/32 >/dev/null || fail "fault loop failed"
console 4 loop "loops --json"
python3 "$LAB_STATE/judge.py" "$LAB_STATE/loop.out" loops || fail "loops missed the loop"
ok "loop spine1 leaf3: loops names both switches"
lab fault clear >/dev/null
lab traffic stop >/dev/null 2>&1 || true
