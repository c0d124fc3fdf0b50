#!/bin/sh
# times.sh - every time in text is one human form, a date and a time of day
# to the microsecond, in UTC unless 'set tz local'; JSON keeps integer
# nanoseconds since the epoch (tests/golden/identity.pcap starts at 1700000000, 2023-11-14
# 22:13:20 UTC; its last copy is 12.204us later)
. "$(dirname "$0")/lib.sh"

PCAP=$top_srcdir/tests/golden/identity.pcap
[ -f "$PCAP" ] || hard "'$PCAP' is missing"
LAST='2023-11-14 22:13:20\.000012'

run() { hs --db "$tmp/h.db" -c "set history all; capture start $PCAP; $1"; }

run 'traces limit 1; traces show 12; flows limit 1; history traces limit 1; decode '"$PCAP"
check "the verbs run (status $st)" [ "$st" -eq 0 ]
check "traces: the time of the first copy" has "^1:12  *$LAST  *\[2001:db8:1::10\]:40000" "$tmp/out"
check "traces show: the time of each hop" has "^1  *192.0.2.11  *192.0.2.11  *$LAST " "$tmp/out"
check "flows: when it was last seen" has "udp  *2  *128 $LAST " "$tmp/out"
check "history traces: the time of the first copy" has "^1:12  *$LAST  *2001:db8:1::10" "$tmp/out"
check "decode: the capture time" has "^13 $LAST erspan2 " "$tmp/out"
check "no epoch seconds in text" hasnt '1700000000' "$tmp/out"

rm -f "$tmp"/h.db*
run 'traces limit 1 --json; history traces limit 1 --json'
check "traces --json: nanoseconds since the epoch" \
	has '"trace":"1:12","ts_ns":1700000000000012204,.*"hops":\[{"switch":"192.0.2.11","addr":"192.0.2.11","ts_ns":1700000000000012204,' "$tmp/out"
check "history traces --json: nanoseconds since the epoch" has '"trace":"1:12","ts_ns":1700000000000012204,' "$tmp/out"

# a trace whose hops carry switch timestamps on the capture's clock (the
# sample's 1:589: captured at .550630, stamped by leaf1 at .550473) is
# listed at its first hop's time as 'traces show' gives it
rm -f "$tmp"/h.db*
S=$top_srcdir/share/sample
hs --db "$tmp/h.db" -r "$S/sample.pcap" --topo "$S/sample.topo" \
	-c 'traces limit 3; traces show 589; traces limit 3 --json; traces show 589 --json'
check "the sample's traces (status $st)" [ "$st" -eq 0 ]
check "traces: the first hop's time, on the switches' clock" \
	has '^1:589  *2026-11-22 08:36:06\.550473  ' "$tmp/out"
check "traces: newest first by that time (1:588 is newer than 1:589)" \
	[ "$(awk '/^1:[0-9]+ /{printf "%s ", $1}' "$tmp/out")" = "1:588 1:589 1:587 " ]
check "traces show: the same time at the first hop" \
	has '^1  *leaf1  *10\.255\.0\.3  *2026-11-22 08:36:06\.550473 ' "$tmp/out"
check "traces --json: the capture time and the switch's" \
	has '"trace":"1:589","ts_ns":1795336566550630000,"switch_ts_ns":1795336566550473000,"src"' "$tmp/out"
check "traces --json: each hop's switch time" \
	has '"hops":\[{"switch":"leaf1","addr":"10.255.0.3","ts_ns":1795336566550630000,"switch_ts_ns":1795336566550473000,"ttl":64}' "$tmp/out"
check "traces show --json: the trace's switch time" \
	has '"len":60,"ts_ns":1795336566550630000,"switch_ts_ns":1795336566550473000,"hops"' "$tmp/out"
# the stored ones are listed at the same time, in the same order
rm -f "$tmp"/h.db*
hs --db "$tmp/h.db" --topo "$S/sample.topo" -c "set history all; capture start $S/sample.pcap" \
	-c 'history traces limit 3; history show 1:589; history traces limit 3 --json'
check "history traces: the first hop's time, on the switches' clock" \
	has '^1:589  *2026-11-22 08:36:06\.550473  ' "$tmp/out"
check "history traces: newest first by that time, as traces lists them" \
	[ "$(awk '/^1:[0-9]+ .* tcp /{printf "%s ", $1}' "$tmp/out")" = "1:588 1:589 1:587 1:589 " ]
check "history traces --json: that time" \
	has '"trace":"1:589","ts_ns":1795336566550473000,' "$tmp/out"
rm -f "$tmp"/h.db*
hs --db "$tmp/h.db" -r "$S/sample.pcap" --topo "$S/sample.topo" -c 'loops; traces show 6'
check "loops: from its first trace's time to its last's, as 'traces' shows them" \
	has 'e\.g\. trace 1:6 .* from 2026-11-22 08:36:04\.614804 to 2026-11-22 08:36:06\.549391$' "$tmp/out"
check "traces show: 1:6's first hop at that time" \
	has '^1  *leaf1  *10\.255\.0\.3  *2026-11-22 08:36:04\.614804 ' "$tmp/out"

rm -f "$tmp"/h.db*
TZ=EST5 run 'set tz local; traces limit 1; set tz; set tz utc; traces limit 1'
check "set tz local: the local time zone" has '^1:12  *2023-11-14 17:13:20\.000012 ' "$tmp/out"
check "set tz: says which" has '^tz  *local$' "$tmp/out"
check "set tz utc: back to UTC" has "^1:12  *$LAST " "$tmp/out"
finish
