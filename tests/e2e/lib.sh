# lib.sh - shared helpers for the end-to-end tests (sourced, not run)
#
#   . "$(dirname "$0")/lib.sh"
#   hs -c 'help'          runs the console: stdout in $tmp/out, stderr in
#                         $tmp/err, exit status in $st (stdin is /dev/null)
#   check "what" CMD...   one TAP-style line, counted
#   finish                exits 0 when every check passed, 1 otherwise
#
# Exit statuses follow automake: 77 skips the test, 99 is a hard error.
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
HS=$top_builddir/hopscope
TEST=$(basename "$0" .sh)

skip() { echo "SKIP: $TEST: $*"; exit 77; }
hard() { echo "ERROR: $TEST: $*" >&2; exit 99; }
fail() { echo "FAIL: $TEST: $*" >&2; exit 1; }

[ -x "$HS" ] || hard "'$HS' is not built"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-$TEST.XXXXXX") || hard "cannot make a temporary directory"
# tests may add their own cleanup to $cleanup (run first)
cleanup=
trap 'eval "$cleanup"; rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the tests' files live in root-only temporary directories: keep root
# (tests/e2e/privs.sh, tests/lab/privsep.sh and tests/lab/load.sh test the drop)
HOPSCOPE_USER=root
export HOPSCOPE_USER
# keep the user's line history out of it
HOPSCOPE_HISTORY=$tmp/history
export HOPSCOPE_HISTORY
# and each test's history its own where it names none (not ./hopscope.db,
# which every test run in the same directory would share)
HOPSCOPE_DB=$tmp/hopscope.db
export HOPSCOPE_DB

n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"
	if [ -s "$tmp/err" ]; then sed 's/^/#   stderr: /' "$tmp/err" | head -n 5; fi
}
check() { # check DESCRIPTION COMMAND...
	d=$1; shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

hs() {
	timeout 60 "$HS" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
}
# sig_pid: the pid of a console started in the background as
#   timeout 60 sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/hs.pid" "$HS" ... &
# A signal for the console goes to it, not to timeout: until timeout has
# its child's pid, a signal ends timeout alone and the console runs on.
sig_pid() {
	i=0
	while [ ! -s "$tmp/hs.pid" ] && [ $i -lt 2000 ]; do sleep 0.005; i=$((i + 1)); done
	cat "$tmp/hs.pid"
}
# lo_send PORT AFTER COUNT GAP TAG [SIZE]: in the background, COUNT
# datagrams to 127.0.0.1:PORT (bound, so no ICMP error answers them), GAP
# seconds apart, each TAG and its number (or SIZE bytes of TAG), the first AFTER seconds after the console that
# runs next (writing $tmp/out) has said that its capture is running: its
# runbook has 'capture status' after 'capture start', so that the burst
# falls within the capture however long a loaded machine takes to start
# it. $sender is its pid
lo_send() {
	rm -f "$tmp/out"
	python3 - "$tmp/out" "$@" >>"$tmp/sender.out" 2>&1 <<'PY' &
import re, socket, sys, time
out = sys.argv[1]
port, after, count = int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
gap, tag = float(sys.argv[5]), sys.argv[6].encode()
size = int(sys.argv[7]) if len(sys.argv) > 7 else 0
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx.bind(("127.0.0.1", port))
running = re.compile(r'^state +running$|"state":"running"', re.M)
end = time.monotonic() + 60
while time.monotonic() < end:
    try:
        if running.search(open(out).read()):
            break
    except OSError:
        pass
    time.sleep(0.02)
else:
    print("lo_send: the console never said its capture was running")
time.sleep(after)
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(count):
    tx.sendto(tag * size if size else b"%s%d" % (tag, i), ("127.0.0.1", port))
    time.sleep(gap)
PY
	sender=$!
}
# lossy_fattree FLOWS: a fat tree of 4 pods, FLOWS flows, a lossy link and a
# loop, every switch mirroring: $tmp/all.pcap and its topology $tmp/f.topo
lossy_fattree() {
	"$top_builddir/tests/tools/hs-synth" --shape fattree:4 --flows "$1" --seed 3 \
		--drop-link agg1-core1:0.2 --loop agg3-core2:edge3 --loop-flows 3 \
		-w "$tmp/all.pcap" -t "$tmp/f.topo" 2>"$tmp/synth.err" ||
		hard "hs-synth failed: $(cat "$tmp/synth.err")"
}
has() { grep -q -- "$1" "$2"; }
hasnt() { ! grep -q -- "$1" "$2"; }
crashed() { [ "$st" -ge 124 ]; }
failed_cleanly() { [ "$st" -ne 0 ] && [ "$st" -lt 124 ]; }

# a terminal for the console: term_start WIDTH HEIGHT COMMAND starts tmux on
# its own socket (killed at exit); snap copies the screen to $tmp/screen;
# wait_for ERE waits up to 15 s for the screen to match
term_start() {
	T="tmux -S $tmp/sock"
	cleanup="$cleanup"'$T kill-server >/dev/null 2>&1;'
	$T new-session -d -s hs -x "$1" -y "$2" "$3"
}
snap() { $T capture-pane -p -t hs >"$tmp/screen" 2>/dev/null; }
wait_for() {
	_i=0
	while [ $_i -lt 150 ]; do
		snap
		grep -Eq -- "$1" "$tmp/screen" && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# pg_start: a PostgreSQL server of the test's own (share/lab/hs-pgserver: a
# data directory and a Unix socket in $tmp, no TCP port), stopped at the
# end; its URI in $url, and psql to query it. Skips where none is installed.
PGS=$top_srcdir/share/lab/hs-pgserver
pg_start() {
	url=$("$PGS" start "$tmp" 2>"$tmp/pgerr")
	case $? in
	0) ;;
	3) skip "no PostgreSQL server installed (apt-get install postgresql)" ;;
	*) hard "cannot start a PostgreSQL server: $(cat "$tmp/pgerr")" ;;
	esac
	cleanup="$cleanup"'"$PGS" stop "$tmp";'
}
psql() { "$PGS" psql "$tmp" -qtA "$@"; }

finish() {
	echo "1..$n"
	[ "$fails" -eq 0 ] || { echo "$fails of $n checks failed"; exit 1; }
	exit 0
}
