#!/bin/sh
# summary.sh LOG [LABEL] - one closing line from automake's test-suite.log
log=$1
label=${2:-tests}
[ -f "$log" ] || { echo "$label: no test log"; exit 0; }
n() { sed -n "s/^# $1: *\([0-9]*\).*/\1/p" "$log" | head -n 1; }
printf '%s: %s passed, %s failed, %s skipped\n' "$label" "$(n PASS)" "$(( $(n FAIL) + $(n ERROR) + $(n XPASS) ))" "$(n SKIP)"
# what each failed test said (automake keeps the log of each failed test
# in the suite's log, under its name and a line of '='): its failing lines,
# so that a run whose tree is cleaned after (the sanitizers') still shows why
awk '
/^=+$/ && prev ~ /^[A-Z]+: / {
	split(prev, w, " "); inside = prev ~ /^(FAIL|ERROR|XPASS): /; name = w[2]; shown = 0
	prev = $0; next
}
{ if (inside && shown < 20 && $0 !~ /^[A-Z]+: [^ ]+$/ &&
      $0 ~ /^(not ok|FAIL|Traceback|[A-Za-z]*Error|==[0-9]+==)|runtime error|fail/) {
	print "  " name ": " substr($0, 1, 300); shown++ }
  prev = $0 }
' "$log" | head -n 200
