#!/bin/sh
# crash.sh - the history survives the worst day: kill -9 in the middle of a
# large ingest, a full disk, a read-only file, a newer schema, a foreign
# SQLite file, a second console on the same file.
. "$(dirname "$0")/lib.sh"

SYNTH=$top_builddir/tests/tools/hs-synth
PCAP=$top_srcdir/share/sample/sample.pcap
TOPO=$top_srcdir/share/sample/sample.topo
[ -x "$SYNTH" ] || hard "'$SYNTH' is not built"
command -v python3 >/dev/null || skip "no python3"

q() { python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print(db.execute(sys.argv[2]).fetchone()[0])' "$@"; }
integrity() { [ "$(q "$1" 'pragma integrity_check')" = ok ]; }
sane() { ! grep -q -e 'runtime error' -e 'AddressSanitizer' -e 'LeakSanitizer' "$tmp/err"; }
not_crashed_san() { ! crashed && sane; }

# a large capture: long enough to kill the console half-way through
"$SYNTH" --packets "${CRASH_PACKETS:-300000}" --seed 8 -w "$tmp/big.pcap" -t "$tmp/big.topo" \
	>/dev/null 2>"$tmp/synth.err" || hard "hs-synth failed: $(cat "$tmp/synth.err")"

# slow_feed: the large capture into the FIFO $tmp/feed, 4 MiB every 0.1 s
# (about 7 s in all), in the background ($feeder): an ingest that lasts as
# long however fast the console reads
slow_feed() {
	rm -f "$tmp/feed"
	mkfifo "$tmp/feed"
	python3 - "$tmp/big.pcap" "$tmp/feed" 2>/dev/null <<'PY' &
import sys, time
with open(sys.argv[1], "rb") as src, open(sys.argv[2], "wb") as out:
    while True:
        b = src.read(4 << 20)
        if not b:
            break
        out.write(b)
        out.flush()
        time.sleep(0.1)
PY
	feeder=$!
}

# --- kill -9 in the middle of an ingest ------------------------------------------
# A second connection reads the file while the console writes it: what it sees
# is committed. It kills the console right after a read that found rows
# committed after the first batch; every row it saw must survive the kill.
db=$tmp/kill.db
slow_feed
"$HS" --db "$db" --topo "$tmp/big.topo" -c "set history all; capture start $tmp/feed" \
	>"$tmp/out" 2>"$tmp/err" </dev/null &
hspid=$!
python3 - "$db" "$hspid" >"$tmp/seen" 2>"$tmp/seen.err" <<'PY'
import os, signal, sqlite3, sys, time
path, pid = sys.argv[1], int(sys.argv[2])
counts = []
deadline = time.time() + 60
while time.time() < deadline:
    time.sleep(0.05)
    try:
        db = sqlite3.connect("file:" + path + "?mode=ro", uri=True, timeout=0.05)
        n = db.execute("select count(*) from traces").fetchone()[0]
        db.close()
    except sqlite3.Error:
        continue		# not created yet
    if not counts or n != counts[-1]:
        counts.append(n)
    # three distinct non-zero counts: batches commit while the ingest runs
    if len([c for c in counts if c > 0]) >= 3:
        os.kill(pid, signal.SIGKILL)
        print(len(counts), n)
        sys.exit(0)
print(len(counts), -1)
PY
wait "$hspid"
killst=$?
kill "$feeder" 2>/dev/null
wait "$feeder"
read -r nseen seen <"$tmp/seen" || seen=-1
check "the reader saw batches committed during the ingest (last saw $seen traces)" \
	[ "${seen:--1}" -gt 0 ]
check "the console was killed mid-ingest (status $killst)" [ "$killst" -eq 137 ]
check "after kill -9: integrity_check is ok" integrity "$db"
after=$(q "$db" 'select count(*) from traces')
check "after kill -9: every committed trace is there ($after >= $seen)" [ "$after" -ge "$seen" ]
check "after kill -9: every stored trace has all its hops" \
	[ "$(q "$db" 'select count(*) from traces t where nhops != (select count(*) from hops h where h.trace = t.id)')" = 0 ]
check "after kill -9: the killed session is open (no end)" \
	[ "$(q "$db" 'select count(*) from sessions where ended is null')" = 1 ]

# the next start opens the file and continues with a new session
hs --db "$db" --topo "$TOPO" --json -c "set history all; capture start $PCAP; capture status"
check "the next start runs (status $st)" [ "$st" -eq 0 ]
check "the next start says nothing is wrong" [ ! -s "$tmp/err" ]
check "a second session was appended" [ "$(q "$db" 'select count(*) from sessions')" = 2 ]
check "the first session's traces are untouched ($after)" \
	[ "$(q "$db" 'select count(*) from traces where session = 1')" = "$after" ]
written=$(sed -n 's/.*"history_writes":\([0-9]*\).*/\1/p' "$tmp/out" | tail -n 1)
rows=$(q "$db" 'select (select count(*) from traces where session = 2) + (select count(*) from flows where session = 2)')
check "capture status reports the rows written (${written:-?}) and they are there ($rows)" \
	eval '[ "${written:-0}" -gt 0 ] && [ "$rows" -ge "${written:-0}" ]'
check "integrity_check is ok after the second run" integrity "$db"
# the killed session says it was never ended, the finished one has its end
hs --db "$db" -c 'history sessions'
check "history sessions: the killed session is unended, the next one ended" \
	eval 'grep -Eq "^1 +[0-9-]+ [0-9:.]+ +- .* unended$" "$tmp/out" &&
		grep -Eq "^2 +[0-9-]+ [0-9:.]+ +[0-9-]+ [0-9:.]+ .* ended$" "$tmp/out"'
hs --db "$db" --json -c 'history sessions'
check "history sessions --json: the killed session's state is unended" \
	python3 -c 'import json, sys
s = {r["id"]: r for r in json.load(open(sys.argv[1]))["sessions"]}
sys.exit(not (s[1]["state"] == "unended" and s[1]["ended_ns"] is None and s[2]["state"] == "ended"))' "$tmp/out"

# --- a second console on the same file while the first ingests ------------------
db=$tmp/two.db
slow_feed
"$HS" --db "$db" --topo "$tmp/big.topo" -c "set history all; capture start $tmp/feed" \
	>"$tmp/first.out" 2>"$tmp/first.err" </dev/null &
hspid=$!
i=0
while [ "$(q "$db" 'select count(*) from traces' 2>/dev/null || echo 0)" -eq 0 ] && [ $i -lt 200 ]; do
	sleep 0.05; i=$((i + 1))
done
hs --db "$db" -r "$PCAP" --topo "$TOPO" -c 'capture status'
check "second console: it says the file is locked" has "is locked by another writer" "$tmp/err"
check "second console: its capture still runs and counts" has 'not stored' "$tmp/out"
check "second console: no crash (status $st)" not_crashed_san
wait "$hspid"
firstst=$?
wait "$feeder"
check "first console: finished its ingest (status $firstst)" [ "$firstst" -eq 0 ]
check "first console: no error from the second" [ ! -s "$tmp/first.err" ]
check "first console: one session, ended" \
	[ "$(q "$db" 'select count(*) from sessions where ended is not null')" = 1 ]
check "first console: integrity_check is ok" integrity "$db"

# --- files the console must refuse, unchanged --------------------------------------
refused() { # NAME FILE MESSAGE: capture runs without history, the file is byte-identical
	name=$1 file=$2 msg=$3
	before=$(cksum <"$file")
	hs --db "$file" -r "$PCAP" --topo "$TOPO" -c 'capture status'
	check "$name: the message says so" has "$msg" "$tmp/err"
	check "$name: the message names the file" has "'$file'" "$tmp/err"
	check "$name: capture still runs" has '^packets  *6741' "$tmp/out"
	check "$name: and counts what it could not store" has 'rows written, [1-9][0-9]* not stored' "$tmp/out"
	check "$name: the run fails, as on a full disk (status $st)" [ "$st" -eq 1 ]
	check "$name: no crash (status $st)" not_crashed_san
	hs --db "$file" -c 'history sessions'
	check "$name: history fails (status $st)" failed_cleanly
	check "$name: history says why" has "$msg" "$tmp/err"
	check "$name: the file is byte-identical" [ "$(cksum <"$file")" = "$before" ]
	check "$name: no log left beside it" [ ! -e "$file-wal" ]
	check "$name: no journal left beside it" [ ! -e "$file-journal" ]
}

hs --db "$tmp/newer.db" -r "$PCAP" -c 'capture status'
python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("pragma user_version = 99"); db.commit(); db.close()' "$tmp/newer.db"
refused "newer schema" "$tmp/newer.db" "is from a newer hopscope (schema version 99"

python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1]); db.execute("create table notes(x)")
db.execute("insert into notes values (42)"); db.commit(); db.close()' "$tmp/foreign.db"
refused "foreign SQLite file" "$tmp/foreign.db" "is not a hopscope history"

