#!/bin/bash
# traceroute: 007's path discovery in the lab. A host opens a TCP flow (its
# SYNs are mirrored, so the console has the flow's own traces); the console's
# 'traceroute' then sends the flow's 5-tuple with TTL 1, 2, ... from the
# analyzer and must find the same switches, in the same order, as the flow's
# traces - the spine ECMP chose included.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope

lab up >/dev/null || fail "lab up failed"
h1=$(host_addr h1)
h8=$(host_addr h8)
out=$LAB_STATE/tr.json

for sport in 40123 40124; do
	# the console captures; meanwhile h1 opens the flow
	"$HOPSCOPE" --db "$LAB_STATE/h.db" --lab --state "$LAB_STATE" --json \
		-c "sleep 2; traceroute $h1:$sport > $h8:5001 max-ttl 6" >"$out" 2>"$LAB_STATE/err" &
	pid=$!
	sleep 1
	on h1 trace "$h8" --tcp 5001 --sport "$sport" --max-ttl 4 --timeout 300ms >/dev/null || true
	wait "$pid" || { cat "$LAB_STATE/err" >&2; fail "traceroute exited non-zero"; }

	python3 - "$out" <<'PY' || fail "traceroute of port $sport disagrees with the flow's traces"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
tr = [o for o in objs if "traceroute" in o]
if not tr:
    print("no traceroute object in", objs); sys.exit(1)
t = tr[-1]
path = [h["switch"] for h in t["hops"]]
print("traceroute path", path, "flow traces", t.get("flow_traces"), "same", t.get("same_path"))
ok = (t.get("reached") and len(path) == 3 and path[0] == "leaf1" and path[-1] == "leaf4"
      and path[1].startswith("spine") and t.get("flow_traces", 0) > 0 and t.get("same_path") is True)
sys.exit(0 if ok else 1)
PY
	ok "traceroute of $h1:$sport > $h8:5001 matches the flow's own traces"
done

