#!/bin/bash
# mixed: one fabric of lab and SONiC switches. 'hopscope-lab up --sonic
# leaf1,spine1' gives those two a CONFIG_DB (driver sonic in the topology)
# and leaves leaf2 and spine2 lab switches. Through the console each switch
# goes to its own driver: the default set is one rule on both kinds; a
# flow's rule on leaf1 and leaf2 is one id, rows in leaf1's CONFIG_DB and
# netfilter rules in leaf2; a rule that fails on the SONiC switch is taken
# back from the lab switch it went to first, and the error names the switch
# and the row; a probe crosses both kinds; one snapshot reads all four
# switches at one instant; removing the rules leaves neither kind anything.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
sonic_init
# netfilter mirror rules of rule ID in a lab switch
tagged() { ip netns exec "hs-$1" iptables -t raw -S HS_MIRROR | grep -cE -- "hs-mirror:$2\"? .*-j NFLOG" || true; }
hs() {
	local st=0
	"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/history.db" --json -c "$2" \
		>"$LAB_STATE/$1.json" 2>"$LAB_STATE/$1.err" </dev/null || st=$?
	echo "$st" >"$LAB_STATE/$1.st"
}
must() { hs "$@"; [ "$(cat "$LAB_STATE/$1.st")" = 0 ] ||
	fail "$1: hopscope exited $(cat "$LAB_STATE/$1.st"): $(head -c 600 "$LAB_STATE/$1.err")"; }

lab up --sonic leaf1,spine1 --shape leafspine:2,2,2 >"$LAB_STATE/up.out" 2>&1 ||
	fail "up --sonic leaf1,spine1 failed: $(tail -n 3 "$LAB_STATE/up.out")"
grep -q "^switch leaf1 .* driver sonic redis unix:" "$LAB_STATE/topo" &&
	grep -q "^switch spine1 .* driver sonic redis unix:" "$LAB_STATE/topo" &&
	! grep -q "^switch leaf2 .* driver" "$LAB_STATE/topo" &&
	! grep -q "^switch spine2 .* driver" "$LAB_STATE/topo" ||
	fail "the topology does not mix the kinds: $(grep ^switch "$LAB_STATE/topo")"
[ ! -e "$LAB_STATE/sonic/leaf2" ] || fail "a lab switch got a redis"
[ "$(config_db leaf1 --scan --pattern 'ACL_RULE|hopscope_mirror|hopscope_1_*' | wc -l)" = 8 ] ||
	fail "the default set (rule 1) is not in leaf1's CONFIG_DB"
[ "$(tagged leaf2 1)" -gt 0 ] || fail "the default set (rule 1) is not in leaf2's netfilter"
must list0 "mirror list"
[ "$(grep -c '"match":"default"' "$LAB_STATE/list0.json")" = 1 ] &&
	grep -q '"id":1,"session":1,"switches":\["all"\],"match":"default"' "$LAB_STATE/list0.json" ||
	fail "mirror list does not show the default set once: $(cat "$LAB_STATE/list0.json")"
ok "up --sonic leaf1,spine1: a mixed fabric, the default set one rule on both kinds"

h1=$(host_addr h1)
h3=$(host_addr h3)
must add "mirror add on leaf1,leaf2 session 5 flow icmp $h1 $h3"
grep -q '"id":2,"session":5,"switches":\["leaf1","leaf2"\]' "$LAB_STATE/add.json" ||
	fail "mirror add: $(cat "$LAB_STATE/add.json")"
[ "$(config_db leaf1 HGET 'ACL_RULE|hopscope_mirror|hopscope_2_1' SRC_IP)" = "$h1/32" ] ||
	fail "rule 2 is not in leaf1's CONFIG_DB"