printf 'hopscope was never here\n' >"$tmp/words.db"
refused "not a database" "$tmp/words.db" "is not a hopscope history"

# --- what needs root: a read-only file system, a full disk ---------------------------
if [ "$(id -u)" -ne 0 ] || ! command -v mount >/dev/null; then
	hs --db "$tmp/ro.db" -r "$PCAP" -c 'capture status'
	chmod 444 "$tmp/ro.db"
	refused "read-only file" "$tmp/ro.db" "cannot write to '$tmp/ro.db': Permission denied"
	echo "# not root: the read-only and full file systems are not tried"
	finish
fi

ro=$tmp/ro full=$tmp/full
mkdir -p "$ro" "$full"
cleanup='umount "$ro" 2>/dev/null; umount "$full" 2>/dev/null;'
mount -t tmpfs -o size=4m hs-crash-ro "$ro" || hard "cannot mount a tmpfs on '$ro'"
hs --db "$ro/h.db" -r "$PCAP" -c 'capture status'
mount -o remount,ro "$ro" || hard "cannot remount '$ro' read-only"
refused "read-only file system" "$ro/h.db" "cannot write to '$ro/h.db': Read-only file system"
umount "$ro"

# a full disk: what fits is kept, the rest is counted, the file stays sound
# (room for a first session of the default policy, not for a second of all)
mount -t tmpfs -o size=384k hs-crash-full "$full" || hard "cannot mount a tmpfs on '$full'"
hs --db "$full/h.db" -r "$PCAP" --topo "$TOPO" -c 'capture status'
check "disk full: a first small session fits (status $st)" [ "$st" -eq 0 ]
first=$(q "$full/h.db" 'select count(*) from traces')
check "disk full: it stored its traces ($first)" [ "$first" -gt 0 ]
hs --db "$full/h.db" -r "$PCAP" --topo "$TOPO" -c "set history all; capture start $PCAP again; capture status"
check "disk full: the error says so" has "database or disk is full" "$tmp/err"
check "disk full: the error names the file" has "'$full/h.db'" "$tmp/err"
check "disk full: said once" [ "$(grep -c 'cannot write history' "$tmp/err")" -eq 1 ]
check "disk full: said with what was not stored" \
	has "rows not stored so far; the capture goes on" "$tmp/err"
