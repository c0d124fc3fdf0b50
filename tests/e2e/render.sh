#!/bin/sh
# render.sh - text and --json say the same: each verb without a golden
# output is run both ways on the same input, the text is read back field by
# field and compared with the JSON document's values (one document per run)
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip "python3 is missing"
SAMPLE=$top_srcdir/share/sample/sample.pcap
TOPO=$top_srcdir/share/sample/sample.topo

# both CMD: the text in $tmp/text, the JSON in $tmp/json
both() {
	hs "$@"
	cp "$tmp/out" "$tmp/text"
	hs --json "$@"
	cp "$tmp/out" "$tmp/json"
}

# same WHAT PYTHON: checks that PYTHON, given T (the text's lines) and J
# (the one JSON document), returns no difference; prints the first ones
same() {
	d=$1; shift
	if python3 - "$tmp/text" "$tmp/json" "$1" >"$tmp/why" 2>&1 <<'PY'
import json, re, sys
T = open(sys.argv[1]).read().splitlines()
docs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
if len(docs) != 1:
    sys.exit(f"{len(docs)} JSON documents, not one")
J = docs[0]
diffs = []
def eq(what, text, js):
    if isinstance(text, list) and isinstance(js, list) and len(text) == len(js):
        for i, (a, b) in enumerate(zip(text, js)):
            eq(f"{what}[{i}]", a, b)
    elif text != js:
        diffs.append(f"{what}: text {text!r:.200}, JSON {js!r:.200}")
exec(sys.argv[3])
for x in diffs[:5]:
    print(x)
sys.exit(1 if diffs else 0)
PY
	then ok "$d"; else not_ok "$d"; sed 's/^/#   /' "$tmp/why"; fi
}

# --- help --------------------------------------------------------------------
both -c help
same "help: each verb's synopsis and summary, in order" '
rows, i = [], 0
while i < len(T) and T[i].startswith("  "):
    m = re.match(r"  (\S.*?)  +(\S.*)$", T[i])
    if m:
        rows.append((m[1], m[2])); i += 1
    else:        # too long for its column: the summary on the next line
        rows.append((T[i].strip(), T[i + 1].strip())); i += 2
eq("verbs", rows, [(v["synopsis"], v["summary"]) for v in J["verbs"]])
eq("names", [r[0].split()[0] for r in rows], [v["name"] for v in J["verbs"]])'
for v in traces exit; do
	both -c "help $v"
	same "help $v: usage, summary and page" '
eq("lines", T, ["usage: " + J["synopsis"], J["summary"], "see " + J["page"]])
eq("name", T[0].split()[1], J["name"])'
done

# a history of the sample, once: sql and history read it
hs -r "$SAMPLE" --topo "$TOPO" --db "$tmp/h.db" -c "capture status"
[ "$st" -eq 0 ] || hard "cannot store the sample: $(cat "$tmp/err")"

# --- sql ---------------------------------------------------------------------
# a cell of each type: the text's cells, parsed back, are the JSON's values
both --db "$tmp/h.db" -c "sql SELECT 7 AS i, -2.5 AS r, NULL AS n, char(104, 105) AS s, zeroblob(2) AS b UNION ALL SELECT 8, 0.125, NULL, char(124), zeroblob(1)"
same "sql: the header is the keys, each cell its value" '
cell = lambda c: None if c == "NULL" else int(c) if re.fullmatch(r"-?[0-9]+", c) else \
	float(c) if re.fullmatch(r"-?[0-9.]+", c) else c
eq("header", T[0].split(" | "), list(J["rows"][0]))
eq("rows", [[cell(c) for c in l.split(" | ")] for l in T[1:]],
   [list(r.values()) for r in J["rows"]])'
both --db "$tmp/h.db" -c "sql SELECT * FROM sessions WHERE 0"
same "sql: no rows: the header alone, an empty array" '
eq("rows", T[1:], J["rows"])
eq("header", len(T), 1)'

finish
