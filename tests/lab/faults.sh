#!/bin/bash
# faults: a 100% drop on a link stops the flows that cross it and only those,
# a blackhole route drops at its switch, a loop ends in TTL exceeded between
# the two switches, a rate limit installs tbf, and clear restores everything
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init

lab up >/dev/null 2>&1 || fail "up failed"
map_addresses
h1=$(host_addr h1); h5=$(host_addr h5); h7=$(host_addr h7); h8=$(host_addr h8)

# bad faults are refused before anything changes
expect_refused() {
	local want=$1 out st=0; shift
	out=$(lab fault "$@" 2>&1) || st=$?
	[ "$st" = 2 ] || fail "'fault $*' should exit 2, not $st"
	[[ $out == *"$want"* ]] || fail "'fault $*' said '$out', expected '$want'"
}
expect_refused "no link between 'leaf1' and 'leaf2'" drop leaf1-leaf2 50%
expect_refused "unknown switch 'leaf9'" blackhole leaf9 10.1.4.0/24
expect_refused "invalid rate '150%'" drop leaf1-spine1 150%
expect_refused "host bits are set" blackhole leaf1 10.1.4.1/24
expect_refused "invalid link 'leaf1'" ratelimit leaf1 10mbit
expect_refused "invalid switch name 'x;y'" loop 'x;y' leaf1 10.1.0.0/16
[ -z "$(lab fault list)" ] || fail "a refused fault was recorded"
ok "bad faults refused with a message naming the problem"

# find a source port whose flow h1->h8 crosses spine1 and one that crosses spine2
via1="" via2=""
for sport in $(seq 42000 42031); do
	p=$(on h1 trace "$h8" --tcp 5001 --sport "$sport" | trace_path)
	case $p in
	"leaf1 spine1 leaf4 =$h8") via1=${via1:-$sport} ;;
	"leaf1 spine2 leaf4 =$h8") via2=${via2:-$sport} ;;
	*) fail "flow from port $sport took '$p'" ;;
	esac
	[ -n "$via1" ] && [ -n "$via2" ] && break
done
[ -n "$via1" ] && [ -n "$via2" ] || fail "no flows over both spines"

# drop everything leaf1 sends to spine1: flows over spine1 die after leaf1
lab fault drop leaf1-spine1 100% >/dev/null || fail "fault drop failed"
[[ $(lab fault list) == *"drop leaf1-spine1 1 "* ]] || fail "fault list: $(lab fault list)"
p=$(on h1 trace "$h8" --tcp 5001 --sport "$via1" --max-ttl 4 --timeout 300ms | trace_path || true)
[ "$p" = "leaf1 * * * " ] || fail "flow over the dropping link went '$p'"
p=$(on h1 trace "$h8" --tcp 5001 --sport "$via2" | trace_path)
[ "$p" = "leaf1 spine2 leaf4 =$h8" ] || fail "flow over the other spine went '$p'"
lab fault clear 1 >/dev/null || fail "fault clear 1 failed"
p=$(on h1 trace "$h8" --tcp 5001 --sport "$via1" | trace_path)
[ "$p" = "leaf1 spine1 leaf4 =$h8" ] || fail "after clear the flow went '$p'"
[ -z "$(ip netns exec hs-leaf1 iptables -S HS_FAULT | grep -v '^-N' || true)" ] || fail "drop rule left after clear"
ok "drop 100% stops flows over that link only; clear restores"

# both directions
lab fault drop leaf2-spine2 0.5 --both >/dev/null || fail "fault drop --both failed"
[[ $(ip netns exec hs-leaf2 iptables -S HS_FAULT) == *"-o spine2 -m statistic --mode random --probability 0.5"* ]] ||
	fail "no drop rule in leaf2"
[[ $(ip netns exec hs-spine2 iptables -S HS_FAULT) == *"-o leaf2 -m statistic"* ]] || fail "no drop rule in spine2"
ok "drop --both installs rules on both sides"

# blackhole at spine1: flows through spine1 end there, others pass
lab fault blackhole spine1 10.1.4.0/24 >/dev/null || fail "fault blackhole failed"
# a blackhole discards while routing, before the TTL check: no ICMP from
# spine1, so count the flow's packets arriving at spine1 and at leaf4
for s in spine1 leaf4; do
	ip netns exec "hs-$s" iptables -t raw -I PREROUTING -p tcp --sport "$via1" --dport 5001
