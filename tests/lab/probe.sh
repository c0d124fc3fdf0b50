#!/bin/bash
# probe: guided probes in the lab fabric. A probe steered via leaf1,spine2,leaf3
# is seen at exactly those switches in that order, each at a time (its stamp
# of the probe's arrival, after the send) later than the one before; one injected at spine1 for
# a host behind leaf4 is delivered via leaf4; with spine2-leaf3 dropping half
# its packets, probes over that link are lost after spine2 at about that rate
# while probes over spine1 are not; 'probe link' reports a round-trip time;
# without privileges nothing is sent and the error says why.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope hs-agent

# check.py FILE SCENARIO [ARGS]: judge the probe's --json lines
cat >"$LAB_STATE/check.py" <<'PY'
import json, sys

path, scenario = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
pkts, summary = [], None
for line in open(path):
    line = line.strip()
    if not line.startswith("{"):
        continue
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if "seq" in o and "outcome" in o:
        pkts.append(o)
    elif "sent" in o:
        summary = o

def die(msg):
    print("check %s: %s" % (scenario, msg))
    sys.exit(1)

if summary is None:
    die("no summary among %d packet results" % len(pkts))
if len(pkts) != summary["sent"]:
    die("%d packet results for %d sent" % (len(pkts), summary["sent"]))
path_of = lambda p: [h["switch"] for h in p["hops"]]
count = int(args[0])
if summary["sent"] != count:
    die("sent %d, asked for %d" % (summary["sent"], count))

if scenario in ("via", "from", "spine1"):
    want = args[1].split(",")
    for p in pkts:
        if path_of(p) != want:
            die("seq %d went %s, not %s" % (p["seq"], ">".join(path_of(p)), ">".join(want)))
        if p["outcome"] != "delivered" or p["lost_after"] is not None:
            die("seq %d is %s" % (p["seq"], p["outcome"]))
        # each hop's time is its switch's stamp of the probe's arrival, on
        # the send's clock: known and in path order
        at = [h.get("at_ns") for h in p["hops"]]
        if None in at or any(b < a for a, b in zip(at, at[1:])):
            die("seq %d: hop times %s are not in path order" % (p["seq"], at))
    if summary["delivered"] != count or summary["lost"] != 0:
        die("summary %s" % summary)
    print("%s: %d probes went %s, all delivered" % (scenario, count, args[1]))
elif scenario == "drop":
    lost = [p for p in pkts if p["outcome"] != "delivered"]
    for p in lost:
        if p["outcome"] != "lost" or p["lost_after"] != "spine2" or path_of(p) != ["leaf1", "spine2"]:
            die("seq %d: %s after %s, went %s" % (p["seq"], p["outcome"], p["lost_after"],
                                                  ">".join(path_of(p))))
    for p in pkts:
        if p["outcome"] == "delivered" and path_of(p) != ["leaf1", "spine2", "leaf3"]:
            die("seq %d delivered over %s" % (p["seq"], ">".join(path_of(p))))
    rate = len(lost) / float(count)
    # 40 probes at 50%: 0.2..0.8 is more than four standard deviations
    if not 0.2 <= rate <= 0.8:
        die("%d of %d lost (%.0f%%), the link drops 50%%" % (len(lost), count, rate * 100))
    if summary["lost"] != len(lost):
        die("summary says %d lost, packets say %d" % (summary["lost"], len(lost)))
    print("drop: %d of %d lost after spine2" % (len(lost), count))
elif scenario == "link":
    for p in pkts:
        if path_of(p) != ["leaf1", "spine1", "leaf1"] or p["outcome"] != "delivered":
            die("seq %d went %s, %s" % (p["seq"], ">".join(path_of(p)), p["outcome"]))
        if p["rtt_ns"] is None or not 0 < p["rtt_ns"] < 10**9:
            die("seq %d rtt %s" % (p["seq"], p["rtt_ns"]))
    if summary["rtt_p50_ns"] is None or not 0 < summary["rtt_p50_ns"] <= summary["rtt_p99_ns"]:
        die("summary rtt %s / %s" % (summary["rtt_p50_ns"], summary["rtt_p99_ns"]))
    print("link: leaf1>spine1>leaf1 rtt p50 %dns p99 %dns" % (summary["rtt_p50_ns"], summary["rtt_p99_ns"]))
