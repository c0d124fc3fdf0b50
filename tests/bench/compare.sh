#!/bin/sh
# compare.sh - the bench's file and live figures of two builds, run in turn
#
#   tests/bench/compare.sh [-n ROUNDS] [-s SECTIONS] REV
#
# Builds REV (a commit, checked out in a temporary git worktree) and the
# working tree as it is (tracked and untracked files, not the ignored ones,
# copied to a temporary directory) each with the configure of a release
# (./configure --enable-werror: PGO and LTO), then runs bench.py's file
# section (ingest on one core, history off, default and all), workers
# section (the file read with 1 and 2 workers on every core, history off)
# and live section (a burst into a veth, default history and all) with
# the two programs in turn, A B A B ..., ROUNDS rounds (default 5), on the
# same capture and the same bursts. SECTIONS (-s) names some of them,
# comma-separated: ingest, workers, live (default all three). Per figure it prints REV's median, the
# tree's, the median of the rounds' ratios and their spread, so that load
# that hits both builds alike cancels out of the ratio.
#
# The live rounds hold the lab tests' lock (/tmp/hopscope-lab-tests.lock),
# as a lab test does, and nothing else does. Everything temporary (the
# worktree, the builds, the bench's namespace) is removed at the end; the
# figures stay in tests/bench/results/compare.tsv. Needs root for the live
# section (it is skipped with a note otherwise).
set -u

usage() {
	echo "usage: tests/bench/compare.sh [-n ROUNDS] [-s ingest,workers,live] REV" >&2
	exit 2
}

rounds=5
only=ingest,workers,live
while getopts n:s: opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	s) only=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
case $rounds in
'' | *[!0-9]* | 0) echo "compare.sh: -n: rounds must be a positive integer, got '$rounds'" >&2; exit 2 ;;
esac
ok=yes
case ,$only, in
*,,*) ok= ;;	# an empty name
esac
for sec in $(echo "$only" | tr , ' '); do
	case $sec in
	ingest | workers | live) ;;
	*) ok= ;;
	esac
done
[ -n "$ok" ] || {
	echo "compare.sh: -s: sections are ingest, workers and live, comma-separated, got '$only'" >&2
	exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rev=$(git -C "$top" rev-parse --verify --quiet "$1^{commit}") || {
	echo "compare.sh: '$1' names no commit of $top" >&2
	exit 2
}
name_before=$(git -C "$top" rev-parse --short "$rev")
name_after=$(git -C "$top" rev-parse --short HEAD)
[ -z "$(git -C "$top" status --porcelain)" ] || name_after="$name_after+"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-compare.XXXXXX") || exit 1
cleanup() {
	git -C "$top" worktree remove --force "$tmp/before" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# build DIR NAME TARGET...: configure and make as a release is made (PGO, LTO)
build() {
	dir=$1 name=$2
	shift 2
	echo "  building $name in $dir (configure --enable-werror: PGO, LTO)"
	(cd "$dir" && autoreconf -fi && ./configure --enable-werror && make -j2 "$@") \
		>"$dir/compare-build.log" 2>&1 || {
		tail -20 "$dir/compare-build.log" >&2
		echo "compare.sh: building $name failed (the end of $dir/compare-build.log above)" >&2
		exit 1
	}
	[ -e "$dir/pgo/profile.stamp" ] ||
		echo "compare.sh: note: $name was built without a profile (no PGO with this compiler)"
}

git -C "$top" worktree add --detach --quiet "$tmp/before" "$rev" || exit 1
mkdir "$tmp/after" || exit 1
# the working tree as it is: what git tracks or would track, present now
# shellcheck disable=SC2016 # the inner shell expands $f
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -xf - -C "$tmp/after" || exit 1

build "$tmp/before" "$name_before" hopscope
# the tree's build also makes the bench's input and its tools
build "$tmp/after" "$name_after" hopscope tests/tools/hs-synth tests/bench/pcaploop

BENCH_RUNS=$rounds BENCH_ONLY=$only python3 "$here/bench.py" --srcdir "$top" \
	--builddir "$tmp/after" --live-lock /tmp/hopscope-lab-tests.lock \
	--hopscope "$name_before=$tmp/before/hopscope" --hopscope "$name_after=$tmp/after/hopscope"
