#!/bin/bash
# sonic: the lab configured the way SONiC is. 'hopscope-lab up --sonic' runs
# a redis-server per switch holding its CONFIG_DB; the default mirror set is
# written there by hs-driver-sonic and each agent programs its switch from
# the rows. Through the console (which picks hs-driver-sonic from the
# topology): a flow of interest is mirrored and its copies seen at the
# switch; a probe via three switches is decapsulated and delivered (decap
# from the TUNNEL rows); a snapshot reads every switch's COUNTERS_DB; removing
# every rule leaves no hopscope row and the operator's own rows as they
# were, and the agents take the mirror rules out of netfilter; 'down' stops
# the redis servers.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
sonic_init
# a switch's rows other than hopscope's, one "KEY FIELD VALUE" line per field
theirs() {
	local k
	for k in $(config_db "$1" --scan | grep -v '|hopscope' | sort); do
		config_db "$1" HGETALL "$k" | paste -d' ' - - | sed "s/^/$k /" | sort
	done
}
nfrules() { ip netns exec "hs-$1" iptables -t raw -S HS_MIRROR | grep -c -- '-j NFLOG' || true; }
# hs NAME COMMANDS: the console on the lab, a JSON document a line in NAME.json
hs() {
	local st=0
	"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/history.db" --json -c "$2" \
		>"$LAB_STATE/$1.json" 2>"$LAB_STATE/$1.err" </dev/null || st=$?
	[ "$st" = 0 ] || fail "$1: hopscope exited $st: $(head -c 600 "$LAB_STATE/$1.err")"
}
# settle CMD...: until CMD holds (the agents program a moment after a change)
settle() {
	local i
	for ((i = 0; i < 50; i++)); do "$@" && return 0; sleep 0.1; done
	return 1
}

lab up --sonic --shape leafspine:2,2,2 >"$LAB_STATE/up.out" 2>&1 || fail "up --sonic failed: $(tail -n 3 "$LAB_STATE/up.out")"
grep -q "^switch leaf1 .* driver sonic redis unix:$LAB_STATE/sonic/leaf1/redis.sock$" "$LAB_STATE/topo" ||
	fail "the topology does not name leaf1's redis: $(grep leaf1 "$LAB_STATE/topo")"
[ "$(config_db leaf1 --scan --pattern 'PORT|*' | sort | tr '\n' ' ')" = "PORT|h1 PORT|h2 PORT|spine1 PORT|spine2 " ] ||
	fail "leaf1's PORT rows: $(config_db leaf1 --scan --pattern 'PORT|*' | tr '\n' ' ')"
[ "$(config_db spine1 --scan --pattern 'ACL_RULE|hopscope_mirror|hopscope_1_*' | wc -l)" = 8 ] ||
	fail "the default set is not in spine1's CONFIG_DB"
# seven of the eight rows have a netfilter form (PFC frames by ether type do not)
settle [ "$(nfrules spine1)" = 7 ] || fail "spine1's agent programmed $(nfrules spine1) rules, not 7"
ok "up --sonic: a redis per switch with its PORT rows; the default set in CONFIG_DB, programmed by the agents"

# the operator's own session and ACL on leaf1: hopscope must leave them be
config_db leaf1 HSET "MIRROR_SESSION|everflow" type ERSPAN src_ip 10.9.0.1 dst_ip 10.9.0.2 dscp 10 ttl 32 >/dev/null
config_db leaf1 HSET "ACL_TABLE|EVERFLOW" type MIRROR stage ingress "ports@" h1 >/dev/null
config_db leaf1 HSET "ACL_RULE|EVERFLOW|RULE_1" PRIORITY 1 MIRROR_INGRESS_ACTION everflow SRC_IP 192.0.2.0/24 >/dev/null
theirs leaf1 >"$LAB_STATE/theirs.before"
settle [ "$(nfrules leaf1)" = 8 ] || fail "leaf1's agent did not program the operator's rule: $(nfrules leaf1) rules"

h1=$(host_addr h1)
h3=$(host_addr h3)
hs add "mirror add on leaf1 session 5 flow icmp $h1 $h3; mirror list"
grep -q '"id":2,"session":5,"switches":\["leaf1"\],"match":"flow icmp '"$h1 $h3"'"' "$LAB_STATE/add.json" ||
	fail "mirror add: $(head -c 400 "$LAB_STATE/add.json")"
