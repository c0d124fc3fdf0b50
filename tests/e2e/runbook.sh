#!/bin/sh
# runbook.sh - the console as scripts drive it: -c, -f, --keep-going, exit
# statuses, JSON lines, signals, piped input, and the REPL under a terminal.
. "$(dirname "$0")/lib.sh"

# --- -c ---------------------------------------------------------------------
hs -c 'help; nosuchverb'
check "-c with an unknown verb fails (status $st)" [ "$st" -eq 1 ]
check "the error names the verb and the command" \
	has "^-c:2: error: unknown verb 'nosuchverb'" "$tmp/err"
check "the commands before it ran" has 'leave the console' "$tmp/out"

hs -c 'help quit; help sleep'
check "-c runs every command (status $st)" [ "$st" -eq 0 ]
check "-c ran the first" has '^usage: quit$' "$tmp/out"
check "-c ran the second" has '^usage: sleep <DURATION>$' "$tmp/out"
check "nothing on stderr when all is well" [ ! -s "$tmp/err" ]

hs -c 'he'
check "an unambiguous prefix runs the verb (status $st)" [ "$st" -eq 0 ]
hs -c 's'
check "an ambiguous prefix fails (status $st)" [ "$st" -eq 1 ]
check "an ambiguous prefix lists the candidates" has "'s' is ambiguous: .*sleep" "$tmp/err"
hs -c 'sleep'
check "a missing argument fails (status $st)" [ "$st" -eq 1 ]
check "a missing argument shows the usage" has 'usage: sleep <DURATION>' "$tmp/err"

start=$(date +%s%N)
hs -c 'sleep 0.1; help quit'
took=$(( ($(date +%s%N) - start) / 1000000 ))
check "sleep 0.1 works (status $st)" [ "$st" -eq 0 ]
check "sleep waits (${took}ms)" [ "$took" -ge 100 ]
check "the line after sleep ran" has '^usage: quit$' "$tmp/out"
hs -c 'sleep soon'
check "sleep with a bad duration fails (status $st)" [ "$st" -eq 1 ]

# --- a command as words ---------------------------------------------------------
hs help quit
check "hopscope VERB ARG runs one command (status $st)" [ "$st" -eq 0 ]
check "hopscope VERB ARG printed its output" has '^usage: quit$' "$tmp/out"
hs help "it's a verb"
check "a word with a quote and blanks stays one word (status $st)" [ "$st" -eq 1 ]
check "the word reaches the verb intact" has "no verb 'it's a verb'" "$tmp/err"
hs help --json sleep
check "--json after the verb belongs to it" has '^{"name":"sleep"' "$tmp/out"

# --- -f ---------------------------------------------------------------------
cat >"$tmp/rb" <<'RB'
# a runbook
help quit
nosuchverb here
help sleep
RB
hs -f "$tmp/rb"
check "a runbook with a bad line 3 fails (status $st)" [ "$st" -eq 1 ]
check "the error has FILE:3:" has "^$tmp/rb:3: error: unknown verb 'nosuchverb'" "$tmp/err"
check "lines before it ran" has '^usage: quit$' "$tmp/out"
check "lines after it did not run" hasnt 'usage: sleep' "$tmp/out"

hs --keep-going -f "$tmp/rb"
check "--keep-going still exits 1 (status $st)" [ "$st" -eq 1 ]
check "--keep-going runs the lines after it" has 'usage: sleep' "$tmp/out"

printf 'help sleep\nsource %s\nhelp set\n' "$tmp/rb" >"$tmp/outer"
hs -f "$tmp/outer"
check "a failing sourced runbook fails the outer one (status $st)" [ "$st" -eq 1 ]
check "the error names the inner file and line" has "^$tmp/rb:3: error" "$tmp/err"
check "the outer runbook stops too" hasnt 'usage: set' "$tmp/out"

hs -f "$tmp/nonexistent"
check "a missing runbook fails (status $st)" [ "$st" -eq 1 ]
check "a missing runbook is named" has "cannot open '$tmp/nonexistent'" "$tmp/err"

# --- options ------------------------------------------------------------------
hs --no-such-option
check "an unknown option is a usage error (status $st)" [ "$st" -eq 2 ]
check "the usage error is one line" [ "$(wc -l <"$tmp/err")" -eq 1 ]
hs -r "$tmp/a.pcap" -i eth0
check "-r with -i is a usage error (status $st)" [ "$st" -eq 2 ]
hs --help
check "--help exits 0 (status $st)" [ "$st" -eq 0 ]
check "--help shows the usage" has '^usage: hopscope' "$tmp/out"
hs --version
check "--version (status $st)" [ "$st" -eq 0 ]
check "--version prints the version" has '^hopscope [0-9]' "$tmp/out"
hs --topo "$tmp/nonexistent.topo" -c 'help'
check "a missing topology fails (status $st)" [ "$st" -eq 1 ]
hs --lab --state "$tmp/nolab" -c 'help'
check "--lab without a lab fails (status $st)" [ "$st" -eq 1 ]
check "--lab says the lab is not up" has "the lab is not up: run 'hopscope-lab up' first" "$tmp/err"

