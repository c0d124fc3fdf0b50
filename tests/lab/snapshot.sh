#!/bin/bash
# snapshot: synchronized counter snapshots of the lab fabric. With traffic
# running, two snapshots a few seconds apart hold every switch of the
# topology with counters that moved, read within a small spread; their diff
# has an ECMP group per leaf over its two spine uplinks. Then leaf1's routes
# to the other leaves are pinned to spine1 alone, and the diff of the next
# two snapshots flags leaf1's group with nearly all bytes on spine1; a rate
# limit on that uplink shows as its qdisc backlog and drops.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope hs-snap
MAX_SPREAD_NS=50000000	# 50 ms: generous; the readers usually agree within a millisecond or two

# console NAME COMMANDS: run COMMANDS on the lab with JSON output
console() {
	local name=$1 cmds=$2 st=0
	"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/history.db" --json -c "$cmds" \
		>"$LAB_STATE/$name.out" 2>"$LAB_STATE/$name.err" </dev/null || st=$?
	[ "$st" = 0 ] || fail "$name: hopscope exited $st: $(head -c 600 "$LAB_STATE/$name.err")"
}

# judge.py KIND FILE TOPO: checks one console run's JSON documents
cat >"$LAB_STATE/judge.py" <<'PY'
import json, sys

kind, path, topo, max_spread = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
objs = [json.loads(l) for l in open(path) if l.strip().startswith("{")]
switches = [l.split()[1] for l in open(topo) if l.split()[:1] == ["switch"]]
leaves = [l.split()[1] for l in open(topo) if l.split()[:1] == ["subnet"]]

def die(msg):
    print("%s: %s" % (kind, msg))
    for o in objs[:8]:
        print("  %s" % json.dumps(o)[:400])
    sys.exit(1)

snaps = [o for o in objs if "spread_ns" in o and "counters" not in o]
shows = [o for o in objs if "counters" in o]
diffs = [o for o in objs if "deltas" in o]
groups = [g for o in diffs for g in o["ecmp_groups"]]
for g in groups:	# port name to neighbour and to share
    g["neighbours"] = {m["port"]: m["neighbour"] for m in g["members"]}
    g["members"] = {m["port"]: m["share"] for m in g["members"]}
if len(snaps) != 2:
    die("expected two snapshots taken, got %d" % len(snaps))
for s in snaps:
    if s["switches"] != len(switches):
        die("snapshot %d has %d switches, the topology %d" % (s["id"], s["switches"], len(switches)))
    if not isinstance(s["session"], int) or s["session"] < 1:
        die("snapshot %d is not tied to the running capture session" % s["id"])
    if not 0 <= s["spread_ns"] < max_spread:
        die("snapshot %d: spread %d ns is not below %d ns" % (s["id"], s["spread_ns"], max_spread))
    print("%s: snapshot %d: %d switches, %d ports, spread %.3f ms" % (
        kind, s["id"], s["switches"], s["ports"], s["spread_ns"] / 1e6))
if len(shows) != 1:
    die("expected one 'snapshot show'")
for sw in switches:
    ports = [c for c in shows[0]["counters"] if c["switch"] == sw]
    if not ports:
        die("switch %s is not in the snapshot" % sw)
    if not sum(c["rx_packets"] + c["tx_packets"] for c in ports):
        die("switch %s has only zero counters" % sw)
if len(diffs) != 1 or diffs[0]["interval_ns"] <= 0:
    die("no diff")
# every leaf's uplinks to both spines form one group
spines = sorted(s for s in switches if s not in leaves)
got = sorted(g["switch"] for g in groups)
if got != sorted(leaves):
    die("ECMP groups at %s, expected one per leaf %s" % (got, sorted(leaves)))
for g in groups:
    if sorted(g["neighbours"].values()) != spines or not g["complete"]:
        die("group of %s: members %s" % (g["switch"], g["neighbours"]))
    if abs(sum(g["members"].values()) - 1) > 1e-6:
        die("group of %s: shares %s do not sum to 1" % (g["switch"], g["members"]))
    print("%s: %s %s imbalance %.2f%s" % (kind, g["switch"],
          " ".join("%s=%.0f%%" % (k, 100 * v) for k, v in sorted(g["members"].items())),
          g["imbalance"], " FLAGGED" if g["flagged"] else ""))
leaf1 = [g for g in groups if g["switch"] == "leaf1"][0]
if kind in ("skewed", "queue"):
    if not leaf1["flagged"] or leaf1["members"]["spine2"] > 0.05:
        die("leaf1 pinned to spine1 is not flagged: %s" % json.dumps(leaf1))
if kind == "queue":
    port = [c for c in shows[0]["counters"] if c["switch"] == "leaf1" and c["port"] == "spine1"][0]
    delta = [o for o in diffs[0]["deltas"] if o["switch"] == "leaf1" and o["port"] == "spine1"][0]
    if port["backlog_bytes"] is None:
        die("leaf1's rate-limited port to spine1 shows no qdisc backlog: %s" % json.dumps(port))
    if not (port["backlog_bytes"] > 0 or delta["tx_drops"] > 0):
        die("leaf1's rate-limited port neither queues nor drops: %s" % json.dumps(delta))
    print("%s: leaf1 > spine1 backlog %d bytes, %d packets; %d drops, %.2f Mbit/s" % (
        kind, port["backlog_bytes"], port["backlog_packets"], delta["tx_drops"], delta["tx_bps"] / 1e6))
