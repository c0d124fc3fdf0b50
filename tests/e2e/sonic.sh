#!/bin/sh
# sonic.sh - the SONiC driver against real redis servers, checked with
# SONiC's own YANG models: two switches, each a redis-server in its own
# temporary directory on a Unix socket, holding PORT rows and an operator's
# own mirror session and ACL. Every mirror form, the default set and the
# decap tunnel are written, read back, put in YANG form and validated with
# yanglint; deliberately wrong rows are rejected (so the check can fail);
# IPv6 matches go to a table of type MIRRORV6; --dry-run writes nothing;
# drift is reported; an unreachable switch, a slow
# one (timeout) and one that fails half way (rolled back on every switch)
# each leave one error naming the switch; removing every rule leaves both
# CONFIG_DBs exactly as the operator had them; snapshot reads COUNTERS_DB.
. "$(dirname "$0")/lib.sh"

for t in redis-server redis-cli yanglint python3; do
	command -v $t >/dev/null 2>&1 || skip "$t is missing (share/quickstart.sh test installs it)"
done
YANG=$top_srcdir/../shared/sonic/yang
[ -d "$YANG" ] || YANG=${HOPSCOPE_SONIC_YANG:-}
[ -n "$YANG" ] && [ -r "$YANG/sonic-acl.yang" ] || skip "no SONiC YANG models in ../shared/sonic/yang"
DRV=$top_builddir/hs-driver-sonic
TOYANG=$top_srcdir/tests/tools/sonic-yang.py
[ -x "$DRV" ] || hard "'$DRV' is not built"

# --- two switches, each with its own redis ------------------------------------------
start_redis() {	# $1 = name
	mkdir -p "$tmp/$1"
	redis-server --port 0 --unixsocket "$tmp/$1/redis.sock" --dir "$tmp/$1" --save '' \
		--appendonly no --daemonize yes --pidfile "$tmp/$1/redis.pid" \
		--logfile "$tmp/$1/redis.log" || hard "cannot start redis-server for $1"
	cleanup="$cleanup kill \$(cat '$tmp/$1/redis.pid' 2>/dev/null) 2>/dev/null;"
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		[ -S "$tmp/$1/redis.sock" ] && [ -s "$tmp/$1/redis.pid" ] && return 0
		sleep 0.1
	done
	hard "redis-server for $1 did not start: $(tail -n 2 "$tmp/$1/redis.log")"
}
r() {	# r SWITCH [-n DB] ARGS...: redis-cli on that switch (CONFIG_DB unless -n)
	sw=$1; shift
	case ${1:-} in -n) db=$2; shift 2 ;; *) db=4 ;; esac
	redis-cli --raw -s "$tmp/$sw/redis.sock" -n "$db" "$@"
}
# every row of CONFIG_DB, sorted, one "KEY FIELD VALUE" line per field
dump() {
	for k in $(r "$1" --scan | sort); do
		r "$1" HGETALL "$k" | paste -d" " - - | sed "s/^/$k /" | sort
	done
}
MODELS="$YANG/sonic-port.yang $YANG/sonic-mirror-session.yang $YANG/sonic-acl.yang $YANG/sonic-tunnel.yang"
valid() {	# valid SWITCH: its whole CONFIG_DB passes SONiC's models
	python3 "$TOYANG" "$tmp/$1/redis.sock" >"$tmp/$1.xml" &&
		yanglint -p "$YANG" -i -e -t config $MODELS "$tmp/$1.xml" >"$tmp/yl" 2>&1
}
rejected() {	# rejected SWITCH MESSAGE: yanglint refuses it, saying MESSAGE
	! valid "$1" && grep -q -- "$2" "$tmp/yl"
}

