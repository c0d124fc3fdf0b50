#!/bin/bash
# analyzers: two analyzer daemons on one fabric (up --analyzers 2), each in
# a namespace of its own with half the switches mirroring to it, one
# history on the lab's PostgreSQL server. A fault is injected; one console
# over the history, not attached to either, finds it with 'drops' and
# 'blame' once 'history load' joined the parts each analyzer stored, and
# so does a console attached to analyzer an1, though every copy of the
# faulty path went to an2 (its daemon follows the shared history);
# 'capture status' there lists both analyzers; the loss it shows on the
# faulty link is the one the switch counts, though some packets crossed it
# with all their copies at one analyzer; down cleans everything.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope hs-agent
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || {
	echo "SKIP: $TEST: no PostgreSQL server installed (apt-get install postgresql)" >&2
	exit 77
}

lab up --analyzers 2 >"$LAB_STATE/up.out" 2>&1 ||
	fail "up --analyzers 2 failed: $(tail -n 3 "$LAB_STATE/up.out")"
url=$(cat "$LAB_STATE/pg.url") || fail "no pg.url after up: $(cat "$LAB_STATE/up.out")"
for k in 1 2; do
	[ -S "$LAB_STATE/an$k.sock" ] || fail "no socket of analyzer an$k: $(cat "$LAB_STATE/up.out")"
	out=$(timeout 60 "$HOPSCOPE" --attach "$LAB_STATE/an$k.sock" -c 'capture status; set analyzer' \
		</dev/null) || fail "a console could not attach to an$k: $out"
	grep -q "^source *mir0 (interface)" <<<"$out" || fail "an$k does not capture its mir0: $out"
	grep -q "^analyzer *an$k$" <<<"$out" || fail "an$k is not named so: $out"
done
st=$(lab status) || fail "status failed"
grep -q "^analyzer an2: running pid [0-9]*, consoles attach at $LAB_STATE/an2.sock$" <<<"$st" &&
	grep -q "^shared history: $url$" <<<"$st" || fail "status does not show the analyzers: $st"
ok "up --analyzers 2: two named daemons, each capturing in its own namespace"

# a lossy link, flows across it (some cross it, some retransmit): the
# switches are dealt to the analyzers in turn (spine1 an1, spine2 an2,
# leaf1 an1, leaf2 an2, ...), so every copy at either end of spine2 >
# leaf4 goes to an2; the flows come from the hosts of leaf1 and leaf3,
# which mirror to an1 (from two leaves, so that 007 tells the link they
# share from the first links of their paths)
# 007 votes per 30 s epoch of the wall clock, and the flows of the two
# leaves tell the link only within one: a run that began a few seconds
# before an epoch's end put leaf1's flows in one and leaf3's in the next,
# each epoch a tie between the faulty link and its flows' first link. The
# flows take about 5 s: they start at least 10 s before an epoch ends.
# Flows from leaf2's hosts cross the link too: those via spine2 have
# every copy at an2, the whole of their path, and cross it as often as
# the others. Around the fault, spine2's own counters count the packets
# the switches mirror (SYN, FIN, RST) that reach the link and those that
# leave on it: the loss, counted apart from the analyzers.
s=$(($(date +%s) % 30))
[ "$s" -lt 20 ] || sleep $((31 - s))
lab fault drop spine2-leaf4 30% >/dev/null
dev=$(ip netns exec hs-spine2 iptables -S HS_FAULT | sed -n 's/.* -o \([^ ]*\) .*statistic.*/\1/p')
[ -n "$dev" ] || fail "no fault rule on spine2: $(ip netns exec hs-spine2 iptables -S HS_FAULT)"
for f in "SYN SYN" "SYN,FIN FIN" "SYN,FIN,RST RST"; do
	# shellcheck disable=SC2086 # (a mask and the flags: two words)
	ip netns exec hs-spine2 iptables -I HS_FAULT 1 -o "$dev" -p tcp --tcp-flags $f -m comment --comment reach &&
		ip netns exec hs-spine2 iptables -A HS_FAULT -o "$dev" -p tcp --tcp-flags $f -m comment --comment leave ||
		hard "cannot count the packets on spine2 > leaf4"
