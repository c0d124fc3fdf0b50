#!/bin/bash
# workers: a synthetic fat-tree's mirror stream (every packet copied at each
# switch on its way, drops and a loop among them) replayed into a veth pair
# in a network namespace of its own (hscap-*, not the lab's hs-*: no lab
# lock) and read live at the same time by one worker and by two (one kernel
# fanout group): the same traces (hops, times, outcomes), numbered alike
# (in the order of their copies' capture times, one socket's order), and
# 'capture status' shows what each worker took; with the kernel's fanout
# refused (tests/tools/hs-nofanout.so), the default reads with one socket
# and says why, and a number of workers asked for is refused
set -u
. "${top_srcdir:-.}/tests/lab/lib.sh"
need_built hopscope tests/tools/hs-synth tests/tools/hs-nofanout.so
command -v netsniff-ng >/dev/null ||
	{ echo "SKIP: $TEST: netsniff-ng (Debian package netsniff-ng) is not installed" >&2; exit 77; }
command -v python3 >/dev/null || hard "python3 is missing"

own_ns workers

"$top_builddir/tests/tools/hs-synth" --shape fattree:4 --packets 3000 --seed 11 \
	--drop-link edge1-agg1:0.2 --loop agg1-core1:edge3 --loop-flows 4 \
	-w "$tmp/fat.pcap" -t "$tmp/fat.topo" >/dev/null 2>"$tmp/synth.err" ||
	hard "hs-synth failed: $(cat "$tmp/synth.err")"
in_ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 ||
	hard "cannot turn IPv6 off in '$ns'"
in_ns ip link add txa mtu 9000 type veth peer name rxa mtu 9000 ||
	hard "cannot make a veth pair in '$ns'"
in_ns ip link set txa up && in_ns ip link set rxa up || hard "cannot bring the veth pair up"

# console N: capture rxa with N workers through the replay, then list the
# traces and the status
console() {
	in_ns "$HOPSCOPE" --db "$tmp/h$1.db" --topo "$tmp/fat.topo" --workers "$1" -i rxa \
		-c "set format json; capture status; set format text; sleep 8s; capture stop;
		    set format json; traces limit 100000; set format text; capture status" \
		>"$tmp/out.$1" 2>"$tmp/err.$1" </dev/null
}
# the kernel refusing the fanout group (hs-nofanout.so makes setsockopt
# PACKET_FANOUT fail): the default number of workers is one socket then,
# reads as one worker does, and says why; a number asked for is refused
nofanout() {
	in_ns env LD_PRELOAD="$top_builddir/tests/tools/hs-nofanout.so" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" "$HOPSCOPE" "$@"
}
cores=$(getconf _NPROCESSORS_ONLN)
console 1 &
one=$!
console 2 &
two=$!
pids="$one $two"
if [ "$cores" -gt 1 ]; then
	nofanout --db "$tmp/h0.db" --topo "$tmp/fat.topo" -i rxa \
		-c "set format json; capture status; set format text; sleep 8s; capture stop;
		    set format json; traces limit 100000; capture status; set format text;
		    capture status" \
		>"$tmp/out.0" 2>"$tmp/err.0" </dev/null &
	pids="$pids $!"
fi
running "$tmp/out.1" "$tmp/out.2"	# all capturing before the first frame
[ "$cores" -gt 1 ] && running "$tmp/out.0"
ns_replay "$tmp/fat.pcap" txa "$tmp/replay" ||
	{ cat "$tmp/replay" >&2; hard "netsniff-ng could not replay the capture"; }
st1=0 st2=0 st0=0
wait "$one" || st1=$?
wait "$two" || st2=$?
[ "$cores" -gt 1 ] && { wait "${pids##* }" || st0=$?; }
pids=
[ "$st1" = 0 ] || fail "one worker: hopscope exited $st1: $(head -c 600 "$tmp/err.1")"
[ "$st2" = 0 ] || fail "two workers: hopscope exited $st2: $(head -c 600 "$tmp/err.2")"

