#!/bin/sh
# run.sh - build the libFuzzer targets with clang, replay the regression
# inputs, then fuzz each target for FUZZ_SECONDS (default 60).
#
#   sh tests/fuzz/run.sh [TARGET...]        ('make fuzz' runs it)
#
# Environment: top_srcdir, top_builddir (default: this tree), FUZZ_SECONDS,
# FUZZ_CC (default clang), FUZZ_JOBS (compile jobs). The build, the working
# corpus and any crash inputs live in $top_builddir/tests/fuzz/build, never in
# the source tree. Exit status: 0 all clean, 1 a crash or a failed
# regression, 77 no clang with libFuzzer, 99 the build failed.
#
# A crash leaves its input in build/artifacts/; copy it to
# tests/fuzz/regress/TARGET/ (so every later run replays it), then fix.
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
CC=${FUZZ_CC:-clang}
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
ALL="decode cmdline runbook topo probe mirror alert snapshot pfile driver proto"
TARGETS=${*:-$ALL}

B=$top_builddir/tests/fuzz/build
F=$top_srcdir/tests/fuzz
mkdir -p "$B/obj" "$B/corpus" "$B/artifacts" || exit 99

if ! command -v "$CC" >/dev/null 2>&1; then
	echo "fuzz: SKIPPED: no '$CC' (apt-get install clang libclang-rt-14-dev)" >&2
	exit 77
fi
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$B/probe.c"
if ! "$CC" -fsanitize=fuzzer,address,undefined "$B/probe.c" -o "$B/probe" 2>"$B/probe.err"; then
	sed 's/^/fuzz:   /' "$B/probe.err" | head -n 3 >&2
	echo "fuzz: SKIPPED: '$CC' cannot link with -fsanitize=fuzzer (apt-get install libclang-rt-14-dev)" >&2
	exit 77
fi

# --- build -------------------------------------------------------------------
PKGS="libuv libedit ncurses panel libpcap sqlite3 libpq libcap-ng jansson libssl libcrypto"
PKG_CFLAGS=$(pkg-config --cflags $PKGS 2>/dev/null)
PKG_LIBS=$(pkg-config --libs $PKGS 2>/dev/null) ||
	PKG_LIBS="-luv -ledit -lpanel -lncurses -lpcap -lsqlite3 -lpq -lcap-ng -ljansson -lssl -lcrypto"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CFLAGS="-std=c11 -g -O1 -Wall -Wextra -Wno-unused-parameter -Werror=implicit-function-declaration $SAN -fsanitize=fuzzer-no-link
	-I$top_srcdir/include -I$top_srcdir/include/console -I$top_builddir -I$F -D_GNU_SOURCE
	-DHS_DATADIR=\"$top_srcdir/share\" -DHS_SRCDIR=\"$top_srcdir\"
	-DHS_LIBEXECDIR=\"$top_builddir\" -DHS_BUILDDIR=\"$top_builddir\" $PKG_CFLAGS"
LIBS="$PKG_LIBS -lnet -lm"