# --- JSON lines -----------------------------------------------------------------
json_lines() { # every line of $1 is a JSON value; at least one line
	python3 - "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
for l in lines:
    json.loads(l)
sys.exit(0 if lines else 1)
PY
}
if command -v python3 >/dev/null 2>&1; then
	hs --json -c 'help'
	check "--json help (status $st)" [ "$st" -eq 0 ]
	check "--json help is valid JSON per line" json_lines "$tmp/out"
	check "--json help has name, synopsis, summary" \
		has '"name":"sleep","synopsis":"sleep <DURATION>",.*"summary":' "$tmp/out"
	hs -c 'help --json; set --json'
	check "--json on one line is JSON" json_lines "$tmp/out"
	hs -c 'set format json; set trace-timeout 250ms; set'
	check "set format json" json_lines "$tmp/out"
	check "set shows the new timeout" has '"trace_timeout_ns":250000000' "$tmp/out"
fi

# --- signals ---------------------------------------------------------------------
rm -f "$tmp/hs.pid"
timeout 60 sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/hs.pid" \
	"$HS" -c 'sleep 30; help quit' >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
sleep 0.3
kill -INT "$(sig_pid)"
wait "$pid"
st=$?
check "Ctrl-C stops a runbook with status 130 (status $st)" [ "$st" -eq 130 ]
check "nothing after the interrupted line ran" hasnt 'usage: quit' "$tmp/out"

rm -f "$tmp/hs.pid"
timeout 60 sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/hs.pid" \
	"$HS" -c 'sleep 30' >"$tmp/out" 2>"$tmp/err" </dev/null &
pid=$!
sleep 0.3
kill -TERM "$(sig_pid)"
wait "$pid"
st=$?
check "SIGTERM ends the console cleanly (status $st)" [ "$st" -eq 143 ]

# a file verb reads a slice per turn of the loop: Ctrl-C stops it part-way
SYNTH=$top_builddir/tests/tools/hs-synth
"$SYNTH" --packets 300000 --seed 3 -w "$tmp/big.pcap" -t "$tmp/big.topo" >/dev/null 2>&1 ||
	hard "hs-synth failed"
# the output goes through a FIFO read one line before the signal: the
# console cannot reach the end of the file first, however loaded the machine.
# The signal goes to hopscope itself, as a terminal's Ctrl-C does: timeout
# passes a signal on only once its own side of the fork has run, and on a
# loaded machine its child may have written a line before that; a signal
# then ends timeout alone (status 130) and hopscope reads on to the end
mkfifo "$tmp/out.fifo"
timeout 60 sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/hs.pid" \
	"$HS" -c "decode $tmp/big.pcap; help quit" >"$tmp/out.fifo" 2>"$tmp/err" </dev/null &
pid=$!
exec 3<"$tmp/out.fifo"
IFS= read -r first <&3
kill -INT "$(sig_pid)"
{ printf '%s\n' "$first"; cat <&3; } >"$tmp/out"
exec 3<&-
wait "$pid"
st=$?
frames=$(wc -l <"$tmp/out")
check "Ctrl-C stops 'decode' part-way through a file (status $st, $frames of 900000 frames)" \
	sh -c "[ $st -eq 130 ] && [ $frames -gt 0 ] && [ $frames -lt 900000 ]"
check "'decode' says where it was interrupted" has "decode: interrupted after [0-9]* frames" "$tmp/err"
check "nothing after the interrupted decode ran" hasnt 'usage: quit' "$tmp/out"

# --- commands on a pipe ----------------------------------------------------------
printf 'help quit\nbogus\nhelp sleep\n' | timeout 60 "$HS" >"$tmp/out" 2>"$tmp/err"
st=$?
check "piped commands: a failure ends with status 1 (status $st)" [ "$st" -eq 1 ]
check "piped commands: the error has stdin:2:" has "^stdin:2: error: unknown verb 'bogus'" "$tmp/err"
check "piped commands: the next line did not run" hasnt 'usage: sleep' "$tmp/out"
printf 'help quit\nquit\nhelp sleep\n' | timeout 60 "$HS" >"$tmp/out" 2>"$tmp/err"
st=$?
check "piped quit (status $st)" [ "$st" -eq 0 ]
check "piped quit stops reading" hasnt 'usage: sleep' "$tmp/out"

# --- the REPL under a terminal -------------------------------------------------------
if command -v python3 >/dev/null 2>&1 && python3 -c 'import pty, os; os.close(pty.openpty()[0])' 2>/dev/null; then
	# the REPL's sql reads a history: a capture makes one
	hs --db "$tmp/pty.db" -r "$top_srcdir/share/sample/sample.pcap" -c 'capture status'
	python3 - "$HS" "$tmp/big.pcap" "$tmp/pty.db" >"$tmp/pty.log" 2>&1 <<'PY'
