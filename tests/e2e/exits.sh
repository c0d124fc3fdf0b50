#!/bin/sh
# exits.sh - what a user types never hangs the console, eats its memory or
# ends it with a status that hides a failure: many commands in one -c,
# standard descriptors closed at start, output that cannot be written,
# runbooks that are not text files.
. "$(dirname "$0")/lib.sh"

# --- -c with 100,000 empty commands: memory linear in the text ------------------------
# measured against the same console with one command, so that a build with
# the sanitizers (whose shadow memory is large) is judged alike; AddressSanitizer
# holds freed blocks back (its quarantine, 256 MB) where they would be reused
if command -v python3 >/dev/null 2>&1; then
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1
	export ASAN_OPTIONS
	rss_of() { # EMPTY_COMMANDS: "status S rss MB time T s" of one run
		python3 - "$HS" "$tmp/e.db" "$1" <<'PY'
import resource, subprocess, sys, time
t = time.time()
try:
    p = subprocess.run([sys.argv[1], "--db", sys.argv[2], "-c", ";" * int(sys.argv[3]) + "help quit"],
                       capture_output=True, timeout=20)
    st = p.returncode
except subprocess.TimeoutExpired:
    st = "timeout"
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print("status %s rss %d MB time %.1f s" % (st, rss, time.time() - t))
PY
	}
	one=$(rss_of 0)
	many=$(rss_of 100000)
	mb() { printf '%s\n' "$1" | sed 's/.* rss \([0-9]*\) MB.*/\1/'; }
	check "100,000 empty commands run in little more memory than one ($many; one: $one)" \
		sh -c "printf '%s\n' '$many' | grep -q '^status 0 ' && [ $(mb "$many") -lt \$(( $(mb "$one") + 64 )) ]"
fi

# --- standard descriptors closed at start --------------------------------------------
timeout 60 "$HS" --db "$tmp/e.db" -c 'help quit' >"$tmp/out" 2>"$tmp/err" <&-
st=$?
check "stdin closed at start: -c runs (status $st)" [ "$st" -eq 0 ]
check "stdin closed at start: its output is there" has '^usage: quit$' "$tmp/out"
timeout 60 "$HS" --db "$tmp/e.db" >"$tmp/out" 2>"$tmp/err" <&-
st=$?
check "stdin closed at start: the console reads no line and ends (status $st)" [ "$st" -eq 0 ]
timeout 60 "$HS" --db "$tmp/e.db" -c 'help quit' 2>"$tmp/err" >&-
st=$?
check "stdout closed at start: no abort (status $st)" [ "$st" -eq 0 ]
check "stdout closed at start: nothing on stderr" [ ! -s "$tmp/err" ]
timeout 60 "$HS" --db "$tmp/e.db" -c 'nosuchverb' >"$tmp/out" 2>&-
st=$?
check "stderr closed at start: a failure still exits 1 (status $st)" [ "$st" -eq 1 ]

# --- output that cannot be written ------------------------------------------------------
if [ -w /dev/full ]; then
	timeout 60 "$HS" -r "$top_srcdir/share/sample/sample.pcap" --db "$tmp/full.db" \
		-c 'traces; help quit' >/dev/full 2>"$tmp/err"
	st=$?
	check "traces > /dev/full fails (status $st)" [ "$st" -eq 1 ]
	check "the error says why, once" \
		sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q '^-c:1: error: cannot write standard output: No space left on device$' '$tmp/err'"
	timeout 60 "$HS" --db "$tmp/e.db" help quit >/dev/full 2>"$tmp/err"
	st=$?
	check "a one-shot verb > /dev/full fails (status $st)" [ "$st" -eq 1 ]
fi

# --- runbooks that are not text files -------------------------------------------------------
hs --db "$tmp/e.db" -f "$tmp"
check "-f DIR fails (status $st)" [ "$st" -eq 1 ]
check "-f DIR names the directory" has "^error: cannot read runbook '$tmp': Is a directory$" "$tmp/err"
printf 'help quit\nsource %s\nhelp set\n' "$tmp" >"$tmp/outer.hs"
hs --db "$tmp/e.db" -f "$tmp/outer.hs"
check "source DIR fails the runbook (status $st)" [ "$st" -eq 1 ]
check "source DIR names the directory and the line" \
	has "^$tmp/outer.hs:2: error: cannot read runbook '$tmp': Is a directory$" "$tmp/err"
check "nothing after source DIR ran" hasnt 'usage: set' "$tmp/out"

