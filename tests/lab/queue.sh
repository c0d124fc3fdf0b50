#!/bin/bash
# queue: the order in which two live workers' traces are numbered when one
# worker holds an old trace open while the other closes many. Into each of
# two veth pairs in a namespace of its own (hscap-*, not the lab's hs-*: no
# lab lock) go one packet that worker 0 takes, then many that worker 1
# takes (tests/tools/hs-steer), each mirrored once, and a console reads
# each pair with two workers, the trace timeout long, worker 1 evicting
# its oldest trace at every packet past its share of the open traces.
# 3000 packets, a share of 1024: worker 1 queues 1976 traces as they come
# and the rest at the stop, never more than its queue holds (4096); they
# wait for worker 0's older trace, which is numbered first, as one worker
# numbers it. 6000 packets, a share of 32: worker 1's queue fills, and
# rather than stop reading it hands traces on before the older one
# (hopscope-capture(1)). Every frame is read either way.
set -u
. "${top_srcdir:-.}/tests/lab/lib.sh"
need_built hopscope tests/tools/hs-steer
command -v netsniff-ng >/dev/null ||
	{ echo "SKIP: $TEST: netsniff-ng (Debian package netsniff-ng) is not installed" >&2; exit 77; }
command -v python3 >/dev/null || hard "python3 is missing"
[ "$(getconf _NPROCESSORS_ONLN)" -gt 1 ] ||
	{ echo "SKIP: $TEST: one core here, and two live workers need a core each" >&2; exit 77; }

own_ns queue

# pair  packets  open traces (two workers' share)
runs="a 3000 2048
b 6000 64"
while read -r pair n open; do
	"$top_builddir/tests/tools/hs-steer" 0 2 1 1 "$tmp/old.pcap" &&
		"$top_builddir/tests/tools/hs-steer" 1 2 "$n" 1 "$tmp/many.$pair.pcap" ||
		hard "hs-steer failed"
done <<<"$runs"
in_ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 ||
	hard "cannot turn IPv6 off in '$ns'"
for pair in a b; do
	in_ns ip link add "tx$pair" type veth peer name "rx$pair" &&
		in_ns ip link set "tx$pair" up && in_ns ip link set "rx$pair" up ||
		hard "cannot make a veth pair in '$ns'"
done

# console PAIR OPEN: two workers holding OPEN open traces between them
console() {
	in_ns env HOPSCOPE_TEST_OPEN_MAX="$2" "$HOPSCOPE" --db "$tmp/h$1.db" --workers 2 \
		-i "rx$1" -c "set format json; capture status; set trace-timeout 60s; sleep 7s;
			      capture stop;
			      traces limit 100000; set format text; capture status" \
		>"$tmp/out.$1" 2>"$tmp/err.$1" </dev/null
}
# replay PAIR: the old packet, then the many
replay() {
	local f
	for f in old.pcap "many.$1.pcap"; do
		ns_replay "$tmp/$f" "tx$1" "$tmp/replay.$1" || { cat "$tmp/replay.$1" >&2; return 1; }
	done
}
while read -r pair n open; do
	console "$pair" "$open" &
	pids="$pids $!"
done <<<"$runs"
running "$tmp/out.a" "$tmp/out.b"	# both capturing before the first frame
replay a & ra=$!
replay b || hard "netsniff-ng could not replay into txb"
wait "$ra" || hard "netsniff-ng could not replay into txa"
for p in $pids; do
	wait "$p" || fail "hopscope exited $?: $(head -c 600 "$tmp/err.a") $(head -c 600 "$tmp/err.b")"
done
pids=
while read -r pair n open; do
	grep -q "^packets  *$((n + 1))\$" "$tmp/out.$pair" ||
		fail "$n packets: not every frame read: $(grep -E '^(packets|kernel)' "$tmp/out.$pair")"
	grep -q "^workers  *2: 1 + $n packets\$" "$tmp/out.$pair" ||
		fail "$n packets: not shared out as hs-steer chose: $(grep '^workers' "$tmp/out.$pair")"
	grep -q "^evicted  *$((n - open / 2))\$" "$tmp/out.$pair" ||
		fail "$n packets: worker 1 did not evict $((n - open / 2)): $(grep '^evicted' "$tmp/out.$pair")"
done <<<"$runs"

# the number of the oldest trace (the one packet worker 0 took), and how
# many traces there are
oldest() {
	python3 - "$tmp/out.$1" <<'PY'
import json, sys
traces = []
for line in open(sys.argv[1]):
    if line.startswith("{"):
        traces += json.loads(line).get("traces", [])
old = min(traces, key=lambda t: t["ts_ns"])
print(old["id"], len(traces))
PY
}
read -r id_a count_a < <(oldest a)
read -r id_b count_b < <(oldest b)
[ "$count_a" = 3001 ] && [ "$count_b" = 6001 ] ||
	fail "$count_a and $count_b traces, not 3001 and 6001"
[ "$id_a" = 1 ] ||
	fail "worker 1's queue never full, yet the oldest trace is number $id_a, not 1"
ok "a worker's queue with room: the 1976 traces it evicts wait for the other's older one, numbered 1"
[ "$id_b" -gt 2048 ] ||
	fail "worker 1 evicted 5968 traces past its full queue, yet the oldest trace is number $id_b"
ok "a worker's queue full: traces handed on before the other's older one (number $id_b), every frame read"
