#!/bin/sh
# exits.sh - what a user types never hangs the console, eats its memory or
# ends it with a status that hides a failure: many commands in one -c,
# standard descriptors closed at start, output that cannot be written,
# runbooks that are not text files.
. "$(dirname "$0")/lib.sh"

# --- -c with 100,000 empty commands: memory linear in the text ------------------------
if command -v python3 >/dev/null 2>&1; then
	python3 - "$HS" "$tmp/e.db" >"$tmp/out" 2>&1 <<'PY'
import resource, subprocess, sys, time
t = time.time()
try:
    p = subprocess.run([sys.argv[1], "--db", sys.argv[2], "-c", ";" * 100000 + "help quit"],
                       capture_output=True, timeout=20)
    st = p.returncode
except subprocess.TimeoutExpired:
    st = "timeout"
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print("status %s rss %d MB time %.1f s" % (st, rss, time.time() - t))
PY
	check "100,000 empty commands run in little memory ($(cat "$tmp/out"))" \
		sh -c "grep -q '^status 0 ' '$tmp/out' && [ \$(sed 's/.* rss \([0-9]*\) MB.*/\1/' '$tmp/out') -lt 256 ]"
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

finish