printf 'help quit\nhelp sleep\000 quit\nhelp set\n' >"$tmp/nul.hs"
hs --db "$tmp/e.db" -f "$tmp/nul.hs"
check "a NUL byte in a runbook line fails (status $st)" [ "$st" -eq 1 ]
check "the error names FILE:LINE and the column" \
	has "^$tmp/nul.hs:2: error: a NUL byte at column 11: a command line is text$" "$tmp/err"
check "the line with the NUL did not run cut short" hasnt 'usage: sleep' "$tmp/out"
check "nothing after it ran" hasnt 'usage: set' "$tmp/out"
printf 'help quit\nhelp sleep\000 quit\n' | timeout 60 "$HS" --db "$tmp/e.db" >"$tmp/out" 2>"$tmp/err"
st=$?
check "a NUL byte in a piped line fails (status $st)" [ "$st" -eq 1 ]
check "the piped error names stdin:LINE" has "^stdin:2: error: a NUL byte at column 11" "$tmp/err"

# --- --json: always valid JSON, whatever the bytes -----------------------------------
if command -v python3 >/dev/null 2>&1; then
	# sql reads a history: a capture makes one
	hs --db "$tmp/e.db" -r "$top_srcdir/share/sample/sample.pcap" -c 'capture status'
	# ff: no character; c3 a9: e-acute; ed a0 80: a surrogate; f4 90 80 80: past U+10FFFF
	hs --db "$tmp/e.db" --json -c "sql \"select cast(x'ff41c3a9eda080f4908080' as text) as s\""
	check "--json sql of bytes that are not UTF-8 (status $st)" [ "$st" -eq 0 ]
	python3 - "$tmp/out" >"$tmp/json.out" 2>&1 <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
v = json.loads(raw.decode("utf-8"))        # strict: raises on a bad byte
want = "\ufffdA\u00e9" + "\ufffd" * 7
s = v["rows"][0]["s"]
print("ok" if s == want else "got %r" % s)
PY
	check "every bad byte is U+FFFD, good characters stay ($(cat "$tmp/json.out"))" \
		has '^ok$' "$tmp/json.out"
fi

# --- a probe whose copies no capture can see fails, unsent ------------------------------
# the topology's analyzer interface does not exist (and every address is on
# loopback, should a probe be sent all the same)
cat >"$tmp/lo.topo" <<'EOF'
switch sw1 role leaf mirror 127.0.0.3 loopback 127.0.0.4
subnet sw1 127.0.0.0/24
analyzer 127.0.0.5 iface hsnone9
EOF
if [ "$(id -u)" -eq 0 ]; then
	for verb in 'probe tcp > 127.0.0.2:5001 via sw1 count 1' \
		    'traceroute 127.0.0.2 count 1 --report'; do
		hs --db "$tmp/e.db" --topo "$tmp/lo.topo" -c "$verb"
		check "$verb, no capture possible: fails (status $st)" [ "$st" -eq 1 ]
		check "$verb, no capture possible: one error, naming the interface" \
			sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"^-c:1: error: ${verb%% *}: no interface 'hsnone9'\" '$tmp/err'"
		check "$verb, no capture possible: no result printed" [ ! -s "$tmp/out" ]
	done
else
	echo "# not root: a probe fails at its raw socket first"
fi

# --- a capture's history that cannot be had fails the run, as one that fills -----------
printf 'not a history\n' >"$tmp/words.db"
hs --db "$tmp/words.db" -r "$top_srcdir/share/sample/sample.pcap" -c 'capture status'
check "a history refused at start: the capture runs" has '^packets  *6741' "$tmp/out"
check "a history refused at start: the run fails (status $st)" [ "$st" -eq 1 ]
hs --db "$tmp/words.db" -c "set history off; capture start $top_srcdir/share/sample/sample.pcap; sleep 0.5; capture status"
check "no history asked for: the capture runs" has '^packets  *6741' "$tmp/out"
check "no history asked for: the run succeeds (status $st)" [ "$st" -eq 0 ]

# --- what an error echoes of a line is bounded -------------------------------------------
awk 'BEGIN { s = "x"; for (i = 0; i < 23; i++) s = s s; print s }' >"$tmp/long.hs"
t0=$(date +%s)
hs --db "$tmp/e.db" -f "$tmp/long.hs"
took=$(( $(date +%s) - t0 ))
check "an 8 MB unknown verb fails at once (status $st, ${took}s)" \
	sh -c "[ $st -eq 1 ] && [ $took -lt 10 ]"
check "its error is one short line" \
	sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && [ \$(wc -c <'$tmp/err') -lt 200 ]"

finish
