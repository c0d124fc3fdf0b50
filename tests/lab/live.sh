#!/bin/bash
# live: a live capture on a veth pair in a network namespace of its own
# (hscap-*, not the lab's hs-*, so it needs no lab lock): a burst sent at the
# sender's top speed is read in full with no kernel drop, the ring asked for
# with 'buffer' is the ring shown, an interface deleted mid-capture is
# reported once while the console goes on, and a history another program
# holds locked through a burst holds the history writer, not the capture.
set -u
. "${top_srcdir:-.}/tests/lab/lib.sh"
need_built hopscope
N=20000		# about 2.5 MB in a TPACKET_V3 ring: all of it fits in the ring asked

own_ns live
command -v trafgen >/dev/null || { echo "SKIP: $TEST: trafgen (Debian package netsniff-ng) is not installed" >&2; exit 77; }

in_ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 ||
	hard "cannot turn IPv6 off in '$ns'"	# no router solicitations on the capture
in_ns ip link add txa type veth peer name rxa || hard "cannot make a veth pair in '$ns'"
in_ns ip link set txa up && in_ns ip link set rxa up || hard "cannot bring the veth pair up"

cfg=$top_srcdir/tests/lab/erspan2.trafgen	# ERSPAN II copies, a new packet each
send() { in_ns trafgen -o txa -i "$cfg" -n "$1" -P 1 -Q >"$tmp/trafgen" 2>&1 ||
	{ cat "$tmp/trafgen" >&2; hard "trafgen failed"; }; }

# the console reads its commands from a pipe; say CMD sends one line
mkfifo "$tmp/in" || hard "cannot make a fifo"
in_ns "$HOPSCOPE" --db "$tmp/h.db" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
console=$! pids=$!
exec 3>"$tmp/in"
say() { echo "$*" >&3; }
# wait_for TEXT: until the console has printed it (10 s at most)
wait_for() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q -- "$1" "$tmp/out" && return 0
		sleep 0.1
	done
	cat "$tmp/out" "$tmp/err" >&2
	fail "the console never printed '$1'"
}
# ask_status LINE: asks 'capture status' once and waits (10 s at most) for
# one more line of its answer matching LINE
ask_status() {
	local j before
	before=$(grep -c -- "$1" "$tmp/out")
	say capture status
	for ((j = 0; j < 100; j++)); do
		[ "$(grep -c -- "$1" "$tmp/out")" -gt "$before" ] && return 0
		sleep 0.1
	done
}
# count_until N: asks 'capture status' (in JSON) until the capture has
# counted N packets, 30 s at most: on a loaded machine the workers read a
# burst out of the ring a while after the sender is done. $st is the last
# status line.
count_until() {
	local i
	for ((i = 1; i <= 150; i++)); do
		ask_status '"source":"rxa"'
		st=$(grep '"source":"rxa"' "$tmp/out" | tail -n 1)
		case $st in *'"packets":'$1,*) return 0 ;; esac
		sleep 0.2
	done
}
# state_until TEXT: asks 'capture status' until its state line says TEXT,
# 10 s at most
state_until() {
	local i
	for ((i = 1; i <= 40; i++)); do
		ask_status '^state '
		grep -q -- "^state          $1" "$tmp/out" && return 0
		sleep 0.2
	done
	cat "$tmp/out" "$tmp/err" >&2
	fail "'capture status' never said '$1'"
}

say capture start rxa buffer 64M
say capture status
wait_for '^state          running'
grep -q '^ring           64 MiB (64 MiB asked)$' "$tmp/out" ||
	{ cat "$tmp/out" >&2; fail "'capture status' does not show the 64 MiB ring asked"; }
ok "'capture start rxa buffer 64M': the ring is shown"

send $N
say set format json
count_until $N
python3 - "$st" $N <<'PY' || fail "the burst was not read in full: $st"
import json, sys
s, n = json.loads(sys.argv[1]), int(sys.argv[2])
assert s["packets"] == n, "packets %d, sent %d" % (s["packets"], n)
assert s["kernel_drops"] == 0, "kernel drops %d" % s["kernel_drops"]
assert s["decode_errors"] == 0, "decode errors %d" % s["decode_errors"]
assert s["ring_bytes"] == 64 << 20 and s["ring_asked_bytes"] == 64 << 20
PY
ok "a burst of $N frames at the sender's top speed: all read, no kernel drop"

# the interface goes away mid-capture: the workers, one per core, see it
# on their own threads and tell the console, which is asked until it says so
say set format text
in_ns ip link del txa || hard "cannot delete the veth pair"
state_until 'ended (interface error)'
say help sleep
wait_for '^usage: sleep'
say quit
exec 3>&-
wait "$console"
st=$?
console= pids=
errs=$(grep -c "^error: capture on 'rxa' failed: The interface" "$tmp/err")
[ "$errs" = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] ||
	{ cat "$tmp/err" >&2; fail "a deleted interface gave $errs errors naming it (want 1, and nothing else)"; }
[ "$st" = 0 ] || fail "the console's status is $st after the interface went away"
ok "an interface deleted mid-capture: one error naming it, the console goes on"

