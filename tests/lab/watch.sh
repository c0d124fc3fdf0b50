#!/bin/bash
# watch.sh - the full-screen view on the live lab, under a real terminal
# (tmux): with traffic running, 'hopscope --lab' then 'watch' shows new
# traces arriving with leaf › spine › leaf paths and a rising capture rate,
# Enter fills the detail pane hop by hop, ':traces limit 2' lands in the
# events pane, and 'q' gives back a working prompt while capture goes on.
set -u
. "${top_srcdir:-.}/tests/lab/lib.sh"

command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux is not installed: the live watch view is NOT tested" >&2; exit 77; }
lab_init
HS=$top_builddir/hopscope

lab up >/dev/null || fail "lab up failed"
lab traffic start --rate 20 --duration 60 >/dev/null || fail "traffic start failed"

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
wait_for 'trace [0-9]+ .*' || fail "no detail"
grep -Eq '^│1 +leaf[0-9]' "$screen" || grep -Eq '1 +leaf[0-9] ' "$screen" || fail "the detail pane has no hop rows"
ok "Enter fills the detail pane hop by hop"
$T send-keys -t hs p
$T send-keys -t hs ':traces limit 2' Enter
wait_for 'id +time +flow' 50 || fail "':traces' output is not in the events pane"
ok "':traces' output lands in the events pane"

$T send-keys -t hs q
wait_for 'hopscope>' || fail "no prompt after q"
$T send-keys -t hs 'capture status' Enter
wait_for 'state +running' 50 || fail "capture is not running after watch"
ok "q returns to a working prompt and capture went on"
$T send-keys -t hs 'quit' Enter
echo "1..5"
