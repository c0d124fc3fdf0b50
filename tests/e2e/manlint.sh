#!/bin/sh
# manlint.sh - every verb has its page, every page is a verb, the pages
# agree with the command table, hopscope.1 lists them all, hopscope-json.7
# documents every verb's JSON, mandoc is happy.
. "$(dirname "$0")/lib.sh"

command -v mandoc >/dev/null 2>&1 || skip "mandoc is not installed"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
MAN=$top_srcdir/man
[ -f "$MAN/hopscope.1" ] || hard "no $MAN/hopscope.1"

hs --json -c help
[ "$st" -eq 0 ] || hard "'hopscope --json -c help' failed (status $st)"
cp "$tmp/out" "$tmp/verbs.json"

# the SYNOPSIS and SEE ALSO of a page as plain text, blanks squeezed
section() { # section PAGE NAME
	mandoc -T ascii "$1" | sed 's/.\x08//g' | awk -v s="$2" '
		/^[A-Z][A-Z ]*$/ { on = ($0 == s); next }
		on { print }' | tr -s ' \n\t' '   '
}

# --- every verb has a page whose SYNOPSIS is the table's spec ------------------
python3 - "$tmp/verbs.json" >"$tmp/verbs" <<'PY'
import json, sys
for o in json.load(open(sys.argv[1]))["verbs"]:
    print("%s\t%s" % (o["name"], o["synopsis"]))
PY
[ -s "$tmp/verbs" ] || hard "help --json listed no verbs"
tab=$(printf '\t')
while IFS="$tab" read -r verb synopsis; do
	page=$MAN/hopscope-$verb.1
	if [ ! -f "$page" ]; then
		not_ok "verb '$verb' has no page man/hopscope-$verb.1"
		continue
	fi
	syn=$(section "$page" SYNOPSIS)
	case " $syn " in
	*" $synopsis "*) ok "hopscope-$verb.1 SYNOPSIS is '$synopsis'" ;;
	*) not_ok "hopscope-$verb.1 SYNOPSIS '$syn' lacks the table's '$synopsis'" ;;
	esac
	name=$(mandoc -T ascii "$page" | sed 's/.\x08//g' | awk '/^NAME$/ { getline; print; exit }')
	case "$name" in
	*"hopscope-$verb - "*) ok "hopscope-$verb.1 NAME" ;;
	*) not_ok "hopscope-$verb.1 NAME is '$name'" ;;
	esac
done <"$tmp/verbs"

# --- every page is a verb, and is listed in hopscope.1 -------------------------------
seealso=$(section "$MAN/hopscope.1" "SEE ALSO")
for page in "$MAN"/hopscope-*.1; do
	base=$(basename "$page" .1)
	verb=${base#hopscope-}
	# the lab and the daemon are programs of their own, not verbs
	if [ "$verb" != lab ] && [ "$verb" != serve ]; then
		check "$base.1 documents a verb of the table" \
			grep -q "^$verb$tab" "$tmp/verbs"
	fi
	case " $seealso " in
	*" $base(1)"*) ok "hopscope.1 SEE ALSO lists $base(1)" ;;
	*) not_ok "hopscope.1 SEE ALSO does not list $base(1)" ;;
	esac
done

# --- every verb's JSON is in hopscope-json.7, which hopscope.1 names ----------------------
while IFS="$tab" read -r verb synopsis; do
	check "hopscope-json.7 documents the JSON of '$verb'" \
		grep -Eq "^\.(It )?Cm ([a-z]+ , )*$verb( |\$)" "$MAN/hopscope-json.7"
done <"$tmp/verbs"
case " $seealso " in
*" hopscope-json(7)"*) ok "hopscope.1 SEE ALSO lists hopscope-json(7)" ;;
*) not_ok "hopscope.1 SEE ALSO does not list hopscope-json(7)" ;;
esac

