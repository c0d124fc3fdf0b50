#!/bin/bash
# workers: a synthetic fat-tree's mirror stream (every packet copied at each
# switch on its way, drops and a loop among them) replayed into a veth pair
# in a network namespace of its own (hscap-*, not the lab's hs-*: no lab
# lock) and read live at the same time by one worker and by two (one kernel
# fanout group): the same traces (hops, times, outcomes), numbered alike
# (in the order of their copies' capture times, one socket's order), and
# 'capture status' shows what each worker took
set -u
. "${top_srcdir:-.}/tests/lab/lib.sh"
need_built hopscope tests/tools/hs-synth
command -v netsniff-ng >/dev/null ||
	{ echo "SKIP: $TEST: netsniff-ng (Debian package netsniff-ng) is not installed" >&2; exit 77; }
command -v python3 >/dev/null || hard "python3 is missing"

ns=hscap-workers$$
if ! ip netns add "$ns" 2>/dev/null; then
	echo "SKIP: $TEST: cannot create a network namespace (not root, or no namespace support)" >&2
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-$TEST.XXXXXX") || { ip netns del "$ns"; hard "no temporary directory"; }
pids=
cleanup() {
	local st=$?
	[ -n "$pids" ] && kill $pids 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
	exit "$st"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
in_ns() { ip netns exec "$ns" "$@"; }

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
		-c "sleep 6s; capture stop; set format json; traces limit 100000;
		    set format text; capture status" \
		>"$tmp/out.$1" 2>"$tmp/err.$1" </dev/null
}
console 1 &
one=$!
console 2 &
two=$!
pids="$one $two"
sleep 2		# both capturing before the first frame
in_ns netsniff-ng --in "$tmp/fat.pcap" --out txa --silent -S 8MiB >"$tmp/replay" 2>&1 &&
	! grep -q "Cannot allocate" "$tmp/replay" ||
	{ cat "$tmp/replay" >&2; hard "netsniff-ng could not replay the capture"; }
st1=0 st2=0
wait "$one" || st1=$?
wait "$two" || st2=$?
pids=
[ "$st1" = 0 ] || fail "one worker: hopscope exited $st1: $(head -c 600 "$tmp/err.1")"
[ "$st2" = 0 ] || fail "two workers: hopscope exited $st2: $(head -c 600 "$tmp/err.2")"

# the traces with their numbers (the session's name left out), sorted
for w in 1 2; do
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
