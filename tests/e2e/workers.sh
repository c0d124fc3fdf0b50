#!/bin/sh
# workers.sh - a file read with --workers N (and 'capture start FILE workers
# N') gives what one worker gives: the same traces, numbered alike, with
# the same packets, hops, times and outcomes, the same flows, drops, loops,
# latency, counters and control messages, on the bundled sample, the golden
# and conformance captures and synthetic fat-trees with drops and a loop,
# one of more traces than the console keeps (read also through a ring of
# the file's bytes smaller than it), one whose times go back
# (a frame stamped ahead), and one of more open traces than the pool holds
# (the oldest evicted); a bad number of workers is refused, saying so, with nothing read,
# and so is an interface whose link type the kernel's fanout cannot read
# (with none asked for, one worker reads it, and 'capture status' says why);
# a FIFO is read whole, by one reader; 'stats' on an interface read by two
# workers counts every packet kept.
. "$(dirname "$0")/lib.sh"

# same DESCRIPTION ONE N: N workers' output equals one worker's; the first
# lines that differ are shown when it does not
same() {
	check "$1" cmp -s "$2" "$3"
	cmp -s "$2" "$3" || diff "$2" "$3" | cut -c 1-300 | head -n 6 | sed 's/^/#   /'
}

SYNTH=$top_builddir/tests/tools/hs-synth
command -v python3 >/dev/null 2>&1 || skip "python3 is missing"
[ -x "$SYNTH" ] || hard "'$SYNTH' is not built"

"$SYNTH" --shape fattree:4 --packets 4000 --seed 5 --drop-link edge1-agg1:0.2 \
	--loop agg1-core1:edge3 --loop-flows 4 -w "$tmp/fat.pcap" -t "$tmp/fat.topo" \
	2>"$tmp/synth.err" || hard "hs-synth failed: $(cat "$tmp/synth.err")"
# more traces than the console keeps (8,192): the views over the newest
# ones see the same traces only when they are numbered in the same order
"$SYNTH" --shape fattree:4 --flows 1200 --seed 7 --drop-link edge1-agg1:0.2 \
	--loop agg1-core1:edge3 --loop-flows 4 -w "$tmp/big.pcap" -t "$tmp/big.topo" \
	2>"$tmp/synth.err" || hard "hs-synth failed: $(cat "$tmp/synth.err")"

# Every capture read in one run per number of workers (those with no
# topology of their own first), and what each verb says of it, whole: its
# traces, numbered in the order one tracer closes them, flows, drops,
# loops, latency, counters and control log
files=
for f in "$top_srcdir"/tests/golden/*.pcap "$top_srcdir"/tests/golden/*.pcapng \
	"$top_srcdir"/../shared/corpus/*.pcap; do
	[ -e "$f" ] && files="$files $f"
done
files="$files $top_srcdir/share/sample/sample.pcap $tmp/fat.pcap"
runbook() { # runbook OUT FILE...
	out=$1
	shift
	: >"$out"
	for f in "$@"; do
		case $f in
		"$tmp/fat.pcap") topo=$tmp/fat.topo ;;
		"$tmp/big.pcap") topo=$tmp/big.topo ;;
		*/sample.pcap) topo=$top_srcdir/share/sample/sample.topo ;;
		*) topo= ;;
		esac
		[ -n "$topo" ] && echo "topo load $topo" >>"$out"
		printf '%s\n' "capture start $f" 'traces limit 100000' 'flows limit 100000' \
			latency 'control limit 100000' 'capture status' >>"$out"
		# judged against a topology
		[ -n "$topo" ] && printf '%s\n' drops loops >>"$out"
	done
}
runbook "$tmp/runbook" $files
runbook "$tmp/runbook.big" "$tmp/big.pcap"

# what may differ: the time taken, the workers, the memory
view() {
	python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "end_reason" in o:
        for k in ("elapsed_ns", "workers", "history_memory", "analyzers"):
            o.pop(k, None)
    print(json.dumps(o, sort_keys=True))
PY
}

for w in 1 2 3; do
	hs --json --db "$tmp/h$w.db" --workers $w -f "$tmp/runbook"
	check "$w workers: every capture read (status $st)" [ "$st" -eq 0 ]
	view "$tmp/out" >"$tmp/view.$w"
	hs --json --db "$tmp/b$w.db" --workers $w -f "$tmp/runbook.big"
	check "$w workers: $tmp/big.pcap read (status $st)" [ "$st" -eq 0 ]
	view "$tmp/out" >"$tmp/big.$w"
done
# each capture's status (the summary of its start says "end of file" too)
ncap=$(grep '"end_reason": "end of file"' "$tmp/view.1" | grep -c '"traces_open"')
ntr=$(grep -o '"hops"' "$tmp/view.1" | wc -l)
check "one worker: $ncap captures of $(echo $files | wc -w) read, $ntr traces" \
	[ "$ncap" -eq "$(echo $files | wc -w)" ]