# the traces with their numbers (the session's name left out), sorted
for w in 0 1 2; do
	[ -e "$tmp/out.$w" ] || continue
	python3 - "$tmp/out.$w" >"$tmp/traces.$w" <<'PY'
import json, sys
out = []
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    for t in json.loads(line).get("traces", []):
        for k in ("trace", "session"):
            t.pop(k, None)
        out.append(json.dumps(t, sort_keys=True))
print("\n".join(sorted(out)))
PY
done
frames=$(awk '$1 == "packets" { print $2 }' "$tmp/out.1")
n=$(wc -l <"$tmp/traces.1")
for o in delivered dropped looped; do
	c=$(grep -c "\"outcome\": \"$o\"" "$tmp/traces.1")
	[ "$c" -gt 0 ] || fail "one worker read $frames frames into $n traces, none $o"
done
cmp -s "$tmp/traces.1" "$tmp/traces.2" || {
	diff "$tmp/traces.1" "$tmp/traces.2" | head -n 10 >&2
	fail "two workers' traces differ from one worker's"
}
ok "a fat-tree's mirror stream read live by two workers: the $n traces one worker gives, numbered alike ($frames frames)"

# what each worker took, and that the kernel shared the frames out
grep -q '^workers  *2: [0-9]* + [0-9]* packets$' "$tmp/out.2" ||
	fail "'capture status' does not show the two workers: $(tail -n 30 "$tmp/out.2")"
read -r p0 p1 < <(awk '$1 == "worker" { printf "%s ", $3 } END { print "" }' "$tmp/out.2")
total=$(awk '$1 == "packets" { print $2 }' "$tmp/out.2")
((p0 > total / 4 && p1 > total / 4 && p0 + p1 == total && total == frames)) ||
	fail "the workers took $p0 and $p1 of $total frames (one worker read $frames)"
grep -q '^  worker 1  *[0-9]* packets, 0 kernel drops, [0-9]* packets/s$' "$tmp/out.2" ||
	fail "no status line of worker 1: $(grep worker "$tmp/out.2")"
ok "'capture status': worker 0 took $p0 frames, worker 1 $p1, of $total"

# the kernel refused the fanout group: one socket read the stream
if [ "$cores" -gt 1 ]; then
	[ "$st0" = 0 ] || fail "fanout refused: hopscope exited $st0: $(head -c 600 "$tmp/err.0")"
	why="not the default $cores: cannot join worker 0 to a fanout group: Protocol not available"
	grep -qx "workers  *1, $why" "$tmp/out.0" ||
		fail "fanout refused: 'capture status' does not say why one worker read: $(grep -i worker "$tmp/out.0")"
	grep -q "\"one_worker\":\"$why\"" "$tmp/out.0" ||
		fail "fanout refused: no one_worker in the JSON status: $(grep '"source"' "$tmp/out.0")"
	cmp -s "$tmp/traces.1" "$tmp/traces.0" || {
		diff "$tmp/traces.1" "$tmp/traces.0" | head -n 10 >&2
		fail "fanout refused: the traces read differ from one worker's"
	}
	ok "the kernel refused the fanout group: the default read with one socket, the $n traces, and said why"
else
	echo "ok: (one core here: no default of several workers to fall back from)"
fi
st=0
nofanout --db "$tmp/h3.db" --workers 2 -i rxa -c 'capture status' >"$tmp/out.3" 2>"$tmp/err.3" \
	</dev/null || st=$?
[ "$st" != 0 ] && grep -q "error: cannot capture on 'rxa' with 2 workers: cannot join worker 0 to a fanout group: Protocol not available" "$tmp/err.3" ||
	fail "fanout refused, 2 workers asked: exit $st, $(head -c 600 "$tmp/err.3")"
ok "the kernel refused the fanout group: 2 workers asked for are refused, naming why"
