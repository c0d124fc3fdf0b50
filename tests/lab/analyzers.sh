#!/bin/bash
# analyzers: two analyzer daemons on one fabric (up --analyzers 2), each in
# a namespace of its own with half the switches mirroring to it, one
# history on the lab's PostgreSQL server. A fault is injected; one console
# over the history, not attached to either, finds it with 'drops' and
# 'blame' once 'history load' joined the parts each analyzer stored;
# 'capture status' there lists both analyzers; down cleans everything.
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

# a lossy link, flows across it (some cross it, some retransmit)
h1=$(host_addr h1); h8=$(host_addr h8)
lab fault drop leaf1-spine1 30% >/dev/null
flows h1 h8 5102 40
lab fault clear >/dev/null
sleep 7		# the last traces close, and the heartbeats of the next 5 s are in

hs() { timeout 60 "$HOPSCOPE" --db "$url" --topo "$LAB_STATE/topo" "$@" </dev/null; }
out=$(hs -c "sql 'select analyzer, count(*) as n from traces group by analyzer order by analyzer'") ||
	fail "sql over the history failed: $out"
grep -q '^an1 | [1-9]' <<<"$out" && grep -q '^an2 | [1-9]' <<<"$out" ||
	fail "the history does not hold traces of both analyzers: $out"
ok "both analyzers wrote their traces to the one history"

out=$(hs -c 'history load; drops; blame') || fail "history load; drops; blame failed: $out"
grep -Eq '^leaf1 > spine1 +[1-9]' <<<"$out" || fail "drops does not find the fault on leaf1 > spine1: $out"
# blame's most voted link: in its table when above the noise, else named
# in the line that says so (a few flows on a small fabric)
grep -Eq '^ *(leaf1 - spine1|spine1 - leaf1) |most voted, (leaf1 - spine1|spine1 - leaf1),' <<<"$out" ||
	fail "blame does not name leaf1-spine1: $out"
ok "one console over the history: drops and blame find the fault ($(grep -m1 '^leaf1 > spine1' <<<"$out" | awk '{print $4, "drops"}'))"

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