check "among them traces dropped, looped and delivered" eval \
	'grep -q "\"outcome\": \"looped\"" "$tmp/view.1" &&
	 grep -q "\"outcome\": \"dropped\"" "$tmp/view.1" &&
	 grep -q "\"outcome\": \"delivered\"" "$tmp/view.1"'
check "and control messages" grep -q '"proto": "bgp"' "$tmp/view.1"
big=$(grep -o '"traces_closed": [0-9]*' "$tmp/big.1" | head -n 1 | grep -o '[0-9]*$')
check "one worker: more traces than are kept in $tmp/big.pcap ($big)" [ "${big:-0}" -gt 8192 ]
for w in 2 3; do
	same "$w workers: the same traces and numbers, flows, drops, loops, latency, counters and control messages" \
		"$tmp/view.1" "$tmp/view.$w"
	same "$w workers, $big traces: the same newest traces, and what drops, loops and latency say of them" \
		"$tmp/big.1" "$tmp/big.$w"
done

# --- a ring smaller than the file: the walk waits for room in it --------------------
# A file's bytes are read into a ring (workers.c, HS_RING) that the walk
# fills no further than the oldest frame a worker has still to read: made
# as small as it goes (1 MiB), the records lie across its end, and the
# walk waits for the workers many times over ($tmp/big.pcap is 19 MB)
for w in 2 3; do
	HOPSCOPE_TEST_WORKER_RING=1048576 hs --json --db "$tmp/ring$w.db" --workers $w \
		-f "$tmp/runbook.big"
	check "a ring of 1 MiB, $w workers: $tmp/big.pcap read (status $st)" [ "$st" -eq 0 ]
	view "$tmp/out" >"$tmp/ring.$w"
	same "a ring of 1 MiB, $w workers: the same traces, drops, loops and latency as one" \
		"$tmp/big.1" "$tmp/ring.$w"
done

# --- a damaged file: the frames before the damage, and what one reader says -------
size=$(wc -c <"$tmp/fat.pcap")
head -c $((size - 100)) "$tmp/fat.pcap" >"$tmp/cut.pcap"
for w in 1 2; do
	hs --db "$tmp/cut$w.db" --workers $w -r "$tmp/cut.pcap" -c 'capture status'
	grep -v '^elapsed\|^workers\|^history memory\|^analyzers\| seen .* ago, ' "$tmp/out" >"$tmp/cut.$w"
	cp "$tmp/err" "$tmp/cuterr.$w"
done
check "a damaged file: 2 workers keep the frames before the damage, as one does" \
	eval 'grep -q "read error" "$tmp/cut.1" && cmp -s "$tmp/cut.1" "$tmp/cut.2"'
check "a damaged file: 2 workers say what one says" \
	eval 'has "truncated dump file" "$tmp/cuterr.1" && cmp -s "$tmp/cuterr.1" "$tmp/cuterr.2"'

# --- a capture whose times go back: one frame stamped 3 s ahead ---------------------
# The traces after it are as quiet on the capture's clock as the one it
# joined, whichever worker holds each: they join and close alike
python3 - "$tmp/fat.pcap" "$tmp/ahead.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
recs, off = [], 24
while off < len(d):
    recs.append(off)
    off += 16 + struct.unpack(e + "I", d[off + 8:off + 12])[0]