check "disk full: the capture ran to the end" has '^packets  *6741' "$tmp/out"
check "disk full: what could not be stored is counted" 	has 'rows written, [1-9][0-9]* not stored' "$tmp/out"
check "disk full: the capture's summary says it" \
	has "^capture of .*; [1-9][0-9]* history rows not stored\$" "$tmp/out"
check "disk full: the run fails (status $st)" [ "$st" -eq 1 ]
check "disk full: no crash (status $st)" not_crashed_san
check "disk full: integrity_check is ok" integrity "$full/h.db"
check "disk full: the first session is intact ($first traces)" 	[ "$(q "$full/h.db" 'select count(*) from traces where session = 1')" = "$first" ]
umount "$full"
# a disk that fills in the middle of a capture (room for a session to begin,
# not for its traces): the session is ended all the same, the run fails
mount -t tmpfs -o size=320k hs-crash-full "$full" || hard "cannot mount a tmpfs on '$full'"
hs --db "$full/h.db" -r "$PCAP" --topo "$TOPO" -c "set history all; capture start $PCAP again"
check "disk full mid-capture: the run fails (status $st)" [ "$st" -eq 1 ]
check "disk full mid-capture: the second session began" \
	[ "$(q "$full/h.db" 'select count(*) from sessions')" = 2 ]
