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