out = bytearray(d)
at = recs[len(recs) // 3]
struct.pack_into(e + "I", out, at, struct.unpack(e + "I", d[at:at + 4])[0] + 3)
open(sys.argv[2], "wb").write(out)
PY
[ -s "$tmp/ahead.pcap" ] || hard "cannot write $tmp/ahead.pcap"
for w in 1 2 3; do
	hs --json --db "$tmp/ahead$w.db" --workers $w \
		-c "topo load $tmp/fat.topo; capture start $tmp/ahead.pcap; traces limit 100000; drops; loops"
	check "a frame stamped 3 s ahead, $w workers: read (status $st)" [ "$st" -eq 0 ]
	cp "$tmp/out" "$tmp/ahead.$w"
done
ntr=$(python3 -c 'import json, sys
print(sum(len(o["traces"]) for o in map(json.loads, open(sys.argv[1]))
	  if isinstance(o.get("traces"), list)))' \
	"$tmp/ahead.1" 2>&1)
check "a frame stamped 3 s ahead, one worker: each of the 4000 packets one trace ($ntr)" \
	[ "$ntr" = 4000 ]
for w in 2 3; do
	same "a frame stamped 3 s ahead, $w workers: the same traces, drops and loops as one" \
		"$tmp/ahead.1" "$tmp/ahead.$w"
done

# --- more open traces than the pool holds: the oldest is evicted ---------------------
# The workers hold between them the open traces one tracer holds, each its
# share (a pool of 198, shared evenly by 2 and by 3): a trace is evicted at
# the age one tracer evicts it, and the traces are the same
for w in 1 2 3; do
	HOPSCOPE_TEST_OPEN_MAX=198 hs --json --db "$tmp/pool$w.db" --workers $w \
		-c "topo load $tmp/fat.topo; capture start $tmp/fat.pcap; traces limit 100000; drops; loops; capture status"
	check "a pool of 198 open traces, $w workers: read (status $st)" [ "$st" -eq 0 ]
	view "$tmp/out" >"$tmp/pool.$w"
done
ev=$(grep -o '"evicted": [0-9]*' "$tmp/pool.1" | head -n 1 | grep -o '[0-9]*$')
check "a pool of 198 open traces, one worker: traces evicted ($ev)" [ "${ev:-0}" -gt 0 ]
for w in 2 3; do
	same "a pool of 198 open traces, $w workers: the same traces, evicted alike, drops and loops as one" \
		"$tmp/pool.1" "$tmp/pool.$w"
done

# --- a number of workers that makes no sense -----------------------------------------------
for bad in 0 -1 65 two 99999999999; do
	hs --db "$tmp/bad.db" --workers "$bad" -r "$tmp/fat.pcap" -c 'capture status'
	check "--workers $bad: refused (status $st)" \
		eval '[ "$st" -eq 2 ] && has "bad number of workers .$bad. (1 to 64)" "$tmp/err"'
done
check "nothing was read into a history" [ ! -e "$tmp/bad.db" ]
hs --db "$tmp/v.db" -c "capture start $tmp/fat.pcap workers 0"
check "capture start FILE workers 0: refused (status $st)" \
	eval '[ "$st" -ne 0 ] && has "bad number of workers .0. (1 to 64)" "$tmp/err"'
hs --db "$tmp/v.db" -c "capture start $tmp/fat.pcap workers"
check "capture start FILE workers: needs a number (status $st)" \
	eval '[ "$st" -ne 0 ] && has "workers. needs a number" "$tmp/err"'
hs --db "$tmp/v1.db" -c "capture start $tmp/fat.pcap; capture status"
grep '^packets' "$tmp/out" >"$tmp/packets.1"
hs --db "$tmp/v2.db" -c "capture start $tmp/fat.pcap workers 2; capture status"
check "capture start FILE workers 2: read whole (status $st)" \
	eval '[ "$st" -eq 0 ] && grep "^packets" "$tmp/out" | cmp -s - "$tmp/packets.1"'
check "capture status: the frames each worker took" \
	grep -q '^workers  *2: [0-9][0-9]* + [0-9][0-9]* packets$' "$tmp/out"
# a FIFO is read by one reader: another opening it would take its part
# of the stream (or find the header already gone)
mkfifo "$tmp/fifo"
cat "$tmp/fat.pcap" >"$tmp/fifo" &
hs --db "$tmp/v3.db" --workers 2 -r "$tmp/fifo" -c 'capture status'
wait
check "a FIFO with 2 workers: read whole, by one reader, as 'capture status' says (status $st)" \
	eval '[ "$st" -eq 0 ] && grep "^packets" "$tmp/out" | cmp -s - "$tmp/packets.1" &&
	grep -q "^workers  *1, not the 2 asked: not a regular file" "$tmp/out"'
# an interface is read by several workers only when the kernel's fanout
# program reads its link type: the "any" device's cooked frames are refused
if [ "$(id -u)" -eq 0 ]; then
	hs --db "$tmp/v.db" -c "capture start any workers 2"
	check "cooked frames with 2 workers: refused, saying so (status $st)" \
		eval '[ "$st" -ne 0 ] &&
		has "cannot capture on .any. with 2 workers: link type LINUX_SLL" "$tmp/err"'
	# none asked for: the default, one per core, is one worker there, and
	# 'capture status' says why
	cpus=$(getconf _NPROCESSORS_ONLN)
	hs --db "$tmp/v.db" --json -c "capture start any; capture status; capture stop"
	if [ "$cpus" -gt 1 ]; then
		check "cooked frames, the default of $cpus workers: one reads, as 'capture status' says (status $st)" \
			eval '[ "$st" -eq 0 ] && [ ! -s "$tmp/err" ] &&
			has "\"one_worker\":\"not the default $cpus: link type LINUX_SLL (113) is read by one worker\"" "$tmp/out"'
	else
		check "cooked frames, the default of one worker: read (status $st)" \
			eval '[ "$st" -eq 0 ] && [ ! -s "$tmp/err" ] && hasnt one_worker "$tmp/out"'
	fi
	# the packets kept reach 'stats' on the running capture as they do
	# with one worker: every datagram sent on the loopback, counted once
	port=$((20000 + $$ % 20000))
	lo_send "$port" 1 30 0.02 w
	hs --db "$tmp/lo.db" --json --workers 2 -c "capture start lo; capture status; stats by dport window 1s where udp dst port $port for 7s; capture stop"
	wait "$sender"
	got=$(python3 -c 'import json, sys
print(sum(o["packets"] for o in map(json.loads, open(sys.argv[1])) if o.get("dport") == int(sys.argv[2])))' \
		"$tmp/out" "$port" 2>&1)
	check "stats on 'lo' read by 2 workers: the 30 datagrams sent, counted once (got $got, status $st)" \
		eval '[ "$st" -eq 0 ] && [ "$got" = 30 ]'
else
	echo "# not root: an interface's workers are not tried"
fi
finish