check "disk full mid-capture: its traces were not stored" \
	[ "$(q "$full/h.db" 'select count(*) from traces where session = 2')" = 0 ]
check "disk full mid-capture: every session is ended" \
	[ "$(q "$full/h.db" 'select count(*) from sessions where ended is null')" = 0 ]
check "disk full mid-capture: integrity_check is ok" integrity "$full/h.db"
umount "$full"
# a disk with no room for a new history: it is not made, and nothing of it
# is left beside where it would have been (SQLite's -wal and -shm)
mount -t tmpfs -o size=16k hs-crash-full "$full" || hard "cannot mount a tmpfs on '$full'"
hs --db "$full/h.db" -r "$PCAP" -c 'help quit'
check "no room for a history: the run fails (status $st)" [ "$st" -eq 1 ]
check "no room for a history: the error says why" has "'$full/h.db': .*No space left on device\|'$full/h.db': database or disk is full" "$tmp/err"
check "no room for a history: nothing left behind ($(ls "$full" | tr '\n' ' '))" \
	[ -z "$(ls -A "$full")" ]
umount "$full"
# the end of a session that does not fit is written again every half second
# and lands when room returns, while the console still runs; a console that
# leaves first leaves its session unended (incomplete), the file sound
if unshare -n true 2>/dev/null; then
	mount -t tmpfs -o size=1m hs-crash-full "$full" || hard "cannot mount a tmpfs on '$full'"
	mkfifo "$tmp/in"
	pid=
	cleanup='[ -z "$pid" ] || kill "$pid" 2>/dev/null; sleep 0.2;'"$cleanup"
	wait_q() { # SQL VALUE: up to 10 s for the history to answer VALUE
		_i=0
		while [ "$(q "$full/h.db" "$1" 2>/dev/null)" != "$2" ] && [ $_i -lt 100 ]; do
			sleep 0.1; _i=$((_i + 1))
		done
	}
	for round in room quit; do
		# a live capture on the loopback of a network namespace of its own:
		# nothing to read, a session open until 'capture stop'
		timeout 60 unshare -n sh -c 'ip link set lo up; exec "$0" "$@"' \
			"$HS" --db "$full/h.db" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
		pid=$!
		exec 3>"$tmp/in"
		echo "capture start lo" >&3
		wait_q 'select count(*) from sessions where ended is null' 1
		dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null
		echo "capture stop" >&3
		i=0
		while ! grep -q 'cannot write history' "$tmp/err" && [ $i -lt 100 ]; do
			sleep 0.1; i=$((i + 1))
		done
		check "$round: a session's end with no room: said" has "database or disk is full" "$tmp/err"
		sleep 0.6
		check "$round: a session's end with no room: not written" \
			[ "$(q "$full/h.db" 'select count(*) from sessions where ended is null')" = 1 ]
		if [ $round = room ]; then
			rm "$full/filler"
			wait_q 'select count(*) from sessions where ended is null' 0
			left=$(q "$full/h.db" 'select count(*) from sessions where ended is null')
			check "room again: the session is ended ($left unended)" [ "$left" = 0 ]
			check "room again: while the console still runs" kill -0 $pid
		fi
		echo quit >&3
		exec 3>&-
		wait $pid
		st=$?
		check "$round: the run fails (status $st)" [ "$st" -eq 1 ]
		rm -f "$full/filler"
		check "$round: integrity_check is ok" integrity "$full/h.db"
	done
	check "quit while full: its session stays unended, the first ended" \
		[ "$(q "$full/h.db" 'select group_concat(e) from (select ended is null as e from sessions order by id)')" = "0,1" ]
	umount "$full"
else
	echo "# no network namespaces: the end of a session written later is not tried"
fi
cleanup=
finish
