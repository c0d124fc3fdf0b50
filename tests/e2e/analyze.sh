#!/bin/sh
# analyze.sh - the analyses on the bundled sample, which holds a lossy link
# (leaf1 to spine2, 30%) and a routing loop (spine1 and leaf3 for 10.1.3.12):
# drops ranks leaf1 > spine2 first, loops names spine1 and leaf3, latency has
# per-hop figures, ecmp leaf1 splits over both spines, blame votes and keeps
# its result in the history; wrong arguments fail cleanly.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is missing"
PCAP=$top_srcdir/share/sample/sample.pcap
TOPO=$top_srcdir/share/sample/sample.topo
S="--db $tmp/h.db -r $PCAP --topo $TOPO"

json() { # json PYTHON-EXPR: true when it holds for the JSON document D of $tmp/out,
	# L the rows of its arrays (blame: its epochs and their links)
	python3 - "$tmp/out" "$1" <<'PY'
import json, sys
D = json.loads(open(sys.argv[1]).read())
L = [r for v in D.values() if isinstance(v, list) for r in v]
L += [k for r in L for k in r.get("links", []) if isinstance(r.get("links"), list)]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

hs $S --json drops
check "drops --json runs" [ "$st" -eq 0 ]
check "drops: leaf1 > spine2 first" json 'L and L[0]["a"] == "leaf1" and L[0]["b"] == "spine2"'
check "drops: drops, crossed, flows, a probe via the link" \
	json 'L[0]["drops"] > 0 and L[0]["crossed"] > 0 and L[0]["flows"] > 1 and "via leaf1,spine2" in L[0]["probe"]'
check "drops: ranked by drops, then ambiguous" \
	json 'all((L[i]["drops"], L[i]["ambiguous"]) >= (L[i+1]["drops"], L[i+1]["ambiguous"]) for i in range(len(L)-1))'
check "drops: loss is drops over drops and crossings" \
	json 'all(abs(o["loss"] - (o["drops"] / (o["drops"] + o["crossed"]) if o["drops"] + o["crossed"] else 0)) < 1e-9 for o in L)'
check "drops: the lossy link is persistent and hits all flows" \
	json 'L[0]["when"] == "persistent" and L[0]["scope"] == "all-flows"'
# the sample's fault is one way, leaf1 to spine2: no drop goes the other way,
# and the ones whose next hop is unknown stay ambiguous on the healthy link
check "drops: nothing on spine2 > leaf1" json 'not [o for o in L if (o["a"], o["b"]) == ("spine2", "leaf1")]'
check "drops: ambiguous drops are not counted as leaf1 > spine1's" \
	json '[o for o in L if (o["a"], o["b"]) == ("leaf1", "spine1")][0]["drops"] == 0 and [o for o in L if (o["a"], o["b"]) == ("leaf1", "spine1")][0]["ambiguous"] > 0'

hs $S drops
check "drops text: the first link is leaf1 > spine2" \
	sh -c "sed -n 3p '$tmp/out' | grep -q '^leaf1 > spine2 '"
check "drops text: a probe line to paste" has "confirm: probe tcp .* via leaf1,spine2 count" "$tmp/out"
check "drops text: the ambiguous drops counted apart" has "dropped of .*, [0-9]* ambiguous" "$tmp/out"

hs $S --json loops
check "loops: one cycle of spine1 and leaf3" \
	json 'len(L) == 1 and sorted(L[0]["switches"]) == ["leaf3", "spine1"] and L[0]["traces"] > 10'
check "loops: the looping prefix" json 'L[0]["dst"] == "10.1.3.12"'
hs $S loops
check "loops text names the cycle" has "cycle spine1 > leaf3 > spine1" "$tmp/out"

hs $S --json latency
check "latency: a hop line per switch of the fabric" \
	json 'sorted(o["switch"] for o in L if o["kind"] == "hop") == ["leaf1","leaf2","leaf3","leaf4","spine1","spine2"]'
check "latency: p50 <= p90 <= p99 <= max, positive" \
	json 'all(0 < o["p50_ns"] <= o["p90_ns"] <= o["p99_ns"] <= o["max_ns"] for o in L if o["kind"] in ("hop","link"))'
check "latency: per-hop counts are the sums of the switch's links" \
	json 'all(o["count"] == sum(k["count"] for k in L if k["kind"] == "link" and k["a"] == o["switch"]) for o in L if o["kind"] == "hop")'
check "latency: every outlier is above its link's fence, max(p75 + 3 IQR, 2 x p50)" \
	json '[o for o in L if o["kind"] == "outlier"] and all(o["latency_ns"] > o["link_fence_ns"] >= 2 * o["link_p50_ns"] for o in L if o["kind"] == "outlier")'
check "latency: a link's maximum is no outlier by itself" \
	json 'any(o["kind"] == "link" and o["fence_ns"] and o["max_ns"] <= o["fence_ns"] for o in L)'
hs $S latency
check "latency text: the outliers' rule is stated" has "above their link's fence, the larger of p75" "$tmp/out"
check "latency text: each outlier with its trace, latency, link median and fence" \
	grep -Eq '^[0-9]+:[0-9]+ +[a-z0-9]+ > [a-z0-9]+ +[0-9.]+us +[0-9.]+us +[0-9.]+us$' "$tmp/out"
check "latency text: per hop and per link tables" \
	sh -c "grep -q '^per link' '$tmp/out' && grep -Eq '^leaf1 +[0-9]+ +[0-9.]+us' '$tmp/out'"

hs $S --json ecmp leaf1
check "ecmp leaf1: a group per other leaf" \
	json 'sorted(o["toward"] for o in L) == ["leaf2","leaf3","leaf4"]'
check "ecmp leaf1: both spines in every group, shares sum to 1" \
	json 'all(sorted(h["switch"] for h in o["next_hops"]) == ["spine1","spine2"] and abs(sum(h["flow_share"] for h in o["next_hops"]) - 1) < 1e-6 for o in L)'
check "ecmp: imbalance is max share over mean share minus one, worst first" \
	json 'all(abs(o["imbalance"] - (max(h["flow_share"] for h in o["next_hops"]) * 2 - 1)) < 1e-6 for o in L) and all(L[i]["imbalance"] >= L[i+1]["imbalance"] for i in range(len(L)-1))'
hs $S --json ecmp leaf1 --threshold 0
check "ecmp --threshold 0 flags every uneven group" json 'all(o["flagged"] == (o["imbalance"] > 0) for o in L)'

hs $S --json blame --epoch 1s --all
check "blame --json: one object per link with votes and flows" \
	json '[o for o in L if "a" in o] and all(o["votes"] > 0 and o["flows"] > 0 for o in L if "a" in o)'
check "blame --json: an epoch with no link above the noise says why" \
	json 'all(o["reported_links"] == 0 and o["why"] for o in D["epochs"] if o["why"]) and any("too few retransmitting flows" in o["why"] for o in D["epochs"] if o["why"])'
# the sample's loss is persistent for 'drops', but its retransmitting flows
# spread their votes: blame says so instead of a bare "0 above the noise"
hs $S blame
check "blame: on the sample, why no link is above the noise" \
	has "no link above the noise: [0-9]* retransmitting flows spread .* needed more than [0-9.]* (the other links' mean plus 3 standard deviations)" "$tmp/out"
hs $S -c 'blame --epoch 1s' -c "sql SELECT count(*) AS n, sum(votes) AS v FROM blame"
check "blame keeps the reported links in the history" \
	sh -c "grep -Eq '^[1-9][0-9]* *\\| *[0-9.]+' '$tmp/out'"

hs $S ecmp nosuch
check "ecmp: an unknown switch fails cleanly" failed_cleanly
check "ecmp: says which" has "unknown switch 'nosuch'" "$tmp/err"
hs --db "$tmp/h2.db" -r "$PCAP" drops
check "drops without a topology fails cleanly" failed_cleanly
check "drops without a topology says so" has "topo load" "$tmp/err"
hs $S blame --epoch 0
check "blame: a zero epoch is refused" failed_cleanly
hs $S -c 'latency limit x'
check "latency: a bad limit is refused" has "bad limit 'x'" "$tmp/err"

finish
