#!/bin/sh
# snapshot.sh - snapshot take|list|show|diff against a stand-in driver
# (HOPSCOPE_DRIVER) that prints canned snapshots of the sample fabric: the
# console runs it with the right words, stores what it reads, lists, shows and
# diffs it (leaf1 sending 90% of its uplink bytes to spine1 is flagged); a
# driver that fails or prints a malformed snapshot leaves one error line and
# nothing stored.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is missing"
TOPO=$top_srcdir/share/sample/sample.topo
DB=$tmp/h.db
S="--db $DB --topo $TOPO"

# --- canned snapshots: every port of the sample fabric, one second apart --------
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
T = 1700000000 * 10**9
ports = [(s, p) for s in ("spine1", "spine2") for p in ("leaf1", "leaf2", "leaf3", "leaf4")]
for i in range(1, 5):
    ports += [("leaf%d" % i, "spine1"), ("leaf%d" % i, "spine2"),
              ("leaf%d" % i, "h%d" % (2 * i - 1)), ("leaf%d" % i, "h%d" % (2 * i))]
def snap(n, dt, sent):
    out = []
    for k, (s, p) in enumerate(ports):
        rd = T + dt + 1000 * k                  # 1 us apart: spread 23 us
        tx = sent(s, p)
        out.append({"switch": s, "port": p, "read_ns": rd, "rx_packets": tx // 1000,
                    "rx_bytes": tx, "rx_drops": 0, "tx_packets": tx // 1000, "tx_bytes": tx,
                    "tx_drops": 0, "backlog_bytes": 3000 if p == "h1" else None,
                    "backlog_packets": 2 if p == "h1" else None})
    doc = {"snapshot_ns": T + dt, "switches": 6, "ports": out}
    open("%s/%s" % (d, n), "w").write(json.dumps(doc) + "\n")
    return doc
snap("one", 0, lambda s, p: 10**6)
# one second later: 500 kB more everywhere, but leaf1 sends 900 kB / 100 kB
two = snap("two", 10**9, lambda s, p: 10**6 + (900000 if (s, p) == ("leaf1", "spine1") else
                                               100000 if (s, p) == ("leaf1", "spine2") else 500000))
