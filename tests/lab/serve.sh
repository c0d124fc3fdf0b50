#!/bin/bash
# serve: the lab's analyzer as a daemon (up --serve). A console attaches,
# leaves; a fault drops packets while none is attached; a console that
# attaches later finds the fault's dropped traces, in memory and in the
# history; 'watch' attached shows flows' traces as they run; down stops the
# daemon.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope hs-agent

lab up --serve >"$LAB_STATE/up.out" 2>&1 || fail "up --serve failed: $(tail -n 3 "$LAB_STATE/up.out")"
SOCK=$LAB_STATE/hopscope.sock
[ -S "$SOCK" ] || fail "no socket at $SOCK after up --serve: $(cat "$LAB_STATE/up.out")"
st=$(lab status) || fail "status failed"
grep -q "^analyzer daemon: running pid [0-9]*, consoles attach at $SOCK$" <<<"$st" ||
	fail "status does not show the daemon: $st"
att() { timeout 60 "$HOPSCOPE" --attach "$SOCK" "$@" </dev/null; }
out=$(att -c 'capture status') || fail "a console could not attach: $out"
grep -q "^source *hs-mirror (interface)" <<<"$out" || fail "the daemon does not capture hs-mirror: $out"
ok "up --serve: the daemon captures the mirror network; a console attaches and leaves"

# no console attached: a dropping link, flows across it
h1=$(host_addr h1); h8=$(host_addr h8)
lab fault drop leaf1-spine1 100% >/dev/null
flows h1 h8 5102 16
lab fault clear >/dev/null
sleep 2		# the last traces close (a second's quiet)

att --json -c 'traces outcome dropped limit 5000' >"$LAB_STATE/dropped.json" ||
	fail "traces failed attached"
python3 - "$LAB_STATE/dropped.json" "$h1" "$h8" <<'PY' || fail "the fault's traces are not as they should be"
import json, sys
d = json.load(open(sys.argv[1]))
ts = [t for t in d["traces"] if t["src"] == sys.argv[2] and t["dst"] == sys.argv[3] and t["dport"] == 5102]
if not ts:
    sys.exit("no dropped traces of h1 > h8:5102 among %d" % len(d["traces"]))
for t in ts:
    if [h["switch"] for h in t["hops"]] != ["leaf1"] or "spine1" not in t.get("expected_next", ""):
        sys.exit("trace %s: %s" % (t["id"], t))
print("%d dropped traces of the flows, all at leaf1 toward spine1" % len(ts))
PY
ok "a fault while no console was attached: a console attached later sees its dropped traces"

out=$(att -c "sql \"select count(*) from traces where outcome = 'dropped' and dport = 5102\"") ||
	fail "sql failed attached: $out"
n=$(grep -Eo '^ *[0-9]+ *$' <<<"$out" | tr -d ' ' | tail -n 1)
[ "${n:-0}" -gt 0 ] || fail "the history holds no dropped trace of the fault: $out"
ok "and the daemon's history holds them ($n)"

# watch attached, in a terminal: the traces of flows that run now arrive in the view
command -v tmux >/dev/null || fail "tmux is needed to watch attached"
T="tmux -S $LAB_STATE/tmux.sock"
$T new-session -d -s hs -x 160 -y 45 "$HOPSCOPE --attach $SOCK"
screen_has() {	# ERE: waits up to 15 s for the screen to match
	local i=0
	while [ $i -lt 150 ]; do
		$T capture-pane -p -t hs >"$LAB_STATE/screen" 2>/dev/null || true
		grep -Eq -- "$1" "$LAB_STATE/screen" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
tfail() { $T kill-server; fail "$@"; }
screen_has '^hopscope>' || tfail "no prompt attached: $(cat "$LAB_STATE/screen")"
$T send-keys -t hs 'watch' Enter
screen_has 'Traces [0-9]+' || tfail "watch did not come up attached: $(cat "$LAB_STATE/screen")"
flows h1 h8 5103 4
screen_has ":5103 .*leaf1 .*delivered" ||
	tfail "the flows' traces did not arrive in the view: $(cat "$LAB_STATE/screen")"
$T send-keys -t hs q
screen_has '^hopscope> ?$' || tfail "q did not give the prompt back: $(cat "$LAB_STATE/screen")"
$T kill-server
ok "watch attached shows the traces of flows as they run; q gives the prompt back"

pid=$(cat "$LAB_STATE/serve.pid")
lab down >/dev/null || fail "down failed"
# gone, or a zombie its new parent has not reaped yet
st=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null) || st=Z
[ "${st:0:1}" = Z ] || fail "the daemon $pid outlived down"
[ ! -e "$SOCK" ] || fail "the socket outlived down"
ok "down stops the daemon"
