#!/bin/sh
# stored.sh - a console with no traces of its own (no capture, no 'history
# load') answers 'drops', 'loops', 'latency', 'blame', 'ecmp' and 'traces'
# from the history's newest packets, as many as a console keeps, joined as
# 'history load' joins them: what 'history load' and then the verb say, on
# SQLite and on PostgreSQL (a server of the test's own), over more packets
# than a console keeps, their copies stored by one analyzer and split
# between two; a trace named as the history has it (SESSION:N); while the
# analyzers capture, the newest packets whose parts are on their way left
# out.
. "$(dirname "$0")/lib.sh"

pg_start

# more packets than a console keeps
lossy_fattree 1000
# its copies split by mirror address, odd and even: most packets' copies
# go to both halves
python3 -c 'import struct, sys
data = open(sys.argv[1], "rb").read()
outs = [open(sys.argv[1][:-5] + "%d.pcap" % i, "wb") for i in (0, 1)]
for o in outs:
    o.write(data[:24])
off = 24
while off + 16 <= len(data):
    n = struct.unpack_from("<I", data, off + 8)[0]
    outs[data[off + 16 + 29] % 2].write(data[off:off + 16 + n])
    off += 16 + n' "$tmp/all.pcap" || hard "cannot split the capture"

lite=$tmp/h.db
hs --db "$lite" --topo "$tmp/f.topo" -c "set history all; capture start $tmp/all.pcap"
[ "$st" -eq 0 ] || hard "the capture into SQLite failed: $(cat "$tmp/err")"
for i in 0 1; do
	hs --db "$url" --topo "$tmp/f.topo" \
		-c "set analyzer an$i; set history all; capture start $tmp/all$i.pcap"
	[ "$st" -eq 0 ] || hard "analyzer an$i failed: $(cat "$tmp/err")"
done

# a verb's JSON with the traces' names left out: a loaded trace is named by
# its place in the load, a stored one as the history has it
unnamed() {
	python3 -c 'import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("id", "session", "trace", "example")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
for line in open(sys.argv[1]):
    if line.startswith("{"):
        print(json.dumps(strip(json.loads(line))))' "$1"
}

for db in lite pg; do
	[ $db = lite ] && h=$lite || h=$url
	hs --db "$h" --topo "$tmp/f.topo" -c 'drops; drops --json; blame; blame --json;
		ecmp agg1; ecmp agg1 --json'
	cp "$tmp/out" "$tmp/stored"
	hs --db "$h" --topo "$tmp/f.topo" -c 'history load; drops; drops --json; blame;
		blame --json; ecmp agg1; ecmp agg1 --json'
	tail -n +2 "$tmp/out" >"$tmp/loaded"
	check "$db: drops, blame and ecmp, text and JSON, read as after history load" \
		eval '[ "$st" -eq 0 ] && has "^[1-9][0-9]* dropped of 8192 traces" "$tmp/stored" &&
			cmp -s "$tmp/loaded" "$tmp/stored"'
	for v in loops latency 'traces limit 100' 'traces outcome dropped'; do
		hs --db "$h" --topo "$tmp/f.topo" -c "$v --json"
		unnamed "$tmp/out" >"$tmp/stored"
		hs --db "$h" --topo "$tmp/f.topo" -c "history load; $v --json"
		unnamed "$tmp/out" >"$tmp/loaded"
		check "$db: $v reads as after history load, but for the names of traces" \
			eval '[ "$st" -eq 0 ] && [ "$(wc -c <"$tmp/stored")" -gt 100 ] &&
				cmp -s "$tmp/loaded" "$tmp/stored"'
	done
	hs --db "$h" --topo "$tmp/f.topo" -c 'export ndjson - outcome dropped limit 50'
	unnamed "$tmp/out" >"$tmp/stored"
	hs --db "$h" --topo "$tmp/f.topo" -c 'history load; export ndjson - outcome dropped limit 50'
	unnamed "$tmp/out" >"$tmp/loaded"
	check "$db: export ndjson writes the traces and hops as after history load" \
		eval '[ "$st" -eq 0 ] && [ "$(grep -c "\"type\": \"packet\"" "$tmp/stored")" -gt 50 ] &&
			cmp -s "$tmp/loaded" "$tmp/stored"'
	hs --db "$h" --topo "$tmp/f.topo" -c 'traces outcome dropped limit 1 --json'
	ref=$(sed -n 's/.*"trace":"\([0-9]*:[0-9]*\)".*/\1/p' "$tmp/out")
	src=$(sed -n 's/.*"src":"\([^"]*\)".*"dst".*/\1/p' "$tmp/out")
	hs --db "$h" --topo "$tmp/f.topo" -c "history show $ref --json"
	check "$db: a stored trace is named as the history has it ($ref)" \
		eval '[ -n "$ref" ] && [ "$st" -eq 0 ] && has "\"src\":\"$src\"" "$tmp/out" &&
			has "\"outcome\":\"dropped\"" "$tmp/out"'
	hs --db "$h" --topo "$tmp/f.topo" -c 'traces limit 1'
	check "$db: traces says the history holds older ones" \
		has '(1 of at least 8192 traces; traces limit N)' "$tmp/out"