[ "$(config_db leaf1 HGET 'ACL_RULE|hopscope_mirror|hopscope_2_1' SRC_IP)" = "$h1/32" ] ||
	fail "the flow's rule is not in leaf1's CONFIG_DB"
[ "$(config_db leaf1 HGET 'MIRROR_SESSION|hopscope_s5' src_ip)" = 10.254.0.3 ] ||
	fail "leaf1's session 5 is not from its loopback"
settle ip netns exec hs-leaf1 iptables -t raw -C HS_MIRROR -s "$h1/32" -d "$h3/32" -p icmp \
	-j NFLOG --nflog-group 1 --nflog-prefix hs:5 2>/dev/null ||
	fail "leaf1's agent did not program the flow: $(ip netns exec hs-leaf1 iptables -t raw -S HS_MIRROR)"
ok "mirror add through the console: rows in leaf1's CONFIG_DB, programmed by its agent as session 5"

# its copies: pings h1 -> h3 seen at leaf1 (only the flow's rule matches ICMP)
"$HOPSCOPE" --lab --state "$LAB_STATE" --db "$LAB_STATE/history.db" --json \
	-c "sleep 3s; capture stop; traces limit 500" >"$LAB_STATE/copies.json" 2>"$LAB_STATE/copies.err" </dev/null &
cpid=$!
sleep 1
on h1 ping "$h3" --count 5 >/dev/null 2>&1 || true
wait "$cpid" || fail "capture: $(head -c 400 "$LAB_STATE/copies.err")"
python3 - "$LAB_STATE/copies.json" "$h1" "$h3" <<'PY' || fail "the flow's copies were not seen at leaf1"
import json, sys
path, src, dst = sys.argv[1:]
t = [x for l in open(path) if l.startswith("{") for d in [json.loads(l)]
     if isinstance(d.get("traces"), list) for x in d["traces"]]
t = [x for x in t if x.get("proto") == "icmp" and {x.get("src"), x.get("dst")} == {src, dst}]
at = sum(1 for x in t for h in x["hops"] if h["switch"] == "leaf1")
print("sonic: %d icmp traces of the flow, %d copies from leaf1" % (len(t), at))
sys.exit(0 if at >= 5 else 1)
PY
ok "the flow of interest's copies arrive from leaf1"

hs probe "probe > $h3 via leaf1,spine2,leaf2 count 3 interval 50ms --expect delivered"
grep -q '"delivered":3' "$LAB_STATE/probe.json" || fail "probe: $(tail -c 400 "$LAB_STATE/probe.json")"
ok "a probe via leaf1,spine2,leaf2 is decapsulated where the TUNNEL rows say and delivered"

hs snap "snapshot take"
python3 - "$LAB_STATE/snap.json" <<'PY' || fail "snapshot: $(head -c 400 "$LAB_STATE/snap.json")"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
s = [x for x in s if "spread_ns" in x]
sys.exit(0 if s and s[0]["switches"] == 4 and s[0]["ports"] == 12 else 1)
PY
ok "snapshot take reads the 4 switches' 12 ports from COUNTERS_DB"

hs del "mirror del 2; mirror del 1; mirror list"
grep -q '"id":2,"deleted":true' "$LAB_STATE/del.json" || fail "mirror del: $(cat "$LAB_STATE/del.json")"
for sw in spine1 spine2 leaf1 leaf2; do
	left=$(config_db $sw --scan --pattern '*hopscope*')
	[ -z "$left" ] || fail "$sw still holds hopscope rows: $left"
done
theirs leaf1 | cmp -s - "$LAB_STATE/theirs.before" || fail "the operator's rows on leaf1 changed"
settle [ "$(nfrules spine1)" = 0 ] || fail "spine1 still has $(nfrules spine1) mirror rules"
settle [ "$(nfrules leaf1)" = 1 ] || fail "leaf1 should keep the operator's one rule, has $(nfrules leaf1)"
ok "every rule removed: no hopscope row in any CONFIG_DB, the operator's rows untouched, netfilter follows"

pids=$(cat "$LAB_STATE"/sonic/*/redis.pid)
lab down >/dev/null 2>&1 || fail "down failed"
for p in $pids; do	# gone, or a zombie its parent has not reaped yet
	state=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1) || true
	[ -z "$state" ] || [ "$state" = Z ] || fail "redis-server $p outlived 'down'"
done
[ ! -e "$LAB_STATE/sonic" ] || fail "'down' left $LAB_STATE/sonic"
ok "down stops every switch's redis-server"