# every library source of the console (main.c and the lab's programs are not)
srcs=$(cd "$top_srcdir" && ls src/*.c src/decode/*.c src/console/*.c commands/*.c |
	grep -v '^src/console/main\.c$')
newest_h=$(ls -t "$top_srcdir"/include/*.h "$top_srcdir"/include/console/*.h \
	"$top_srcdir"/src/decode/*.h "$F"/fuzz.h | head -n 1)
: >"$B/compile.list"
objs=
for s in $srcs; do
	o=$B/obj/$(echo "$s" | tr / _ | sed 's/\.c$/.o/')
	objs="$objs $o"
	if [ ! -e "$o" ] || [ "$top_srcdir/$s" -nt "$o" ] || [ "$newest_h" -nt "$o" ]; then
		echo "$s $o" >>"$B/compile.list"
	fi
done
# the object of a source moved or removed since would be linked as well
for o in "$B"/obj/*.o; do
	case "$objs " in
	*" $o "*) ;;
	*) [ -e "$o" ] && rm -f "$o" "$B/libhsfuzz.a" ;;
	esac
done
if [ -s "$B/compile.list" ]; then
	echo "fuzz: compiling $(wc -l <"$B/compile.list") files with $CC"
	export CC CFLAGS top_srcdir
	# shellcheck disable=SC2016
	if ! xargs -P "$JOBS" -n 2 sh -c '$CC $CFLAGS -c "$top_srcdir/$0" -o "$1" || { rm -f "$1"; exit 255; }' \
		<"$B/compile.list"; then
		echo "fuzz: ERROR: the build failed" >&2
		exit 99
	fi
	rm -f "$B/libhsfuzz.a"
fi
if [ ! -e "$B/libhsfuzz.a" ]; then
	# shellcheck disable=SC2086
	ar cr "$B/libhsfuzz.a" $objs || exit 99
fi
for t in $TARGETS; do
	[ -e "$F/fuzz_$t.c" ] || { echo "fuzz: ERROR: no target '$t' ($ALL)" >&2; exit 99; }
	if [ ! -x "$B/fuzz_$t" ] || [ "$F/fuzz_$t.c" -nt "$B/fuzz_$t" ] ||
	   [ "$B/libhsfuzz.a" -nt "$B/fuzz_$t" ] || [ "$F/fuzz.h" -nt "$B/fuzz_$t" ]; then
		# shellcheck disable=SC2086
		$CC $CFLAGS -fsanitize=fuzzer "$F/fuzz_$t.c" "$B/libhsfuzz.a" $LIBS -o "$B/fuzz_$t" ||
			{ echo "fuzz: ERROR: cannot build fuzz_$t" >&2; exit 99; }
	fi
done
# shellcheck disable=SC2086
$CC $(echo "$CFLAGS" | sed 's/-fsanitize=fuzzer-no-link//') "$F/pcap2seeds.c" "$B/libhsfuzz.a" \
	$LIBS -o "$B/pcap2seeds" || exit 99

# --- seeds: the project's captures and files, and the hand-written ones -----------
seeds() { # TARGET -> directories of seeds, one a line
	t=$1
	[ -d "$F/seeds/$t" ] && echo "$F/seeds/$t"
	case $t in
	decode)
		d=$B/seeds-decode
		if [ ! -d "$d" ]; then
			mkdir -p "$d"
			"$B/pcap2seeds" "$d" 64 "$top_srcdir"/tests/golden/*.pcap \
				"$top_srcdir/share/sample/sample.pcap" >&2
			# the conformance corpus, where this checkout has one next to it
			if [ -d "$top_srcdir/../shared/corpus" ]; then
				"$B/pcap2seeds" "$d" 16 "$top_srcdir"/../shared/corpus/*.pcap* \
					>/dev/null 2>&1
			fi
		fi
		echo "$d" ;;
	pfile)
		d=$B/seeds-pfile
		mkdir -p "$d" && cp "$top_srcdir"/tests/golden/*.pcapng \
			"$top_srcdir"/tests/golden/mpls.pcap "$d/" && echo "$d" ;;
	topo)
		d=$B/seeds-topo
		mkdir -p "$d" && cp "$top_srcdir/share/sample/sample.topo" "$d/" && echo "$d" ;;
	esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0

# --- replay every regression input, then fuzz ------------------------------------
for t in $TARGETS; do
	r=$F/regress/$t
	if [ -d "$r" ] && [ -n "$(ls "$r")" ]; then
		if "$B/fuzz_$t" "$r"/* >"$B/$t.replay.log" 2>&1; then
			echo "ok: fuzz_$t replays $(ls "$r" | wc -l) regression inputs"
		else
			echo "FAIL: fuzz_$t: a regression input crashes again" >&2
			grep -E 'Running|ERROR|SUMMARY|runtime error' "$B/$t.replay.log" | head -n 20 >&2
			status=1
		fi
	fi
done

for t in $TARGETS; do
	mkdir -p "$B/corpus/$t"
	# shellcheck disable=SC2046
	"$B/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
		-max_len=4096 -print_final_stats=1 -artifact_prefix="$B/artifacts/$t-" \
		"$B/corpus/$t" $(seeds "$t") >"$B/$t.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$B/$t.log")
	cov=$(grep -o 'cov: [0-9]*' "$B/$t.log" | tail -n 1)
	if [ $rc -eq 0 ]; then
		echo "ok: fuzz_$t: ${runs:-?} runs in ${FUZZ_SECONDS}s, $cov, no crash"
	else
		status=1
		echo "FAIL: fuzz_$t (status $rc): see $B/$t.log" >&2
		grep -E 'ERROR|SUMMARY|runtime error|Test unit written|artifact' "$B/$t.log" | head -n 20 >&2
		echo "fuzz: copy the input above to tests/fuzz/regress/$t/ before fixing" >&2
	fi
done
exit $status
