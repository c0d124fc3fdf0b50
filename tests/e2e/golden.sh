#!/bin/sh
# golden.sh - the golden decoder captures: hs-mkgolden must write exactly the
# committed tests/golden/*.pcap and *.pcapng, and `hopscope decode --json` of
# each must print exactly tests/golden/<name>.out
: "${top_srcdir:=.}" "${top_builddir:=.}"
golden=$top_srcdir/tests/golden
mk=$top_builddir/tests/tools/hs-mkgolden
hs=$top_builddir/hopscope
fail=0

for x in "$mk" "$hs"; do
	if [ ! -x "$x" ]; then
		echo "FAIL: '$x' not built" >&2
		exit 1
	fi
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

"$mk" "$tmp" || { echo "FAIL: hs-mkgolden exited $?" >&2; exit 1; }
n=0
for f in "$tmp"/*.pcap "$tmp"/*.pcapng; do
	[ -e "$f" ] || continue
	b=${f##*/}
	if [ ! -f "$golden/$b" ]; then
		echo "FAIL: hs-mkgolden wrote '$b', which is not under tests/golden" >&2
		fail=1
	elif ! cmp -s "$f" "$golden/$b"; then
		echo "FAIL: '$b' differs from the committed capture" >&2
		fail=1
	fi
done
for f in "$golden"/*.pcap "$golden"/*.pcapng; do
	[ -e "$f" ] || continue
	b=${f##*/}
	n=$((n + 1))
	[ -f "$tmp/$b" ] || { echo "FAIL: hs-mkgolden no longer writes '$b'" >&2; fail=1; }
	"$hs" decode --json "$f" >"$tmp/${b%.pcap*}.got" 2>"$tmp/err" || {
		echo "FAIL: hopscope decode --json '$b' failed: $(cat "$tmp/err")" >&2
		fail=1
		continue
	}
	if ! diff -u "$golden/${b%.pcap*}.out" "$tmp/${b%.pcap*}.got" >&2; then
		echo "FAIL: decode of '$b' differs from ${b%.pcap*}.out" >&2
		fail=1
	fi
done
echo "golden: $n captures checked"
exit $fail
