#!/bin/sh
# labargs.sh - hopscope-lab reads its arguments before it looks for a
# fabric: a duration is read as the console reads one (20s, 1.5m, a bare
# number of seconds), and a wrong one is one line naming the option and
# the value, exit status 2. No fabric is made or needed: every command
# here stops at its arguments.
. "$(dirname "$0")/lib.sh"

LAB=$top_builddir/hopscope-lab
[ -x "$LAB" ] || hard "'$LAB' is not built"
[ -x "$top_builddir/hs-traffic" ] || hard "'$top_builddir/hs-traffic' is not built"

# lab ARGS...: as hs(), with the lab's state in the test's own directory
lab() {
	timeout 20 "$LAB" --state "$tmp/state" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
}
said() { grep -qF -- "$1" "$tmp/err"; }

# a duration the console takes is taken: the next, wrong, option is the
# one refused
for d in 20s 90 1.5m 1h 1d 2000ms; do
	lab traffic start --duration "$d" --flows x
	check "traffic start --duration $d is taken as the console takes it" \
		eval '[ $st -eq 2 ] && said "invalid --flows '"'x'"'" && ! said "invalid --duration"'
done

for d in 20x 20sec -5 '' 1e400s; do
	lab traffic start --duration "$d"
	check "traffic start --duration '$d' is refused in one line, status 2" \
		eval '[ $st -eq 2 ] && said "invalid --duration '"'$d'"': expected a duration such as 90s, 5m or 1h" &&
			[ "$(grep -c "^hopscope-lab:" "$tmp/err")" -eq 1 ]'
done
for d in 500ms 0 2d 25h; do
	lab traffic start --duration "$d"
	check "traffic start --duration $d is out of range" \
		eval '[ $st -eq 2 ] && said "invalid --duration '"'$d'"': 1s to 1d"'
done
lab traffic start --duration
check "--duration with no value says so" eval '[ $st -eq 2 ] && said "option '"'--duration'"' needs a value"'
check "nothing was made in the state directory" eval '[ ! -e "$tmp/state" ]'

lab traffic --help
check "traffic's help says durations take units" \
	eval '[ $st -eq 0 ] && grep -q "90s, 5m, 1h" "$tmp/out"'

finish