else:
    die("unknown scenario")
PY

# hs NAME STATUS COMMANDS (STATUS 0, or fail for any failure): run the console on the lab's mirror network
hs() {
	local name=$1 want=$2 st=0; shift 2
	"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/history.db" --json \
		-c "$*" >"$LAB_STATE/$name.json" 2>"$LAB_STATE/$name.err" \
		</dev/null || st=$?
	if [ "$want" = fail ]; then
		[ "$st" != 0 ] || fail "$name: hopscope succeeded"
	elif [ "$st" != "$want" ]; then
		fail "$name: hopscope exited $st, not $want: $(head -c 600 "$LAB_STATE/$name.err")"
	fi
}

check() {
	python3 "$LAB_STATE/check.py" "$LAB_STATE/$1.json" "$@" ||
		{ head -c 2000 "$LAB_STATE/$1.json" >&2; fail "$1: the probe results are wrong (see above)"; }
}

# no raw socket without privileges: an error, nothing sent, no crash
if command -v setpriv >/dev/null; then
	st=0
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$HOPSCOPE" --db /dev/null -c 'probe 10.255.0.254 > 10.1.3.10' 2>&1 </dev/null) || st=$?
	[ "$st" != 0 ] || fail "an unprivileged probe succeeded: $out"
	case $out in
	*"probe: cannot open raw socket: Operation not permitted (needs root or CAP_NET_RAW)"*) ;;
	*) fail "unprivileged probe: $out" ;;
	esac
	ok "without CAP_NET_RAW: refused with the reason"
fi

lab up >/dev/null 2>&1 || fail "up failed"
h5=$(host_addr h5)
h7=$(host_addr h7)
grep -q "^host h5 addr $h5 leaf leaf3\$" "$LAB_STATE/topo" || hard "h5 is not behind leaf3"
grep -q "^host h7 addr $h7 leaf leaf4\$" "$LAB_STATE/topo" || hard "h7 is not behind leaf4"

# a refused spec sends nothing and fails the runbook
hs badspec fail "probe > $h5 via leaf1,leaf9"
grep -q "probe: unknown switch 'leaf9'" "$LAB_STATE/badspec.err" || fail "badspec: $(cat "$LAB_STATE/badspec.err")"
ok "unknown switch refused"

hs via 0 "probe > $h5:80 via leaf1,spine2,leaf3 count 20 interval 20ms --expect delivered"
check via 20 leaf1,spine2,leaf3
ok "via leaf1,spine2,leaf3: seen at exactly those switches, in order, at increasing times"

hs from 0 "probe udp > $h7 from spine1 count 5 interval 50ms --expect delivered"
check from 5 spine1,leaf4
ok "from spine1 to a host behind leaf4: delivered via leaf4"

hs link 0 "probe link leaf1 spine1 count 5 interval 50ms --expect delivered"
check link 5
ok "probe link leaf1 spine1: round-trip time reported"

lab fault drop spine2-leaf3 50% >/dev/null || fail "fault drop failed"
hs drop 0 "probe udp > $h5 via leaf1,spine2,leaf3 count 40 interval 20ms"
check drop 40
hs spine1 0 "probe udp > $h5 via leaf1,spine1,leaf3 count 10 interval 20ms --expect delivered"
check spine1 10 leaf1,spine1,leaf3
lab fault clear >/dev/null
ok "drop 50% on spine2-leaf3: lost after spine2 at about that rate, not over spine1"

# the history keeps every probe packet and its hops
python3 - "$LAB_STATE/history.db" <<'PY' || fail "history: probes not stored"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = db.execute("SELECT count(*) FROM probes").fetchone()[0]
h = db.execute("SELECT count(*) FROM probe_hops").fetchone()[0]
kinds = dict(db.execute("SELECT kind, count(*) FROM probes GROUP BY kind").fetchall())
print("history: %d probe packets, %d hops, %s" % (n, h, kinds))
assert n == 20 + 5 + 5 + 40 + 10, n
assert kinds.get("link") == 5, kinds
assert h >= 20 * 3 + 5 * 2 + 5 * 3, h
PY
ok "history: probes and probe hops stored"

lab down >/dev/null || fail "down failed"
