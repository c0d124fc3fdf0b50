#!/bin/sh
# retention.sh - the history's retention: an age and a size kept in the file,
# enforced by 'history prune' and by the console in the background, oldest
# first; bad values change nothing.
. "$(dirname "$0")/lib.sh"

SYNTH=$top_builddir/tests/tools/hs-synth
H=$tmp/h.db
for i in 1 2; do
	"$SYNTH" --packets 20000 --seed $i -w "$tmp/$i.pcap" -t "$tmp/$i.topo" >/dev/null 2>&1 ||
		hard "hs-synth failed"
done
sessions() { sqlite3 "$H" 'select group_concat(id) from sessions'; }
store() { hs --db "$H" --topo "$tmp/1.topo" -c "set history all; capture start $tmp/$1.pcap"; }

hs --db "$tmp/none.db" -c 'set retention'
check "showing the retention of no history makes none (status $st)" \
	eval 'failed_cleanly && has "no history at" "$tmp/err" && [ ! -e "$tmp/none.db" ]'
hs --db "$tmp/none.db" -c 'history prune'
check "nor does pruning it (status $st)" \
	eval 'failed_cleanly && has "no history at" "$tmp/err" && [ ! -e "$tmp/none.db" ]'

# an hour between the two sessions, however slow the machine
age1() { sqlite3 "$H" 'update sessions set started = started - 3600000000000,
	ended = ended - 3600000000000 where id = 1'; }
store 1
age1
store 2
check "two sessions stored" [ "$(sessions)" = "1,2" ]

hs --db "$H" -c 'history prune'
check "prune without a retention is refused (status $st)" \
	eval 'failed_cleanly && has "the history has no retention" "$tmp/err"'
hs --db "$H" -c 'set retention 2h; history prune; set retention'
check "two hours: nothing is removed (status $st)" \
	eval '[ "$st" -eq 0 ] && has "^removed 0 traces, 0 flows" "$tmp/out" && [ "$(sessions)" = "1,2" ]'
check "the bound is shown as set" has '^retention *2h (in the history)' "$tmp/out"

for bad in bogus 0s 10x 1KiB '1d 2d' '1d 1GiB 3'; do
	hs --db "$H" -c "set retention $bad"
	check "'set retention $bad' is refused (status $st)" \
		eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] && has "retention" "$tmp/err"'
done
hs --db "$H" -c 'set retention'
check "a refused value changes nothing" has '^retention *2h (in the history)' "$tmp/out"

# the first session ended an hour before the second one did
hs --db "$H" -c 'set retention 30m; history prune; history'
check "an age removes the sessions that ended before it (status $st)" \
	eval '[ "$st" -eq 0 ] && has "^removed 20000 traces, [1-9][0-9]* flows, .* 1 sessions" "$tmp/out"'
check "nothing of it is left, the newer one stays" eval '[ "$(sessions)" = "2" ] &&
	[ "$(sqlite3 "$H" "select count(*) from traces where session = 1")" -eq 0 ] &&
	[ "$(sqlite3 "$H" "select count(*) from flows where session = 1")" -eq 0 ] &&
	[ "$(sqlite3 "$H" "select count(*) from traces where session = 2")" -eq 20000 ]'
check "'history' says what retention removed" has '^retention: 30m (.* in use); at .* removed 20000 traces' "$tmp/out"

# a size: the oldest session goes first, the newest stays
rm -f "$H"*
store 1
store 2
hs --db "$H" -c 'set retention 4MiB; history prune'
check "a size removes the oldest session (status $st)" \
	eval '[ "$st" -eq 0 ] && [ "$(sessions)" = "2" ]'
check "the newest session keeps its traces" \
	[ "$(sqlite3 "$H" 'select count(*) from traces where session = 2')" -eq 20000 ]
used=$(sqlite3 "$H" 'select (page_count - freelist_count) * page_size from pragma_page_count, pragma_freelist_count, pragma_page_size')
check "what is in use is within the bound ($used bytes)" [ "$used" -le 4194304 ]
check "the file gave the pages back" [ "$(stat -c %s "$H")" -le 4194304 ]

# a session being captured is never taken, not even over the size: a
# capture from a FIFO (a file, as the console sees it) whose writer holds
# it open, 10 s of capture time so that its traces are stored as it reads;
# its console looks at the bounds every 100 ms. The writer holds it open
# until half the traces are seen stored, and a second more (60 s at most)
"$SYNTH" --packets 20000 --duration 10 --seed 3 -w "$tmp/3.pcap" -t "$tmp/3.topo" >/dev/null 2>&1 ||
	hard "hs-synth failed"
rm -f "$H"*
store 1
mkfifo "$tmp/fifo"
(cat "$tmp/3.pcap"; i=0; while [ ! -e "$tmp/enough" ] && [ $i -lt 600 ]; do sleep 0.1;
	i=$((i + 1)); done) >"$tmp/fifo" &
writer=$!
HOPSCOPE_RETENTION_PERIOD=100ms timeout 60 "$HS" --db "$H" --topo "$tmp/3.topo" \
	-c "set retention 1MiB; set history all; capture start $tmp/fifo" >/dev/null 2>&1 &
capturing=$!
# (read while the console writes: wait for its commits)
q() { sqlite3 -cmd '.timeout 10000' "$H" "$1"; }
seen=0 taken=0 most=0 after=0
while kill -0 "$writer" 2>/dev/null; do
	if [ "$(q 'select count(*) from sessions where id = 2')" = 1 ]; then
		seen=1; k=$(q 'select count(*) from traces where session = 2')
		[ "${k:-0}" -gt "$most" ] && most=$k
	elif [ "$seen" = 1 ]; then
		taken=1
	fi
	[ "$most" -ge 10000 ] && after=$((after + 1))
	[ "$after" -gt 3 ] && touch "$tmp/enough"
	sleep 0.3
done
wait "$capturing"
check "over the size, the session being captured stays, its traces too ($most)" \
	eval '[ "$seen" = 1 ] && [ "$taken" = 0 ] && [ "$most" -ge 10000 ]'

# nor one that another analyzer's heartbeat names running: session 1 as if
# captured elsewhere, no end, heard from now
rm -f "$H"*
store 1
store 2
sqlite3 "$H" "update sessions set ended = null where id = 1;
	insert into analyzers(name, session, seen, packets, kernel_drops, rate, queued, lost)
	values ('elsewhere', 1, $(date +%s%N), 0, 0, 0, 0, 0)"
hs --db "$H" -c 'set retention 1MiB; history prune'
check "over the size, a session an analyzer runs stays (status $st)" \
	eval '[ "$st" -eq 0 ] && [ "$(sessions)" = "1,2" ] &&
	[ "$(sqlite3 "$H" "select count(*) from traces where session = 1")" -eq 20000 ]'

# in the background: a console looks at the bounds while it works
rm -f "$H"*
store 1
age1
HOPSCOPE_RETENTION_PERIOD=100ms hs --db "$H" --topo "$tmp/1.topo" \
	-c "set retention 30m; capture start $tmp/2.pcap; sleep 0.5; history"
check "the console removes what is past the bound by itself (status $st)" \
	eval '[ "$st" -eq 0 ] && [ "$(sessions)" = "2" ]'
check "and says so under 'history'" has '^retention: 30m .* removed 20000 traces' "$tmp/out"

hs --db "$H" -c 'set retention off; set retention; history prune'
check "off: no bound" eval 'has "^retention *off" "$tmp/out" && has "no retention" "$tmp/err"'

finish
