#!/bin/sh
# history.sh - the capture pipeline writes the history it should, and the
# history survives bad company: read-only sql, foreign and locked files,
# damaged captures.
. "$(dirname "$0")/lib.sh"

PCAP=$top_srcdir/share/sample/sample.pcap
TOPO=$top_srcdir/share/sample/sample.topo
for f in "$PCAP" "$TOPO"; do
	[ -e "$f" ] || hard "missing $f"
done

lockpid=
cleanup='[ -z "$lockpid" ] || kill "$lockpid" 2>/dev/null;'
not_crashed() { [ "$st" -lt 124 ]; }
q() { python3 -c 'import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
print(db.execute(sys.argv[2]).fetchone()[0])' "$@"; }

# --- a file capture with the default policy ------------------------------
db=$tmp/h.db
hs --db "$db" -r "$PCAP" --topo "$TOPO" -c 'capture status; traces; flows'
check "sample capture runs (status $st)" [ "$st" -eq 0 ]
check "capture status reports packets" has 'packets' "$tmp/out"
check "capture status says ended" has 'ended' "$tmp/out"
check "traces lists a dropped trace" has 'dropped' "$tmp/out"

check "one session, ended, with packets and traces" \
	[ "$(q "$db" 'select count(*) from sessions where ended is not null and packets > 0 and traces > 0')" = 1 ]
check "the session names its source" \
	[ "$(q "$db" "select count(*) from sessions where source like '%sample.pcap'")" = 1 ]
nflows=$(q "$db" 'select count(*) from flows')
check "flows are stored ($nflows)" [ "$nflows" -gt 0 ]
check "flows carry packet counts" \
	[ "$(q "$db" 'select count(*) from flows where packets = 0')" = 0 ]
ndrop=$(q "$db" "select count(*) from traces where outcome = 'dropped'")
nloop=$(q "$db" "select count(*) from traces where outcome = 'looped'")
check "dropped traces are stored ($ndrop)" [ "$ndrop" -gt 0 ]
check "looped traces are stored ($nloop)" [ "$nloop" -gt 0 ]
check "every stored trace has its hops" \
	[ "$(q "$db" 'select count(*) from traces t where nhops = 0 or nhops != (select count(*) from hops h where h.trace = t.id)')" = 0 ]
check "dropped traces name the switches expected next" \
	[ "$(q "$db" "select count(*) from traces where outcome = 'dropped' and coalesce(expected_next, '') = ''")" = 0 ]
# the default policy keeps anomalies, probes and filter matches only
check "default policy keeps no plain delivered traces" \
	[ "$(q "$db" "select count(*) from traces where outcome = 'delivered' and flags & 3 = 0")" = 0 ]
ndefault=$(q "$db" 'select count(*) from traces')

# --- a flow table that fills: what it could not keep is counted and shown ----
HOPSCOPE_TEST_FLOWS_MAX=5 hs --db "$tmp/small.db" -r "$PCAP" --json -c 'capture status; flows limit 100'
check "full flow table: status counts the traces of flows not kept" python3 -c 'import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
s = [o for o in L if "traces_closed" in o][0]
f = [o for o in L if "flows" in o and isinstance(o["flows"], list)][0]["flows"]
sys.exit(not (len(f) == 5 and s["flows"] == 5 and s["flows_max"] == 5 and
              s["traces_without_flow"] > 0 and
              sum(o["packets"] for o in f) + s["traces_without_flow"] == s["traces_closed"]))' "$tmp/out"
HOPSCOPE_TEST_FLOWS_MAX=5 hs --db "$tmp/small.db" -r "$PCAP" -c 'capture status; flows'
check "full flow table: status says so" \
	has "^flows          5 (table full at 5: [0-9]* traces of other flows not counted)" "$tmp/out"
check "full flow table: flows says so" \
	has "^(table full at 5 flows: [0-9]* traces of other flows not counted)" "$tmp/out"

# --- a mirror-source table that fills: the copies of sources beyond counted --
# One worker: each worker's tracer keeps a table of its own, filled by the
# sources of the frames it reads, so which two are kept is the file's
# first two only when one reads every frame
hs --json decode "$PCAP"
mv "$tmp/out" "$tmp/frames.json"
HOPSCOPE_TEST_SOURCES_MAX=2 hs --db "$tmp/src.db" --workers 1 -r "$PCAP" --json -c 'capture status'
check "full source table: status counts the copies of the sources not kept" python3 -c 'import json, sys
s = json.loads(open(sys.argv[1]).readline())
keys = [(f["mirror_src"], f.get("session", 0)) for f in map(json.loads, open(sys.argv[2]))]
seen = []
for k in keys:
    if k not in seen:
        seen.append(k)
beyond = sum(1 for k in keys if k not in seen[:2])
print("# sources %d, copies beyond the first two %d; status %r" % (len(seen), beyond, s))
sys.exit(not (len(seen) > 2 and beyond > 0 and s["sources"] == 2 and s["sources_max"] == 2 and
              s["copies_without_source"] == beyond))' "$tmp/out" "$tmp/frames.json"
HOPSCOPE_TEST_SOURCES_MAX=2 hs --db "$tmp/src.db" --workers 1 -r "$PCAP" --again -c 'capture status'
check "full source table: status says so" has \
	"^sources        2 (table full at 2: [0-9]* copies from other mirror sources not told apart)" \
	"$tmp/out"
hs --db "$tmp/src.db" -r "$PCAP" --again -c 'capture status'
check "a source table with room: every source kept, nothing said" \
	sh -c "grep -q '^sources        [0-9]*\$' '$tmp/out'"
# a copy from a source not kept names no switch: it makes no trace looped
# (nor delivered or dropped) that is not
looped() { # looped DB [ENV]: the looped traces of the sample, by packet
	env $2 "$HS" --db "$tmp/$1" -r "$PCAP" --topo "$TOPO" --json \
		-c 'traces outcome looped limit 100000' </dev/null >"$tmp/$1.json" 2>"$tmp/err"
}
looped room.db "" && looped full.db HOPSCOPE_TEST_SOURCES_MAX=2
check "full source table: no trace called looped that is not" python3 -c 'import json, sys
def pkts(f):
    return {(t["src"], t["dst"], t.get("sport"), t.get("dport"), t["ip_id"], t["ts_ns"])
            for t in json.load(open(f))["traces"]}
room, full = pkts(sys.argv[1]), pkts(sys.argv[2])
print("# looped: %d with room, %d with the table full, %d not looped" % (len(room), len(full), len(full - room)))
sys.exit(not (room and full and full <= room))' "$tmp/room.db.json" "$tmp/full.db.json"

hs --db "$db" --json -c 'history sessions; history traces limit 1'
check "history reads the session back" has '"source"' "$tmp/out"
check "history traces has a path" has '"path"' "$tmp/out"

# --- set history all ------------------------------------------------------
db2=$tmp/all.db
hs --db "$db2" --topo "$TOPO" --json -c "set history all; capture start $PCAP; capture status"
check "capture from a runbook line waits for the file (status $st)" [ "$st" -eq 0 ]
closed=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if "traces_closed" in o:
        print(o["traces_closed"])' "$tmp/out" | tail -n 1)
nall=$(q "$db2" 'select count(*) from traces')
check "history all stores every closed trace ($nall of ${closed:-?})" [ "$nall" = "${closed:-x}" ]
check "history all stores more than the default ($nall > $ndefault)" [ "$nall" -gt "$ndefault" ]
# each listed trace's path is read from the trace's own row, not through
# the hops view: the listing is the same in a copy without the view
hs --db "$db2" -c 'history traces limit 100'
cp "$tmp/out" "$tmp/listed"
python3 -c 'import sqlite3, sys
src, dst = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
src.backup(dst)
dst.execute("drop view hops")
dst.commit()' "$db2" "$tmp/noview.db"
hs --db "$tmp/noview.db" -c 'history traces limit 100'
check "history traces: each path from the trace's own row (the same without the hops view)" \
	eval '[ "$st" -eq 0 ] && has "leaf[0-9] > spine[0-9] > " "$tmp/out" && cmp -s "$tmp/listed" "$tmp/out"'

# --- sql is read-only -------------------------------------------------------
before=$(cksum <"$db")
hs --db "$db" -c 'sql delete from flows'
check "sql delete is refused (status $st)" failed_cleanly
check "sql delete says why" [ -s "$tmp/err" ]
check "flows are still there" [ "$(q "$db" 'select count(*) from flows')" = "$nflows" ]
cd "$tmp" || exit 99
hs --db "$db" -c "sql \"attach 'x' as y\""
cd - >/dev/null || exit 99
check "sql attach is refused (status $st)" failed_cleanly
check "attach created no file" [ ! -e "$tmp/x" ]
check "the history file is unchanged" [ "$(cksum <"$db")" = "$before" ]
hs --db "$db" -c 'sql select count(*) as n from sessions'
check "sql select works (status $st)" [ "$st" -eq 0 ]
check "sql prints the column header" has '^n$' "$tmp/out"
# a BLOB is printed as an SQL literal (under ASan this also checks the buffer)
hs --db "$db" -c "sql \"select x'00ff' as b, zeroblob(0) as e\""
check "sql prints a blob (status $st)" [ "$st" -eq 0 ]
check "sql prints the blob as x'..'" has "^x'00ff' | x''\$" "$tmp/out"
hs --db "$db" --json -c "sql \"select x'0a' as b\""
check "sql --json prints a blob as a string" has "\"b\":\"x'0a'\"" "$tmp/out"

# --- --db: a read makes no history; what is no file refused; each error once --
hs --db "$tmp/typo.db" -c "sql 'select 1'"
check "mistyped --db: sql fails (status $st)" failed_cleanly
check "mistyped --db: sql says there is no history" \
	has "^-c:1: error: no history at '$tmp/typo.db' (a capture makes one" "$tmp/err"
for v in 'history sessions' 'history traces' 'snapshot list'; do
	hs --db "$tmp/typo.db" $v
	check "mistyped --db: '$v' lists nothing (status $st)" \
		sh -c "[ $st -eq 0 ] && grep -q \"^no history at '$tmp/typo.db'\" '$tmp/out'"
done
hs --db "$tmp/typo.db" history show 1
check "mistyped --db: 'history show 1' fails (status $st)" failed_cleanly
hs --db "$tmp/typo.db" snapshot show 1
check "mistyped --db: 'snapshot show 1' fails (status $st)" failed_cleanly
check "mistyped --db: no history was made" sh -c "! ls '$tmp' | grep -q typo"
# an empty file is no history either: a read writes nothing into it or beside it
: >"$tmp/empty.db"
hs --db "$tmp/empty.db" -c 'history sessions'
check "empty --db: history lists nothing (status $st)" \
	sh -c "[ $st -eq 0 ] && grep -q \"^no history at '$tmp/empty.db'\" '$tmp/out'"
hs --db "$tmp/empty.db" -c "sql 'select 1'"
check "empty --db: sql fails, there is no history (status $st)" \
	sh -c "[ $st -eq 1 ] && grep -q \"error: no history at '$tmp/empty.db'\" '$tmp/err'"
check "empty --db: still empty, nothing beside it" \
	sh -c "[ ! -s '$tmp/empty.db' ] && ! ls '$tmp' | grep -q 'empty.db-'"
# a device, a FIFO, a directory: refused before SQLite opens it (it would
# make NAME-journal beside a device, and wait on a FIFO for a writer)
mknod "$tmp/null" c 1 3
mkfifo "$tmp/fifo"
mkdir "$tmp/dir.db"
for k in 'null:a character device' 'fifo:a FIFO' 'dir.db:a directory'; do
	f=$tmp/${k%%:*}
	timeout 10 "$HS" --db "$f" -c 'history sessions' >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
	check "--db ${k%%:*}: refused (status $st)" failed_cleanly
	check "--db ${k%%:*}: says it is ${k#*:}, once" \
		[ "$(grep -c "'$f' is ${k#*:}, not a history" "$tmp/err")" -eq 1 ]
done
check "--db a device: nothing was made beside it" sh -c "! ls '$tmp' | grep -q -- -journal"
hs --db "$tmp/nodir/x.db" -r "$PCAP" -c 'capture status'
check "--db in a missing directory: the capture runs" has '^packets  *6741' "$tmp/out"
check "--db in a missing directory: the run fails (status $st)" [ "$st" -eq 1 ]
check "--db in a missing directory: the error is printed once" \
	[ "$(grep -c "nodir/x.db" "$tmp/err")" -eq 1 ]
check "--db in a missing directory: with the system's reason" \
	has "nodir/x.db': unable to open database file (No such file or directory)" "$tmp/err"

# no --db: $HOPSCOPE_DB, else ./hopscope.db (the tests keep theirs in $tmp)
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && HOPSCOPE_DB=$tmp/env.db timeout 60 "$HS" -r "$PCAP" -c 'help quit' \
	>"$tmp/out" 2>"$tmp/err" </dev/null)
check "HOPSCOPE_DB names the history (status $?)" \
	[ "$(q "$tmp/env.db" 'select count(*) from sessions')" = 1 ]
check "HOPSCOPE_DB: nothing made in the current directory" [ -z "$(ls "$tmp/cwd")" ]
(cd "$tmp/cwd" && HOPSCOPE_DB=$tmp/env.db timeout 60 "$HS" --db "$tmp/cwd/given.db" \
	-r "$PCAP" -c 'help quit' >"$tmp/out" 2>"$tmp/err" </dev/null)
check "--db before HOPSCOPE_DB" sh -c "[ -s '$tmp/cwd/given.db' ] && \
	[ \"\$(ls '$tmp/cwd')\" = given.db ]"
(cd "$tmp/cwd" && env -u HOPSCOPE_DB timeout 60 "$HS" -r "$PCAP" -c 'help quit' \
	>"$tmp/out" 2>"$tmp/err" </dev/null)
check "neither: ./hopscope.db" [ -s "$tmp/cwd/hopscope.db" ]
check "HOPSCOPE_DB: one session in it, the first" \
	[ "$(q "$tmp/env.db" 'select count(*) from sessions')" = 1 ]
# and for the daemon
cat >"$tmp/serve.conf" <<EOF
capture start $PCAP
listen unix $tmp/serve.sock mode 0600
EOF
(cd "$tmp/cwd" && HOPSCOPE_DB=$tmp/serve.db exec timeout 60 "$HS" serve --config "$tmp/serve.conf" \
	>"$tmp/serve.out" 2>"$tmp/serve.log" </dev/null) &
spid=$!
i=0
while ! grep -q '^info: ready' "$tmp/serve.log" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill "$spid" 2>/dev/null
wait "$spid"
check "serve: HOPSCOPE_DB names the history" \
	[ "$(q "$tmp/serve.db" 'select count(*) from sessions')" = 1 ]

# --- a file that is not a hopscope history ----------------------------------
printf 'not a database, just words\n' >"$tmp/notes.txt"
cp "$tmp/notes.txt" "$tmp/notes.orig"
hs --db "$tmp/notes.txt" -c 'history sessions'
check "foreign file: history fails (status $st)" failed_cleanly
check "foreign file: the error names it" has "notes.txt" "$tmp/err"
hs --db "$tmp/notes.txt" -r "$PCAP" --topo "$TOPO" -c 'capture status'
check "foreign file: capture still runs" has 'packets' "$tmp/out"
check "foreign file: capture did not crash (status $st)" not_crashed
check "foreign file: the error is printed" has "notes.txt" "$tmp/err"
check "foreign file: unchanged" cmp -s "$tmp/notes.txt" "$tmp/notes.orig"

# --- a locked history -------------------------------------------------------
python3 - "$db" "$tmp/locked" <<'EOF' &
import sqlite3, sys, time, os
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
time.sleep(30)
EOF
lockpid=$!
i=0
while [ ! -e "$tmp/locked" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
start=$(date +%s)
hs --db "$db" -c 'history sessions'
took=$(( $(date +%s) - start ))
check "locked: history fails (status $st)" failed_cleanly
check "locked: the error says locked" has "locked" "$tmp/err"
check "locked: no hang (${took}s)" [ "$took" -lt 10 ]
hs --db "$db" -r "$PCAP" --topo "$TOPO" -c 'capture status'
check "locked: capture still runs" has 'packets' "$tmp/out"
check "locked: capture did not crash (status $st)" not_crashed
kill "$lockpid" 2>/dev/null
wait "$lockpid" 2>/dev/null
lockpid=
check "locked: what was stored is still there" \
	[ "$(q "$db" 'select count(*) from flows')" = "$nflows" ]

# --- a damaged capture ------------------------------------------------------
# cut in the middle of a frame about two thirds in (pcap or pcapng)
python3 - "$PCAP" "$tmp/cut.pcap" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
magic = data[:4]
if magic == b"\x0a\x0d\x0d\x0a":	# pcapng: blocks carry their length
    endian = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
    off, hdr = 0, 0
else:				# pcap: 24-byte file header, 16-byte record headers
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, hdr = 24, 16
cut = None
while off + 16 <= len(data):
    if hdr:
        length = hdr + struct.unpack(endian + "I", data[off + 8:off + 12])[0]
    else:
        length = struct.unpack(endian + "I", data[off + 4:off + 8])[0]
    if off >= len(data) * 2 // 3 and length > hdr + 8:
        cut = off + hdr + 8 if hdr else off + length // 2
        break
    off += length
open(sys.argv[2], "wb").write(data[:cut if cut else len(data) * 2 // 3])
EOF
hs --db "$tmp/t.db" --topo "$TOPO" -c "capture start $tmp/cut.pcap; capture status"
check "truncated pcap: the capture fails (status $st)" failed_cleanly
check "truncated pcap: the error names the file" has "cut.pcap': truncated" "$tmp/err"
hs --db "$tmp/t2.db" --topo "$TOPO" --keep-going -c "capture start $tmp/cut.pcap; capture status"
check "truncated pcap: the frames before the damage count" has 'packets' "$tmp/out"
check "truncated pcap: the session is closed" \
	[ "$(q "$tmp/t2.db" 'select count(*) from sessions where ended is not null and packets > 0')" = 1 ]
hs --db "$tmp/t3.db" -c "decode $tmp/cut.pcap"
check "truncated pcap: decode fails cleanly (status $st)" failed_cleanly
check "truncated pcap: decode printed the frames before" [ -s "$tmp/out" ]
check "decode never touches the history" [ ! -e "$tmp/t3.db" ]

# --- one trace, one number ----------------------------------------------------
# the sample read twice into one history: in the second console, a dropped
# trace's number names the same packet for 'traces show N', 'history show N'
# and 'history show SESSION:N', and 'traces' and the history show it as S:N
hs --db "$tmp/id.db" -r "$PCAP" --topo "$TOPO" -c 'help quit'
hs --db "$tmp/id.db" -r "$PCAP" --again --topo "$TOPO" --json -c 'traces outcome dropped limit 1'
ref=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["traces"][0]["trace"])' "$tmp/out")
no=${ref#*:}
check "traces --json names a trace SESSION:N ($ref)" [ "$ref" = "2:$no" ]
hs --db "$tmp/id.db" -r "$PCAP" --again --topo "$TOPO" --json \
	-c "traces show $no; history show $no; history show $ref; traces show 3:$no"
python3 - "$tmp/out" "$ref" <<'PY' && ok "traces show N, history show N and S:N: the same packet ($ref)" || not_ok "traces show N, history show N and S:N: the same packet"
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
mem = [o for o in L if "id" in o and "hops" in o]
rows = [o["trace"] for o in L if isinstance(o.get("trace"), dict)]
ref = sys.argv[2]
want = {"trace": "3:" + ref.split(":")[1]}
key = lambda o: (o["src"], o["sport"], o["dst"], o["dport"], o["ip_id"])
ok = (len(mem) == 2 and len(rows) == 2 and mem[0]["trace"] == want["trace"] and
      rows[0]["trace"] == want["trace"] and rows[1]["trace"] == ref and
      key(mem[0]) == key(rows[0]) == key(rows[1]) == key(mem[1]))
if not ok:
    print("# %s" % L[:4])
sys.exit(0 if ok else 1)
PY
hs --db "$tmp/id.db" -r "$PCAP" --again --topo "$TOPO" -c "traces show 1:$no"
check "traces show of another session's trace fails, pointing to history show" \
	has "'history show 1:$no' reads the history" "$tmp/err"

# --- a hop's latency, from memory and from the history alike --------------
# (the sample's copies carry switch timestamps, and reach the analyzer in
# another order than they left their switches: by the capture's clock a
# hop can seem to come before the one it followed)
hs --db "$tmp/lat.db" --topo "$TOPO" --json \
	-c "set history all; capture start $PCAP; traces outcome delivered limit 20"
python3 - "$tmp/out" >"$tmp/lat.ids" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        print(" ".join(t["trace"] for t in json.loads(l).get("traces", [])))
PY
cmds=$(for r in $(cat "$tmp/lat.ids"); do printf 'traces show %s; history show %s; ' "$r" "$r"; done)
hs --db "$tmp/lat.db" --topo "$TOPO" --json -c "capture start $PCAP; $cmds"
python3 - "$tmp/out" <<'PY' && ok "history show gives each hop the latency traces show gives it" || not_ok "history show gives each hop the latency traces show gives it"
import json, sys
L = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
mem = [[h.get("latency_ns") for h in o["hops"]] for o in L if "id" in o and "hops" in o]
hist = [[h.get("latency_ns") for h in o["hops"]] for o in L
        if isinstance(o.get("trace"), dict) and "hops" in o]
ok = len(mem) == 20 and mem == hist
if not ok:
    print("# %d in memory, %d stored; first: %s vs %s" % (len(mem), len(hist), mem[:1], hist[:1]))
sys.exit(0 if ok else 1)
PY

# --- the analyses over a history that kept a part of the traces ---------
# the default keeps the dropped, looped, probe, filter-matched and partial
# traces: a link's crossings are not all there, so drops claims no loss,
# and each analysis says why; one that kept every trace gives the
# capture's own figures
hs --db "$tmp/part.db" -r "$PCAP" --topo "$TOPO" --json -c 'drops'
cp "$tmp/out" "$tmp/own.json"
hs --db "$tmp/part.db" --topo "$TOPO" --json -c 'history load; drops'
check "drops over a history of the default: no loss claimed, a warning why (status $st)" \
	eval '[ "$st" -eq 0 ] && tail -n 1 "$tmp/out" | python3 -c "import json, sys
L = json.load(sys.stdin)[\"links\"]
sys.exit(0 if L and all(l[\"loss\"] is None for l in L) else 1)" &&
	has "warning: drops: the history kept [0-9]* of the 589 traces its sessions traced" "$tmp/err"'
hs --db "$tmp/part.db" --topo "$TOPO" -c 'latency; ecmp leaf1; blame'
check "latency, ecmp and blame read from it say so too (status $st)" \
	eval '[ "$st" -eq 0 ] && [ "$(grep -c "warning: [a-z]*: the history kept [0-9]* of the 589" "$tmp/err")" = 3 ]'
hs --db "$tmp/whole.db" --topo "$TOPO" -c "set history all; capture start $PCAP"
hs --db "$tmp/whole.db" --topo "$TOPO" --json -c 'history load; drops'
check "drops over a history that kept every trace: the capture's own links and loss, no warning" \
	eval 'tail -n 1 "$tmp/out" | cmp -s - "$tmp/own.json" && [ ! -s "$tmp/err" ]'

# a session with no end: running while its capture is, ended after
if [ "$(id -u)" -eq 0 ]; then
	hs --db "$tmp/live.db" -c 'capture start lo; history sessions; capture stop; history sessions --json'
	check "history sessions: the running capture's session is running, then ended" \
		eval 'grep -Eq "^1 +[0-9-]+ [0-9:.]+ +- +lo .* running$" "$tmp/out" &&
			grep -q "\"ended_ns\":[0-9]*,.*\"state\":\"ended\"" "$tmp/out"'
	# a flow written again as it changes (every 2 s) is one row: the
	# rows written are the rows the history has, however the flushes fell
	port=$((20000 + $$ % 20000))
	lo_send "$port" 0.5 35 0.1 r	# 3.5 s of 8: a flush of the flows falls within
	hs --db "$tmp/rows.db" --json -c "set history all; capture start lo; capture status; sleep 8s; capture stop; capture status"
	wait "$sender"
	written=$(sed -n 's/.*"history_writes":\([0-9]*\).*/\1/p' "$tmp/out" | tail -n 1)
	rows=$(q "$tmp/rows.db" 'select (select count(*) from traces) + (select count(*) from flows)')
	check "a live capture: the rows written (${written:-?}) are the rows in the history ($rows)" \
		eval '[ "$st" -eq 0 ] && [ "${rows:-0}" -gt 30 ] && [ "${written:-}" = "$rows" ]'
else
	echo "# SKIP running session: capturing on 'lo' needs root"
fi

finish
