#!/bin/sh
# stats.sh - 'stats' over the bundled sample and a synthetic capture, checked
# against counts made without hopscope: tshark's per-switch frame counts and
# inner IP lengths (with the same filter), hs-synth's own account of every
# copy and drop; window alignment, the key cap, text beside JSON, the history
# left alone; and over a live capture on the loopback interface when root.
. "$(dirname "$0")/lib.sh"

PCAP=$top_srcdir/share/sample/sample.pcap
TOPO=$top_srcdir/share/sample/sample.topo
SYNTH=$top_builddir/tests/tools/hs-synth
command -v python3 >/dev/null 2>&1 || skip "python3 is missing"
command -v tshark >/dev/null 2>&1 || skip "tshark is missing"
[ -x "$SYNTH" ] || hard "'$SYNTH' is not built"

# --- the sample, by switch, against tshark ------------------------------------------
hs --topo "$TOPO" --json -c "stats by switch window 500ms file $PCAP"
check "stats by switch over the sample (status $st)" [ "$st" -eq 0 ]
cp "$tmp/out" "$tmp/by-switch.json"
# per mirror source: frames, and the inner IP length (the last ip.len of a frame)
tshark -r "$PCAP" -T fields -E separator=/t -e ip.src -e ip.len 2>/dev/null >"$tmp/tshark.all"
tshark -r "$PCAP" -Y 'tcp.flags.syn == 1 && !icmp' -T fields -E separator=/t -e ip.src \
	-e ip.len 2>/dev/null >"$tmp/tshark.syn"

compare() { # compare STATS_JSON TSHARK_FIELDS WINDOW_NS
	python3 - "$TOPO" "$@" <<'PY'
import collections, json, sys
topo, stats, fields, window = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
name = {}
for line in open(topo):
    w = line.split()
    if w[:1] == ["switch"]:
        name[w[w.index("mirror") + 1]] = w[1]
want_p, want_b = collections.Counter(), collections.Counter()
for line in open(fields):
    src, lens = line.rstrip("\n").split("\t")
    sw = name[src.split(",")[0]]
    want_p[sw] += 1
    want_b[sw] += int(lens.split(",")[-1])
got_p, got_b = collections.Counter(), collections.Counter()
seen = set()
bad = []
for line in open(stats):
    o = json.loads(line)
    for k in ("window_start_ns", "switch", "packets", "bytes", "flows", "drops"):
        if k not in o:
            bad.append("row without %s: %s" % (k, line.strip()))
    ns = start = o["window_start_ns"]
    if ns % window:
        bad.append("window_start %s is not a multiple of the window" % start)
    if (ns, o["switch"]) in seen:
        bad.append("two rows for %s in window %s" % (o["switch"], start))
    seen.add((ns, o["switch"]))
    if not 0 < o["flows"] <= o["packets"]:
        bad.append("flows %d for %d packets" % (o["flows"], o["packets"]))
    got_p[o["switch"]] += o["packets"]
    got_b[o["switch"]] += o["bytes"]
if got_p != want_p:
    bad.append("packets %s, tshark %s" % (sorted(got_p.items()), sorted(want_p.items())))
if got_b != want_b:
    bad.append("bytes %s, tshark %s" % (sorted(got_b.items()), sorted(want_b.items())))
for b in bad[:5]:
    print("#   " + b)
sys.exit(1 if bad else 0)
PY
}
check "per-switch packets and bytes equal tshark's, windows aligned on 500ms" \
	compare "$tmp/by-switch.json" "$tmp/tshark.all" 500000000
total=$(python3 -c 'import json,sys; print(sum(json.loads(l)["packets"] for l in open(sys.argv[1])))' "$tmp/by-switch.json")
check "every frame of the sample counted ($total)" [ "$total" -eq 6741 ]

between() { [ "$1" -gt "$2" ] && [ "$1" -lt "$3" ]; }
hs --topo "$TOPO" --json -c "stats by switch window 1s where tcp[tcpflags] & tcp-syn != 0 file $PCAP"
check "stats ... where tcp[tcpflags] & tcp-syn != 0 (status $st)" [ "$st" -eq 0 ]
cp "$tmp/out" "$tmp/where.json"
check "with a filter: per-switch counts equal tshark's with the same filter" \
	compare "$tmp/where.json" "$tmp/tshark.syn" 1000000000
nsyn=$(wc -l <"$tmp/tshark.syn")
check "the filter kept some and left some ($nsyn of 6741)" between "$nsyn" 0 6741