# --- the programs' usage: hopscope.1 and README name every option --help gives ----------
# each form (the console, attached, serve) with the options of its own usage lines
"$HS" --help >"$tmp/help.txt" 2>&1
"$HS" serve --help >"$tmp/shelp.txt" 2>&1
section "$MAN/hopscope.1" SYNOPSIS >"$tmp/syn.txt"
sed -n '/^Using it$/,/^The analyzer as a daemon$/p' "$top_srcdir/README" >"$tmp/readme.txt"
python3 - "$tmp/help.txt" "$tmp/shelp.txt" "$tmp/syn.txt" "$tmp/readme.txt" >"$tmp/usage.out" <<'PY'
import re, sys
def forms(text):
    # the usage lines, split into forms at each "hopscope" that begins one;
    # a form is named by its first words (serve, --attach, else the console)
    text = text.split("\n\n")[0] if "usage:" in text else text
    out = {}
    for f in re.split(r"(?:^|\s)(?=hopscope(?:\s|$))", text):
        words = f.split()
        if not words or words[0] != "hopscope" or len(words) < 2:
            continue
        key = "serve" if words[1] == "serve" else "attach" if words[1] == "--attach" else \
              None if words[1] in ("-h", "[-h") else "console"
        if key:
            out[key] = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", " ".join(words[1:])))
    return out
want = forms(open(sys.argv[1]).read())
want.update(forms(open(sys.argv[2]).read()))
for name, path in (("hopscope.1 SYNOPSIS", sys.argv[3]), ("README's usage", sys.argv[4])):
    text = open(path).read()
    if "README" in name:
        text = " ".join(l for l in text.split("\n") if l.startswith("    hopscope") or
                        l.startswith("             ") or l.startswith("                   "))
    have = forms(text)
    for key, opts in sorted(want.items()):
        missing = sorted(opts - have.get(key, set()))
        print("%s\t%s names every option of the %s usage in --help%s" %
              ("ok" if not missing else "missing", name, key,
               missing and " (not " + " ".join(missing) + ")" or ""))
PY
while IFS="$tab" read -r verdict what; do
	check "$what" [ "$verdict" = ok ]
done <"$tmp/usage.out"
[ -s "$tmp/usage.out" ] || not_ok "no usage forms read from --help"

# --- what the pages' examples show the console printing is what it prints ----------------
# a verb's usage line, wherever a page shows one, is 'help VERB''s
for page in "$MAN"/*.1; do
	mandoc -T ascii "$page" | sed 's/.\x08//g' | sed -n 's/^ *usage: //p' | sort -u >"$tmp/usages"
	while read -r usage; do
		hs -c "help ${usage%% *}"
		check "$(basename "$page"): 'usage: $usage' is what 'help ${usage%% *}' prints" \
			eval '[ "$(head -n 1 "$tmp/out")" = "usage: $usage" ]'
	done <"$tmp/usages"
done
# the list of verbs fits a terminal of 80 columns
hs -c help
check "help: no line of the list is longer than 80 columns" eval '[ "$st" -eq 0 ] &&
	[ "$(wc -l <"$tmp/out")" -gt 20 ] && [ "$(awk "length > 80" "$tmp/out" | wc -l)" = 0 ]'
# set's example: its commands run give the lines it shows, setting by
# setting (the history's file and the analyzer's name are the machine's)
mandoc -T ascii "$MAN/hopscope-set.1" | sed 's/.\x08//g' |
	awk '/^EXAMPLES$/ { on = 1; next } /^[A-Z][A-Z ]*$/ { on = 0 } on' |
	sed 's/^ *//; /^$/d' >"$tmp/set.example"
cmds=$(sed -n 's/^hopscope> //p' "$tmp/set.example" | paste -sd ';' -)
hs --db "$tmp/set.db" -c "$cmds"
grep -v '^hopscope> ' "$tmp/set.example" | grep -Ev '^(db|analyzer) ' >"$tmp/set.want"
grep -Ev '^(db|analyzer) ' "$tmp/out" >"$tmp/set.got"
check "hopscope-set.1: the example's 'set' is what '$cmds' prints" \
	eval '[ "$st" -eq 0 ] && diff -u "$tmp/set.want" "$tmp/set.got" >&2'

# --- mandoc -T lint ---------------------------------------------------------------------
for page in "$MAN"/*.1 "$MAN"/*.7; do
	if out=$(mandoc -T lint -W warning "$page" 2>&1) && [ -z "$out" ]; then
		ok "mandoc lint: $(basename "$page")"
	else
		not_ok "mandoc lint: $(basename "$page"): $out"
	fi
done

finish