import os, pty, select, signal, sys, time

pid, fd = pty.fork()
if pid == 0:
    os.environ["TERM"] = "dumb"
    os.execv(sys.argv[1], [sys.argv[1], "--db", sys.argv[3]])
buf = b""
pos = 0

def wait_for(pat, secs=15):
    """read until pat appears after the previous match"""
    global buf, pos
    end = time.time() + secs
    while True:
        i = buf.find(pat, pos)
        if i >= 0:
            pos = i + len(pat)
            return True
        if time.time() >= end:
            return False
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                d = os.read(fd, 4096)
            except OSError:
                return False
            if not d:
                return False
            buf += d

def step(name, ok):
    print(("ok " if ok else "FAIL ") + name)
    if not ok:
        print(repr(buf[-400:]))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        sys.exit(1)

step("prompt", wait_for(b"hopscope> "))
# the terminal's file is shared with standard output: non-blocking, a long
# answer to a slow terminal would lose lines
with open("/proc/%d/fdinfo/1" % pid) as f:
    flags = int([l.split()[1] for l in f if l.startswith("flags:")][0], 8)
step("standard output stays blocking at the prompt", not flags & os.O_NONBLOCK)
os.write(fd, b"help\r")
step("help output", wait_for(b"leave the console"))
step("prompt again", wait_for(b"hopscope> "))
os.write(fd, b"nosuchverb\r")
step("an error keeps the console", wait_for(b"unknown verb 'nosuchverb'"))
step("prompt after the error", wait_for(b"hopscope> "))
os.write(fd, b"he\tquit\r")
step("TAB completes a verb", wait_for(b"usage: quit"))
step("prompt after the completed line", wait_for(b"hopscope> "))
# typed ahead in one write: the keys are read in one turn, each line runs
# in its turn, the second after the first has answered
os.write(fd, b"help sleep\rhelp set\r")
step("typed ahead: the first line", wait_for(b"usage: sleep"))
step("typed ahead: the second line after it", wait_for(b"usage: set"))
step("prompt after the lines typed ahead", wait_for(b"hopscope> "))
os.write(fd, b"sleep 30\r")
time.sleep(0.5)
os.kill(pid, signal.SIGINT)
step("Ctrl-C cancels sleep, not the console", wait_for(b"hopscope> "))
os.write(fd, b"decode " + sys.argv[2].encode() + b"\r")
step("decode of a large file prints frames", wait_for(b" erspan"))
os.kill(pid, signal.SIGINT)
step("Ctrl-C stops decode part-way", wait_for(b"decode: interrupted after"))
step("prompt after the interrupted decode", wait_for(b"hopscope> "))
# a query without end holds the loop: the signal reaches it all the same
os.write(fd, b"sql 'with recursive c(x) as (select 1 union all select x + 1 from c) "
             b"select count(*) from c'\r")
time.sleep(0.5)
os.kill(pid, signal.SIGINT)
step("Ctrl-C stops a runaway sql", wait_for(b"sql: interrupted", 1))
step("prompt after the interrupted sql", wait_for(b"hopscope> "))
os.write(fd, b"help quit\r")
step("the console answers after it", wait_for(b"usage: quit"))
os.write(fd, b"quit\r")
end = time.time() + 15
st = None
while time.time() < end:
    p, s = os.waitpid(pid, os.WNOHANG)
    if p:
        st = os.waitstatus_to_exitcode(s)
        break
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            os.read(fd, 4096)
        except OSError:
            pass
if st is None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
step("quit exits 0 (%s)" % st, st == 0)
PY
	st=$?
	sed 's/^/# /' "$tmp/pty.log"
	check "the REPL under a terminal: prompt, help, error, TAB, typed ahead, Ctrl-C on sleep, decode and sql, quit" \
		[ "$st" -eq 0 ]
	check "the REPL saved its line history" has 'nosuchverb' "$tmp/history"
	# lines typed at a terminal with the output redirected: read through
	# uv_pipe (non-blocking while read), blocking again after the exit
	python3 - "$HS" "$tmp" >"$tmp/out" 2>&1 <<'PY'
import fcntl, os, pty, subprocess, sys
m, s = pty.openpty()
os.write(m, b"help quit\nquit\n")
p = subprocess.run([sys.argv[1], "--db", sys.argv[2] + "/nb.db"], stdin=s,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
print("status %d nonblocking %s" % (p.returncode, bool(fcntl.fcntl(s, fcntl.F_GETFL) & os.O_NONBLOCK)))
PY
	check "a terminal read as a runbook is blocking again after the exit" \
		has "status 0 nonblocking False" "$tmp/out"
else
	echo "# no python3 pty: the terminal checks are skipped"
fi

finish
