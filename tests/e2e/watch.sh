#!/bin/sh
# watch.sh - the full-screen view under a real terminal (tmux): the sample
# capture's traces show with their switch paths and outcomes, the keys move
# between panes and change the detail, ':' output lands in the events pane, a
# resize keeps a valid layout (a tiny one says so), and 'q' gives back a
# working prompt. Without a terminal 'watch' refuses clearly.
. "$(dirname "$0")/lib.sh"

PCAP=$top_srcdir/share/sample/sample.pcap
TOPO=$top_srcdir/share/sample/sample.topo
PROMPT=${HS_PROMPT:-hopscope>}

if ! command -v tmux >/dev/null 2>&1; then
	echo "SKIP: tmux is not installed; the watch view is NOT tested" >&2
	echo "SKIP: tmux is not installed; the watch view is NOT tested"
	exit 77
fi
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }
for f in "$PCAP" "$TOPO"; do
	if [ ! -e "$f" ]; then
		echo "SKIP: $f is missing"
		exit 77
	fi
done

T="tmux -S $tmp/sock"
cleanup="$cleanup"'$T kill-server >/dev/null 2>&1;'

# a check that failed shows the screen
not_ok() {
	n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"
	echo "# screen:"; sed 's/^/#   /' "$tmp/screen"
}

