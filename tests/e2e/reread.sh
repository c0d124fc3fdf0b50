#!/bin/sh
# reread.sh - the history knows what it has read: a capture file read again
# (by any path) adds nothing, its traces keep the names of the session that
# stored them, and 'again' stores another session only when asked.
. "$(dirname "$0")/lib.sh"

S=$top_srcdir/share/sample/sample.pcap
T=$top_srcdir/share/sample/sample.topo
H=$tmp/h.db
counts() { hs --db "$H" -c "sql 'select outcome, count(*) from traces group by outcome'"; cp "$tmp/out" "$tmp/$1"; }
sessions() { sqlite3 "$H" 'select count(*) from sessions'; }

hs -r "$S" --topo "$T" --db "$H" -c 'capture status'
check "the first read stores the sample (status $st)" eval '[ "$st" -eq 0 ] && hasnt "already in the history" "$tmp/err"'
counts once
check "its dropped and looped traces are there" eval 'has "^dropped | 28$" "$tmp/once" && has "^looped | 85$" "$tmp/once"'

hs -r "$S" --topo "$T" --db "$H" -c 'traces outcome dropped limit 1'
check "read again: said once, naming the session" \
	eval '[ "$st" -eq 0 ] && [ "$(grep -c "is already in the history (session 1)" "$tmp/err")" -eq 1 ]'
check "read again: the traces are shown, named as stored (1:N)" has '^1:[0-9]* .* dropped ' "$tmp/out"
counts twice
check "read again: the same counts as once" cmp -s "$tmp/once" "$tmp/twice"
check "read again: no second session" [ "$(sessions)" -eq 1 ]

cp "$S" "$tmp/copy.pcap"
hs -r "$tmp/copy.pcap" --topo "$T" --db "$H" -c 'capture status'
check "a copy under another name is the same file" has "already in the history (session 1)" "$tmp/err"
hs --topo "$T" --db "$H" -c "capture start $tmp/copy.pcap; capture status"
check "so is 'capture start FILE'" has "already in the history (session 1)" "$tmp/err"
counts thrice
check "still the same counts" cmp -s "$tmp/once" "$tmp/thrice"

hs --topo "$T" --db "$H" -c "capture start $S again"
check "'capture start FILE again' stores another session" \
	eval '[ "$st" -eq 0 ] && hasnt "already in the history" "$tmp/err" && [ "$(sessions)" -eq 2 ]'
hs -r "$S" --again --topo "$T" --db "$H" -c 'capture status'
check "and so does -r FILE --again" [ "$(sessions)" -eq 3 ]
counts after
check "each of them counted" has '^dropped | 84$' "$tmp/after"

hs --db "$H" -c "capture start lo again"
check "'again' is for a file" eval 'failed_cleanly && has "'"'again'"' is for a file" "$tmp/err"'
hs --again --db "$H" -c help
check "--again without -r is a usage error" [ "$st" -eq 2 ]
finish
