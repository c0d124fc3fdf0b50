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
finish