# live at a terminal of 80x24: the table is drawn again in place each round,
# and Ctrl-C leaves the last one, the packets still in flight not counted lost
if command -v tmux >/dev/null 2>&1; then
	T="tmux -L hs-$TEST-$$"
	screen=$LAB_STATE/screen
	$T new-session -d -s hs -x 80 -y 24 "env TERM=screen-256color $HOPSCOPE --db '$LAB_STATE/h.db' --lab --state '$LAB_STATE'; sleep 30"
	trap 'st=$?; set +e; $T kill-server 2>/dev/null; (exit $st); lab_cleanup' EXIT
	for i in $(seq 50); do $T capture-pane -p -t hs >"$screen"; grep -q 'hopscope>' "$screen" && break; sleep 0.2; done
	$T send-keys -t hs "traceroute h8" Enter
	for i in $(seq 60); do $T capture-pane -p -t hs >"$screen"; grep -q ', 3 rounds' "$screen" && break; sleep 0.2; done
	$T send-keys -t hs C-c
	for i in $(seq 50); do $T capture-pane -p -t hs >"$screen"; grep -q '^hopscope> *$' "$screen" && break; sleep 0.2; done
	cat "$screen"
	[ "$(grep -c '^traceroute .* > 10\.1\.4\.12:80 tcp, [0-9]* rounds' "$screen")" = 1 ] ||
		fail "the live table is not drawn in place"
	grep -Eq '^  3  leaf4 +0\.0% ' "$screen" && grep -Eq '^  1  leaf1 +0\.0% ' "$screen" &&
		grep -q '^hopscope> *$' "$screen" ||
		fail "Ctrl-C does not leave the last table with the packets in flight left out"
	[ "$(awk '{ if (length($0) > 80) n++ } END { print n + 0 }' "$screen")" = 0 ] ||
		fail "the table is wider than 80 columns"
	# in watch, the ':' line's traceroute draws its table in Events again
	# after each round, in place: while it runs, hop 1's packets grow in the
	# one row it has
	$T send-keys -t hs "watch" Enter
	for i in $(seq 50); do $T capture-pane -p -t hs >"$screen"; grep -q ' Events ' "$screen" && break; sleep 0.2; done
	hop1() { grep -Eo '│  1  leaf1 +[0-9.]+% +[0-9]+ ' "$screen" | awk '{ print $(NF) }'; }
	$T send-keys -t hs ":traceroute h8 count 8 interval 400ms" Enter
	for i in $(seq 60); do $T capture-pane -p -t hs >"$screen"; [ -n "$(hop1)" ] && break; sleep 0.1; done
	cat "$screen"
	first=$(hop1)
	[ "$(hop1 | wc -l)" = 1 ] && ! grep -q "'traceroute h8 count 8 interval 400ms' finished" "$screen" ||
		fail "traceroute in watch shows no table while it runs (hop 1: '$first')"
	for i in $(seq 100); do $T capture-pane -p -t hs >"$screen"; grep -q "'traceroute h8 count 8 interval 400ms' finished" "$screen" && break; sleep 0.1; done
	cat "$screen"
	[ "$(hop1 | wc -l)" = 1 ] && [ "$(hop1)" = 120 ] && [ "$first" -lt 120 ] &&
		grep -q '│  3  leaf4 ' "$screen" && ! grep -q '\[[0-9]*A' "$screen" ||
		fail "traceroute in watch does not redraw its table in place (hop 1 sent $first, then $(hop1))"
	ok "traceroute h8 in watch at 80x24: the table redrawn in Events each round ($first, then 120 sent)"
	# its packets that ran out of TTL on the way are no link's drops: every
	# link the rounds crossed shows packets and no drop
	$T resize-window -t hs -x 200 -y 50
	for i in $(seq 30); do $T capture-pane -p -t hs >"$screen"; grep -Eq '(leaf|spine)[0-9] > (leaf|spine)[0-9] +[1-9]' "$screen" && break; sleep 0.2; done
	cat "$screen"
	grep -Eq 'leaf1 > spine[0-9] +[1-9][0-9]* +0 ' "$screen" &&
		grep -Eq 'spine[0-9] > leaf4 +[1-9][0-9]* +0 ' "$screen" ||
		fail "the Links pane does not show the links traceroute crossed"
	! grep -Eq '(leaf|spine)[0-9] > (leaf|spine)[0-9] +[0-9]+ +[1-9]' "$screen" ||
		fail "the Links pane counts traceroute's expired packets as drops"
	ok "traceroute h8 in watch: no drops in the Links pane from the packets that ran out of TTL"
	# at 200x50 the whole table shows, its rounds counting up in one header
	$T send-keys -t hs ":traceroute h8 count 4 interval 400ms" Enter
	for i in $(seq 60); do $T capture-pane -p -t hs >"$screen"; grep -Eq '│traceroute .* tcp, [1-3] rounds? ' "$screen" && break; sleep 0.1; done
	cat "$screen"
	grep -Eq '│traceroute .* tcp, [1-3] rounds? ' "$screen" ||
		fail "traceroute in watch at 200x50 shows no table while it runs"
	for i in $(seq 60); do $T capture-pane -p -t hs >"$screen"; grep -q "'traceroute h8 count 4 interval 400ms' finished" "$screen" && break; sleep 0.1; done
	cat "$screen"
	[ "$(grep -Ec '│traceroute .* tcp, 4 rounds ' "$screen")" = 1 ] &&
		! grep -Eq '│traceroute .* tcp, [1-3] rounds? ' "$screen" &&
		grep -Eq '│  1  leaf1 +0\.0% +60 ' "$screen" ||
		fail "traceroute in watch at 200x50 does not redraw its table in place"
	ok "traceroute h8 in watch at 200x50: one table, its rounds counted up in place"
	$T kill-server 2>/dev/null || true
	trap lab_cleanup EXIT
	ok "traceroute h8 live at 80x24: redrawn in place, Ctrl-C keeps the last table"
