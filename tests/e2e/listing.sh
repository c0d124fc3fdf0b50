#!/bin/sh
# listing.sh - a listing cut by its limit says so, with the count it cut
# from and how to see more; JSON is one document, its rows and the total.
. "$(dirname "$0")/lib.sh"

S=$top_srcdir/share/sample/sample.pcap
rows() { # KEY: how many rows the document of $tmp/out has under KEY
	python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))[sys.argv[2]]))' "$tmp/out" "$1"
}
total() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["total"])' "$tmp/out"; }
hs -r "$S" --json -c 'traces limit 1000000'
all=$(rows traces)
hs -r "$S" -c 'traces'
check "traces: 50 rows by default, then what was cut ($all in all)" \
	eval '[ "$all" -gt 50 ] && [ "$(grep -c "^[0-9]" "$tmp/out")" -eq 50 ] &&
	      [ "$(tail -n 1 "$tmp/out")" = "(50 of $all traces; traces limit N)" ]'
hs -r "$S" -c "traces limit $all"
check "traces: no footer when nothing was cut" hasnt 'traces limit N' "$tmp/out"
hs -r "$S" --json -c 'traces'
check "traces --json: 50 objects, the total and no footer" \
	eval '[ "$(rows traces)" -eq 50 ] && [ "$(total)" -eq "$all" ] && hasnt "limit N" "$tmp/out"'
# a looped path (dozens of hops) gives way in its middle, its ends kept
hs -r "$S" --topo "$top_srcdir/share/sample/sample.topo" -c 'traces outcome looped limit 5'
check "traces: looped paths give way in the middle, the line stays short" \
	eval '[ "$(grep -c "looped  *leaf[0-9] > spine[0-9] > .* > \.\.\. > .*spine[0-9] (+[0-9]*)  \[" "$tmp/out")" -eq 5 ] &&
	      [ "$(awk "{ if (length(\$0) > n) n = length(\$0) } END { print n }" "$tmp/out")" -le 200 ]'
hs -r "$S" --json -c 'flows limit 100000000'
flows=$(rows flows)
hs -r "$S" -c 'flows limit 3'
check "flows: what was cut ($flows in all)" \
	eval '[ "$(tail -n 1 "$tmp/out")" = "(3 of $flows flows; flows limit N)" ]'
# every listing says it the same way, and its JSON gives the count it cut from
T=$top_srcdir/share/sample/sample.topo
key() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$tmp/out" "$1"; }
hs -r "$S" --topo "$T" --json -c 'rates limit 1'
rflows=$(key flows_total) rlinks=$(key links_total)
hs -r "$S" --topo "$T" -c 'rates limit 1'
check "rates: what was cut ($rflows flows, $rlinks links in all)" \
	eval '[ "$rflows" -gt 1 ] && [ "$rlinks" -gt 1 ] &&
	      has "^(1 of $rflows flows; rates limit N)$" "$tmp/out" &&
	      has "^(1 of $rlinks links; rates limit N)$" "$tmp/out"'
hs -r "$S" --topo "$T" --json -c 'drops limit 1'
dlinks=$(key total)
hs -r "$S" --topo "$T" -c 'drops limit 1'
check "drops: what was cut ($dlinks links in all)" \
	eval '[ "$dlinks" -gt 1 ] && has "^(1 of $dlinks links; drops limit N)$" "$tmp/out"'
finish
