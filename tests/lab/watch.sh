#!/bin/bash
# watch.sh - the full-screen view on the live lab, under a real terminal
# (tmux): with traffic running, 'hopscope --lab' then 'watch' shows new
# traces arriving with leaf › spine › leaf paths and a rising capture rate,
# Enter fills the detail pane hop by hop, ':traces limit 2' lands in the
# events pane, and 'q' gives back a working prompt while capture goes on.
# With a one-way drop on a spine-leaf link picked at random, the Links pane
# and 'drops --json' put at least 90% of the drops whose link is known on
# that directed link, and none on the way back.
set -u
. "${top_srcdir:-.}/tests/lab/lib.sh"

command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux is not installed: the live watch view is NOT tested" >&2; exit 77; }
lab_init
HS=$top_builddir/hopscope

lab up >/dev/null || fail "lab up failed"
lab traffic start --rate 20 --duration 60 >/dev/null || fail "traffic start failed"
leaf=leaf$((RANDOM % 4 + 1)) spine=spine$((RANDOM % 2 + 1))
if ((RANDOM % 2)); then from=$leaf to=$spine; else from=$spine to=$leaf; fi
lab fault drop "$from-$to" 30% >/dev/null || fail "fault drop $from-$to failed"

T="tmux -S $LAB_STATE/tmux.sock"
screen=$LAB_STATE/screen
snap() { $T capture-pane -p -t hs >"$screen" 2>/dev/null; }
wait_for() { # REGEX [tenths]
	local i
	for ((i = 0; i < ${2:-100}; i++)); do
		snap
		grep -Eq -- "$1" "$screen" && return 0
		sleep 0.1
	done
	echo "--- screen:" >&2; cat "$screen" >&2
	return 1
}
trap 'rc=$?; $T kill-server >/dev/null 2>&1; (exit $rc); lab_cleanup' EXIT

$T new-session -d -s hs -x 160 -y 45 \
	"$HS --db $LAB_STATE/h.db --lab --state $LAB_STATE; sleep 30" || fail "tmux did not start"
wait_for 'hopscope>' || fail "no prompt"
$T send-keys -t hs 'watch' Enter
wait_for 'Traces [0-9]+' || fail "no traces pane"
wait_for 'leaf[0-9] › spine[0-9] › leaf[0-9] .*delivered' 100 || fail "no live leaf › spine › leaf trace"
ok "live traces with leaf › spine › leaf paths"
wait_for 'hs-mirror \| [1-9][0-9]* pkt/s' 60 || fail "the status bar shows no capture rate"
ok "the status bar shows the live capture rate"
first=$(grep -Eo 'Traces [0-9]+' "$screen" | head -n 1 | grep -Eo '[0-9]+')
sleep 2
snap
later=$(grep -Eo 'Traces [0-9]+' "$screen" | head -n 1 | grep -Eo '[0-9]+')
[ "${later:-0}" -gt "${first:-0}" ] || fail "traces do not keep arriving ($first, then $later)"
ok "traces keep arriving ($first, then $later)"

$T send-keys -t hs p			# pause the view to select a stable row
$T send-keys -t hs Enter
wait_for 'trace [0-9]+:[0-9]+ .*' || fail "no detail"
grep -Eq '^│1 +leaf[0-9]' "$screen" || grep -Eq '1 +leaf[0-9] ' "$screen" || fail "the detail pane has no hop rows"
ok "Enter fills the detail pane hop by hop"
# the traces in the order of the time they show, newest first, though two
# workers hand them over out of it; the top row's time is its first hop's
# in Detail
python3 - "$screen" <<'PY' || fail "the Traces pane's times are not in order or not Detail's"
import re, sys
t = r"(?:\d{4}-\d\d-\d\d )?(\d\d:\d\d:\d\d\.\d{6})"
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
rows = [m.group(1) for m in (re.match("│" + t + r" +\S+ > ", l) for l in lines) if m]
hop1 = [m.group(1) for m in (re.match(r"│ *1 +\S+ +" + t + " ", l) for l in lines) if m]
print("traces pane: %d rows from %s to %s; detail's first hop at %s" %
      (len(rows), rows[:1], rows[-1:], hop1[:1]))
if len(rows) < 3 or rows != sorted(rows, reverse=True):
    sys.exit("rows out of time order: %s" % rows)
if hop1[:1] != rows[:1]:
    sys.exit("the top row shows %s, its first hop in Detail %s" % (rows[:1], hop1[:1]))
PY
ok "the Traces pane newest first by the time it shows, its first hop's in Detail"
$T send-keys -t hs p
$T send-keys -t hs ':traces limit 2' Enter
wait_for 'id +time +flow' 50 || fail "':traces' output is not in the events pane"
ok "':traces' output lands in the events pane"

# the Links pane: directed rows, worst first, with every row that has a
# drop on the screen (the last one shown has none)
sleep 6
snap
python3 - "$screen" "$from" "$to" <<'PY' || fail "the Links pane does not put the drops on $from > $to"
import re, sys
screen, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
rows = []
for line in open(screen, encoding="utf-8"):
    m = re.search(r"│ *([a-z]+[0-9]+) > ([a-z]+[0-9]+) +([0-9]+) +([0-9]+) +([0-9.]+%|-) +([0-9]+|-) ", line)
    if m:
        rows.append((m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), m.group(6)))
if not rows or rows[-1][3] != 0:
    sys.exit("links pane: %d rows, not every row with a drop shown: %s" % (len(rows), rows[-1:]))
total = sum(r[3] for r in rows)
mine = sum(r[3] for r in rows if (r[0], r[1]) == (a, b))
back = sum(r[3] for r in rows if (r[0], r[1]) == (b, a))
print("links pane: %d of %d drops on %s > %s, %d the other way" % (mine, total, a, b, back))
if (rows[0][0], rows[0][1]) != (a, b) or mine < 5 or mine < 0.9 * total:
    sys.exit("links pane: first row %s > %s" % rows[0][:2])
PY
ok "watch's Links pane puts the drops on $from > $to"

$T send-keys -t hs q
wait_for 'hopscope>' || fail "no prompt after q"
$T send-keys -t hs 'drops --json limit 100' Enter
sleep 1
$T capture-pane -p -J -S - -t hs >"$screen" 2>/dev/null
python3 - "$screen" "$from" "$to" <<'PY' || fail "drops --json does not put the drops on $from > $to"
import json, sys
screen, a, b = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(screen, encoding="utf-8").read().split("\n")
start = max(i for i, l in enumerate(lines) if "drops --json limit 100" in l)
L = [k for l in lines[start + 1:] if l.startswith("{") for k in json.loads(l)["links"]]
total = sum(o["drops"] for o in L)
mine = sum(o["drops"] for o in L if (o["a"], o["b"]) == (a, b))
amb = sum(o["ambiguous"] for o in L if o["a"] == a)
print("drops --json: %d of %d drops on %s > %s (%d ambiguous at %s)" % (mine, total, a, b, amb, a))
if mine < 5 or mine < 0.9 * total:
    sys.exit(1)
PY
ok "drops --json puts the drops on $from > $to"
$T send-keys -t hs 'capture status' Enter
wait_for 'state +running' 50 || fail "capture is not running after watch"
ok "q returns to a working prompt and capture went on"
$T send-keys -t hs 'quit' Enter
echo "1..8"
