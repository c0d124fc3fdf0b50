#!/bin/sh
# driver.sh - which driver 'mirror' and 'snapshot' run: HOPSCOPE_DRIVER wins,
# also for a hopscope copied out of its build tree, and an error that cannot
# run the driver names the variable.
. "$(dirname "$0")/lib.sh"

mkdir "$tmp/bin" || hard "cannot make '$tmp/bin'"
cp "$HS" "$tmp/bin/hopscope" || hard "cannot copy '$HS'"
cat >"$tmp/drv" <<'SH'
#!/bin/sh
echo "driver-under-test: $*" >&2
exit 1
SH
chmod +x "$tmp/drv"
HS=$tmp/bin/hopscope

HOPSCOPE_DRIVER=$tmp/drv hs --db "$tmp/h.db" -c 'mirror list'
check "a copied hopscope runs HOPSCOPE_DRIVER for mirror" has 'driver-under-test: list' "$tmp/err"
HOPSCOPE_DRIVER=$tmp/drv hs --db "$tmp/h.db" --topo "$top_srcdir/share/sample/sample.topo" -c 'snapshot take'
check "and for snapshot" has 'driver-under-test: .*snapshot' "$tmp/err"
HOPSCOPE_DRIVER=$tmp/nothing hs --db "$tmp/h.db" -c 'mirror list'
check "a missing HOPSCOPE_DRIVER fails naming the variable ($st)" \
	eval 'failed_cleanly && has "nothing.*named by HOPSCOPE_DRIVER" "$tmp/err"'
if [ ! -e /usr/local/libexec/hopscope/hs-driver-lab ]; then
	hs --db "$tmp/h.db" -c 'mirror list'
	check "no driver installed: the error says to set HOPSCOPE_DRIVER" \
		eval 'failed_cleanly && has "set HOPSCOPE_DRIVER" "$tmp/err"'
fi
# what a driver answers is checked: a malformed answer or one too long is one
# error naming the driver, never a crash nor a half-shown list
cat >"$tmp/badlist" <<'SH'
#!/bin/sh
printf '1 1 all default\n2 x leaf1 syn\n'
SH
cat >"$tmp/longlist" <<'SH'
#!/bin/sh
i=1
while [ $i -le 2000 ]; do echo "$i 1 all flow tcp 10.0.0.1:80 10.0.0.2:8080"; i=$((i + 1)); done
SH
chmod +x "$tmp/badlist" "$tmp/longlist"
HOPSCOPE_DRIVER=$tmp/badlist hs --db "$tmp/h.db" -c 'mirror list'
check "a malformed list answer is one error naming the driver and the line" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	has "bad answer from .*badlist.*line 2: invalid session .x." "$tmp/err" && hasnt "default" "$tmp/out"'
HOPSCOPE_DRIVER=$tmp/longlist hs --db "$tmp/h.db" -c 'mirror list'
check "a list answer too long to hold is one error, not a list cut short" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	has "answer of .*longlist.* is longer than" "$tmp/err" && hasnt "flow tcp" "$tmp/out"'
finish