for sw in leaf1 leaf2; do
	start_redis $sw
	for p in 0 4 8; do
		r $sw HSET "PORT|Ethernet$p" lanes "$p,$((p + 1)),$((p + 2)),$((p + 3))" speed 100000 \
			admin_status up >/dev/null
	done
	# the operator's own Everflow session and ACL: never touched
	r $sw HSET "MIRROR_SESSION|everflow" type ERSPAN src_ip 10.9.0.1 dst_ip 10.9.0.2 \
		dscp 10 ttl 32 gre_type 0x8949 >/dev/null
	r $sw HSET "ACL_TABLE|EVERFLOW" type MIRROR stage ingress "ports@" Ethernet8 >/dev/null
	r $sw HSET "ACL_RULE|EVERFLOW|RULE_1" PRIORITY 999 MIRROR_INGRESS_ACTION everflow \
		SRC_IP 10.9.9.0/24 >/dev/null
	dump $sw >"$tmp/$sw.before"
done
check "the operator's CONFIG_DB validates to start with" valid leaf1

cat >"$tmp/topo" <<EOF
switch spine1 role spine mirror 10.255.0.1 loopback 10.254.0.1
switch leaf1 role leaf mirror 10.255.0.3 loopback 10.254.0.3 driver sonic redis unix:$tmp/leaf1/redis.sock
switch leaf2 role leaf mirror 10.255.0.4 loopback 10.254.0.4 driver sonic redis unix:$tmp/leaf2/redis.sock
link leaf1 Ethernet0 spine1 leaf1
link leaf1 Ethernet4 spine1 leaf1b
link leaf2 Ethernet0 spine1 leaf2
analyzer 10.255.255.254
EOF
mkdir "$tmp/state"
D="$DRV --topo $tmp/topo --state $tmp/state"
drv() { $D "$@" >"$tmp/out" 2>"$tmp/err"; st=$?; }
# the driver's answers are JSON (share/drivers/README): jout EXPR is true
# when the Python expression EXPR holds for the document D in $tmp/out
jout() {
	python3 - "$tmp/out" "$1" <<'PY'
import json, sys
D = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
# the id of an answer to add, {"id":ID}
answer_id() { sed -n 's/^{"id":\([1-9][0-9]*\)}$/\1/p' "$tmp/out"; }

# --- dry run: the rows, and nothing written ------------------------------------------
drv --dry-run add --session 1 --switches all --match default
check "--dry-run exits 0" [ "$st" -eq 0 ]
check "--dry-run prints the mirror session with the loopback and the analyzer" \
	has "^leaf1 set MIRROR_SESSION|hopscope_s1 type=ERSPAN src_ip=10.254.0.3 dst_ip=10.255.255.254" "$tmp/out"
check "--dry-run prints the SYN rule" \
	has "^leaf2 set ACL_RULE|hopscope_mirror|hopscope_1_1 PRIORITY=10000 MIRROR_INGRESS_ACTION=hopscope_s1 IP_PROTOCOL=6 TCP_FLAGS=0x02/0x02" "$tmp/out"
check "--dry-run prints the decap tunnel" \
	has "^leaf1 set TUNNEL|hopscope_decap tunnel_type=IPINIP dst_ip=10.254.0.3" "$tmp/out"
check "--dry-run binds the table to the switch's fabric ports" \
	has "^leaf1 set ACL_TABLE|hopscope_mirror .*ports@=Ethernet0,Ethernet4$" "$tmp/out"
dump leaf1 >"$tmp/now"
check "--dry-run writes nothing" cmp -s "$tmp/leaf1.before" "$tmp/now"
check "--dry-run records no rule" [ ! -e "$tmp/state/sonic.rules" ]

# --- every mirror form, validated ------------------------------------------------------
added=0
while read -r on sess match; do
	# shellcheck disable=SC2086
	drv add --session "$sess" --switches "$on" --match $match
	if [ "$st" -eq 0 ] && [ "$(cat "$tmp/out")" = "{\"id\":$((added + 1))}" ]; then
		added=$((added + 1))
	else
		not_ok "add $match on $on: status $st, '$(cat "$tmp/out")'"
	fi
done <<'EOF'
all 1 default
leaf1 2 syn
leaf2 2 fin
leaf1,leaf2 3 rst
leaf1 4 debug
leaf2 5 bgp
leaf1 6 roce
leaf1 7 flow tcp 10.1.1.11 10.1.4.12:5001
leaf2 7 flow udp 10.1.1.0/24:4791 any
leaf1 8 flow icmp 10.1.1.11 10.1.2.11
leaf2 8 flow any any 10.1.3.0/24
leaf1,leaf2 9 prefix 10.1.3.0/24
EOF
check "every mirror form is added (12 rules)" [ "$added" -eq 12 ]
check "leaf1's CONFIG_DB with every form validates against SONiC's models" valid leaf1
check "leaf2's CONFIG_DB with every form validates against SONiC's models" valid leaf2
dump leaf1 >"$tmp/d1"
check "the RoCEv2 rule matches UDP 4791" \
	has "^ACL_RULE|hopscope_mirror|hopscope_7_1 L4_DST_PORT 4791" "$tmp/d1"
check "a flow of interest mirrors both directions" \
	has "^ACL_RULE|hopscope_mirror|hopscope_8_2 SRC_IP 10.1.4.12/32" "$tmp/d1"
check "the debug bit is matched as DSCP 1" has "^ACL_RULE|hopscope_mirror|hopscope_5_1 DSCP 1" "$tmp/d1"
check "the PFC frames are matched by ether type" \
	has "^ACL_RULE|hopscope_mirror|hopscope_1_8 ETHER_TYPE 0x8808" "$tmp/d1"
drv list
check "list shows every rule" jout 'len(D["rules"]) == 12'
check "list gives a rule's id, session, switches and match" \
	jout '{"id": 4, "session": 3, "switches": ["leaf1", "leaf2"], "match": "rst"} in D["rules"]'
check "list reports no drift when the switches hold what was asked" jout 'D["drift"] == []' 

# --- wrong rows are rejected by the models, and reported as drift ------------------------
r leaf1 HSET "MIRROR_SESSION|hopscope_s1" dscp 99 >/dev/null
check "a session with DSCP 99 is rejected by the model" rejected leaf1 "Invalid dscp value"
drv list
check "a row changed behind hopscope's back is reported as drift" \
	jout '{"switch": "leaf1", "row": "MIRROR_SESSION|hopscope_s1", "what": "changed"} in D["drift"]' 
r leaf1 HSET "MIRROR_SESSION|hopscope_s1" dscp 8 >/dev/null
r leaf2 HSET "ACL_RULE|hopscope_mirror|hopscope_99_1" PRIORITY 10 MIRROR_ACTION hopscope_s1 >/dev/null
check "a rule with the older MIRROR_ACTION field is rejected by the model" rejected leaf2 "MIRROR_ACTION"
drv list
check "a hopscope row nobody asked for is reported as drift" \
	jout '{"switch": "leaf2", "row": "ACL_RULE|hopscope_mirror|hopscope_99_1", "what": "not asked for"} in D["drift"]' 
r leaf2 DEL "ACL_RULE|hopscope_mirror|hopscope_99_1" >/dev/null
r leaf2 HSET "ACL_RULE|EVERFLOW|RULE_2" PRIORITY 10 MIRROR_INGRESS_ACTION everflow \
	TCP_FLAGS 0x02/0x02 >/dev/null
check "a TCP_FLAGS rule in a table of the built-in type MIRROR is rejected" rejected leaf2 "TCP_FLAGS"
r leaf2 DEL "ACL_RULE|EVERFLOW|RULE_2" >/dev/null
check "leaf1 validates again once repaired" valid leaf1
check "leaf2 validates again once repaired" valid leaf2
drv list
check "no drift once repaired" jout 'D["drift"] == []' 

# --- the console picks the SONiC driver from the topology --------------------------------
HOPSCOPE_STATE=$tmp/state hs --topo "$tmp/topo" --json -c "mirror add on leaf2 session 4 syn"
check "mirror add in the console runs hs-driver-sonic for a topology of sonic switches" \
	eval '[ "$st" -eq 0 ] && has "\"id\":13,\"session\":4,\"switches\":\[\"leaf2\"\],\"match\":\"syn\"" "$tmp/out"'
check "the console's rule is in leaf2's CONFIG_DB" \
	eval '[ "$(r leaf2 HGET "ACL_RULE|hopscope_mirror|hopscope_13_1" MIRROR_INGRESS_ACTION)" = hopscope_s4 ]'
r leaf2 HSET "ACL_RULE|hopscope_mirror|hopscope_13_1" PRIORITY 1 >/dev/null
HOPSCOPE_STATE=$tmp/state hs --topo "$tmp/topo" -c "mirror list"
check "mirror list in the console shows the rule and the row changed behind its back" \
	eval 'has "^13 *4 *leaf2 *syn" "$tmp/out" && has "^  leaf2 ACL_RULE|hopscope_mirror|hopscope_13_1: changed" "$tmp/out"'
HOPSCOPE_STATE=$tmp/state hs --topo "$tmp/topo" -c "mirror del 13"
check "mirror del in the console removes it (and the drifted row)" \
	eval '[ "$st" -eq 0 ] && [ -z "$(r leaf2 --scan --pattern "*hopscope_13_*")" ]'

# --- faults ---------------------------------------------------------------------------
dump leaf1 >"$tmp/l1"; dump leaf2 >"$tmp/l2"; cp "$tmp/state/sonic.rules" "$tmp/rules"
unchanged() { dump leaf1 | cmp -s - "$tmp/l1" && dump leaf2 | cmp -s - "$tmp/l2" &&
	cmp -s "$tmp/state/sonic.rules" "$tmp/rules"; }

sed "s|^analyzer|switch leaf3 role leaf mirror 10.255.0.5 loopback 10.254.0.5 driver sonic redis unix:$tmp/nowhere.sock\nanalyzer|" \
	"$tmp/topo" >"$tmp/topo3"
$DRV --topo "$tmp/topo3" --state "$tmp/state" add --switches all --match syn >"$tmp/out" 2>"$tmp/err"
st=$?
check "an unreachable switch fails the add" [ "$st" -eq 1 ]
check "the error names the switch and its redis" \
	has "^hs-driver-sonic: switch 'leaf3': cannot reach redis 'unix:$tmp/nowhere.sock'" "$tmp/err"
check "nothing changed on the reachable switches" unchanged

r leaf2 CLIENT PAUSE 3000 ALL >/dev/null
t0=$(date +%s)
$D --timeout-ms 300 add --switches all --match syn >"$tmp/out" 2>"$tmp/err"
st=$?
check "a switch that does not answer fails the add within its timeout" \
	eval '[ "$st" -eq 1 ] && [ $(($(date +%s) - t0)) -le 2 ]'
check "the error names the slow switch and says it timed out" \
	has "^hs-driver-sonic: switch 'leaf2': .*timed out" "$tmp/err"
r leaf2 CLIENT UNPAUSE >/dev/null
check "nothing changed after the timeout" unchanged

r leaf2 CONFIG SET maxmemory 1 >/dev/null	# its writes now fail: out of memory
drv add --session 3 --switches all --match flow tcp 10.1.2.11 any
r leaf2 CONFIG SET maxmemory 0 >/dev/null
check "a write failing half way fails the add" [ "$st" -eq 1 ]
check "the error names the switch and the row, and says it was rolled back" \
	has "^hs-driver-sonic: switch 'leaf2': cannot write row 'ACL_RULE|hopscope_mirror|hopscope_14_1': OOM.*; every change was rolled back" "$tmp/err"
check "leaf1's rows written before the failure were rolled back" unchanged

# --- bad input ------------------------------------------------------------------------
for spec in "flow tcp 10.1.1.300 any" "flow icmp 10.1.1.1:80 any" "prefix any" "frob" "syn extra" \
	"flow tcp [10.1.1.1]:80 any" "prefix 2001:db8::/129" "prefix 2001:db8::1:80:1:2:3:4:5"; do
	# shellcheck disable=SC2086
	drv add --switches all --match $spec
	check "bad match '$spec' exits 2 with one line, nothing changed" \
		eval '[ "$st" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && unchanged'
done
drv add --switches spine1 --match syn
check "a lab switch is refused by the SONiC driver" \
	eval '[ "$st" -eq 2 ] && has "switch '"'spine1'"' is not a sonic switch (driver lab)" "$tmp/err"'

# --- IPv6 matches: a table of the built-in type MIRRORV6 ------------------------------
dump leaf1 >"$tmp/l1"; dump leaf2 >"$tmp/l2"; cp "$tmp/state/sonic.rules" "$tmp/rules"
v6=""
for spec in "leaf1 flow tcp [2001:db8::11]:443 2001:db8:4::/48" "leaf1,leaf2 prefix 2001:db8:3::/64" \
	"leaf2 flow icmp 2001:db8::1 any"; do
	# shellcheck disable=SC2086
	set -- $spec
	on=$1; shift
	drv add --session 2 --switches "$on" --match "$@"
	[ "$st" -eq 0 ] && v6="$v6 $(answer_id)"
done
# shellcheck disable=SC2086
set -- $v6
check "every IPv6 form is added" [ $# -eq 3 ]
flow6=${1:-} icmp6=${3:-}
check "leaf1's CONFIG_DB with IPv6 rules validates against SONiC's models" valid leaf1
check "leaf2's CONFIG_DB with IPv6 rules validates against SONiC's models" valid leaf2
dump leaf1 >"$tmp/d1"; dump leaf2 >"$tmp/d2"
check "the IPv6 rules have a table of type MIRRORV6, bound to the fabric ports" \
	eval 'has "^ACL_TABLE|hopscope_mirror6 type MIRRORV6$" "$tmp/d1" &&
	has "^ACL_TABLE|hopscope_mirror6 ports@ Ethernet0,Ethernet4$" "$tmp/d1"'
check "an IPv6 flow matches SRC_IPV6 and DST_IPV6, one row per direction" \
	eval 'has "^ACL_RULE|hopscope_mirror6|hopscope_${flow6}_1 SRC_IPV6 2001:db8::11/128$" "$tmp/d1" &&
	has "^ACL_RULE|hopscope_mirror6|hopscope_${flow6}_1 L4_SRC_PORT 443$" "$tmp/d1" &&
	has "^ACL_RULE|hopscope_mirror6|hopscope_${flow6}_2 DST_IPV6 2001:db8::11/128$" "$tmp/d1" &&
	has "^ACL_RULE|hopscope_mirror6|hopscope_${flow6}_2 SRC_IPV6 2001:db8:4::/48$" "$tmp/d1"'
check "ICMP over IPv6 is matched as ICMPv6 (next header 58)" \
	has "^ACL_RULE|hopscope_mirror6|hopscope_${icmp6}_1 IP_PROTOCOL 58$" "$tmp/d2"
check "no IPv6 match lands in the IPv4 table" hasnt "^ACL_RULE|hopscope_mirror|.*IPV6" "$tmp/d1"
r leaf1 HSET "ACL_RULE|hopscope_mirror6|hopscope_${flow6}_1" SRC_IPV6 10.1.1.1/32 >/dev/null
check "an IPv4 prefix in SRC_IPV6 is rejected by the model" rejected leaf1 "SRC_IPV6"
drv list
check "the IPv6 row changed behind hopscope's back is reported as drift" \
	jout '{"switch": "leaf1", "row": "ACL_RULE|hopscope_mirror6|hopscope_'"$flow6"'_1", "what": "changed"} in D["drift"]' 
for id in "$@"; do
	drv del --id "$id"
	[ "$st" -eq 0 ] || not_ok "del $id: $(cat "$tmp/err")"
done
rows_as_before() { dump leaf1 | cmp -s - "$tmp/l1" && dump leaf2 | cmp -s - "$tmp/l2"; }
check "removing the IPv6 rules removes the MIRRORV6 table and the drifted row with them" \
	rows_as_before
drv add --switches leaf1 --match flow tcp 10.1.1.1 2001:db8::1
check "a flow mixing IPv4 and IPv6 exits 2 naming both, nothing changed" \
	eval '[ "$st" -eq 2 ] && has "not of one family" "$tmp/err" && rows_as_before'

# --- ids shared with the other drivers of a mixed fabric ------------------------------
drv add --id 500 --session 1 --switches leaf1 --match syn
check "add --id gives the rule the id another driver gave it" \
	eval '[ "$st" -eq 0 ] && [ "$(answer_id)" = 500 ] &&
	[ -n "$(r leaf1 --scan --pattern "ACL_RULE|hopscope_mirror|hopscope_500_1")" ]'
drv add --id 500 --session 1 --switches leaf2 --match fin
check "an id in use is refused as a bad request" \
	eval '[ "$st" -eq 2 ] && has "rule id .500. is in use" "$tmp/err"'
check "the next id any driver of the state directory may give is recorded" \
	eval '[ "$(cat "$tmp/state/next-id")" = 501 ]'
echo 900 >"$tmp/state/next-id"	# another driver gave up to 899
drv add --session 1 --switches leaf1 --match fin
check "a new rule takes no id another driver of the state directory gave" \
	eval '[ "$st" -eq 0 ] && [ "$(answer_id)" = 900 ]'

# --- snapshot: COUNTERS_DB ------------------------------------------------------------
for sw in leaf1 leaf2; do
	i=0
	for p in 0 4 8; do
		i=$((i + 1))
		r $sw -n 2 HSET COUNTERS_PORT_NAME_MAP "Ethernet$p" "oid:0x10000000000$i" >/dev/null
		r $sw -n 2 HSET "COUNTERS:oid:0x10000000000$i" SAI_PORT_STAT_IF_IN_UCAST_PKTS $((100 * i)) \
			SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS 1 SAI_PORT_STAT_IF_IN_OCTETS $((150000 * i)) \
			SAI_PORT_STAT_IF_IN_DISCARDS 2 SAI_PORT_STAT_IF_OUT_UCAST_PKTS $((200 * i)) \
			SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS 3 SAI_PORT_STAT_IF_OUT_OCTETS $((300000 * i)) \
			SAI_PORT_STAT_IF_OUT_DISCARDS 4 >/dev/null
	done
done
drv snapshot --delay-ms 50
check "snapshot reads every port of every SONiC switch" \
	eval '[ "$st" -eq 0 ] && jout '"'"'D["switches"] == 2 and len(D["ports"]) == 6'"'"' '
check "a port's counters: unicast and other packets summed, bytes, discards" \
	jout '[{k: v for k, v in p.items() if k != "read_ns"} for p in D["ports"] if p["port"] == "Ethernet4" and p["switch"] == "leaf2"] == [{"switch": "leaf2", "port": "Ethernet4", "rx_packets": 201, "rx_bytes": 300000, "rx_drops": 2, "tx_packets": 403, "tx_bytes": 600000, "tx_drops": 4, "backlog_bytes": None, "backlog_packets": None}]'
check "every switch read at or after the agreed instant" \
	jout 'all(p["read_ns"] >= D["snapshot_ns"] for p in D["ports"])' 
given=$(($(date +%s%N) + 100000000))
drv snapshot --at-ns "$given"
check "snapshot --at-ns reads at the instant given (the other drivers' one)" \
	eval '[ "$st" -eq 0 ] && jout "D[\"snapshot_ns\"] == $given and all(p[\"read_ns\"] >= $given for p in D[\"ports\"])"'
drv snapshot --at-ns $(($(date +%s%N) + 60000000000))
check "an instant more than 5 s ahead is refused" [ "$st" -eq 2 ]

# --- removing everything ----------------------------------------------------------------
for id in $(sed -n 's/^\([0-9][0-9]*\) .*/\1/p' "$tmp/state/sonic.rules"); do
	drv del --id "$id"
	[ "$st" -eq 0 ] && [ "$(cat "$tmp/out")" = "{\"id\":$id,\"deleted\":true}" ] ||
		not_ok "del $id: $(cat "$tmp/out") $(cat "$tmp/err")"
done
check "after every rule is removed, leaf1's CONFIG_DB is the operator's, byte for byte" \
	eval 'dump leaf1 | cmp -s - "$tmp/leaf1.before"'
check "after every rule is removed, leaf2's CONFIG_DB is the operator's, byte for byte" \
	eval 'dump leaf2 | cmp -s - "$tmp/leaf2.before"'
drv list
check "list is empty and shows no drift" eval '[ "$st" -eq 0 ] && jout "D == {\"rules\": [], \"drift\": []}"'
drv del --id 1
check "deleting a rule that is gone exits 2" \
	eval '[ "$st" -eq 2 ] && has "no mirror rule" "$tmp/err"'

finish