# another program holds the history's write lock through a whole burst: the
# history waits in the writer's queue while every frame is still read.
# Once the queue is full, traces past their timeout wait open for room a
# second at most, then close and are refused, and counted: every trace is
# either stored or counted, and the history holds at least what the queue
# does (over 40,000 traces of one hop). A ring of 8 MiB is 32 of libpcap's 256 KiB
# blocks, each handed over 5 ms (rounded up to the timer tick) after it was
# begun at this rate: it holds a sixth to a quarter of a second of the
# burst, about what a capture held with the history (a heartbeat waiting
# out SQLite's busy timeout, 200 ms) would lose it. The lock lasts 7 s, the
# burst 5.5 s (the lock lasts until the burst is sent, if it takes longer):
# longer than the heartbeats' 5 s, so one falls inside
in_ns ip link add txa type veth peer name rxa && in_ns ip link set txa up &&
	in_ns ip link set rxa up || hard "cannot make the veth pair again"
mkfifo "$tmp/in2" || hard "cannot make a fifo"
in_ns "$HOPSCOPE" --db "$tmp/h2.db" <"$tmp/in2" >"$tmp/out" 2>"$tmp/err" &
console=$! pids=$!
exec 3>"$tmp/in2"
say set history all
say set trace-timeout 100ms
say capture start rxa buffer 8M
say capture status
wait_for '^state          running'
python3 - "$tmp/h2.db" "$tmp/locked" "$tmp/sent" <<'PY' &
import os, sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
db.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
t0 = time.monotonic()
while time.monotonic() - t0 < 60 and (time.monotonic() - t0 < 7 or
                                      not os.path.exists(sys.argv[3])):
    time.sleep(0.1)
db.execute("COMMIT")
PY
locker=$!
for ((i = 0; i < 100; i++)); do [ -e "$tmp/locked" ] && break; sleep 0.1; done
[ -e "$tmp/locked" ] || fail "another program could not take the history's write lock"
M=110000	# about 5.5 s at a 50 us gap, all of it while the lock is held
in_ns trafgen -o txa -i "$cfg" -n $M -P 1 -Q -t 50us >"$tmp/trafgen" 2>&1 ||
	{ cat "$tmp/trafgen" >&2; hard "trafgen failed"; }
: >"$tmp/sent"
wait "$locker" || fail "the other program's transaction failed"
say set format json
count_until $M
# every frame a trace of its own (random IP id, port and sequence number):
# once all are in the tracers no more can be evicted, and what was refused
# is all counted
for ((i = 1; i <= 50; i++)); do
	python3 -c 'import json, sys; s = json.loads(sys.argv[1])
sys.exit(s["traces_open"] + s["traces_closed"] != int(sys.argv[2]))' "$st" $M && break
	sleep 0.2
	ask_status '"source":"rxa"'
	st=$(grep '"source":"rxa"' "$tmp/out" | tail -n 1)
done
say quit
exec 3>&-
wait "$console"
console= pids=
python3 - "$st" $M "$tmp/h2.db" <<'PY' || { cat "$tmp/err" >&2; fail "a history held by another program held the capture, or lost traces: $st"; }
import json, sqlite3, sys
s, n = json.loads(sys.argv[1]), int(sys.argv[2])
assert s["packets"] == n, "packets %d, sent %d" % (s["packets"], n)
assert s["kernel_drops"] == 0, "kernel drops %d" % s["kernel_drops"]
assert s["history_behind"] > 0, "the writer's queue never filled: the test did not test"
assert s["history_unstored"] >= s["history_behind"]
traces = s["traces_open"] + s["traces_closed"]
assert traces == n, "%d traces of %d frames" % (traces, n)
kept = sqlite3.connect(sys.argv[3]).execute("SELECT count(*) FROM traces").fetchone()[0]
assert kept + s["history_behind"] == traces, \
    "%d traces: %d kept, %d counted as refused" % (traces, kept, s["history_behind"])
assert kept >= 40000, "kept %d: the queue held fewer than 40,000 traces of one hop" % kept
PY
ok "the history locked by another program for a whole burst: every frame read, the queue's traces kept, every other counted"

# two workers on one interface, one fanout group: the kernel shares the
# frames out, every one read once, and 'set trace-timeout' during the
# capture reaches the workers' tracers (at the 1 s they began with, the
# traces of the burst would close before the status is asked for). The
# figures are asked for until the burst is all counted (on a loaded
# machine the workers read it a while after trafgen is done), 30 s at
# most, then 2 s after.
mkfifo "$tmp/in3" || hard "cannot make a fifo"
in_ns "$HOPSCOPE" --db "$tmp/h3.db" <"$tmp/in3" >"$tmp/out" 2>"$tmp/err" &
console=$! pids=$!
exec 3>"$tmp/in3"
say capture start rxa workers 2
say set trace-timeout 60s
say capture status
wait_for '^state          running'
send $N
say set format json
count_until $N
# past the 1 s the workers' tracers began with: their traces stay open
say sleep 2s
say capture status
say quit
exec 3>&-
wait "$console"
console= pids=
st=$(grep '"source":"rxa"' "$tmp/out" | tail -n 1)
python3 - "$st" $N <<'PY' || { cat "$tmp/err" >&2; fail "two workers on one interface: $st"; }
import json, sys
s, n = json.loads(sys.argv[1]), int(sys.argv[2])
w = s["workers"]
assert s["packets"] == n, "packets %d, sent %d" % (s["packets"], n)
assert len(w) == 2 and sum(x["packets"] for x in w) == n, "workers %s" % w
assert all(x["packets"] > n // 4 for x in w), "one worker took nearly all: %s" % w
assert s["kernel_drops"] == 0 and all(x["kernel_drops"] == 0 for x in w)
assert s["traces_open"] == n and s["traces_closed"] == 0, \
    "%d traces open, %d closed: the workers kept the old timeout" % (s["traces_open"], s["traces_closed"])
PY
ok "two workers on one interface: every frame read once, shared out, and the trace timeout set reaches them"