done
p=$(on h1 trace "$h8" --tcp 5001 --sport "$via1" --max-ttl 4 --timeout 300ms | trace_path || true)
[ "$p" = "leaf1 * * * " ] || fail "flow into the blackhole went '$p'"
count_at() { ip netns exec "hs-$1" iptables -t raw -L PREROUTING -v -x -n | awk -v p="spt:$via1" '$0 ~ p { print $1 }'; }
[ "$(count_at spine1)" -ge 3 ] || fail "the flow did not reach spine1 ($(count_at spine1) packets)"
[ "$(count_at leaf4)" = 0 ] || fail "the flow got past spine1's blackhole ($(count_at leaf4) packets at leaf4)"
p=$(on h1 trace "$h8" --tcp 5001 --sport "$via2" | trace_path)
[ "$p" = "leaf1 spine2 leaf4 =$h8" ] || fail "flow past the blackhole went '$p'"
# and the whole subnet at its own leaf
lab fault blackhole leaf4 10.1.4.0/24 >/dev/null || fail "second blackhole failed"
if on h5 ping "$h7" --timeout 500ms >/dev/null; then fail "ping through leaf4's blackhole succeeded"; fi
ok "blackhole drops at its switch"

# loop spine1 <-> leaf3 for 10.1.3.0/24: packets bounce until TTL runs out
lab fault loop spine1 leaf3 10.1.3.0/24 >/dev/null || fail "fault loop failed"
# from h1: leaf2-spine2 still drops half its packets both ways (above), and
# ECMP hashes each ping's ICMP id, so a ping from h3 would often die there.
# (an ICMP error can be lost on a loaded machine: try a few times; should it
# never come, say what the switches of the loop did with the packets)
for try in 1 2 3 4 5; do
	out=$(on h1 ping "$h5" --timeout 2s || true)
	[[ $out =~ ^seq=1\ exceeded\ ([0-9.]+) ]] && break
done
if ! [[ $out =~ ^seq=1\ exceeded\ ([0-9.]+) ]]; then
	for s in leaf1 spine1 spine2 leaf3; do
		echo "--- $s: route to $h5 and back to $h1; ICMP and forwarding counters"
		ip -n "hs-$s" route get "$h5" 2>&1 | head -2
		ip -n "hs-$s" route get "$h1" 2>&1 | head -2
		ip netns exec "hs-$s" nstat -az IcmpOutTimeExcds IcmpOutErrors IcmpOutRateLimitGlobal \
			IcmpOutRateLimitHost IpForwDatagrams IpInHdrErrors IpOutNoRoutes 2>&1 | tail -n +2
	done >&2
	fail "ping into the loop: '$out'"
fi
who=${OWNER[${BASH_REMATCH[1]}]:-?}
[[ $who == spine1 || $who == leaf3 ]] || fail "TTL expired at '$who', not in the loop"
p=$(on h1 trace "$h5" --max-ttl 8 --timeout 300ms | trace_path || true)
[[ $p =~ ^leaf1\ spine[12]\ leaf3\ spine1\ leaf3\ spine1\ leaf3\ spine1\ $ ]] || fail "looping path '$p'"
ok "loop bounces packets between spine1 and leaf3 until TTL exceeded"

lab fault ratelimit leaf1-spine2 10mbit >/dev/null || fail "fault ratelimit failed"
[[ $(tc -n hs-leaf1 qdisc show dev spine2) == *"tbf"*"rate 10Mbit"* ]] || fail "no tbf on leaf1's spine2 port"
st=0; out=$(lab fault ratelimit leaf1-spine2 20mbit 2>&1) || st=$?
[ "$st" = 1 ] && [[ $out == *"already rate limited"* ]] || fail "second ratelimit on a link: $st '$out'"
ok "ratelimit installs tbf"

n=$(lab fault list | wc -l)
[ "$n" = 5 ] || fail "expected 5 faults listed, got $n: $(lab fault list)"
lab status | tail -n 6 >/dev/null
lab fault clear >/dev/null || fail "fault clear failed"
[ -z "$(lab fault list)" ] || fail "faults left after clear"
for s in spine1 spine2 leaf1 leaf2 leaf3 leaf4; do
	[ -z "$(ip netns exec "hs-$s" iptables -S HS_FAULT | grep -v '^-N' || true)" ] || fail "drop rules left in $s"
	[ -z "$(ip -n "hs-$s" rule show | awk '$1 ~ /^1[0-9][0-9][0-9]:/' || true)" ] || fail "policy rules left in $s"
done
[[ $(tc -n hs-leaf1 qdisc show dev spine2) != *tbf* ]] || fail "tbf left after clear"
on h3 ping "$h5" --timeout 1s >/dev/null || fail "h3 cannot reach h5 after clear"
on h5 ping "$h7" --timeout 1s >/dev/null || fail "h5 cannot reach h7 after clear"
on h1 ping "$h8" --timeout 1s >/dev/null || fail "h1 cannot reach h8 after clear"
ok "clear removes every fault and the fabric forwards again"