# drops: the dropped traces the console finds in the same file
hs -r "$PCAP" --topo "$TOPO" --json -c 'traces outcome dropped limit 100000'
ndropped=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["traces"]))' "$tmp/out")
drops=$(python3 -c 'import json,sys; print(sum(json.loads(l)["drops"] for l in open(sys.argv[1])))' "$tmp/by-switch.json")
same_pos() { [ "$1" -eq "$2" ] && [ "$1" -gt 0 ]; }
check "drops equal the dropped traces ($drops, traces: $ndropped)" same_pos "$drops" "$ndropped"
python3 - "$tmp/out" "$tmp/by-switch.json" >"$tmp/cmp" <<'PY'
import collections, json, sys
want = collections.Counter(t["last"] for t in json.load(open(sys.argv[1]))["traces"])
got = collections.Counter()
for l in open(sys.argv[2]):
    o = json.loads(l)
    got[o["switch"]] += o["drops"]
got = +got
print("ok" if got == want else "#   stats %s, traces %s" % (sorted(got.items()), sorted(want.items())))
PY
check "drops count for the last switch of each dropped trace" grep -q '^ok$' "$tmp/cmp"
grep '^#' "$tmp/cmp"

# --- text and JSON agree; flows by flow --------------------------------------------------
hs --topo "$TOPO" -c "stats by switch window 500ms file $PCAP"
check "text output: a header" has '^window_start *switch *packets *bytes *flows *drops$' "$tmp/out"
check "text output: one line per JSON row" \
	[ "$(($(wc -l <"$tmp/out") - 1))" -eq "$(wc -l <"$tmp/by-switch.json")" ]
check "text output: switches by name" has ' leaf1 ' "$tmp/out"

hs --json -c "stats by flow window 10s file $PCAP"
python3 - "$tmp/out" >"$tmp/cmp" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
bad = [r for r in rows if r["flows"] != 1 or not all(k in r for k in ("src", "dst", "proto", "sport", "dport"))]
print("ok %d" % len(rows) if rows and not bad else "#   %s" % bad[:2])
PY
check "by flow: each row is one 5-tuple with one flow" grep -q '^ok' "$tmp/cmp"
nflows=$(sed 's/ok //' "$tmp/cmp")

# --- no row in any window: said in one line; in JSON an empty array -------------------------
hs --topo "$TOPO" -c "stats by switch where udp port 9 file $PCAP"
check "no copy counted: text says so in one line (status $st)" \
	eval '[ "$st" -eq 0 ] && [ "$(cat "$tmp/out")" = "(no rows: no copy was counted in any window)" ]'
hs --topo "$TOPO" --json -c "stats by switch where udp port 9 file $PCAP"
check "no copy counted: JSON is one empty answer (status $st)" \
	eval '[ "$st" -eq 0 ] && [ "$(cat "$tmp/out")" = "{\"rows\":[]}" ]'

# --- the key cap ----------------------------------------------------------------------------
hs --json -c "stats by flow window 10s keys 5 file $PCAP"
check "keys 5 (status $st)" [ "$st" -eq 0 ]
python3 - "$tmp/out" >"$tmp/cmp" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keyed = [r for r in rows if not r.get("other")]
other = [r for r in rows if r.get("other")]
ok = len(keyed) == 5 and len(other) == 1 and rows[-1].get("other") and \
     sum(r["packets"] for r in rows) == 6741 and "src" not in other[0]
print("ok" if ok else "#   %d keyed, %d other, %d packets" % (len(keyed), len(other), sum(r["packets"] for r in rows)))
PY
check "keys 5: five keys, then one 'other' row, totals unchanged ($nflows flows in all)" \
	grep -q '^ok$' "$tmp/cmp"
check "keys 5: what did not fit is reported" has "beyond 5 keys" "$tmp/err"

# --- a file leaves the console alone -----------------------------------------------------------
db=$tmp/h.db
hs --db "$db" -r "$PCAP" --topo "$TOPO" -c 'capture status'
before=$(cksum <"$db")
# a console with no traces of its own lists the history's: those, and no more
hs --db "$db" --topo "$TOPO" --json -c "traces limit 100000"
grep '"outcome"' "$tmp/out" >"$tmp/stored.traces"
hs --db "$db" --topo "$TOPO" --json -c "stats by switch file $PCAP; traces limit 100000; capture status"
check "stats over a file: no new traces in the console, only the history's" \
	eval '[ -s "$tmp/stored.traces" ] && grep "\"outcome\"" "$tmp/out" | cmp -s - "$tmp/stored.traces"'
check "stats over a file: the history is byte-identical" [ "$(cksum <"$db")" = "$before" ]

# --- a synthetic capture: every copy and drop hs-synth made ---------------------------------------
"$SYNTH" --flows 60 --seed 7 --mss 300 --drop-link leaf1-spine2:0.3 --drop-link spine1-leaf4:0.2 \
	-w "$tmp/s.pcap" -t "$tmp/s.topo" --truth "$tmp/s.truth" 2>"$tmp/synth.err" ||
	hard "hs-synth failed: $(cat "$tmp/synth.err")"
