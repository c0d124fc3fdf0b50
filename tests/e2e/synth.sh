#!/bin/sh
# synth.sh - a capture made by hs-synth reads back as the traffic that was
# generated: every original packet becomes one trace with the hops it took
# (leaf > spine > leaf), its per-hop times and the outcome hs-synth planted
# (delivered, dropped on the lossy link with the switch expected next, looped,
# expired when a small TTL ran out on the way);
# the history then holds the flows and the anomalous traces.
#
# The generator is deterministic: the same seed makes the same bytes.
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
HS=$top_builddir/hopscope
SYNTH=$top_builddir/tests/tools/hs-synth
SYNTH_ARGS="--flows 80 --seed 1 --mss 200 --drop-link leaf1-spine2:0.25 --loop spine1-leaf3:h8"

for f in "$HS" "$SYNTH"; do
	if [ ! -x "$f" ]; then
		echo "SKIP: $f is not built"
		exit 77
	fi
done
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-synth.XXXXXX")
PCAP=$tmp/synth.pcap
TOPO=$tmp/synth.topo
trap 'rm -rf "$tmp"' EXIT INT TERM

fails=0
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { # check DESCRIPTION COMMAND...
	d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

# --- the generator is deterministic --------------------------------------------
# shellcheck disable=SC2086
"$SYNTH" $SYNTH_ARGS -w "$PCAP" -t "$TOPO" --truth "$tmp/truth" 2>"$tmp/synth.err"
check "hs-synth runs" [ $? -eq 0 ]
# shellcheck disable=SC2086
"$SYNTH" $SYNTH_ARGS -w "$tmp/again.pcap" -t "$tmp/again.topo" 2>>"$tmp/synth.err"
check "the same seed makes the same capture" cmp -s "$tmp/again.pcap" "$PCAP"
check "the same seed makes the same topology" cmp -s "$tmp/again.topo" "$TOPO"

# --- the console reads it back ------------------------------------------------
db=$tmp/h.db
timeout 120 "$HS" --db "$db" -r "$PCAP" --topo "$TOPO" -c 'traces --json limit 100000' \
	>"$tmp/traces" 2>"$tmp/err" </dev/null
st=$?
check "hopscope reads the generated capture (status $st)" [ "$st" -eq 0 ]
[ "$st" -eq 0 ] || sed 's/^/# /' "$tmp/err"

# compare every trace with what the generator says happened
python3 - "$tmp/truth" "$tmp/traces" "$db" >"$tmp/cmp" 2>&1 <<'EOF'
import json, sqlite3, sys

truth_path, traces_path, db_path = sys.argv[1:4]
MAX_HOPS = 16
truth = [json.loads(l) for l in open(truth_path)]
traces = []
for line in open(traces_path):
    line = line.strip()
    if line.startswith("{"):
        traces += json.loads(line)["traces"]

def key(d):
    return (d["src"], d["sport"], d["dst"], d["dport"], d["ip_id"])

def report(ok, what):
    print(("ok " if ok else "not ok ") + what)

by_key = {}
for t in traces:
    by_key.setdefault(key(t), []).append(t)
report(len(traces) == len(truth), "one trace per packet (%d traces, %d packets)" % (len(traces), len(truth)))
report(all(len(v) == 1 for v in by_key.values()), "no packet split over two traces")

bad = {"missing": 0, "outcome": 0, "path": 0, "ttl": 0, "times": 0, "next": 0}
first_bad = {}
for p in truth:
    got = by_key.get(key(p))
    if not got:
        bad["missing"] += 1
        first_bad.setdefault("missing", p)
        continue
    t = got[0]
    if t["outcome"] != p["outcome"]:
        bad["outcome"] += 1
        first_bad.setdefault("outcome", (p, t["outcome"]))
    names = [h["switch"] for h in t["hops"]]
    if names != p["path"][:MAX_HOPS]:
        bad["path"] += 1
        first_bad.setdefault("path", (p["path"][:MAX_HOPS], names))
    ttls = [h["ttl"] for h in t["hops"]]
    if ttls != list(range(64, 64 - len(ttls), -1)):
        bad["ttl"] += 1
        first_bad.setdefault("ttl", ttls)
    # per-hop times: every hop has a time, later hops of a path come later
    for i, h in enumerate(t["hops"]):
        if h["ts_ns"] <= 0 or (i > 0 and h.get("latency_ns", 0) <= 0):
            bad["times"] += 1
            first_bad.setdefault("times", t["hops"])
            break
    if p["outcome"] == "dropped":
        nxt = t.get("expected_next", [])
        if t.get("last") != p["path"][-1] or p["lost_to"] not in nxt:
            bad["next"] += 1
            first_bad.setdefault("next", (p, t.get("last"), nxt))
for k, v in bad.items():
    report(v == 0, "%s: %d of %d packets wrong%s" % (k, v, len(truth),
           (" (first: %r)" % (first_bad[k],)) if v else ""))

outcomes = {o: sum(1 for p in truth if p["outcome"] == o) for o in ("delivered", "dropped", "looped")}
report(all(outcomes.values()), "the capture has every outcome: %r" % outcomes)
paths = {tuple(h["switch"] for h in t["hops"]) for t in traces if t["outcome"] == "delivered"}
report(any(len(p) == 3 and p[0].startswith("leaf") and p[1].startswith("spine") and p[2].startswith("leaf")
           for p in paths), "delivered traces go leaf > spine > leaf")

# the history: flows and the anomalous traces with their hops
db = sqlite3.connect("file:" + db_path + "?mode=ro", uri=True)
one = lambda q: db.execute(q).fetchone()[0]
flows = {(p["src"], p["sport"], p["dst"], p["dport"]) for p in truth}
report(one("select count(*) from flows") == len(flows),
       "history holds every flow (%d, expected %d)" % (one("select count(*) from flows"), len(flows)))
report(one("select sum(packets) from flows") == len(truth), "flow packet counts add up to the packets")
report(one("select sum(syn) from flows") == sum(1 for p in truth if p["tcp_flags"] & 2),
       "flow SYN counts add up")
for o in ("dropped", "looped"):
    n = one("select count(*) from traces where outcome = '%s'" % o)
    report(n == outcomes[o], "history holds the %s traces (%d, expected %d)" % (o, n, outcomes[o]))
report(one("select count(*) from traces t where nhops != (select count(*) from hops h where h.trace = t.id)") == 0,
       "stored traces have their hops")
row = db.execute("select t.last_switch, t.expected_next, h.switch from traces t join hops h on h.trace = t.id"
                 " where t.outcome = 'dropped' and h.idx = t.nhops - 1 limit 1").fetchone()
report(row is not None and row[0] == row[2] and row[1], "a stored dropped trace names its last switch and the next: %r" % (row,))
EOF
if [ -s "$tmp/cmp" ]; then
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok }" ;;
		"not ok "*) not_ok "${line#not ok }" ;;
		*) not_ok "checker: $line" ;;
		esac
	done <"$tmp/cmp"