[ "$(tagged leaf2 2)" = 2 ] || fail "rule 2 is not in leaf2's netfilter: $(tagged leaf2 2) rules"
[ -z "$(config_db spine1 --scan --pattern '*hopscope_2_*')" ] || fail "rule 2 went to spine1"
must list1 "mirror list"
grep -q '"id":2,"session":5,"switches":\["leaf2","leaf1"\]' "$LAB_STATE/list1.json" ||
	fail "mirror list does not show rule 2 on both switches: $(cat "$LAB_STATE/list1.json")"
ok "mirror add on a lab and a SONiC switch: one id, each switch through its own driver"

# spine1's redis refuses writes: the lab half (spine2) goes in first and must be taken back
config_db spine1 CONFIG SET maxmemory 1 >/dev/null
hs fail "mirror add on spine2,spine1 syn"
config_db spine1 CONFIG SET maxmemory 0 >/dev/null
[ "$(cat "$LAB_STATE/fail.st")" != 0 ] || fail "a failing SONiC switch did not fail the add"
grep -q "switch 'spine1': cannot write row 'ACL_RULE|hopscope_mirror|hopscope_3_1'.*rolled back" \
	"$LAB_STATE/fail.err" ||
	fail "the error does not name spine1 and its row: $(cat "$LAB_STATE/fail.err")"
[ "$(tagged spine2 3)" = 0 ] || fail "rule 3 was left in spine2's netfilter"
must list2 "mirror list"
! grep -q '"id":3' "$LAB_STATE/list2.json" || fail "rule 3 is still listed: $(cat "$LAB_STATE/list2.json")"
ok "a rule that fails on the SONiC switch is taken back from the lab switch, the error names switch and row"

hs probe "probe > $h3 via leaf1,spine2,leaf2 count 3 interval 50ms --expect delivered"
grep -q '"delivered":3' "$LAB_STATE/probe.json" || fail "probe: $(tail -c 400 "$LAB_STATE/probe.json")"
ok "a probe via leaf1 (SONiC), spine2 and leaf2 (lab) is decapsulated and delivered"

must snap "snapshot take; snapshot show 1"
python3 - "$LAB_STATE/snap.json" <<'PY' || fail "snapshot: $(head -c 600 "$LAB_STATE/snap.json")"
import json, sys
docs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
s = [x for x in docs if "spread_ns" in x and "counters" not in x]
shows = [x for x in docs if "counters" in x]
if not s or not shows:
    sys.exit(1)
s = s[0]
read = {c["switch"] for c in shows[0]["counters"]}
print("mixed: snapshot of %d switches, %d ports, spread %d ns; read %s" %
      (s["switches"], s["ports"], s["spread_ns"], sorted(read)))
# both drivers read at the one instant: far closer than a driver's run
sys.exit(0 if s["switches"] == 4 and read == {"leaf1", "leaf2", "spine1", "spine2"}
         and s["spread_ns"] < 150000000 else 1)
PY
ok "one snapshot reads the SONiC and the lab switches at one instant"

must del "mirror del 2; mirror del 1; mirror list"
grep -q '"id":2,"deleted":true' "$LAB_STATE/del.json" || fail "mirror del: $(cat "$LAB_STATE/del.json")"
for sw in spine1 leaf1; do
	left=$(config_db $sw --scan --pattern '*hopscope*')
	[ -z "$left" ] || fail "$sw still holds hopscope rows: $left"
done
for sw in spine2 leaf2; do
	[ "$(ip netns exec "hs-$sw" iptables -t raw -S HS_MIRROR | grep -c hs-mirror: || true)" = 0 ] ||
		fail "$sw still has mirror rules"
done
hs gone "mirror del 2"
[ "$(cat "$LAB_STATE/gone.st")" != 0 ] && grep -q "no mirror rule '2'" "$LAB_STATE/gone.err" ||
	fail "deleting a rule that is gone: $(cat "$LAB_STATE/gone.err")"
ok "every rule removed from both kinds; a rule that is gone is an error once"

lab down >/dev/null 2>&1 || fail "down failed"
[ ! -e "$LAB_STATE/sonic" ] || fail "'down' left $LAB_STATE/sonic"
ok "down"