PY
judge() { python3 "$LAB_STATE/judge.py" "$1" "$LAB_STATE/$1.out" "$LAB_STATE/topo" "$MAX_SPREAD_NS"; }

lab up >/dev/null 2>&1 || fail "up failed"
lab traffic start --rate 20 --flows 4 --duration 60 >/dev/null || fail "traffic start failed"
sleep 2

console balanced "snapshot take; sleep 3s; snapshot take; snapshot show 2; snapshot diff 1 2"
judge balanced || fail "the snapshots of the running fabric are wrong"
ok "two snapshots: every switch, counters moving, spread below $((MAX_SPREAD_NS / 1000000)) ms, a group per leaf"

# pin leaf1's routes to the other leaves' subnets to spine1
for net in $(awk '$1 == "subnet" && $2 != "leaf1" { print $3 }' "$LAB_STATE/topo"); do
	via=$(ip -n hs-leaf1 route show "$net" | awk '$1 == "nexthop" && $5 == "spine1" { print $3; exit }')
	[ -n "$via" ] || fail "leaf1 has no multipath route to $net via spine1: $(ip -n hs-leaf1 route show "$net")"
	ip -n hs-leaf1 route replace "$net" via "$via" dev spine1 || fail "cannot pin $net to spine1"
done
ok "leaf1's routes to the other leaves go over spine1 only"

console skewed "snapshot take; sleep 3s; snapshot take; snapshot show 4; snapshot diff 3 4"
judge skewed || fail "the skewed ECMP group is not flagged"
ok "leaf1 pinned to spine1: snapshot diff flags its group"

# a rate limit on that uplink: a tbf qdisc whose backlog and drops show
lab fault ratelimit leaf1-spine1 2mbit >/dev/null || fail "fault ratelimit failed"
sleep 1
console queue "snapshot take; sleep 2s; snapshot take; snapshot show 6; snapshot diff 5 6"
judge queue || fail "the rate-limited port's queue is not in the snapshot"
ok "leaf1-spine1 rate limited: its qdisc backlog and drops are in the snapshot"

# a reader that fails in one switch fails the snapshot: one line, nothing stored
cat >"$LAB_STATE/bad-reader" <<'EOF'
#!/bin/sh
# reads like hs-snap, except in leaf2
case " $* " in *" --switch leaf2 "*) echo "hs-snap: cannot read the link counters: boom" >&2; exit 1 ;; esac
exec "$HS_SNAP_REAL" "$@"
EOF
chmod +x "$LAB_STATE/bad-reader"
st=0
HOPSCOPE_SNAP=$LAB_STATE/bad-reader HS_SNAP_REAL=$(cd "$top_builddir" && pwd)/hs-snap \
	"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/history.db" -c "snapshot take" \
	>"$LAB_STATE/bad.out" 2>"$LAB_STATE/bad.err" </dev/null || st=$?
[ "$st" != 0 ] || fail "a snapshot with a failed reader was accepted: $(cat "$LAB_STATE/bad.out")"
grep -q "error: cannot read switch 'leaf2': cannot read the link counters: boom" "$LAB_STATE/bad.err" ||
	fail "a failed reader's error: $(cat "$LAB_STATE/bad.err")"
n=$("$HOPSCOPE" --db "$LAB_STATE/history.db" --json -c "sql SELECT count(*) AS n FROM snapshots" </dev/null)
[ "$n" = '{"columns":["n"],"rows":[{"n":6}]}' ] || fail "a failed snapshot changed the history: $n, not 6 snapshots"
ok "a reader failing in leaf2 fails the snapshot with its error; nothing stored"

# dropped to nobody, the console asks the privileged helper to run the driver
st=0
HOPSCOPE_USER= "$HOPSCOPE" --lab --state "$LAB_STATE" -Z nobody --db "$LAB_STATE/nobody.db" --json \
	-c "snapshot take" >"$LAB_STATE/nobody.out" 2>"$LAB_STATE/nobody.err" </dev/null || st=$?
[ "$st" = 0 ] || fail "-Z nobody: snapshot take exited $st: $(head -c 600 "$LAB_STATE/nobody.err")"
python3 -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
n = sum(1 for l in open(sys.argv[2]) if l.split()[:1] == ["switch"])
sys.exit(0 if len(o) == 1 and o[0]["switches"] == n else 1)' "$LAB_STATE/nobody.out" "$LAB_STATE/topo" ||
	fail "-Z nobody: snapshot take did not read every switch: $(cat "$LAB_STATE/nobody.out")"
ok "dropped to nobody, snapshot take reads every switch through the privileged helper"
lab traffic stop >/dev/null 2>&1 || true