done

# While an analyzer captures, the newest packets' later parts may still be
# on their way: a capture of no loss ending about now, its copies split as
# above but the second analyzer's part cut 1.5 s before the end (less than
# a settle: two trace timeouts and a commit), so the newest packets look
# dropped where the cut parts are missing. Told by the heartbeats that the
# analyzers capture, a console leaves those packets out; told nothing
# captures, it reads what the history holds.
end=$(($(date +%s) + 20))	# ahead of the wall clock: no slow run outlives it
"$top_builddir/tests/tools/hs-synth" --shape fattree:4 --packets 3000 --seed 5 \
	--duration 10 --start $((end - 10)) -w "$tmp/now.pcap" -t "$tmp/n.topo" \
	2>"$tmp/synth.err" || hard "hs-synth failed: $(cat "$tmp/synth.err")"
python3 -c 'import struct, sys
data = open(sys.argv[1], "rb").read()
recs, off = [], 24
while off + 16 <= len(data):
    n = struct.unpack_from("<I", data, off + 8)[0]
    recs.append(data[off:off + 16 + n])
    off += 16 + n
frac = 1e9 if data[:4] == bytes.fromhex("4d3cb2a1") else 1e6	# ns or us
ts = lambda r: struct.unpack_from("<I", r, 0)[0] + struct.unpack_from("<I", r, 4)[0] / frac
cut = max(ts(r) for r in recs) - 1.5
outs = [open(sys.argv[1][:-5] + "%d.pcap" % i, "wb") for i in (0, 1)]
for o in outs:
    o.write(data[:24])
for r in recs:
    half = r[16 + 29] % 2
    if half == 0 or ts(r) < cut:
        outs[half].write(r)' "$tmp/now.pcap" || hard "cannot split the capture"
psql -c 'drop schema public cascade' -c 'create schema public' 2>/dev/null
for i in 0 1; do
	hs --db "$url" --topo "$tmp/n.topo" \
		-c "set analyzer an$i; set history all; capture start $tmp/now$i.pcap"
	[ "$st" -eq 0 ] || hard "analyzer an$i failed: $(cat "$tmp/err")"
done
hs --db "$url" --topo "$tmp/n.topo" -c 'drops'
check "no analyzer captures: the parts stored are read, the cut ones look dropped" \
	eval '[ "$st" -eq 0 ] && has "^[1-9][0-9]* dropped of [0-9]* traces" "$tmp/out"'
psql -c "update analyzers set session = (select max(id) from sessions),
	seen = $(date +%s)000000000, newest = (select max(first_ts) from traces), lag = 0" ||
	hard "cannot mark the analyzers as capturing"
hs --db "$url" --topo "$tmp/n.topo" -c 'drops'
check "analyzers capture: the newest packets, whose parts are on their way, are left out" \
	eval '[ "$st" -eq 0 ] && has "^0 dropped of [1-9][0-9]* traces" "$tmp/out"'

# without a topology the packets are judged without one, and it says so
hs --db "$lite" -c 'traces limit 1 --json'
check "no topology: the outcomes are unknown, with a warning" \
	eval '[ "$st" -eq 0 ] && has "\"outcome\":\"unknown\"" "$tmp/out" &&
		has "warning: no topology: the history.s traces are judged without one" "$tmp/err"'

# a console with traces of its own answers from them
hs --db "$lite" --topo "$top_srcdir/share/sample/sample.topo" \
	-r "$top_srcdir/share/sample/sample.pcap" -c 'drops'
check "a capture's console answers from its own traces" \
	eval '[ "$st" -eq 0 ] && has "^28 dropped of 589 traces" "$tmp/out"'
# and one with no history reads none, and makes none
hs --db "$tmp/none.db" --topo "$tmp/f.topo" -c 'drops; traces'
check "no history: nothing to answer from, and no history made" \
	eval '[ "$st" -eq 0 ] && has "^0 dropped of 0 traces" "$tmp/out" && [ ! -e "$tmp/none.db" ]'

finish
