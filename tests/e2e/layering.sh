#!/bin/sh
# layering.sh - the engine does not depend on the console
#
# hopscope's program is two parts (README, "Layout"):
#
#   the console: the verbs, commands/*.c, and the files that read command
#     lines, run them and show what they say: src/ main.c console.c
#     runbook.c complete.c pager.c watch.c watchmodel.c out.c outfile.c
#     fwalk.c, with the headers named in CONSOLE_H below;
#   the engine: every other file of src/ and src/decode/ (capture sources,
#     file reader, decode, filter, tracer, flows, topology, analyses, stats
#     windows, rates and alerts, control, probes, snapshots, the mirror-rule
#     grammar, drivers, the privileged broker, the store) with every other
#     header of include/. It reports through return values, error buffers
#     and callbacks, and never prints.
#
# (src/agent, src/lab and src/sonic are programs of their own.) Checked from
# the sources and from the object files of this build (nm; an LTO object
# is read through the linker plugin):
#
#   1. no engine file, source or header, includes a console header;
#   2. no engine object refers to a symbol a console object defines;
#   3. no object under src/ calls a function defined under commands/.
#
# What is left of the old tangle is listed in KNOWN below, each line to go
# when its cause does: the pipeline still calls the 'stats' verb's hooks
# instead of publishing to subscribers; the engine still prints (out_*,
# hs_async_print) and finishes verbs (hs_cmd_finish); struct hs_ctx is
# still the console's (console.h); the probe engine still parses and
# renders. Any other violation fails, and so does a line of KNOWN that is
# no longer one: take it off the list.
. "$(dirname "$0")/lib.sh"

command -v nm >/dev/null 2>&1 || skip "nm is not installed"
LC_ALL=C	# one order for sort, join and comm
export LC_ALL

CONSOLE_C="main console runbook complete pager watch watchmodel out outfile fwalk"
CONSOLE_H="console.h cmd.h runner.h complete.h pager.h watch.h out.h outfile.h fwalk.h
stats.h traces.h"

# FILE includes HEADER | FILE SYMBOL (a console symbol it refers to)
KNOWN='
src/capture.c includes console.h
src/capture.c includes stats.h
src/control.c includes console.h
src/driver.c includes cmd.h
src/driver.c includes console.h
src/planck.c includes console.h
src/probe.c includes cmd.h
src/probe.c includes console.h
src/capture.c hs_async_print
src/capture.c hs_stats_capture_stopped
src/capture.c hs_stats_packet
src/capture.c hs_stats_trace
src/capture.c out_err
src/capture.c out_text
src/capture.c out_warn
src/driver.c hs_cmd_finish
src/driver.c out_err
src/driver.c out_warn
src/planck.c hs_async_print
src/planck.c out_double
src/planck.c out_init
src/planck.c out_obj_close
src/planck.c out_obj_open
src/planck.c out_raw
src/planck.c out_str
src/planck.c out_uint
src/probe.c hs_async_print
src/probe.c hs_cmd_finish
src/probe.c out_arr_close
src/probe.c out_arr_open
src/probe.c out_bool
src/probe.c out_err
src/probe.c out_init
src/probe.c out_int
src/probe.c out_null
src/probe.c out_obj_close
src/probe.c out_obj_open
src/probe.c out_raw
src/probe.c out_str
src/probe.c out_text
src/probe.c out_uint
src/probe.c out_warn
'

S=$top_srcdir
B=$top_builddir
is_console_c() { case " $CONSOLE_C " in *" $1 "*) return 0 ;; esac; return 1; }
is_console_h() { case " $(echo $CONSOLE_H) " in *" $1 "*) return 0 ;; esac; return 1; }