done
flows h3 h8 5104 60 &
flows h1 h8 5102 40
wait
flows h5 h8 5103 40
lab fault clear >/dev/null
sleep 7		# the last traces close, and the heartbeats of the next 5 s are in
counted() { ip netns exec hs-spine2 iptables -L HS_FAULT -v -n -x | awk -v c="/* $1 */" 'index($0, c) { n += $1 } END { print n + 0 }'; }
reach=$(counted reach) left=$(counted leave)
[ "$reach" -gt 50 ] || fail "too few packets reached spine2 > leaf4 to tell a loss: $reach"

hs() { timeout 60 "$HOPSCOPE" --db "$url" --topo "$LAB_STATE/topo" "$@" </dev/null; }
out=$(hs -c "sql 'select analyzer, count(*) as n from traces group by analyzer order by analyzer'") ||
	fail "sql over the history failed: $out"
grep -q '^an1 | [1-9]' <<<"$out" && grep -q '^an2 | [1-9]' <<<"$out" ||
	fail "the history does not hold traces of both analyzers: $out"
ok "both analyzers wrote their traces to the one history"

out=$(hs -c 'history load; drops; blame') || fail "history load; drops; blame failed: $out"
# blame's most voted link: in its table when above the noise, else named
# in the line that says so (a few flows on a small fabric)
found() {
	grep -Eq '^spine2 > leaf4 +[1-9]' <<<"$1" &&
		grep -Eq '^ *(spine2 - leaf4|leaf4 - spine2) |most voted, (spine2 - leaf4|leaf4 - spine2),' <<<"$1"
}
found "$out" || fail "drops and blame do not find the fault on spine2 > leaf4: $out"
ok "one console over the history: drops and blame find the fault ($(grep -m1 '^spine2 > leaf4' <<<"$out" | awk '{print $4, "drops"}'))"
# the loss shown, drops / (drops + crossed), within 5 points of the one
# spine2 counted (a copy lost on the mirror network, or its packet's
# retransmission taken for it, is all that may tell them apart)
shown=$(awk '/^spine2 > leaf4 / { sub(/%$/, "", $6); print $6; exit }' <<<"$out")
truth=$(awk -v r="$reach" -v l="$left" 'BEGIN { printf "%.1f", 100 * (r - l) / r }')
awk -v s="$shown" -v t="$truth" 'BEGIN { d = s - t; exit !(s != "" && d <= 5 && d >= -5) }' ||
	fail "the loss of spine2 > leaf4 over the history is ${shown:-not shown}%, spine2 counted $truth% ($((reach - left)) of $reach lost): $(grep -A1 '^link' <<<"$out")"
ok "the loss over the history is the link's: ${shown}% shown, ${truth}% counted by spine2 ($((reach - left)) of $reach)"

# attached to an1, which saw none of those copies: its view follows the
# history (once a second, a few seconds behind the captures)
for ((i = 0; i < 30; i++)); do
	out=$(timeout 60 "$HOPSCOPE" --attach "$LAB_STATE/an1.sock" -c 'drops; blame' </dev/null) ||
		fail "drops; blame attached to an1 failed: $out"
	found "$out" && break
	sleep 1
done
found "$out" || fail "attached to an1, drops and blame do not find the fault on spine2 > leaf4: $out"
out=$(timeout 60 "$HOPSCOPE" --attach "$LAB_STATE/an1.sock" -c 'capture status' </dev/null)
grep -Eq '^view +auto: [1-9][0-9]* traces from the history \(1 other analyzer\)' <<<"$out" ||
	fail "capture status of an1 does not say it follows the history: $out"
ok "a console attached to an1: drops and blame find the fault whose copies went to an2"

out=$(hs -c 'capture status') || fail "capture status over the history failed: $out"
for k in 1 2; do
	grep -Eq "^  an$k +seen .* ago, capturing \(session [0-9]+\), [1-9][0-9]* packets" <<<"$out" ||
		fail "capture status does not show an$k capturing: $out"
done
ok "capture status over the history: each analyzer by its heartbeat"

pids=$(cat "$LAB_STATE"/an[12].pid)
lab down >/dev/null || fail "down failed"
for pid in $pids; do
	st=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null) || st=Z
	[ "${st:0:1}" = Z ] || fail "analyzer $pid outlived down"
done
! ip netns list | grep -q '^hs-an' || fail "an analyzer's namespace outlived down"
[ ! -e "$LAB_STATE/pg" ] || fail "the PostgreSQL server's directory outlived down"
! pgrep -f "$LAB_STATE/pg" >/dev/null || fail "the PostgreSQL server outlived down"
ok "down stops the analyzers and their PostgreSQL server"
