#!/bin/sh
# layering.sh - the engine does not depend on the console
#
# hopscope's program is two parts (README, "Layout"):
#
#   the console: the verbs (commands/) and the files that read command
#     lines, run them and show what they say (src/console/), with their
#     headers (include/console/);
#   the engine: src/ and src/decode/ (capture sources, the file reader,
#     decode, filter, tracer, flows, topology, analyses, stats windows,
#     rates and alerts, control, probes, snapshots, the mirror-rule
#     grammar, drivers, the privileged broker, the store) with include/.
#     It reports through return values, error buffers and callbacks, and
#     never prints.
#
# (src/agent, src/lab and src/sonic are programs of their own.) Checked from
# the sources and from the object files of this build (nm; an LTO object
# is read through the linker plugin):
#
#   1. no engine file, source or header, includes a console header;
#   2. no engine object refers to a symbol a console object defines;
#   3. no object under src/ calls a function defined under commands/;
#   4. a unit test linked with the console's library (libhscon.a) tests
#      the console: it includes a console header. The engine's link
#      without it (Makefile.am).
#   5. all SQL lives behind the store's interface (include/store.h): no C
#      file but the store's own (src/store*.c, src/history.c,
#      src/history_sql.h, src/store_int.h) has a string that begins a
#      statement (SELECT, INSERT, UPDATE, DELETE, CREATE, ...). The user's
#      own query ('sql') is text typed, not written here; Redis's SELECT
#      of a database by its number (src/agent) is not SQL.
#   6. the engine's objects form no circle (A refers to what B defines, and
#      B, through any others, to what A defines) but among src/decode/*.o,
#      where protocols nest: each file's place is below what uses it.
#   7. the console's objects form no circle either, but the one between
#      src/console/console.c and src/console/runbook.c: the REPL feeds the
#      runner its lines and the runner prompts, reports and ends through
#      the REPL, one component as a shell's loop and its command runner
#      are. Below the verbs (commands/*.c) sit what they use (the output,
#      replying later, the file walk, the full-screen view, formatting:
#      src/console/reply.c and the others), which never name the table
#      or a verb; above them the table (commands/table.c), the command
#      line's reading (cmdline.c), completion, the runner, the REPL, the
#      daemon and its client. A verb reaches what is above it (help the
#      table, 'source' the runner) through ctx->con, set by the runner.
#   8. a verb calls no other verb: no object of commands/ but the table's
#      (commands/table.c) refers to a function another file of commands/
#      defines. What verbs share (the probe's grammar and run, the traces'
#      filters and rows) lives below them, in src/console/.
#
# Nothing is left of the old tangle: KNOWN below, the violations let
# through, each line to go when its cause does, is empty. Any violation
# not on it fails, and so does a line of KNOWN that is no longer one: take
# it off the list.
. "$(dirname "$0")/lib.sh"

command -v nm >/dev/null 2>&1 || skip "nm is not installed"
LC_ALL=C	# one order for sort, join and comm
export LC_ALL

# FILE includes HEADER | FILE SYMBOL (a console symbol it refers to) |
# FILE circle:FILE,FILE,... (the files of a circle, FILE the first)
KNOWN=''

# the console's one component: the REPL and its runner of command lines
CONSOLE_ONE='src/console/console.c src/console/runbook.c'

S=$top_srcdir
B=$top_builddir
# a file relative to the top, one a line
files() { for f in "$@"; do [ -f "$f" ] && echo "${f#"$S"/}"; done; }
files "$S"/src/*.c "$S"/src/decode/*.c >"$tmp/engine_c"
files "$S"/include/*.h "$S"/src/decode/*.h >"$tmp/engine_h"
files "$S"/src/console/*.c "$S"/commands/*.c >"$tmp/console_c"
CONSOLE_H=$(files "$S"/include/console/*.h | sed 's|.*/||')
[ -s "$tmp/engine_c" ] || hard "no engine sources under $S/src"
[ -s "$tmp/console_c" ] || hard "no console sources under $S/src/console and $S/commands"
[ -n "$CONSOLE_H" ] || hard "no console headers under $S/include/console"
is_console_h() { case " $(echo $CONSOLE_H) " in *" ${1##*/} "*) return 0 ;; esac; return 1; }

: >"$tmp/found"

# --- 1. includes -----------------------------------------------------------------
cat "$tmp/engine_c" "$tmp/engine_h" | while read -r rel; do
	sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$S/$rel" | while read -r h; do
		is_console_h "$h" && echo "$rel includes $h"
	done
