#!/bin/sh
# fuzz.sh - the libFuzzer targets, briefly: build them with clang (ASan,
# UBSan, libFuzzer), replay every input under tests/fuzz/regress/, then fuzz
# each target for FUZZ_SECONDS (10 here; 'make fuzz' runs them longer).
. "$(dirname "$0")/lib.sh"

FUZZ_SECONDS=${FUZZ_CI_SECONDS:-10}
export FUZZ_SECONDS top_srcdir top_builddir
sh "$top_srcdir/tests/fuzz/run.sh" >"$tmp/fuzz.out" 2>&1
st=$?
cat "$tmp/fuzz.out"
case $st in
0) ok "every fuzz target replays its regressions and survives ${FUZZ_SECONDS}s" ;;
77) echo "SKIP: $TEST: $(grep SKIPPED "$tmp/fuzz.out")" >&2; exit 77 ;;
99) hard "the fuzz targets did not build" ;;
*) not_ok "a fuzz target crashed (inputs in $top_builddir/tests/fuzz/build/artifacts)" ;;
esac
finish
