#!/bin/bash
# load: a minute of the lab at its maximum traffic rate, every packet between
# hosts mirrored, the console live (dropped to nobody, the mirror rule added
# through its privileged helper) and a script typing at it: the console spends
# under 500 ms on each answer and under 250 ms on 95% of them (besides waiting
# for a CPU, which the fabric's kernel work on the same two cores takes; no
# answer may take 5 s in all), kernel drops are counted and
# account for what was not read, open traces stay within the pool and memory
# besides SQLite's bounded page cache stays flat. load.py prints the figures.
# LOAD_SECONDS (default 60) sets the length of the run.
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope hs-agent
getent passwd nobody >/dev/null || hard "no user 'nobody' to drop to"
open_max=$(awk '$1 == "#define" && $2 == "HS_TRACER_OPEN" { print $3 }' "$top_srcdir/src/lane.c")
[ -n "$open_max" ] || hard "cannot read HS_TRACER_OPEN from src/lane.c"

lab up >/dev/null 2>&1 || fail "up failed"
# the state directory is root's (mktemp): the console opens what it needs
# there before it drops root
python3 "$top_srcdir/tests/lab/load.py" "$HOPSCOPE" "$LAB" "$LAB_STATE" "${LOAD_SECONDS:-60}" \
	"$open_max" || { tail -c 1500 "$LAB_STATE/load.console" >&2; fail "the console under load (see above)"; }
ok "a minute at full rate: prompt answers, counted drops, flat memory, mirror through the helper"
lab down >/dev/null || fail "down failed"
