#!/bin/bash
# traceroute: 007's path discovery in the lab. A host opens a TCP flow (its
# SYNs are mirrored, so the console has the flow's own traces); the console's
# 'traceroute' then sends the flow's 5-tuple with TTL 1, 2, ... from the
# analyzer and must find the same switches, in the same order, as the flow's
# traces - the spine ECMP chose included.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope

lab up >/dev/null || fail "lab up failed"
h1=$(host_addr h1)
h8=$(host_addr h8)
out=$LAB_STATE/tr.json

for sport in 40123 40124; do
	# the console captures; meanwhile h1 opens the flow
	"$HOPSCOPE" --db "$LAB_STATE/h.db" --lab --state "$LAB_STATE" --json \
		-c "sleep 2; traceroute $h1:$sport > $h8:5001 max-ttl 6" >"$out" 2>"$LAB_STATE/err" &
	pid=$!
	sleep 1
	on h1 trace "$h8" --tcp 5001 --sport "$sport" --max-ttl 4 --timeout 300ms >/dev/null || true
	wait "$pid" || { cat "$LAB_STATE/err" >&2; fail "traceroute exited non-zero"; }

	python3 - "$out" <<'PY' || fail "traceroute of port $sport disagrees with the flow's traces"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
tr = [o for o in objs if "traceroute" in o]
if not tr:
    print("no traceroute object in", objs); sys.exit(1)
t = tr[-1]
path = [h["switch"] for h in t["path"]]
print("traceroute path", path, "flow traces", t.get("flow_traces"), "same", t.get("same_path"))
ok = (t.get("reached") and len(path) == 3 and path[0] == "leaf1" and path[-1] == "leaf4"
      and path[1].startswith("spine") and t.get("flow_traces", 0) > 0 and t.get("same_path") is True)
sys.exit(0 if ok else 1)
PY
	ok "traceroute of $h1:$sport > $h8:5001 matches the flow's own traces"
done
echo "1..2"
