#!/bin/bash
# fabric: the default leaf-spine comes up, every host reaches every other,
# paths go leaf>spine>leaf, ECMP uses both spines, down leaves nothing behind
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init

out=$(lab up 2>&1) || fail "up failed: $out"
echo "$out"
[ "$(grep -c '^switch ' "$LAB_STATE/topo")" = 6 ] || fail "topology should list 6 switches"
[ "$(grep -c '^host ' "$LAB_STATE/topo")" = 8 ] || fail "topology should list 8 hosts"
grep -qx 'analyzer 10.255.0.254 iface hs-mirror' "$LAB_STATE/topo" || fail "no analyzer line in the topology"
[ "$(ip netns list | grep -c '^hs-')" = 14 ] || fail "expected 14 hs-* namespaces"
ip -n hs-leaf1 link show dev spine1 >/dev/null || fail "leaf1 has no port named spine1"
ip -n hs-spine2 link show dev leaf3 >/dev/null || fail "spine2 has no port named leaf3"
[[ $(ip -n hs-leaf2 -4 addr show dev lo) == *10.254.0.4/32* ]] || fail "leaf2 has no loopback 10.254.0.4"
[[ $(ip netns exec hs-leaf1 sysctl -n net.ipv4.fib_multipath_hash_policy) == [13] ]] || fail "no L4 ECMP hash"
[[ $(ip netns exec hs-leaf1 iptables -t raw -S HS_MIRROR) == *"-i mir0 -j RETURN"* ]] || fail "no mirror chain"
[[ $(iptables -S INPUT) == *hopscope-lab* ]] || fail "no GRE drop rule in the root namespace"
ok "fabric up with the expected namespaces, ports, loopbacks and rules"

# a second up: same shape is fine, another shape is refused
lab up >/dev/null 2>&1 || fail "second up with the same shape should exit 0"
if lab up --shape fattree:4 >/dev/null 2>&1; then fail "up with another shape should be refused"; fi
lab status >/dev/null || fail "status should exit 0 while up"
ok "second up handled, status says up"

# every host reaches every other host
hosts=$(awk '$1 == "host" { print $2 }' "$LAB_STATE/topo")
bad=""
for a in $hosts; do
	for b in $hosts; do
		[ "$a" = "$b" ] && continue
		on "$a" ping "$(host_addr "$b")" --timeout 1s >/dev/null || bad+=" $a>$b"
	done
done
[ -z "$bad" ] || fail "unreachable:$bad"
ok "all 56 host pairs reach each other"

# TTL by TTL: h1 (leaf1) to h8 (leaf4) crosses leaf1, a spine, leaf4
map_addresses
path=$(on h1 trace "$(host_addr h8)" --timeout 1s | trace_path)
[[ $path =~ ^leaf1\ spine[12]\ leaf4\ =10\.1\.4\.12$ ]] || fail "h1 to h8 path is '$path'"
path=$(on h3 trace "$(host_addr h4)" --timeout 1s | trace_path)
[[ $path == "leaf2 =10.1.2.12" ]] || fail "h3 to h4 (same leaf) path is '$path'"
ok "TTL expiry shows leaf>spine>leaf"

# one 5-tuple keeps its spine; many 5-tuples use both spines
declare -A seen=()
for sport in $(seq 41000 41015); do
	p1=$(on h1 trace "$(host_addr h8)" --tcp 5001 --sport "$sport" --max-ttl 4 | trace_path)
	p2=$(on h1 trace "$(host_addr h8)" --tcp 5001 --sport "$sport" --max-ttl 4 | trace_path)
	[ "$p1" = "$p2" ] || fail "source port $sport took '$p1' then '$p2'"
	seen[$(echo "$p1" | awk '{ print $2 }')]=1
done
[ -n "${seen[spine1]:-}" ] && [ -n "${seen[spine2]:-}" ] || fail "16 flows all used one spine: ${!seen[*]}"

# SYN counters at the spines while h1 opens 64 connections to h8
for s in spine1 spine2; do
	ip netns exec "hs-$s" iptables -I FORWARD -d 10.1.4.12 -p tcp --dport 5002 --syn
done
ip netns exec hs-h8 "$TRAFFIC" serve --bind 10.1.4.12 --port 5002 --duration 20s >/dev/null &
srv=$!
sleep 0.3
res=$(on h1 client --dst 10.1.4.12 --port 5002 --rate 200 --flows 0 --count 64 --duration 15s)
kill "$srv" 2>/dev/null || true
wait "$srv" 2>/dev/null || true
[[ $res =~ ok\ 64\ failed\ 0 ]] || fail "client: $res"
c1=$(ip netns exec hs-spine1 iptables -L FORWARD -v -x -n | awk '/dpt:5002/ { print $1 }')
c2=$(ip netns exec hs-spine2 iptables -L FORWARD -v -x -n | awk '/dpt:5002/ { print $1 }')
echo "SYNs through spine1 $c1, spine2 $c2"
((c1 + c2 >= 64)) || fail "only $((c1 + c2)) SYNs counted at the spines"
((c1 >= 8 && c2 >= 8)) || fail "ECMP is lopsided: spine1 $c1, spine2 $c2 of 64 flows"
ok "ECMP spreads flows over both spines and keeps a flow on one"

# background traffic runs and stops
lab traffic start --duration 5 --rate 5 --flows 1 >/dev/null || fail "traffic start failed"
for i in $(seq 20); do
	n=$(pgrep -r R,S,D -x hs-traffic | wc -l)
	[ "$n" -ge 16 ] && break
	sleep 0.1
done
[ "$n" -ge 16 ] || fail "expected 16 traffic processes, found $n"
if lab traffic start >/dev/null 2>&1; then fail "a second traffic start should be refused"; fi
st=$(lab status); [[ $st == *"traffic: 16 processes running"* ]] || fail "status does not show the traffic: $st"
lab traffic stop >/dev/null || fail "traffic stop failed"
[ -z "$(pgrep -r R,S,D -x hs-traffic || true)" ] || fail "traffic processes left after stop"
ok "traffic starts, shows in status and stops"

# down removes everything
lab down >/dev/null || fail "down failed"
[ -z "$(ip netns list | grep '^hs-' || true)" ] || fail "hs-* namespaces left: $(ip netns list)"
! ip link show dev hs-mirror >/dev/null 2>&1 || fail "bridge hs-mirror left"
[ -z "$(ip -o link show | awk -F': ' '$2 ~ /^hs-/' || true)" ] || fail "hs-* links left in the root namespace"
[[ $(iptables -S INPUT) != *hopscope-lab* ]] || fail "GRE drop rule left"
[ -z "$(pgrep -r R,S,D -x hs-agent || true)" ] || fail "agents left running"
[ ! -e "$LAB_STATE/topo" ] || fail "state files left"
status=0; lab status >/dev/null || status=$?
[ "$status" = 3 ] || fail "status should exit 3 when down, not $status"
ok "down leaves nothing behind"
