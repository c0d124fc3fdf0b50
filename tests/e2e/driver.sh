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
# what a driver answers is checked: a malformed, cut short or oversized
# answer is one error naming the driver and the switches it serves, never a
# crash nor a half-shown list
T="--topo $top_srcdir/share/sample/sample.topo"
cat >"$tmp/badlist" <<'SH'
#!/bin/sh
printf '{"rules":[{"id":1,"session":1,"switches":["all"],"match":"default"},{"id":2,"session":"x","switches":["leaf1"],"match":"syn"}],"drift":[]}\n'
SH
cat >"$tmp/cutlist" <<'SH'
#!/bin/sh
printf '{"rules":[{"id":1,"session":1,"switches":["all"],"match":"default"},{"id":2,'
SH
cat >"$tmp/textlist" <<'SH'
#!/bin/sh
printf '1 1 all default\n'
SH
cat >"$tmp/longlist" <<'SH'
#!/bin/sh
printf '{"rules":[{"id":1,"session":1,"switches":["all"],"match":"default"}],"drift":[]'
head -c 9000000 /dev/zero | tr '\0' ' '
printf '}\n'
SH
chmod +x "$tmp/badlist" "$tmp/cutlist" "$tmp/textlist" "$tmp/longlist"
SW="(switches spine1,spine2,leaf1,leaf2,leaf3,leaf4)"
HOPSCOPE_DRIVER=$tmp/badlist hs --db "$tmp/h.db" $T -c 'mirror list'
check "a list answer with a bad value is one error naming the driver, its switches and the value" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	has "error: mirror list: bad answer from .*badlist. $SW: rules\[1\]: session: not an integer$" "$tmp/err" &&
	hasnt "default" "$tmp/out"'
HOPSCOPE_DRIVER=$tmp/cutlist hs --db "$tmp/h.db" $T -c 'mirror list'
check "a list answer cut short is one error saying where" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	has "bad answer from .*cutlist. $SW: line 1 column [0-9]*: " "$tmp/err" && hasnt "default" "$tmp/out"'
HOPSCOPE_DRIVER=$tmp/textlist hs --db "$tmp/h.db" $T -c 'mirror list'
check "a list answer that is not JSON is one error" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	has "bad answer from .*textlist. $SW: line 1 column" "$tmp/err"'
HOPSCOPE_DRIVER=$tmp/longlist hs --db "$tmp/h.db" $T -c 'mirror list'
check "a list answer too long to hold is one error, not a list cut short" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	has "answer of .*longlist. $SW is longer than 8388608 bytes" "$tmp/err" && hasnt "default" "$tmp/out"'
printf '#!/bin/sh\nprintf %s\n' "'{\"rules\":[],\"drift\":[]}\\000{\"rules\":[]}\\n'" >"$tmp/nullist"
chmod +x "$tmp/nullist"
HOPSCOPE_DRIVER=$tmp/nullist hs --db "$tmp/h.db" $T -c 'mirror list'
check "a list answer holding a NUL byte is one error, not the text before it" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	has "bad answer from .*nullist. $SW: a NUL byte in the answer" "$tmp/err" &&
	hasnt "no mirror rules" "$tmp/out"'
cat >"$tmp/oldadd" <<'SH'
#!/bin/sh
echo 7
SH
chmod +x "$tmp/oldadd"
HOPSCOPE_DRIVER=$tmp/oldadd hs --db "$tmp/h.db" $T -c 'mirror add syn'
check "an add answer that is not {\"id\":ID} is one error that says the rule may be installed" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	has "mirror add: bad answer from .*oldadd. $SW: line 1 column 1: .*the rule may be installed" "$tmp/err" &&
	hasnt "added" "$tmp/out"'
finish