# the engine's sources and headers, relative to the top
: >"$tmp/engine_c"
for f in "$S"/src/*.c "$S"/src/decode/*.c; do
	rel=${f#"$S"/}
	base=$(basename "$f" .c)
	if [ "${rel%/*}" = src ] && is_console_c "$base"; then
		continue
	fi
	echo "$rel" >>"$tmp/engine_c"
done
: >"$tmp/engine_h"
for f in "$S"/include/*.h "$S"/src/decode/*.h; do
	is_console_h "$(basename "$f")" || echo "${f#"$S"/}" >>"$tmp/engine_h"
done
[ -s "$tmp/engine_c" ] || hard "no engine sources under $S/src"
for base in $CONSOLE_C; do
	[ -f "$S/src/$base.c" ] || hard "src/$base.c, a console file, is not in the tree"
done
for h in $CONSOLE_H; do
	[ -f "$S/include/$h" ] || hard "include/$h, a console header, is not in the tree"
done

: >"$tmp/found"

# --- 1. includes -----------------------------------------------------------------
cat "$tmp/engine_c" "$tmp/engine_h" | while read -r rel; do
	sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$S/$rel" | while read -r h; do
		is_console_h "$h" && echo "$rel includes $h"
	done
done >>"$tmp/found"

# --- 2. and 3. symbols -------------------------------------------------------------
# the object of a source: src/x.o, or src/libT_a-x.o when its library has
# flags of its own
object() { # object DIR BASE
	for o in "$B/$1/$2.o" "$B/$1"/*-"$2".o; do
		[ -f "$o" ] && { echo "$o"; return 0; }
	done
	return 1
}
defined() { # defined OBJECT SOURCE: "SYMBOL TYPE SOURCE" of each symbol it defines
	nm -g --defined-only "$1" | awk -v s="$2" 'NF == 3 { print $3, $2, s }'
}
: >"$tmp/console_syms"
for base in $CONSOLE_C; do
	o=$(object src "$base") || hard "src/$base.c is not built (make first)"
	defined "$o" "src/$base.c" >>"$tmp/console_syms"
done
ncmd=0
for f in "$S"/commands/*.c; do
	base=$(basename "$f" .c)
	o=$(object commands "$base") || hard "commands/$base.c is not built (make first)"
	defined "$o" "commands/$base.c" >>"$tmp/console_syms"
	ncmd=$((ncmd + 1))
done
sort -o "$tmp/console_syms" "$tmp/console_syms"
[ -s "$tmp/console_syms" ] || hard "nm found no symbol in the console's objects"

refs() { # refs OBJECT: the symbols it refers to and does not define
	nm -u "$1" | awk '{ print $NF }' | sort -u
}
while read -r rel; do
	dir=${rel%/*}
	base=$(basename "$rel" .c)
	o=$(object "$dir" "$base") || hard "$rel is not built (make first)"
	refs "$o" | join - "$tmp/console_syms" | awk -v f="$rel" '{ print f, $1 }'
done <"$tmp/engine_c" >>"$tmp/found"
for base in $CONSOLE_C; do
	o=$(object src "$base")
	refs "$o" | join - "$tmp/console_syms" |
		awk -v f="src/$base.c" '$2 == "T" && $3 ~ /^commands\// { print f, $1 }'
done >>"$tmp/found"

sort -u -o "$tmp/found" "$tmp/found"
echo "$KNOWN" | sed '/^$/d' | sort -u >"$tmp/known"

# where a symbol is defined, for the message
where() { awk -v s="$1" '$1 == s { print $3; exit }' "$tmp/console_syms"; }

comm -23 "$tmp/found" "$tmp/known" >"$tmp/new"
while read -r file what; do
	case "$what" in
	"includes "*) not_ok "$file, an engine file, includes the console's ${what#includes }" ;;
	*) not_ok "$file, of the engine, refers to $what, defined by the console's $(where "$what")" ;;
	esac
done <"$tmp/new"
[ -s "$tmp/new" ] || ok "no engine file depends on the console beyond the known exceptions\
 ($(wc -l <"$tmp/engine_c") engine sources, $ncmd verb files)"

comm -13 "$tmp/found" "$tmp/known" >"$tmp/gone"
while read -r file what; do
	not_ok "'$file $what' is no longer so: take it off KNOWN in tests/e2e/layering.sh"
done <"$tmp/gone"
[ -s "$tmp/gone" ] || ok "every known exception is still one ($(wc -l <"$tmp/known") left)"

finish
