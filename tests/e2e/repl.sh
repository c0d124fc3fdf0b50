#!/bin/sh
# repl.sh - the prompt under a real terminal (tmux), as a network engineer's
# hands use it: TAB completes from the command table (sub-verbs, a keyword's
# values, switches of the topology), '?' lists what may come next without
# touching the line, did-you-mean and 'show X' at the prompt.
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null 2>&1 || skip "tmux is not installed: the prompt is NOT tested"

clear_line() { $T send-keys -t hs C-u; $T send-keys -t hs C-l; sleep 0.2; }

term_start 120 40 \
	"env TERM=screen-256color '$HS' --db '$tmp/h.db' -r '$top_srcdir/share/sample/sample.pcap' --topo '$top_srcdir/share/sample/sample.topo'; sleep 30"
check "the prompt comes up" wait_for 'hopscope>'
check "the sample is read" wait_for "capture of .* ended"

$T send-keys -t hs "traces outcome " Tab
check "TAB after 'outcome' lists the four outcomes" \
	wait_for '^delivered  dropped  looped  unknown$'
clear_line
$T send-keys -t hs "traces outcome dr" Tab
check "TAB completes an outcome" wait_for 'hopscope> traces outcome dropped *$'
clear_line
$T send-keys -t hs "ecmp " Tab
check "TAB after 'ecmp' lists the topology's switches" wait_for '^spine1  spine2  leaf1  leaf2  leaf3  leaf4$'
clear_line
$T send-keys -t hs "capture stat" Tab
check "TAB completes a sub-verb" wait_for 'hopscope> capture status *$'
clear_line
$T send-keys -t hs "stats by src,dp" Tab
check "TAB completes a field of a list, without a space" wait_for 'hopscope> stats by src,dport$'
clear_line

$T send-keys -t hs "traces show 1:58" Tab
check "TAB after 'traces show' lists trace ids, newest first" wait_for '^1:589  1:588  1:587 .* 1:580  1:58$'
clear_line
$T send-keys -t hs "traces show 58" Tab
check "a trace id without its session completes by number" wait_for '^589  588  587 .* 580  58$'
clear_line
$T send-keys -t hs "history show 1:58" Tab
check "TAB after 'history show' lists the stored traces" wait_for '^1:588  1:587  1:58$'
clear_line
$T send-keys -t hs "history show 1:49" Tab
check "TAB completes a unique stored trace id" wait_for 'hopscope> history show 1:490 *$'
clear_line

$T send-keys -t hs "traces " "?"
check "'?' shows the synopsis" wait_for '^traces \[show ID\] \[flow FLOW\]'
check "'?' lists the keywords" wait_for '^  show  flow  switch  outcome  since  limit$'
check "'?' leaves the line as it was" wait_for 'hopscope> traces *$'
clear_line
$T send-keys -t hs "sql 'select 1 as \"a?\"'" Enter
check "'?' inside quotes is a character" wait_for '^a\?$'
clear_line

$T send-keys -t hs "tarces" Enter
check "a typo gets a did-you-mean" wait_for "error: unknown verb 'tarces': did you mean 'traces'\\?"
$T send-keys -t hs "sh traces limit 1" Enter
check "'sh traces' is 'traces'" wait_for '^id +time +flow'
$T send-keys -t hs "cap stat" Enter
check "sub-verbs by prefix: 'cap stat'" wait_for '^packets +6741$'

# long output goes through the pager (less -FRX), short output does not
clear_line
$T send-keys -t hs "traces" Enter
check "a listing longer than the screen opens the pager" wait_for '^:$'
$T send-keys -t hs "q"
check "q leaves the pager for the prompt" wait_for 'hopscope> *$'
clear_line
$T send-keys -t hs "set pager off" Enter
$T send-keys -t hs "traces" Enter
sleep 1
check "'set pager off' prints it all at once" \
	eval "wait_for 'hopscope> *\$' && ! grep -q '^:\$' '$tmp/screen'"
$T send-keys -t hs "quit" Enter
finish
