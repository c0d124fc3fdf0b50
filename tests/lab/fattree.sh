#!/bin/bash
# fattree: a k=4 fat-tree comes up; hosts in different pods reach each other
# over edge > agg > core > agg > edge, hosts in one pod over three switches
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init

lab up --shape fattree:4 >/dev/null 2>&1 || fail "up --shape fattree:4 failed"
for r in core:4 agg:8 leaf:8; do
	n=$(awk -v r="${r%%:*}" '$1 == "switch" && $4 == r' "$LAB_STATE/topo" | wc -l)
	[ "$n" = "${r##*:}" ] || fail "expected ${r##*:} switches of role ${r%%:*}, topology has $n"
done
[ "$(grep -c '^host ' "$LAB_STATE/topo")" = 16 ] || fail "expected 16 hosts"
[ "$(grep -c '^link ' "$LAB_STATE/topo")" = 32 ] || fail "expected 32 switch links"
[ "$(ip netns list | grep -c '^hs-')" = 36 ] || fail "expected 36 namespaces"
ok "fattree:4 has 4 core, 8 agg, 8 edge switches and 16 hosts"

map_addresses
roles() { local s out=""; for s in $1; do [[ $s == =* ]] && out+="$s" || out+="$(role_of "$s") "; done; echo "$out"; }

# pod 0 (h1, edge1) to pod 3 (h16, edge8): five switches
p=$(on h1 trace "$(host_addr h16)" --timeout 1s | trace_path)
[ "$(roles "$p")" = "leaf agg core agg leaf =$(host_addr h16)" ] || fail "h1 to h16 went '$p'"
[[ $p == edge1\ * && $p == *\ edge8\ =* ]] || fail "h1 to h16 should start at edge1 and end at edge8: '$p'"
# pod 0 to pod 1 by TCP flows: every path has five switches, cores vary
declare -A cores=()
for sport in $(seq 43000 43015); do
	p=$(on h2 trace "$(host_addr h7)" --tcp 5001 --sport "$sport" --timeout 1s | trace_path)
	[ "$(roles "$p")" = "leaf agg core agg leaf =$(host_addr h7)" ] || fail "h2 to h7 from port $sport went '$p'"
	cores[$(echo "$p" | awk '{ print $3 }')]=1
done
((${#cores[@]} >= 2)) || fail "16 flows between pods all crossed ${!cores[*]}"
# same pod, other edge: three switches
p=$(on h1 trace "$(host_addr h3)" --timeout 1s | trace_path)
[ "$(roles "$p")" = "leaf agg leaf =$(host_addr h3)" ] || fail "h1 to h3 went '$p'"
ok "between pods: edge>agg>core>agg>edge over ${#cores[@]} cores; in a pod: edge>agg>edge"

bad=""
for a in h1 h4 h6 h9 h12 h16; do
	for b in h2 h5 h8 h11 h13 h15; do
		on "$a" ping "$(host_addr "$b")" --timeout 1s >/dev/null || bad+=" $a>$b"
	done
done
[ -z "$bad" ] || fail "unreachable:$bad"
ok "sampled host pairs across all pods reach each other"

lab down >/dev/null || fail "down failed"
[ -z "$(ip netns list | grep '^hs-' || true)" ] || fail "namespaces left after down"
ok "down removes the fat-tree"