# malformed: a port loses a counter; and an answer cut short
del two["ports"][5]["tx_drops"]
open(d + "/short-port", "w").write(json.dumps(two) + "\n")
text = open(d + "/one").read()
open(d + "/cut", "w").write(text[:len(text) // 2])
PY
cat >"$tmp/driver" <<'EOF'
#!/bin/sh
# a stand-in driver: records its arguments, prints $FAKE_SNAP, fails on request
echo "$*" >>"$FAKE_ARGS"
if [ -n "${FAKE_FAIL:-}" ]; then echo "driver: $FAKE_FAIL" >&2; exit 1; fi
cat "$FAKE_SNAP"
EOF
chmod +x "$tmp/driver"
HOPSCOPE_DRIVER=$tmp/driver FAKE_ARGS=$tmp/args
export HOPSCOPE_DRIVER FAKE_ARGS

json() { # json PYTHON-EXPR-ON-LINES: true when it holds for the JSON lines of $tmp/out
	python3 - "$tmp/out" "$1" <<'PY'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
stored() { # stored N: the history holds N snapshots and their 24 ports each
	hs --db "$DB" --json sql "SELECT (SELECT count(*) FROM snapshots) AS s, (SELECT count(*) FROM snapshot_counters) AS c"
	json "L == [{'columns': ['s', 'c'], 'rows': [{'s': $1, 'c': 24 * $1}]}]"
}

# --- take ------------------------------------------------------------------------
hs --db "$DB" snapshot take
check "take without a topology fails cleanly" failed_cleanly
check "take without a topology: one line that says what is missing" \
	sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q 'snapshot take needs the fabric' '$tmp/err'"
check "take without a topology does not run the driver" [ ! -e "$tmp/args" ]

FAKE_SNAP=$tmp/one hs $S snapshot take
check "take runs" [ "$st" -eq 0 ]
check "take: the driver is asked for a snapshot" sh -c "[ \"\$(cat '$tmp/args')\" = snapshot ]"
check "take reports id, switches, ports and spread" \
	has "^snapshot 1: 2023-11-14 22:13:20.000000, 6 switches, 24 ports, read within 23.0us" "$tmp/out"
check "take: nothing missing, nothing warned" [ ! -s "$tmp/err" ]
FAKE_SNAP=$tmp/two hs $S --json snapshot take
check "take --json: id, ts, spread_ns, switches, ports" \
	json 'L == [{"id": 2, "target_ns": 1700000001 * 10**9, "taken_ns": L[0]["taken_ns"], "switches": 6, "ports": 24, "spread_ns": 23000, "session": None}]'
check "both snapshots are stored with their ports" stored 2

# --- malformed output and failing drivers: one error line, nothing stored -------
FAKE_SNAP=$tmp/short-port hs $S snapshot take
check "a malformed port fails cleanly" failed_cleanly
check "a malformed port is named, with its switch and the driver's switches" \
	has "snapshot: bad answer from '$tmp/driver' (switches spine1,spine2,leaf1,leaf2,leaf3,leaf4): ports\\[5\\]: switch 'spine2' port 'leaf2': tx_drops: missing$" "$tmp/err"
check "a malformed port: one error line" [ "$(wc -l <"$tmp/err")" -eq 1 ]
check "a malformed snapshot is not stored" stored 2
FAKE_SNAP=$tmp/cut hs $S snapshot take
check "an answer cut short is refused" has "bad answer from .*: line 1 column [0-9]*: " "$tmp/err"
FAKE_SNAP=/dev/null hs $S snapshot take
check "no answer is refused" has "bad answer from .*: an empty answer" "$tmp/err"
FAKE_FAIL="cannot read switch 'leaf2': gone" FAKE_SNAP=$tmp/one hs $S snapshot take
check "a failing driver fails cleanly" failed_cleanly
check "a failing driver's message is shown" has "error: cannot read switch 'leaf2': gone" "$tmp/err"
HOPSCOPE_DRIVER=$tmp/nonexistent hs $S snapshot take
check "a missing driver is named" has "cannot run snapshot driver '$tmp/nonexistent'" "$tmp/err"
check "still two snapshots" stored 2

# a topology switch the snapshot lacks is warned about
printf 'switch extra role leaf mirror 10.255.0.9 loopback 10.254.0.9\n' >"$tmp/extra.topo"
cat "$TOPO" "$tmp/extra.topo" >"$tmp/big.topo"
FAKE_SNAP=$tmp/one hs --db "$tmp/other.db" --topo "$tmp/big.topo" snapshot take
check "a switch missing from the snapshot is warned about" \
	sh -c "[ '$st' -eq 0 ] && grep -q \"snapshot 1 has no counters of switch 'extra'\" '$tmp/err'"

# --- list, show ------------------------------------------------------------------
hs --db "$DB" snapshot list
check "list: one line per snapshot" sh -c "[ \$(grep -c '^snapshot [12]: ' '$tmp/out') -eq 2 ]"
hs --db "$DB" --json snapshot list
check "list --json" json '[o["id"] for o in L[0]["snapshots"]] == [1, 2] and all(o["switches"] == 6 and o["spread_ns"] == 23000 for o in L[0]["snapshots"])'
hs --db "$DB" snapshot show 2
check "show: a row per port" sh -c "[ \$(grep -c '^leaf[1-4] ' '$tmp/out') -eq 16 ]"
check "show: leaf1's uplink counters" \
	sh -c "grep -Eq '^leaf1 +spine1 +1900 +1900000 +0 +1900 +1900000 +0 +-$' '$tmp/out'"
check "show: the backlog where there is one" sh -c "grep -Eq '^leaf1 +h1 .* 3000$' '$tmp/out'"
hs --db "$DB" --json snapshot show 1
check "show --json: counters per switch and port" \
	json 'len(L) == 1 and L[0]["id"] == 1 and len(L[0]["counters"]) == 24 and L[0]["counters"][0]["switch"] == "spine1" and L[0]["counters"][0]["port"] == "leaf1" and L[0]["counters"][0]["tx_bytes"] == 1000000'
check "show --json: backlog null without a qdisc, a number with one" \
	json 'all((c["backlog_bytes"] == 3000) == (c["port"] == "h1") for c in L[0]["counters"]) and all(c["backlog_bytes"] is None for c in L[0]["counters"] if c["port"] != "h1")'
hs --db "$DB" snapshot show 9
check "show of a missing snapshot fails cleanly" sh -c "[ '$st' -ne 0 ] && grep -q 'no snapshot 9 in' '$tmp/err'"

# --- diff ------------------------------------------------------------------------
hs $S snapshot diff 1 2
check "diff runs" [ "$st" -eq 0 ]
check "diff: the interval and the groups" \
	has "^snapshot 1 to 2 over 1.000s: 24 ports, 4 ECMP groups, 1 flagged" "$tmp/out"
check "diff: per-port delta and rate" \
	sh -c "grep -Eq '^leaf1 +spine1 +900 +900000 +7.20 Mbit/s +900 +900000 +7.20 Mbit/s +0$' '$tmp/out'"
check "diff: leaf1's uplinks are flagged" \
	has "^leaf1 toward leaf2,leaf3,leaf4: 1000000 bytes sent, imbalance 0.80  FLAGGED" "$tmp/out"
check "diff: leaf2's are balanced" has "^leaf2 toward leaf1,leaf3,leaf4: 1000000 bytes sent, imbalance 0.00$" "$tmp/out"
hs $S --json snapshot diff 1 2
check "diff --json: the header" \
	json 'L[0]["a"] == 1 and L[0]["b"] == 2 and L[0]["interval_ns"] == 10**9 and L[0]["groups"] == 4 and L[0]["flagged"] == 1'
check "diff --json: a delta object per port" \
	json 'len(L[0]["deltas"]) == 24 and all(o["tx_bytes"] in (100000, 500000, 900000) for o in L[0]["deltas"])'
check "diff --json: groups with switch, members, imbalance, flagged" \
	json '[(o["switch"], {m["port"]: m["share"] for m in o["members"]}, round(o["imbalance"], 6), o["flagged"]) for o in L[0]["ecmp_groups"]] == [("leaf1", {"spine1": 0.9, "spine2": 0.1}, 0.8, True)] + [("leaf%d" % i, {"spine1": 0.5, "spine2": 0.5}, 0.0, False) for i in (2, 3, 4)]'
hs $S snapshot diff 1 2 --threshold 90%
check "diff --threshold raises the bar" has ", 0 flagged" "$tmp/out"
hs --db "$DB" snapshot diff 1 2
check "diff without a topology: deltas, and says why there are no groups" \
	sh -c "[ '$st' -eq 0 ] && grep -q 'no topology, so no ECMP groups' '$tmp/out' && ! grep -q toward '$tmp/out'"
hs --db "$DB" snapshot diff 2 1
check "diff of a newer to an older snapshot is refused" \
	sh -c "[ '$st' -ne 0 ] && grep -q 'snapshot 2 was not taken before snapshot 1' '$tmp/err'"

# --- the lab driver refuses what it cannot do, before reading anything ------------
DRIVER=$top_srcdir/share/lab/hs-driver-lab
drv() { # drv ARGS...: run the lab driver; status in $st, stderr in $tmp/err
	st=0
	HOPSCOPE_SNAP=$top_builddir/hs-snap "$DRIVER" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null || st=$?
}
mkdir -p "$tmp/nolab" "$tmp/ghost"
printf 'switch zzghost role leaf mirror 10.255.0.9 loopback 10.254.0.9\n' >"$tmp/ghost/topo"
drv --state "$tmp/nolab" snapshot --delay-ms 5
check "driver: a delay below 10 ms is refused" sh -c "[ $st -eq 2 ] && grep -q \"invalid delay '5'\" '$tmp/err'"
drv --state "$tmp/nolab" snapshot --delay-ms 1e3
check "driver: a delay that is not a number is refused" sh -c "[ $st -eq 2 ] && grep -q \"invalid delay '1e3'\" '$tmp/err'"
drv --state "$tmp/nolab" snapshot --now
check "driver: an unknown option is refused" sh -c "[ $st -eq 2 ] && grep -q \"unknown option '--now'\" '$tmp/err'"
drv --state "$tmp/nolab" snapshot
check "driver: no lab state, one clear line" \
	sh -c "[ $st -eq 2 ] && [ ! -s '$tmp/out' ] && grep -q \"no switches known in '$tmp/nolab'\" '$tmp/err'"
drv --state "$tmp/ghost" snapshot
check "driver: a switch without its namespace" \
	sh -c "[ $st -eq 1 ] && [ ! -s '$tmp/out' ] && grep -q \"switch 'zzghost' has no namespace 'hs-zzghost'\" '$tmp/err'"
st=0; HOPSCOPE_SNAP=$tmp/nonexistent "$DRIVER" --state "$tmp/ghost" snapshot >"$tmp/out" 2>"$tmp/err" || st=$?
check "driver: no reader, one clear line" sh -c "[ $st -eq 1 ] && grep -q \"no counter reader '$tmp/nonexistent'\" '$tmp/err'"

finish
