#!/bin/sh
# decode.sh - decode the way tcpdump is used: a filter expression on the
# inner packet after the file, -c N anywhere, addresses written ADDR:PORT
# ([ADDR]:PORT for IPv6) as every other verb writes them.
. "$(dirname "$0")/lib.sh"

S=$top_srcdir/share/sample/sample.pcap
G=$top_srcdir/tests/golden

hs -c "decode $S -c 2"
check "-c 2 after the file: two lines (status $st)" \
	eval '[ "$st" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 2 ]'
check "ADDR:PORT > ADDR:PORT" has '| 10\.1\.3\.11:42601 > 10\.1\.1\.11:5001 tcp \[S\]' "$tmp/out"

# the expression keeps exactly the frames whose inner packet it matches:
# counted against the JSON of every frame
hs --json -c "decode $S"
want=$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) for o in [json.loads(l)]
          if o.get("proto") == 6 and 5001 in (o.get("sport"), o.get("dport")) and o.get("tcp_flags", 0) & 1))' "$tmp/out")
hs -c "decode $S tcp port 5001 and 'tcp[tcpflags] & tcp-fin != 0'"
got=$(wc -l <"$tmp/out")
check "an expression keeps the FINs of port 5001 ($got of $want)" \
	eval '[ "$st" -eq 0 ] && [ "$want" -gt 0 ] && [ "$got" -eq "$want" ]'
check "and only them" eval '! grep -v "5001.*\[F" "$tmp/out" | grep -q .'
hs -c "decode -c 3 $S tcp port 5001"
check "-c before the file, with an expression: three lines" \
	eval '[ "$st" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 3 ]'
hs -c "decode $G/ip6in4.pcap -c 1 ip6"
check "IPv6 as [ADDR]:PORT" has '| \[2001:db8:1::10\]:40000 > \[2001:db8:2::20\]:443 tcp' "$tmp/out"

hs -c "decode $S 'tcp port'"
check "a bad expression is one error naming it (status $st)" \
	eval 'failed_cleanly && has "decode: bad filter .tcp port." "$tmp/err" && [ ! -s "$tmp/out" ]'
hs -c "decode $S -c 0"
check "-c 0 is refused" eval 'failed_cleanly && has "needs a count" "$tmp/err"'
finish
