#!/bin/sh
# golden.sh - the golden decoder captures: hs-mkgolden must write exactly the
# committed tests/golden/*.pcap and *.pcapng, and each run of
# tests/golden/TESTLIST ('hopscope decode CAPTURE OPTION...', as text and as
# --json) must print exactly its expected file
: "${top_srcdir:=.}" "${top_builddir:=.}"
golden=$(cd "$top_srcdir/tests/golden" && pwd) || exit 1
mk=$top_builddir/tests/tools/hs-mkgolden
hs=$(cd "$top_builddir" && pwd)/hopscope
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

n=0
: >"$tmp/ran"
while read -r name cap expect opts; do
	case $name in ''|'#'*) continue ;; esac
	n=$((n + 1))
	if [ ! -f "$golden/$cap" ] || [ ! -f "$golden/$expect" ]; then
		echo "FAIL: $name: '$cap' or '$expect' is not under tests/golden" >&2
		fail=1
		continue
	fi
	case " $opts " in
	*" --json "*) echo "$cap json" >>"$tmp/ran" ;;
	*) echo "$cap text" >>"$tmp/ran" ;;
	esac
	# shellcheck disable=SC2086 # the options are words
	(cd "$tmp" && "$hs" --db "$tmp/h.db" decode "$golden/$cap" $opts) >"$tmp/got" 2>"$tmp/err" || {
		echo "FAIL: $name: hopscope decode '$cap' $opts failed: $(cat "$tmp/err")" >&2
		fail=1
		continue
	}
	if ! diff -u "$golden/$expect" "$tmp/got" >&2; then
		echo "FAIL: $name: decode '$cap' $opts differs from $expect" >&2
		fail=1
	fi
done <"$golden/TESTLIST"

for f in "$golden"/*.pcap "$golden"/*.pcapng; do
	[ -e "$f" ] || continue
	b=${f##*/}
	[ -f "$tmp/$b" ] || { echo "FAIL: hs-mkgolden no longer writes '$b'" >&2; fail=1; }
	for way in json text; do
		grep -qx "$b $way" "$tmp/ran" ||
			{ echo "FAIL: TESTLIST runs '$b' with no $way run" >&2; fail=1; }
	done
done
echo "golden: $n runs checked"
exit $fail