hs --topo "$tmp/s.topo" --json -c "stats by switch,dport window 250ms file $tmp/s.pcap"
check "stats over the synthetic capture (status $st)" [ "$st" -eq 0 ]
python3 - "$tmp/s.truth" "$tmp/out" >"$tmp/cmp" <<'PY'
import collections, json, sys
wp, wd = collections.Counter(), collections.Counter()
for l in open(sys.argv[1]):
    o = json.loads(l)
    for s in o["path"]:
        wp[(s, o["dport"])] += 1
    if o["outcome"] == "dropped":
        wd[(o["path"][-1], o["dport"])] += 1
gp, gd = collections.Counter(), collections.Counter()
for l in open(sys.argv[2]):
    o = json.loads(l)
    gp[(o["switch"], o["dport"])] += o["packets"]
    gd[(o["switch"], o["dport"])] += o["drops"]
gd = +gd
ok = gp == wp and gd == wd and sum(wd.values()) > 0
print("ok %d %d" % (sum(gp.values()), sum(gd.values())) if ok else
      "#   packets %s / %s, drops %s / %s" % (sum(gp.values()), sum(wp.values()), sorted(gd.items())[:4], sorted(wd.items())[:4]))
PY
check "synthetic: packets and drops per (switch, dport) are hs-synth's: $(head -c 40 "$tmp/cmp")" \
	grep -q '^ok' "$tmp/cmp"

# --- the running capture: the loopback interface, when root ------------------------------------------
if [ "$(id -u)" -ne 0 ]; then
	echo "# SKIP live part: capturing on 'lo' needs root"
else
	port=$((20000 + $$ % 20000))
	# paced: the capture ring on lo is small
	lo_send "$port" 1 40 0.02 x 20
	first=$sender
	lo_send "$((port + 1))" 1 25 0.02 y 20
	hs --db "$tmp/live.db" --json -c "capture start lo; capture status; stats by dport,proto window 1s where udp and (dst port $port or dst port $((port + 1))) for 8s; capture stop"
	wait "$first" "$sender"
	check "live: stats on 'lo' for 8s (status $st)" [ "$st" -eq 0 ]
	python3 - "$tmp/out" "$port" >"$tmp/cmp" <<'PY'
import collections, json, sys
port = int(sys.argv[2])
got = collections.Counter()
for l in open(sys.argv[1]):
    o = json.loads(l)
    if "dport" in o:
        got[o["dport"]] += o["packets"]
        assert o["proto"] == "udp" and o["bytes"] == 48 * o["packets"], o
print("ok" if got == {port: 40, port + 1: 25} else "#   %s" % dict(got))
PY
	check "live: every datagram sent counted, by port (40 and 25)" grep -q '^ok$' "$tmp/cmp"
	grep '^#' "$tmp/cmp"
	hs --db "$tmp/live.db" --json -c "capture start lo; stats by switch where udp dst port 9 and src port 9 for 1s; capture stop"
	check "live: no copy counted, the empty answer (status $st)" \
		eval '[ "$st" -eq 0 ] && [ "$(head -n 1 "$tmp/out")" = "{\"rows\":[]}" ]'

	# in the REPL under a terminal: windows print above the prompt as they
	# close, the prompt comes back when 'for' ends, Ctrl-C ends it early
	if ! command -v tmux >/dev/null 2>&1; then
		echo "# SKIP REPL part: tmux is not installed"
	else
		term_start 150 40 \
			"env TERM=screen-256color '$HS' --db '$tmp/repl.db'; sleep 30"
		check "REPL: the prompt comes up" wait_for 'hopscope>'
		$T send-keys -t hs "capture start lo" Enter
		check "REPL: capturing on lo" wait_for "capturing on 'lo'"
		$T send-keys -t hs "stats by dport window 500ms where udp dst port $port for 6s" Enter
		sleep 2
		python3 -c 'import socket, sys, time
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.bind(("127.0.0.1", int(sys.argv[1])))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(30):
    s.sendto(b"z", ("127.0.0.1", int(sys.argv[1])))
    time.sleep(0.02)' "$port"
		check "REPL: a window's row prints while stats runs" \
			wait_for "^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\.[0-9]{6} +$port +[0-9]+ +[0-9]+ +1 +0"
		check "REPL: the prompt is back when 'for' ends" wait_for 'hopscope> *$'
		snap
		total=$(awk -v p="$port" '$3 == p { n += $4 } END { print n + 0 }' "$tmp/screen")
		check "REPL: the rows count all 30 datagrams ($total)" [ "$total" -eq 30 ]
		$T send-keys -t hs "stats by proto for 1h" Enter
		sleep 1
		$T send-keys -t hs C-c
		$T send-keys -t hs "help stats" Enter
		check "REPL: Ctrl-C ends a long stats, the next command runs" \
			wait_for 'usage: stats by <FIELDS>'
		$T send-keys -t hs "quit" Enter
	fi
fi

finish
