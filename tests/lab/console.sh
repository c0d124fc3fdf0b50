#!/bin/bash
# console: the console captures the lab's mirror network and joins the copies
# into traces: SYNs go leaf>spine>leaf and keep their spine per flow; a
# dropping link ends traces at the hop before it; a loop is called looped; a
# blackhole ends traces at its switch; a fat-tree path has five hops
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope hs-agent

# check.py FILE SCENARIO SRC DST DPORT: judge the traces --json documents
cat >"$LAB_STATE/check.py" <<'PY'
import json, sys

path, scenario, src, dst, dport = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
roles = {}
for line in open(sys.argv[6]):
    w = line.split()
    if len(w) >= 4 and w[0] == "switch":
        roles[w[1]] = w[3]

traces = []
for line in open(path):
    line = line.strip()
    if not line.startswith("{"):
        continue
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if isinstance(o.get("traces"), list):	# the document of 'traces'
        traces += o["traces"]

def die(msg):
    print("check %s: %s" % (scenario, msg))
    sys.exit(1)

fwd = [t for t in traces if t.get("proto") == "tcp" and t.get("src") == src
       and t.get("dst") == dst and t.get("dport") == dport]
if not fwd:
    die("no traces of %s -> %s:%d among %d traces" % (src, dst, dport, len(traces)))
path_of = lambda t: [h["switch"] for h in t["hops"]]
outcomes = {}
for t in fwd:
    outcomes[t["outcome"]] = outcomes.get(t["outcome"], 0) + 1
print("%s: %d traces of the flows, outcomes %s" % (scenario, len(fwd), outcomes))

if scenario == "normal":
    spines_of_flow = {}
    for t in fwd:
        p = path_of(t)
        if len(p) != 3 or p[0] != "leaf1" or p[2] != "leaf4" or roles.get(p[1]) != "spine":
            die("trace %s went %s, not leaf1>spine>leaf4" % (t["id"], ">".join(p)))
        if t["outcome"] != "delivered":
            die("trace %s is %s, not delivered" % (t["id"], t["outcome"]))
        ttls = [h["ttl"] for h in t["hops"]]
        if ttls != sorted(ttls, reverse=True) or len(set(ttls)) != len(ttls):
            die("trace %s hops are not in falling TTL order: %s" % (t["id"], ttls))
        spines_of_flow.setdefault(t["sport"], set()).add(p[1])
    for sport, s in spines_of_flow.items():
        if len(s) != 1:
            die("flow from port %d crossed %s" % (sport, sorted(s)))
    used = set().union(*spines_of_flow.values())
    if len(spines_of_flow) < 16:
        die("only %d flows traced" % len(spines_of_flow))
    if used != {"spine1", "spine2"}:
        die("%d flows all crossed %s" % (len(spines_of_flow), sorted(used)))
elif scenario == "drop":
    dropped = [t for t in fwd if t["outcome"] == "dropped"]
    if not dropped:
        die("no dropped traces")
    for t in dropped:
        if path_of(t) != ["leaf1"] or t.get("last") != "leaf1" or "spine1" not in t.get("expected_next", ""):
            die("dropped trace %s: path %s last %s next %s" % (t["id"], path_of(t), t.get("last"), t.get("expected_next")))
    for t in fwd:
        if "spine1" in path_of(t):
            die("trace %s crossed the dropping link: %s" % (t["id"], path_of(t)))
    if not any(t["outcome"] == "delivered" for t in fwd):
        die("no flow got through over spine2")
elif scenario == "blackhole":
    dropped = [t for t in fwd if t["outcome"] == "dropped"]
    if not dropped:
        die("no dropped traces")
    for t in dropped:
        if path_of(t) != ["leaf1", "spine1"] or t.get("last") != "spine1":
            die("dropped trace %s: path %s last %s" % (t["id"], path_of(t), t.get("last")))
    for t in fwd:
        p = path_of(t)
        if "spine1" in p and "leaf4" in p:
            die("trace %s got past the blackhole: %s" % (t["id"], p))
elif scenario == "loop":
    looped = [t for t in fwd if t["outcome"] == "looped"]
    if not looped:
        die("no looped traces")
    for t in looped:
        # the tracer keeps the first copies to arrive, and each agent sends
        # its own in a burst, so a kept path need not alternate; it must
        # stay on the way in and repeat a switch of the loop
        p = path_of(t)
        if not set(p) <= {"leaf1", "spine1", "spine2", "leaf4"}:
            die("looped trace %s left the way: %s" % (t["id"], p))
        if p.count("spine1") < 2 and p.count("leaf4") < 2:
            die("looped trace %s repeats no switch of the loop: %s" % (t["id"], p))
        if len(p) + t.get("extra_hops", 0) < 20:
            die("looped trace %s has only %d copies" % (t["id"], len(p) + t.get("extra_hops", 0)))
elif scenario == "fattree":
    for t in fwd:
        p = path_of(t)
        r = [roles.get(s) for s in p]
        if r != ["leaf", "agg", "core", "agg", "leaf"] or t["outcome"] != "delivered":
            die("trace %s went %s (%s), %s" % (t["id"], ">".join(p), r, t["outcome"]))
else:
    die("unknown scenario")
PY

# capture SECONDS while running a command, then list the traces as JSON
capture() {
	local secs=$1 name=$2; shift 2
	local out=$LAB_STATE/$name.json st=0
	# --lab captures on the lab's bridge from the start
	"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/history.db" --json \
		-c "sleep ${secs}s; capture stop; traces limit 5000" \
		>"$out" 2>"$LAB_STATE/$name.err" </dev/null &
	local pid=$!
	sleep 1
	"$@" >/dev/null || true
	wait "$pid" || st=$?
	[ "$st" = 0 ] || fail "hopscope exited $st: $(head -c 600 "$LAB_STATE/$name.err")"
}

check() {	# scenario src dst dport
	python3 "$LAB_STATE/check.py" "$LAB_STATE/$1.json" "$1" "$2" "$3" "$4" "$LAB_STATE/topo" ||
		fail "$1: the traces are wrong (see above)"
}

lab up >/dev/null 2>&1 || fail "up failed"
h1=$(host_addr h1); h8=$(host_addr h8)

capture 4 normal flows h1 h8 5101 24
check normal "$h1" "$h8" 5101
ok "SYNs traced leaf1>spine>leaf4, delivered, one spine per flow, both spines used"

lab fault drop leaf1-spine1 100% >/dev/null
capture 5 drop flows h1 h8 5102 16
check drop "$h1" "$h8" 5102
lab fault clear >/dev/null
ok "drop on leaf1-spine1: traces end at leaf1 as dropped, expected next spine1"

lab fault blackhole spine1 10.1.4.0/24 >/dev/null
capture 5 blackhole flows h1 h8 5103 16
check blackhole "$h1" "$h8" 5103
lab fault clear >/dev/null
ok "blackhole at spine1: traces end at spine1 as dropped"

lab fault loop spine1 leaf4 10.1.4.0/24 >/dev/null
capture 3 loop flows h1 h8 5104 4
check loop "$h1" "$h8" 5104
lab fault clear >/dev/null
ok "loop spine1<>leaf4: traces are looped"

lab down >/dev/null || fail "down failed"
lab up --shape fattree:4 >/dev/null 2>&1 || fail "up --shape fattree:4 failed"
capture 4 fattree flows h1 h16 5105 12
check fattree "$(host_addr h1)" "$(host_addr h16)" 5105
ok "fat-tree: traces across pods have five hops edge>agg>core>agg>edge"