done >>"$tmp/found"

# --- 2. and 3. symbols -------------------------------------------------------------
# the object of a source: DIR/x.o, or DIR/libT_a-x.o when its library has
# flags of its own
object() { # object SOURCE
	d=$(dirname "$1")
	x=$(basename "$1" .c)
	for o in "$B/$d/$x.o" "$B/$d"/*-"$x".o; do
		[ -f "$o" ] && { echo "$o"; return 0; }
	done
	echo "$1 is not built (make first)" >"$tmp/unbuilt"
	return 1
}
# (loops read files, not pipes, so that hard ends the test)
while read -r rel; do
	o=$(object "$rel") || hard "$(cat "$tmp/unbuilt")"
	# SYMBOL TYPE SOURCE of each symbol it defines
	nm -g --defined-only "$o" | awk -v s="$rel" 'NF == 3 { print $3, $2, s }'
done <"$tmp/console_c" >"$tmp/console_syms"
sort -o "$tmp/console_syms" "$tmp/console_syms"
[ -s "$tmp/console_syms" ] || hard "nm found no symbol in the console's objects"

refs() { # refs OBJECT: the symbols it refers to and does not define
	nm -u "$1" | awk '{ print $NF }' | sort -u
}
while read -r rel; do
	o=$(object "$rel") || hard "$(cat "$tmp/unbuilt")"
	refs "$o" | join - "$tmp/console_syms" | awk -v f="$rel" '{ print f, $1 }'
done <"$tmp/engine_c" >>"$tmp/found"
grep '^src/' "$tmp/console_c" >"$tmp/console_src"
while read -r rel; do
	o=$(object "$rel") || hard "$(cat "$tmp/unbuilt")"
	refs "$o" | join - "$tmp/console_syms" |
		awk -v f="$rel" '$2 == "T" && $3 ~ /^commands\// { print f, $1 }'
done <"$tmp/console_src" >>"$tmp/found"

# --- 4. unit tests -----------------------------------------------------------------
sed -n 's/^tests_unit_\(test_[a-z0-9_]*\)_LDADD[ \t]*=\(.*\)/\1 \2/p' "$S/Makefile.am" \
	>"$tmp/ldadd"
[ -s "$tmp/ldadd" ] || hard "no unit test's LDADD in $S/Makefile.am"
while read -r t libs; do
	case " $libs " in *'$(HS_CORE)'* | *libhscon.a*) ;; *) continue ;; esac
	src=$S/tests/unit/$t.c
	[ -f "$src" ] || hard "$src is missing"
	console=no
	for h in $(sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"]*\)".*/\1/p' "$src"); do
		is_console_h "$h" && console=yes
	done
	[ "$console" = yes ] || echo "tests/unit/$t.c links-console"
done <"$tmp/ldadd" >>"$tmp/found"

# --- 5. SQL --------------------------------------------------------------------------
find "$S/src" "$S/commands" "$S/include" -name '*.[ch]' | sort | while read -r f; do
	rel=${f#"$S"/}
	case "$rel" in
	src/store*.c | src/history.c | src/history_sql.h | src/store_int.h) continue ;;
	esac
	grep -nE '"(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|WITH|PRAGMA|REPLACE) ' "$f" |
		grep -vE '"SELECT [0-9]+"' | sed -n "1s/^\([0-9]*\):.*/$(echo "$rel" | sed 's|/|\\/|g') sql:\1/p"
done >>"$tmp/found"

# --- 6. circles --------------------------------------------------------------------
# edges LIST: A B for each object A of the sources in LIST (one a line) that
# refers to a symbol object B of LIST defines
edges() {
	while read -r rel; do
		o=$(object "$rel") || hard "$(cat "$tmp/unbuilt")"
		nm -g --defined-only "$o" | awk -v s="$rel" 'NF == 3 { print $3, s }'
	done <"$1" | sort -u >"$1.syms"
	[ -s "$1.syms" ] || hard "nm found no symbol in the objects of $(wc -l <"$1") sources"
	while read -r rel; do
		o=$(object "$rel") || hard "$(cat "$tmp/unbuilt")"
		refs "$o" | join - "$1.syms" | awk -v f="$rel" '$2 != f { print f, $2 }'
	done <"$1" | sort -u
}
# circles EDGES: the files each reaches (closure of the edges); a circle is
# the files that reach one another, one a line, in order
circles() {
	awk '
		{ e[$1, $2] = 1; n[$1] = 1; n[$2] = 1 }
		END {
			for (k in n) for (i in n) if (e[i, k]) for (j in n) if (e[k, j]) e[i, j] = 1
			for (a in n) {
				c = a; first = a
				for (b in n) if (b != a && e[a, b] && e[b, a]) { c = c " " b; if (b < first) first = b }
				if (first == a && c != a) print c
			}
		}' "$1" | while read -r files; do
		echo $(printf '%s\n' $files | sort)
	done
}
edges "$tmp/engine_c" >"$tmp/edges"
circles "$tmp/edges" | while read -r files; do
	set -- $files
	decode=yes
	for f; do case "$f" in src/decode/*) ;; *) decode=no ;; esac; done
	[ "$decode" = yes ] && continue
	echo "$1 circle:$(echo "$*" | tr ' ' ,)"
done >>"$tmp/found"

sort -u -o "$tmp/found" "$tmp/found"
echo "$KNOWN" | sed '/^$/d' | sort -u >"$tmp/known"

# where a symbol is defined, for the message
where() { awk -v s="$1" '$1 == s { print $3; exit }' "$tmp/console_syms"; }

comm -23 "$tmp/found" "$tmp/known" >"$tmp/new"
while read -r file what; do
	case "$what" in
	"includes "*) not_ok "$file, an engine file, includes the console's ${what#includes }" ;;
	sql:*) not_ok "$file writes SQL (line ${what#sql:}): all of it lives behind the\
 store's interface (include/store.h, src/store*.c, src/history.c)" ;;
	circle:*) not_ok "the engine's objects $(echo "${what#circle:}" | sed 's/,/, /g') use one\
 another in a circle: move what one of them defines to where it belongs, below both" ;;
	links-console) not_ok "$file tests the engine but links the console's library \
(link \$(HS_ENGINE), not \$(HS_CORE))" ;;
	*) case "$file" in
	   src/console/*) not_ok "$file calls $what, a verb's function ($(where "$what"))" ;;
	   *) not_ok "$file, of the engine, refers to $what, the console's ($(where "$what"))" ;;
	   esac ;;
	esac
done <"$tmp/new"
[ -s "$tmp/new" ] || ok "no engine file depends on the console, and no circle, beyond the known exceptions\
 ($(wc -l <"$tmp/engine_c") engine sources, $(wc -l <"$tmp/console_c") console ones)"

comm -13 "$tmp/found" "$tmp/known" >"$tmp/gone"
while read -r file what; do
	not_ok "'$file $what' is no longer so: take it off KNOWN in tests/e2e/layering.sh"
done <"$tmp/gone"
[ -s "$tmp/gone" ] || ok "every known exception is still one ($(wc -l <"$tmp/known") left)"

# --- 7. the console's circles -----------------------------------------------------
edges "$tmp/console_c" >"$tmp/console_edges"
circles "$tmp/console_edges" | while read -r files; do
	[ "$files" = "$CONSOLE_ONE" ] || echo "$files"
done >"$tmp/console_circles"
while read -r files; do
	not_ok "the console's objects $(echo "$files" | sed 's/ /, /g') use one another in a\
 circle: what a verb uses goes below the verbs, and a verb reaches the table, the runner\
 or the terminal above it through ctx->con (include/console/reply.h)"
done <"$tmp/console_circles"
[ -s "$tmp/console_circles" ] || ok "the console's objects form no circle but $(echo "$CONSOLE_ONE" |
	sed 's/ / with /')"

# --- 8. verbs calling verbs ----------------------------------------------------------
grep '^commands/' "$tmp/console_c" | grep -v '^commands/table\.c$' >"$tmp/verbs_c"
[ -s "$tmp/verbs_c" ] || hard "no verbs under $S/commands"
while read -r rel; do
	o=$(object "$rel") || hard "$(cat "$tmp/unbuilt")"
	refs "$o" | join - "$tmp/console_syms" |
		awk -v f="$rel" '$2 == "T" && $3 ~ /^commands\// && $3 != f { print f, $1, $3 }'
done <"$tmp/verbs_c" >"$tmp/verb_calls"
while read -r file sym def; do
	not_ok "$file, a verb, calls $sym of $def, another verb: what verbs share goes below\
 them (src/console/, its header in include/console/)"
done <"$tmp/verb_calls"
[ -s "$tmp/verb_calls" ] || ok "no verb calls another ($(wc -l <"$tmp/verbs_c") verbs)"

finish