snap() { $T capture-pane -p -t hs >"$tmp/screen" 2>/dev/null; }
# wait until the screen stops changing (the view redraws at most 20/s)
settle() {
	snap; prev=$(cat "$tmp/screen"); i=0
	while [ $i -lt 50 ]; do
		sleep 0.2
		snap
		cur=$(cat "$tmp/screen")
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
		i=$((i + 1))
	done
}
# until CONDITION holds of the screen (10 s): a key or a resize is drawn
# when the console gets to it, which on a busy machine can be after the
# screen was still for a while
until_screen() {
	i=0
	while [ $i -lt 100 ]; do
		snap
		eval "$1" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# wait until the screen matches an extended regex (10 s)
wait_for() { _re=$1; until_screen 'grep -Eq -- "$_re" "$tmp/screen"'; }
# the panes are drawn, whole, for a screen of $1 lines: the status line
# (drawn last) is the last line and the top border ends at the right edge
# (after a resize tmux shows what was drawn for the old size, cut or
# padded, until the console draws again)
drawn() {
	until_screen "sed -n ${1}p '$tmp/screen' | grep -q 'pkt/s' &&
		head -n 1 '$tmp/screen' | grep -q '┐\$'" || true
	settle
}
has() { grep -Eq -- "$1" "$tmp/screen"; }
lacks() { ! grep -Eq -- "$1" "$tmp/screen"; }
differ() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" != "$2" ]; }
detail_id() { grep -Eo 'trace [0-9]+:[0-9]+ ' "$tmp/screen" | head -n 1; }

# --- no terminal ------------------------------------------------------------
out=$("$HS" --db "$tmp/nt.db" -c watch </dev/null 2>&1)
st=$?
check "watch without a terminal fails" [ $st -ne 0 ]
echo "$out" | grep -q "watch: needs a terminal" && ok "and says it needs a terminal" ||
	{ not_ok "and says it needs a terminal"; echo "# got: $out"; }

# --- the view ---------------------------------------------------------------
$T new-session -d -s hs -x 160 -y 45 \
	"env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color '$HS' --db '$tmp/h.db' -r '$PCAP' --topo '$TOPO'; sleep 30"
check "the prompt comes up" wait_for "$PROMPT"
# the prompt opens at once, the file is read behind it: the load and the
# counts checked below are those of the whole sample
wait_for "capture of .*sample\.pcap.* ended" || true
settle

$T send-keys -t hs 'watch' Enter
check "watch opens the panes" wait_for "Traces .*sort newest"
drawn 45
check "trace rows show switch paths" has "leaf[0-9]+ › spine[0-9]+ › leaf[0-9]+"
check "delivered traces are listed" has "delivered"
check "dropped traces are listed" has "dropped"
check "detail, links and events panes are drawn" \
	sh -c "grep -q ' Detail ' '$tmp/screen' && grep -q ' Links ' '$tmp/screen' && grep -q ' Events ' '$tmp/screen'"
check "the detail pane shows a trace hop by hop" has "dscp/ecn"
check "the links pane lists directed links" has "leaf[0-9]+ > spine[0-9]+ "
# the load of each row's own direction, as 'rates' gives it at the end of the sample
check "the links pane shows each link's load from the rates" has "leaf1 > spine2 .* 32\.9k│"
check "the load of the other direction is its own" has "spine2 > leaf1 .* 65\.6k│"
# a figure on few samples ('~') keeps its unit; the column says what they are
check "a rough load is shown whole, not cut to its column" has "leaf3 > spine2 .* ~16\.4k│"
check "the load column's title says bits a second" has " 007 +bit/s│"
# the sample's lossy link is one way, leaf1 to spine2: the worst row, with
# the figures of 'drops'; the ambiguous drops are in their own column
check "the lossy directed link comes first, with drops' figures" \
	has "│ *leaf1 > spine2 +65 +13 +16.7% +14 "
check "the status line names the source" has "sample.pcap.*pkt/s"
check "the status line counts decode errors and frames with no IP apart" \
	has "\| decode errors [0-9]+ \| not IP [0-9]+ \|"

first=$(detail_id)
check "the detail names the trace SESSION:N, as 'traces' does ($first)" \
	sh -c "echo '$first' | grep -Eq '^trace 1:[0-9]+ \$'"
$T send-keys -t hs Down Enter
until_screen 'differ "$first" "$(detail_id)"'
settle
second=$(detail_id)
check "Down + Enter shows another trace ($first -> $second)" differ "$first" "$second"
# Enter moved the focus to Detail: three Tabs come back round to Traces
$T send-keys -t hs Tab Tab Tab Down
until_screen 'differ "$second" "$(detail_id)"'
settle
third=$(detail_id)
check "Tab cycles the panes back to Traces ($second -> $third)" differ "$second" "$third"

$T send-keys -t hs '/outcome dropped' Enter
check "the display filter shows in the title" wait_for "Traces [0-9]+ \[outcome dropped\]"
settle
check "and only dropped traces are left" sh -c \
	"! grep -E 'leaf[0-9]+ › spine' '$tmp/screen' | grep -q 'delivered'"
$T send-keys -t hs '/' C-u Enter
wait_for "Traces [0-9]+, sort" || true
settle

$T send-keys -t hs ':traces limit 3' Enter
check "':' echoes the command in Events" wait_for "> :traces limit 3"
settle
check "and its output lands in Events" has "│ *id +time +flow"
$T send-keys -t hs ':nosuchverb' Enter
check "a wrong ':' command shows its error in Events" wait_for "error: .*nosuchverb"

$T resize-window -t hs -x 100 -y 30
drawn 30
check "a resize keeps the panes (100x30)" \
	sh -c "grep -q 'Traces ' '$tmp/screen' && grep -q ' Links ' '$tmp/screen' && grep -q ' Events ' '$tmp/screen'"
check "the status line is still the last line" \
	sh -c "sed -n 30p '$tmp/screen' | grep -q 'pkt/s'"
# in characters, not bytes: the borders and paths are UTF-8
widest() { python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$1"; }
check "no line is wider than the screen" [ "$(widest "$tmp/screen")" -le 100 ]
check "the bottom border is where the screen ends" \
	sh -c "sed -n 29p '$tmp/screen' | grep -q '^└.*┘\$'"
# 80x24: the columns give way by priority: the time goes, the flow and the
# switch names stay whole, a looped path gives way in its middle
$T resize-window -t hs -x 80 -y 24
drawn 24
check "80x24: no line is wider than the screen" [ "$(widest "$tmp/screen")" -le 80 ]
check "80x24: the time column gives way" lacks "│ *time +flow"
check "80x24: flow, path, outcome and latency are shown" has "│ *flow +path +outcome +latency"
check "80x24: a flow's addresses and ports are whole, what is cut says so" \
	has "│ *10\.1\.[0-9]+\.[0-9]+:[0-9]+ > 10\.1\.[0-9]+\.[0-9]+:[0-9]+( \[[A-Z.]*(\]|…)|…) "
check "80x24: a path is shown whole" has " leaf[0-9] › spine[0-9] › leaf[0-9] +delivered"
$T send-keys -t hs '/outcome looped' Enter
check "80x24: a looped path gives way in the middle" wait_for " leaf[0-9] › .*… › .*spine[0-9] [+][0-9]+ +looped"
$T send-keys -t hs '/' C-u Enter
wait_for "Traces [0-9]+, sort" || true
settle
# 200x50: room for every column, the date with the time
$T resize-window -t hs -x 200 -y 50
drawn 50
check "200x50: no line is wider than the screen" [ "$(widest "$tmp/screen")" -le 200 ]
check "200x50: every column" has "│ *time +flow +path +outcome +latency"
check "200x50: the time with its date" has "│ *20[0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9:.]+ +10\.1\."
$T resize-window -t hs -x 50 -y 12
check "a tiny terminal gets the too-small message" wait_for "terminal too small \(50x12\)"
check "and no panes" lacks " Events "
$T resize-window -t hs -x 160 -y 45
check "growing back draws the panes again" wait_for "Traces .*sort newest"

$T send-keys -t hs q
until_screen "! grep -q ' Events ' '$tmp/screen'" || true
settle
check "q returns to the prompt" sh -c "grep -v '^$' '$tmp/screen' | tail -n 1 | grep -q '$PROMPT'"
$T send-keys -t hs 'help' Enter
check "the prompt works after watch (help)" wait_for "watch +full-screen live view"

# packets that ran out of TTL on the way (a traceroute's) are no link's
# drops: the Links pane counts the lossy first link's drops and none on the
# links past the spines, where the TTL ran out
SYNTH=$top_builddir/tests/tools/hs-synth
"$SYNTH" --ttl 2 --drop-link leaf1-spine1:0.5 --packets 600 --seed 3 -w "$tmp/ttl.pcap" \
	-t "$tmp/ttl.topo" >/dev/null 2>&1 || { not_ok "hs-synth --ttl 2 runs"; exit 1; }
$T send-keys -t hs "topo load $tmp/ttl.topo" Enter "capture start $tmp/ttl.pcap" Enter
wait_for "capture of .*ttl\.pcap.* ended" || true
$T send-keys -t hs 'watch' Enter
wait_for " Links " || true
drawn 45
check "expired packets: the lossy link's drops are in the Links pane" \
	has "leaf1 > spine1 +[0-9]+ +[1-9]"
check "expired packets: no drops on the links past the switch where the TTL ran out" \
	lacks "spine[0-9] > leaf[0-9] +[0-9]+ +[1-9]"
$T send-keys -t hs q

finish