else
	not_ok "the checker printed nothing"
fi

# --- a loop needs no topology -------------------------------------------------
# the same mirror address twice, at a lower TTL the second time, is a loop
looped=$(grep -c '"outcome":"looped"' "$tmp/truth")
timeout 120 "$HS" --db "$tmp/notopo.db" -r "$PCAP" \
	-c 'traces outcome looped --json limit 100000; loops' >"$tmp/notopo" 2>"$tmp/err" </dev/null
check "without the topology the $looped looped packets are looped traces" \
	[ "$(grep -o '"outcome":"looped"' "$tmp/notopo" | wc -l)" -eq "$looped" ]
check "without the topology 'loops' lists them, by mirror address" \
	grep -q "^$looped looped of [0-9]* traces, 1 cycle$" "$tmp/notopo"

# --- a TTL that runs out on a loop-free path is no loop -------------------------
# packets sent with a small TTL (a traceroute's) expire on the way: the
# truth calls them expired, as 'drops' counts them, and none looped
"$SYNTH" --ttl 2 --packets 300 --seed 3 -w "$tmp/ttl.pcap" -t "$tmp/ttl.topo" \
	--truth "$tmp/ttl.truth" 2>>"$tmp/synth.err"
check "hs-synth --ttl 2 runs" [ $? -eq 0 ]
expired=$(grep -c '"outcome":"expired"' "$tmp/ttl.truth")
sent=$(wc -l <"$tmp/ttl.truth")
check "--ttl 2: the truth calls every packet expired ($expired of $sent), none looped" \
	eval '[ "$expired" -gt 0 ] && [ "$expired" -eq "$sent" ]'
timeout 120 "$HS" --db "$tmp/ttl.db" -r "$tmp/ttl.pcap" --topo "$tmp/ttl.topo" \
	-c 'drops --json; traces outcome looped --json' >"$tmp/ttl.out" 2>"$tmp/err" </dev/null
check "--ttl 2: 'drops' counts as expired what the truth does, and no trace is looped" \
	python3 - "$tmp/ttl.out" "$tmp/ttl.truth" <<'PY'
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
truth = [json.loads(l) for l in open(sys.argv[2])]
d = [x for x in docs if isinstance(x, dict) and "expired" in x][0]
want = sum(1 for p in truth if p["outcome"] == "expired")
looped = [x for x in docs if isinstance(x, list) or (isinstance(x, dict) and x.get("outcome") == "looped")]
looped = sum(len(x) if isinstance(x, list) else 1 for x in looped)
print("# expired %d (truth %d), dropped %d, looped traces %d" % (d["expired"], want, d["dropped"], looped))
sys.exit(0 if d["expired"] == want and d["dropped"] == 0 and looped == 0 else 1)
PY

echo "1..$n"
[ "$fails" -eq 0 ]
