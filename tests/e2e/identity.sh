#!/bin/sh
# identity.sh - one trace per original packet: a single switch's copies of
# an IPv4 flow sending IP ID 0 and of an IPv6 flow (a pure ACK and a data
# segment with one sequence number, an ACK and a FIN with one sequence and
# ack number), and of two IPv6 datagrams of one length, give one trace each;
# the copy the switch sent twice is counted as a duplicate, in text and JSON
# (tests/golden/identity.pcap, written by hs-mkgolden)
. "$(dirname "$0")/lib.sh"

PCAP=$top_srcdir/tests/golden/identity.pcap
[ -f "$PCAP" ] || hard "'$PCAP' is missing"

hs --db "$tmp/h.db" --json -c "set history all; capture start $PCAP; traces limit 100;
	sql 'select src, proto, seq, tcp_flags, len from traces order by id'; capture status"
check "the capture reads (status $st)" [ "$st" -eq 0 ]
# each verb's answer is one document on one line: count the objects in it
check "12 traces of 12 packets" [ "$(grep -o '"outcome":' "$tmp/out" | wc -l)" -eq 12 ]
rows() { grep -o "\"src\":\"$1\",\"proto\":$2,\"seq\":$3,\"tcp_flags\":$4,\"len\":$5}" "$tmp/out" | wc -l; }
one_each() { [ "$1" -eq 1 ] && [ "$2" -eq 1 ]; }
for v in "10.1.1.10 40" "2001:db8:1::10 60"; do
	set -- $v
	check "$1: SYN" [ "$(rows "$1" 6 1000 2 "$2")" -eq 1 ]
	check "$1: the pure ACK and the data segment of one sequence number" \
		one_each "$(rows "$1" 6 1001 16 "$2")" "$(rows "$1" 6 1001 24 $(($2 + 100)))"
	check "$1: the ACK and the FIN of one sequence and ack number" \
		one_each "$(rows "$1" 6 1101 16 "$2")" "$(rows "$1" 6 1101 17 "$2")"
done
check "two IPv6 datagrams of one length" [ "$(rows 2001:db8:1::10 17 0 0 64)" -eq 2 ]
check "capture status --json: 13 copies, 1 duplicate, 12 traces" \
	has '"copies":13,"duplicates":1,"traces_open":0,"traces_closed":12' "$tmp/out"

hs --db "$tmp/h2.db" -r "$PCAP" -c 'capture status'
check "capture status: the duplicate counted beside the copies" \
	has '^copies  *13 traced, 1 duplicates$' "$tmp/out"
finish