else
	echo "traceroute h8 live: tmux is not installed, NOT tested" >&2
fi

# without a fault nothing is dropped: the packets that ran out of TTL are
# counted apart (a history of its own: the console in tmux may still be
# closing h.db)
"$HOPSCOPE" --db "$LAB_STATE/expired.db" --lab --state "$LAB_STATE" \
	-c "traceroute h8 count 2 interval 200ms; sleep 0.5; drops --json" >"$out" 2>"$LAB_STATE/err" ||
	{ cat "$LAB_STATE/err" >&2; fail "traceroute h8; drops exited non-zero"; }
python3 - "$out" <<'PY' || fail "drops counts traceroute's expired packets as drops"
import json, sys
d = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"dropped"')][-1]
print("dropped", d["dropped"], "expired", d["expired"], "links", d["links"])
sys.exit(0 if d["dropped"] == 0 and d["expired"] >= 2 and not d["links"] else 1)
PY
ok "drops after traceroute h8: no drops, the expired packets counted apart"

# traceroute HOST, the mtr way: no source, no ports; rounds with per-hop
# loss and latency. Both spines drop half of what they send to leaf4 (the
# copies are mirrored before the drop), so the loss is all at hop 3.
lab fault drop spine1-leaf4 50% >/dev/null || fail "fault drop spine1-leaf4 failed"
lab fault drop spine2-leaf4 50% >/dev/null || fail "fault drop spine2-leaf4 failed"
"$HOPSCOPE" --db "$LAB_STATE/h.db" --lab --state "$LAB_STATE" \
	-c "traceroute h8 count 4 interval 200ms --json" >"$out" 2>"$LAB_STATE/err" ||
	{ cat "$LAB_STATE/err" >&2; fail "traceroute h8 exited non-zero"; }
python3 - "$out" <<'PY' || fail "traceroute h8's per-hop figures are wrong"
import json, sys
t = json.load(open(sys.argv[1]))
hops = t["hops"]
print("rounds", t["rounds"], [(h["hop"], h["switches"], h["sent"], h["received"], h["loss"], h["best_ns"], h["avg_ns"], h["worst_ns"], h["stdev_ns"])
                               for h in hops])
ok = (t["rounds"] == 4 and t["reached"] and len(hops) == 3
      and hops[0]["switches"] == ["leaf1"] and hops[2]["switches"] == ["leaf4"]
      and hops[1]["switches"][0].startswith("spine")
      # hop k counts the packets with TTL k or more: 4 rounds of 15, 14, 13
      and [h["sent"] for h in hops] == [60, 56, 52]
      and hops[0]["loss"] == 0 and hops[1]["loss"] == 0
      and 0.2 <= hops[2]["loss"] <= 0.8
      and all(0 < h["best_ns"] <= h["avg_ns"] <= h["worst_ns"] < 10**9 and h["stdev_ns"] >= 0
              for h in hops))
sys.exit(0 if ok else 1)
PY
ok "traceroute h8: 3 hops, the loss on hop 3 only, latency per hop"

"$HOPSCOPE" --db "$LAB_STATE/h.db" --lab --state "$LAB_STATE" \
	-c "traceroute h8 count 2 interval 200ms --report" >"$out" 2>"$LAB_STATE/err" ||
	{ cat "$LAB_STATE/err" >&2; fail "traceroute --report exited non-zero"; }
cat "$out"
grep -q "^traceroute .* > $h8:80 tcp, 2 rounds" "$out" &&
	grep -Eq '^  1  leaf1 +0\.0% +30 ' "$out" &&
	grep -Eq '^  3  leaf4 +[0-9.]+% +26 ' "$out" ||
	fail "traceroute --report does not print the table"
ok "traceroute h8 --report prints the table once"
echo "1..9"
