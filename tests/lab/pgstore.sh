#!/bin/bash
# pgstore: what the console keeps of the lab fabric in a history on
# PostgreSQL (a server of the test's own, share/lab/hs-pgserver): two
# counter snapshots read back with every switch's ports, and a probe run
# with each packet and its hops, as they are kept in SQLite.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope hs-snap
PGS=$top_srcdir/share/lab/hs-pgserver

st=0
url=$("$PGS" start "$LAB_STATE" 2>"$LAB_STATE/pg.err") || st=$?
if [ "$st" = 3 ]; then
	echo "SKIP: $TEST: no PostgreSQL server installed (apt-get install postgresql)" >&2
	exit 77
fi
[ "$st" = 0 ] || hard "cannot start a PostgreSQL server: $(cat "$LAB_STATE/pg.err")"
# the server goes before the lab's directory does
pg_cleanup() {
	local st=$?
	"$PGS" stop "$LAB_STATE" >/dev/null 2>&1 || true
	(exit "$st")
	lab_cleanup
}
trap pg_cleanup EXIT

# hs NAME COMMANDS: the console on the lab, its history on the server, JSON
hs() {
	local name=$1 st=0; shift
	"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$url" --json -c "$*" \
		>"$LAB_STATE/$name.json" 2>"$LAB_STATE/$name.err" </dev/null || st=$?
	[ "$st" = 0 ] || fail "$name: hopscope exited $st: $(head -c 600 "$LAB_STATE/$name.err")"
}
psql() { "$PGS" psql "$LAB_STATE" -qtA -c "$1"; }

lab up >/dev/null 2>&1 || fail "up failed"
h5=$(host_addr h5)
nsw=$(grep -c '^switch ' "$LAB_STATE/topo")

hs snap "snapshot take; snapshot take; snapshot list; snapshot show 1"
python3 - "$LAB_STATE/snap.json" "$nsw" <<'PY' || fail "snapshots: not read back as taken"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
nsw = int(sys.argv[2])
taken = [o for o in objs if "spread_ns" in o and "counters" not in o and "id" in o]
lists = [o for o in objs if "snapshots" in o]
shows = [o for o in objs if "counters" in o]
assert len(taken) == 2, "two snapshots taken, not %d" % len(taken)
assert lists and [s["id"] for s in lists[0]["snapshots"]] == [t["id"] for t in taken], lists
assert len(shows) == 1 and len({c["switch"] for c in shows[0]["counters"]}) == nsw, shows
assert len(shows[0]["counters"]) == taken[0]["ports"], (len(shows[0]["counters"]), taken[0])
print("snapshots: %d taken, listed, the first read back with %d ports of %d switches" % (
    len(taken), len(shows[0]["counters"]), nsw))
PY
[ "$(psql 'select count(*) from snapshot_counters')" -gt 0 ] || fail "no counters on the server"
ok "two snapshots kept on PostgreSQL and read back"

hs probe "probe > $h5:80 via leaf1,spine2,leaf3 count 5 interval 20ms --expect delivered; history probes"
python3 - "$LAB_STATE/probe.json" <<'PY' || fail "probes: not read back as sent"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
rows = [r for o in objs for v in o.values() if isinstance(v, list)
        for r in v if isinstance(r, dict) and "probe_id" in r]
assert len(rows) == 1 and rows[0]["packets"] == 5 and rows[0]["delivered"] == 5, rows
print("history probes: %s" % rows[0])
PY
[ "$(psql 'select count(*) from probes')" = 5 ] || fail "not 5 probe packets on the server"
[ "$(psql 'select count(*) from probe_hops')" = 15 ] || fail "not 15 probe hops on the server"
ok "a probe run of 5 packets kept on PostgreSQL with its 15 hops"
