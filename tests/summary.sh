#!/bin/sh
# summary.sh LOG [LABEL] - one closing line from automake's test-suite.log
log=$1
label=${2:-tests}
[ -f "$log" ] || { echo "$label: no test log"; exit 0; }
n() { sed -n "s/^# $1: *\([0-9]*\).*/\1/p" "$log" | head -n 1; }
printf '%s: %s passed, %s failed, %s skipped\n' "$label" "$(n PASS)" "$(( $(n FAIL) + $(n ERROR) + $(n XPASS) ))" "$(n SKIP)"
