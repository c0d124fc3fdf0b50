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
# (the one JSON document; with docs=stream the list of the JSON lines of a
# verb that streams, with docs=last the last of several commands' documents),
# returns no difference; prints the first ones
docs=one
same() {
	d=$1; shift
	if python3 - "$tmp/text" "$tmp/json" "$1" "$docs" >"$tmp/why" 2>&1 <<'PY'
import json, re, sys
T = open(sys.argv[1]).read().splitlines()
docs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
if sys.argv[4] == "stream":
    J = docs
elif sys.argv[4] == "last" and docs:
    J = docs[-1]
elif len(docs) != 1:
    sys.exit(f"{len(docs)} JSON documents, not one")
else:
    J = docs[0]
diffs = []
def eq(what, text, js):
    if isinstance(text, list) and isinstance(js, list) and len(text) == len(js):
        for i, (a, b) in enumerate(zip(text, js)):
            eq(f"{what}[{i}]", a, b)
    elif text != js:
        diffs.append(f"{what}: text {text!r:.200}, JSON {js!r:.200}")
# the text's renderings of a JSON value (src/util.c)
def fmt_time(ns):
    import time
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ns // 10**9)) + \
        ".%06d" % (ns % 10**9 // 1000)
def fmt_dur(ns):
    return ("-" + fmt_dur(-ns) if ns < 0 else "%dns" % ns if ns < 1000 else
            "%.1fus" % (ns / 1e3) if ns < 10**6 else "%.3fms" % (ns / 1e6) if ns < 10**9
            else "%.3fs" % (ns / 1e9))
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
# within 80 columns: a synopsis goes on over lines indented a little, a
# summary too long for its column over lines indented to it (or begins
# on the line after a synopsis too long)
rows, i = [], 0
while i < len(T) and re.match(r"  \S", T[i]):
    m = re.match(r"  (\S.*?)(?:  +(\S.*))?$", T[i])
    syn, summ = [m[1]], [m[2]] if m[2] else []
    i += 1
    while i < len(T) and T[i].startswith("   "):
        (summ if len(T[i]) - len(T[i].lstrip()) >= 20 else syn).append(T[i].strip())
        i += 1
    rows.append((" ".join(syn), " ".join(summ)))
eq("verbs", rows, [(v["synopsis"], v["summary"]) for v in J["verbs"]])
eq("names", [r[0].split()[0] for r in rows], [v["name"] for v in J["verbs"]])
# (the text shows no aliases: each verb has the array, empty or not)
eq("aliases", [type(v.get("aliases")) for v in J["verbs"]], [list] * len(J["verbs"]))
eq("exit", [v["aliases"] for v in J["verbs"] if v["name"] == "quit"], [["exit"]])'
for v in traces exit; do
	both -c "help $v"
	same "help $v: usage, summary and page" '
eq("lines", T, ["usage: " + J["synopsis"], J["summary"], "see " + J["page"]])
eq("name", T[0].split()[1], J["name"])'
done

# --- filter del --------------------------------------------------------------
docs=last
both -c "filter add tcp; filter del 1"
same "filter del: the text says what JSON does" '
eq("deleted", T[-1], "filter %d deleted" % J["id"] if J.get("deleted") else None)'
docs=one

# a history of the sample, once: sql and history read it
hs -r "$SAMPLE" --topo "$TOPO" --db "$tmp/h.db" -c "capture status"
[ "$st" -eq 0 ] || hard "cannot store the sample: $(cat "$tmp/err")"

# --- sql ---------------------------------------------------------------------
# a cell of each type: the text's cells, parsed back, are the JSON's values
both --db "$tmp/h.db" -c "sql SELECT 7 AS i, -2.5 AS r, NULL AS n, char(104, 105) AS s, zeroblob(2) AS b UNION ALL SELECT 8, 0.125, NULL, char(124), zeroblob(1)"
same "sql: the header is the keys, each cell its value" '
cell = lambda c: None if c == "NULL" else int(c) if re.fullmatch(r"-?[0-9]+", c) else \
	float(c) if re.fullmatch(r"-?[0-9.]+", c) else c
eq("header", T[0].split(" | "), J["columns"])
eq("keys", [list(r) for r in J["rows"]], [J["columns"]] * len(J["rows"]))
eq("rows", [[cell(c) for c in l.split(" | ")] for l in T[1:]],
   [list(r.values()) for r in J["rows"]])'
both --db "$tmp/h.db" -c "sql SELECT * FROM sessions WHERE 0"
same "sql: no rows: the header alone, an empty array" '
eq("rows", T[1:], J["rows"])
eq("header", T[0].split(" | "), J["columns"])
eq("columns", "id" in J["columns"], True)'

# --- snapshot ----------------------------------------------------------------
# a stand-in driver prints canned snapshots: the second a second later, one
# port gone (only in the first), one counter gone back (a reset)
python3 - "$tmp" <<'PY'
import json, sys
T = 1700000000 * 10**9
ports = [("spine1", "leaf1"), ("spine1", "leaf2"), ("leaf1", "spine1"), ("leaf1", "spine2"),
         ("leaf2", "spine1"), ("leaf2", "spine2"), ("leaf1", "h1")]
def snap(name, dt, sent, skip=()):
    out = [{"switch": s, "port": p, "read_ns": T + dt + 1000 * k, "rx_packets": sent(s, p) // 900,
            "rx_bytes": sent(s, p), "rx_drops": k * (1 + dt // 10**9), "tx_packets": sent(s, p) // 1000,
            "tx_bytes": sent(s, p), "tx_drops": 2 * k * (1 + dt // 10**9),
            "backlog_bytes": 3000 if p == "h1" else None, "backlog_packets": 2 if p == "h1" else None}
           for k, (s, p) in enumerate(ports) if (s, p) not in skip]
    open(f"{sys.argv[1]}/{name}", "w").write(json.dumps({"snapshot_ns": T + dt, "switches": 3,
                                                          "ports": out}) + "\n")
snap("one", 0, lambda s, p: 10**6)
snap("two", 10**9, lambda s, p: 10**5 if (s, p) == ("leaf1", "spine2") else 10**6 + 7 * 10**5,
     skip=[("leaf2", "spine2")])
PY
printf '#!/bin/sh\ncat "$FAKE_SNAP"\n' >"$tmp/driver"
chmod +x "$tmp/driver"
S="--db $tmp/s.db --topo $TOPO"
FAKE_SNAP=$tmp/one HOPSCOPE_DRIVER=$tmp/driver hs $S -c "snapshot take"
FAKE_SNAP=$tmp/two HOPSCOPE_DRIVER=$tmp/driver hs $S -c "snapshot take"
[ "$st" -eq 0 ] || hard "cannot take the snapshots: $(cat "$tmp/err")"

SUMMARY='
def summary(line, j):
    m = re.fullmatch(r"snapshot (\d+): (.*), (\d+) switches, (\d+) ports, read within (\S+)"
                     r"(?: \(capture session (\d+)\))?", line)
    if not m:
        return diffs.append(f"not a summary: {line!r}")
    eq("summary", [int(m[1]), m[2], int(m[3]), int(m[4]), m[5], m[6] and int(m[6])],
       [j["id"], fmt_time(j["target_ns"]), j["switches"], j["ports"], fmt_dur(j["spread_ns"]),
        j["session"]])
'
both $S -c "snapshot list"
same "snapshot list: id, time, switches, ports, spread of each" "$SUMMARY"'
eq("count", len(T), len(J["snapshots"]))
for l, j in zip(T, J["snapshots"]):
    summary(l, j)'
both $S -c "snapshot show 1"
same "snapshot show: the summary, and each port's counters" "$SUMMARY"'
summary(T[0], J)
eq("header", T[1].split(), ["SWITCH", "PORT", "RX_PKTS", "RX_BYTES", "RX_DROPS", "TX_PKTS",
                            "TX_BYTES", "TX_DROPS", "BACKLOG"])
names = ["switch", "port", "rx_packets", "rx_bytes", "rx_drops", "tx_packets", "tx_bytes",
         "tx_drops", "backlog_bytes"]
eq("ports", [l.split() for l in T[2:]],
   [[str(c[k]) if c[k] is not None else "-" for k in names] for c in J["counters"]])'
both $S -c "snapshot diff 1 2 --threshold 10%"
same "snapshot diff: the header, each port's deltas and rates, each ECMP group" '
def bits(bps):
    u = 0
    while bps >= 1000 and u < 4:
        bps /= 1000; u += 1
    return "%.*f %s" % (2 if u else 0, bps, ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"][u])
m = re.fullmatch(r"snapshot (\d+) to (\d+) over (\S+): (\d+) ports"
                 r"(?: \((\d+) only in the first, (\d+) only in the second\))?"
                 r", (\d+) ECMP groups, (\d+) flagged", T[0])
eq("header", m and [int(m[1]), int(m[2]), m[3], int(m[4]), int(m[5]), int(m[6]), int(m[7]),
                    int(m[8])],
   [J["a"], J["b"], fmt_dur(J["interval_ns"]), J["ports"], J["only_a"], J["only_b"],
    J["groups"], J["flagged"]])
rows = [re.fullmatch(r"(\S+) +(\S+) +(\d+) +(\d+) +(.+?/s) +(\d+) +(\d+) +(.+?/s) +(\d+)"
                     r"(  \(counter reset\))?", l) for l in T[2:2 + len(J["deltas"])]]
eq("deltas", [r and [r[1], r[2], int(r[3]), int(r[4]), r[5], int(r[6]), int(r[7]), r[8],
                     int(r[9]), bool(r[10])] for r in rows],
   [[d["switch"], d["port"], d["rx_packets"], d["rx_bytes"], bits(d["rx_bps"]),
     d["tx_packets"], d["tx_bytes"], bits(d["tx_bps"]), d["rx_drops"] + d["tx_drops"],
     d["reset"]] for d in J["deltas"]])
groups, g = [], None
for l in T[2 + len(J["deltas"]):]:
    m = re.fullmatch(r"(\S+) toward (\S+): (\d+) bytes sent, imbalance ([0-9.]+)"
                     r"(  FLAGGED)?(  \(ports missing from a snapshot\))?", l)
    if m:
        g = [m[1], m[2], int(m[3]), m[4], bool(m[5]), not m[6], []]
        groups.append(g)
        continue
    m = re.fullmatch(r"    (\S+)(?: \((\S+)\))? +(?:(\d+) bytes +([0-9.]+)%|not in both snapshots)",
                     l)
    if m and g:
        g[6].append([m[1], m[2] or m[1], m[3] and int(m[3]), m[4]])
eq("groups", groups,
   [[o["switch"], o["toward"], o["tx_bytes"], "%.2f" % o["imbalance"], o["flagged"],
     o["complete"], [[m["port"], m["neighbour"], m["tx_bytes"],
                      m["share"] is not None and "%.1f" % (100 * m["share"]) or None]
                     for m in o["members"]]] for o in J["ecmp_groups"]])
eq("a group per leaf", len(groups), 4)'
both --db "$tmp/s.db" -c "snapshot diff 1 2"
same "snapshot diff without a topology: no groups, and says why" '
m = re.fullmatch(r"snapshot (\d+) to (\d+) over \S+: (\d+) ports \((\d+) only in the first, (\d+) only "
                 r"in the second\)(; no topology, so no ECMP groups \(topo load FILE\))", T[0])
eq("header", m and [int(m[3]), int(m[4]), int(m[5]), bool(m[6])],
   [J["ports"], J["only_a"], J["only_b"], J["groups"] is None and J["flagged"] is None])
eq("no groups", J["ecmp_groups"], [])'

# --- stats -------------------------------------------------------------------
# a row per key and window; beyond 'keys' the rest is one row, "(other)"
STATS='
head = T[0].split()
keys = head[1:-4]
eq("head", [head[0]] + head[-4:], ["window_start", "packets", "bytes", "flows", "drops"])
eq("rows", len(T) - 1, len(J))
for i, (l, d) in enumerate(zip(T[1:], J)):
    c = l.split()
    want = [fmt_time(d["window_start_ns"])] + \
        (["(other)"] + ["-"] * (len(keys) - 1) if d.get("other") else [str(d[k]) for k in keys]) + \
        [str(d[k]) for k in ("packets", "bytes", "flows", "drops")]
    eq(f"row {i + 1}", [c[0] + " " + c[1]] + c[2:], want)
    eq(f"keys of row {i + 1}", list(d), ["window_start_ns"] + (["other"] if d.get("other") else keys) +
       ["packets", "bytes", "flows", "drops"])
eq("an other row", any(d.get("other") for d in J), True)'
docs=stream
both --topo "$TOPO" -c "stats by src,dst,proto,sport,dport,dscp window 500ms keys 3 file $SAMPLE"
same "stats by every field: each row's window, keys and counts" "$STATS"
both --topo "$TOPO" -c "stats by switch keys 4 file $SAMPLE"
same "stats by switch: each row's window, switch and counts" "$STATS"
docs=one

# --- history -----------------------------------------------------------------
# the text's table read back by the columns of its header: a time, a
# duration, a path are what their JSON values print as
TABLE='
def table(lines, rows, where):
    head = lines[0]
    starts = [m.start() for m in re.finditer(r"\S+", head)]
    names = head.split()
    cells = [[l[a:b].rstrip() if b else l[a:] for a, b in zip(starts, starts[1:] + [None])]
             for l in lines[1:1 + len(rows)]]
    eq(f"{where}: rows", len(lines) - 1 >= len(rows), True)
    for r, (c, j) in enumerate(zip(cells, rows)):
        want, keys = [], []
        for n in names:
            if n in ("ts", "last_ts", "started", "ended", "sent"):
                k = n[:-3] + "_ns" if n.endswith("_ts") else n + "_ns"
                want.append("-" if j[k] is None else fmt_time(j[k]))
            elif n in ("rtt", "latency"):
                k = n + "_ns"
                want.append("-" if j[k] is None else fmt_dur(j[k]))
            elif n in ("path", "expected_next"):
                k = n
                want.append((" > " if n == "path" else "|").join(j[k]) or
                            ("-" if c[names.index(n)] == "-" else ""))
            else:
                k = n
                want.append("-" if j[k] is None else str(j[k]))
            keys.append(k)
        eq(f"{where}: keys", keys, list(j))
        eq(f"{where}: row {r + 1}", c, want)
'
H="--db $tmp/h.db"
for what in sessions "flows limit 7" "traces limit 9" probes events control; do
	both $H -c "history $what"
	same "history $what: the table's header and cells" "$TABLE"'
rows = J[list(J)[0]]
if rows:
    table(T, rows, "history")
else:
    eq("empty", [T, rows], [[T[0]], []])
    eq("says so", T[0].startswith("no "), True)'
done
hs $H --json -c "history traces limit 1"
id=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["traces"][0]["trace"])' "$tmp/out")
both $H -c "history show $id"
same "history show: the trace's row and its hops" "$TABLE"'
blank = T.index("")
table(T[:blank], [J["trace"]], "trace")
table(T[blank + 1:], J["hops"], "hops")
eq("hops", len(T) - blank - 2, len(J["hops"]))'
# the retention in force follows the sessions (and what its last pass
# removed, when it removed any: tests/e2e/retention.sh)
docs=last
both $H -c "set retention 1000w; history prune; history"
same "history: the retention in force" "$TABLE"'
table(T[1:], J["sessions"], "sessions")
m = re.fullmatch(r"retention: (\S+) \((.*) in use\)(?:; at (.*) removed (\d+) traces, (\d+) flows, "
                 r"(\d+) probe packets, (\d+) other rows, (\d+) sessions)?", T[-1])
r = J.get("retention", {})
p = r.get("last_pass")
eq("age", m and m[1], "1000w" if r.get("age_ns") == 1000 * 7 * 86400 * 10**9 else r.get("age_ns"))
eq("in use", bool(m) and r.get("used_bytes", 0) > 0, True)
eq("last pass", m and m[3] and [m[3], *map(int, m[4:9])],
   p and [fmt_time(p["at_ns"]), *(p[k] for k in ("traces", "flows", "probes", "other", "sessions"))])'
docs=one

# --- topo --------------------------------------------------------------------
# every table of a topology file, with a link speed and an analyzer
cat >"$tmp/t.topo" <<'TOPO'
switch s1 role spine mirror 10.255.0.1 loopback 10.254.0.1
switch l1 role leaf mirror 10.255.0.2 loopback 10.254.0.2
link s1 eth1 l1 eth9 speed 10G
link s1 eth2 l1 eth8
host h1 addr 10.1.1.11 leaf l1
subnet l1 10.1.1.0/24
analyzer 10.255.0.100 iface hs-an0
TOPO
for f in "$tmp/t.topo" "$TOPO"; do
	both --topo "$f" -c "topo show"
	same "topo show $(basename "$f"): each table's rows" '
eq("file", T[0], "topology %r" % J["file"])
tables, cur = {}, None
for l in T[1:]:
    if not l:
        cur = None
    elif cur is None and not l.startswith("analyzer "):
        cur = tables.setdefault(l.split()[0], [])
    elif cur is not None:
        cur.append(l.split())
def speed(v):
    return "-" if v is None else "%.1fG" % (v / 1e9) if v >= 1e9 else str(v)
eq("switches", tables.get("switch"), [[s["name"], s["role"], s["mirror"], s["loopback"]]
                                     for s in J["switches"]])
eq("links", tables.get("link", []), [[l["a"], l["a_port"], l["b"], l["b_port"], speed(l["speed"])]
                                     for l in J["links"]])
eq("hosts", tables.get("host", []), [[h["name"], h["addr"], h["leaf"]] for h in J["hosts"]])
eq("subnets", tables.get("subnet", []), [[s["prefix"], s["leaf"]] for s in J["subnets"]])
an = J.get("analyzer")
eq("analyzer", [l for l in T if l.startswith("analyzer ")],
   ["analyzer " + an["addr"] + (" iface " + an["iface"] if "iface" in an else "")] if an else [])'
done

finish
