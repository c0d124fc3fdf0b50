#!/bin/sh
# pg.sh - the history on PostgreSQL (--db postgresql://...), on a server of
# the test's own (share/lab/hs-pgserver: a data directory and a Unix socket
# in the test's directory, no TCP port): the bundled sample gives the same
# answers as with SQLite; a server that is down, a wrong password, a
# missing database, a newer schema and another program's database are each
# one clear error, with no other history written instead; a server lost
# mid-capture: the capture goes on, the rows wait and are written when it
# returns.
. "$(dirname "$0")/lib.sh"

PCAP=$top_srcdir/share/sample/sample.pcap
TOPO=$top_srcdir/share/sample/sample.topo
pg_start
sock=$tmp/pg
# the same commands on both histories: their outputs must be the same
lite=$tmp/h.db
same() { # same DESCRIPTION HOPSCOPE-ARGS...
	d=$1; shift
	hs --db "$lite" "$@"; cp "$tmp/out" "$tmp/lite.out"; lst=$st
	hs --db "$url" "$@"; cp "$tmp/out" "$tmp/pg.out"
	check "$d" eval '[ "$lst" -eq 0 ] && [ "$st" -eq 0 ] && [ -s "$tmp/pg.out" ] &&
		cmp -s "$tmp/lite.out" "$tmp/pg.out"'
}

# --- the bundled sample, on both --------------------------------------------
# (every trace kept on both: on PostgreSQL the default keeps them all)
same "the sample's traces and drops, text and JSON" --topo "$TOPO" \
	-c "set history all; capture start $PCAP; traces; drops; traces --json; drops --json"
check "the traces are those of the sample" has '10.1.1.11:54275 > 10.1.4.12:5001' "$tmp/pg.out"
check "a stored trace on PostgreSQL: the history has rows" \
	[ "$(psql -c 'select count(*) from traces')" -gt 0 ]
for v in 'history traces' 'history flows' 'history control' 'history show 1:588'; do
	same "$v" -c "$v"
	same "$v --json" -c "$v --json"
done
# each listed trace's path is read from the trace's own row, not through
# the hops view: the listing is the same without the view
hs --db "$url" -c 'history traces'
cp "$tmp/out" "$tmp/listed"
psql -c 'alter view hops rename to hops_kept'
hs --db "$url" -c 'history traces'
check "history traces: each path from the trace's own row (the same without the hops view)" \
	eval '[ "$st" -eq 0 ] && has "leaf[0-9] > spine[0-9] > " "$tmp/out" && cmp -s "$tmp/listed" "$tmp/out"'
psql -c 'alter view hops_kept rename to hops'
q="select outcome, count(*) as n, sum(nhops) as hops, avg(len) as len from traces group by outcome order by outcome"
same "sql: counts by outcome" -c "sql '$q'"
same "sql: counts by outcome, JSON" -c "sql '$q' --json"
q="select count(*), max(len) + 1, t.src, count(*) as n, sum(nhops) hops,
	case when proto = 6 then 1 else 0 end, coalesce(sport, 0) + 0 from traces t
	group by t.src, proto, sport order by t.src, proto, sport"
same "sql: a column without a name of its own is named by its text" -c "sql '$q' --json"
check "sql: count(*) is named count(*) on PostgreSQL too" has '"count(\*)","max(len) + 1",' "$tmp/pg.out"
for t in 'traces order by id' 'hops order by trace, idx' 'mirror_sources order by id' \
	'flows order by session, src, sport, dst, dport'; do
	same "sql: every row of $t, JSON" -c "sql 'select * from $t' --json"
done
same "the same file read again adds nothing" -r "$PCAP" --topo "$TOPO" \
	-c "sql 'select count(*) as sessions from sessions'"

# a stored trace is listed at the time 'traces' gives it (the sample's
# 1:589: its first hop's switch timestamp) and in its order, as on SQLite
psql -c 'create database times'
hs --db "postgresql://hopscope@/times?host=$sock" --topo "$TOPO" \
	-c "set history all; capture start $PCAP" -c 'history traces limit 3; history show 1:589'
check "history traces: each trace at its time, newest first by it" eval '[ "$st" -eq 0 ] &&
	has "^1:589  *2026-11-22 08:36:06\.550473  " "$tmp/out" &&
	[ "$(awk "/^1:[0-9]+ .* tcp /{printf \"%s \", \$1}" "$tmp/out")" = "1:588 1:589 1:587 1:589 " ]'

# a session without an end is running while an analyzer's heartbeat names
# it, else it was never ended: the same state on both
lite_sql() { python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript(sys.argv[2])
db.commit()' "$lite" "$1"; psql -c "$1"; }
states() { # states DESCRIPTION WANT: session 1's state in each history
	hs --db "$lite" -c 'history sessions --json'; cp "$tmp/out" "$tmp/lite.out"
	hs --db "$url" -c 'history sessions --json'
	check "$1" python3 -c 'import json, sys
st = [{r["id"]: r for r in json.load(open(f))["sessions"]}[1]["state"] for f in sys.argv[1:3]]
sys.exit(st != [sys.argv[3]] * 2)' "$tmp/lite.out" "$tmp/out" "$2"
}
lite_sql "create table ends as select id, ended from sessions;
	update sessions set ended = null where id = 1;
	insert into analyzers(name, session, seen, packets, kernel_drops, rate, queued, lost)
	values ('beating', 1, $(date +%s%N), 0, 0, 0, 0, 0)"
states "history sessions: a session an analyzer is heard running, running on both" running
lite_sql "update analyzers set seen = seen - 60000000000 where name = 'beating'"
states "history sessions: one whose analyzer went quiet, unended on both" unended
lite_sql "delete from analyzers where name = 'beating'"
states "history sessions: one no analyzer names, unended on both" unended
lite_sql "update sessions set ended = (select ended from ends e where e.id = sessions.id);
	drop table ends"
host=$(hostname | cut -d. -f1)
check "an analyzer's rows name it, the host's name by default ($host)" \
	[ "$(psql -c "select count(*) from sessions where analyzer = '$host'")" = 1 ]
hs --db "$url" --topo "$TOPO" -c "set analyzer pgtest; capture start $PCAP again; sleep 1"
for t in sessions traces hops; do
	check "set analyzer: the rows of $t name it" \
		[ "$(psql -c "select count(*) > 0 from $t where analyzer = 'pgtest'")" = t ]
done
check "set analyzer: the flows' sessions name it" \
	[ "$(psql -c "select count(*) > 0 from flows f join sessions s on s.id = f.session
		where s.analyzer = 'pgtest'")" = t ]
check "its heartbeat tells of its newest stored trace and the history it keeps (every trace, by default on PostgreSQL)" \
	[ "$(psql -c "select a.newest = max(t.first_ts), a.history from analyzers a
		join traces t on t.analyzer = a.name where a.name = 'pgtest'
		group by a.newest, a.history")" = "t|all" ]

# Analyzers number their probes each on its own: two that gave a probe the
# same number each keep their own rows, on both engines, and the listing
# shows each once, under its analyzer. The number is forced
# (HOPSCOPE_TEST_PROBE_ID, for tests only: clocks and process ids seldom
# meet); the probes go to this host's loopback, with no capture to see
# them, so every packet is lost.
for db in "$lite" "$url"; do
	for a in pa1:2 pa2:3; do
		probe="probe udp 127.0.0.1:5000 > 127.0.0.1:9 count ${a#*:} interval 1ms timeout 50ms"
		HOPSCOPE_TEST_PROBE_ID=4242 hs --db "$db" -c "set analyzer ${a%:*}; $probe"
	done
done
q="select analyzer, probe_id, seq, spec, outcome from probes where probe_id = 4242
	order by analyzer, seq"
same "one probe number, two analyzers: each keeps its rows" -c "sql '$q'"
check "one probe number, two analyzers: 5 rows" [ "$(grep -c '^pa[12] ' "$tmp/pg.out")" = 5 ]
check "one probe number, two analyzers: 2 and 3 packets" \
	[ "$(psql -c "select string_agg(analyzer || ':' || n, ',' order by analyzer) from
		(select analyzer, count(*) as n from probes where probe_id = 4242
		 group by analyzer) p")" = pa1:2,pa2:3 ]
hs --db "$url" -c 'history probes --json'
check "one probe number, two analyzers: history probes shows each once" python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["probes"] if r["probe_id"] == 4242]
assert sorted((r["analyzer"], r["packets"]) for r in rows) == [("pa1", 2), ("pa2", 3)], rows
' "$tmp/out"
psql -c 'delete from probes where probe_id = 4242'	# schema 11 below had no room for both
check "set analyzer: as many traces as the first session" \
	[ "$(psql -c "select count(*) from traces where analyzer = 'pgtest'")" = \
	  "$(psql -c "select count(*) from traces where analyzer = '$host'")" ]

# a protocol with no name in the history: its number, as text on both
# (a capture of 2023-11-14, UTC, of one SCTP packet seen at two switches)
python3 - "$tmp/sctp.pcap" <<'PY'
# one SCTP packet (protocol 132) seen at two switches, each copy in GRE
import struct, sys
def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
def ip(src, dst, proto, ttl, payload):
    h = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(payload), 0x1234, 0, ttl, proto, 0,
                    bytes(src), bytes(dst))
    return h[:10] + struct.pack('!H', csum(h)) + h[12:] + payload
out = [struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)]
for i, sw in enumerate(([192, 0, 2, 11], [192, 0, 2, 12])):
    inner = ip([10, 1, 1, 10], [10, 2, 2, 20], 132, 62 - i, struct.pack('!HHII', 5000, 6000, 1, 0))
    frame = bytes(12) + b'\x08\x00' + ip(sw, [192, 0, 2, 250], 47, 64,
                                          struct.pack('!HH', 0, 0x0800) + inner)
    out.append(struct.pack('<IIII', 1700000000, i * 1000, len(frame), len(frame)) + frame)
open(sys.argv[1], 'wb').write(b''.join(out))
PY
psql -c 'create database proto'
lite=$tmp/proto.db url="postgresql://hopscope@/proto?host=$sock"
same "a protocol without a name" -c "set history all; capture start $tmp/sctp.pcap" \
	-c 'history traces --json; history show 1:1 --json'
lite=$tmp/h.db url=$("$PGS" url "$tmp")
check "a protocol without a name is its number, as text" has '"proto":"132"' "$tmp/pg.out"

# 007's votes on a fabric with a lossy link, kept by each history
"$top_builddir/tests/tools/hs-synth" --flows 400 --seed 7 --drop-link leaf1-spine1:0.1 \
	-w "$tmp/lossy.pcap" -t "$tmp/lossy.topo" 2>"$tmp/synth.err" ||
	hard "hs-synth failed: $(cat "$tmp/synth.err")"
same "blame on a lossy link" -r "$tmp/lossy.pcap" --topo "$tmp/lossy.topo" -c 'blame'
check "blame names the lossy link" has 'spine1 - leaf1' "$tmp/pg.out"
same "the votes kept" -c "sql 'select * from blame order by epoch_start, a, b' --json"
check "the lossy link's votes are kept" has '"a":"spine1","b":"leaf1"' "$tmp/pg.out"

# a file read to its end: the analyzer's last heartbeat counts no row as
# waiting, its last batch written by then
hs --db "$url" --topo "$tmp/lossy.topo" \
	-c "set analyzer hbtest; set history all; capture start $tmp/lossy.pcap again"
hs --db "$url" -c 'capture status --json'
check "a file read: its last heartbeat has no row waiting" eval '[ "$st" -eq 0 ] &&
	grep -q "\"name\":\"hbtest\",[^}]*\"history_waiting\":0," "$tmp/out"'

# a batch of many traces goes half on a second connection, in a
# transaction of its own (the server takes them in on two CPUs): the
# server counts the analyzer's two connections, and the traces stored are
# SQLite's
"$top_builddir/tests/tools/hs-synth" --packets 20000 --seed 5 -w "$tmp/big.pcap" \
	-t "$tmp/big.topo" 2>"$tmp/synth.err" || hard "hs-synth failed: $(cat "$tmp/synth.err")"
psql -c 'create database big'
conns() { psql -c "select sessions from pg_stat_database where datname = 'big'"; }
waitfor() { _i=0; while [ $_i -lt 200 ]; do eval "$1" && return 0; sleep 0.1; _i=$((_i + 1)); done; return 1; }
lite=$tmp/big.db url="postgresql://hopscope@/big?host=$sock"
same "a capture of batches of 8192 traces: the traces stored alike" --topo "$tmp/big.topo" \
	-c "set history all; capture start $tmp/big.pcap" -c "sql 'select count(*) as traces,
	count(distinct trace_no) as numbers, sum(nhops) as hops, sum(length(hop_list)) as text,
	min(trace_no) as first, max(trace_no) as last from traces' --json"
check "a capture of batches of 8192 traces: every one stored" has '"traces":20000,"numbers":20000,' \
	"$tmp/pg.out"
check "a batch of 8192 traces: half of them on a second connection" \
	waitfor '[ "$(conns)" = 2 ]'
check "the traces' ids: taken a block of 4096 at a time, in the order of their numbers" \
	eval '[ "$(psql -d big -c "select increment_by from pg_sequences
		where sequencename = '"'traces_ids'"'")" = 4096 ] &&
	[ "$(psql -d big -c "select count(*) from (select id < lag(id) over (order by trace_no)
		as back from traces) x where back")" = 0 ]'
# the second connection lost between two captures: the half it was to
# send waits, and goes with the next batch
timeout 60 "$HS" --db "$url" --topo "$tmp/big.topo" -c "set history all;
	capture start $tmp/big.pcap again; sleep 2; capture start $tmp/big.pcap again;
	capture status --json" >"$tmp/big.out" 2>"$tmp/big.err" </dev/null &
pid=$!
waitfor '[ "$(psql -d big -c "select count(*) from traces")" = 40000 ]'
psql -c "select pg_terminate_backend(pid) from pg_stat_activity where datname = 'big'
	and application_name = 'hopscope' order by backend_start desc limit 1" >/dev/null
wait $pid
cp "$tmp/big.err" "$tmp/err"
check "the second connection lost: the capture's status says nothing was lost" \
	has '"history_unstored":0,' "$tmp/big.out"
check "the second connection lost: every trace is stored, once" \
	[ "$(psql -d big -c 'select count(*), count(distinct (session, trace_no)) from traces')" = "60000|60000" ]
lite=$tmp/h.db url=$("$PGS" url "$tmp")

# counter snapshots through a stand-in driver (HOPSCOPE_DRIVER) printing two
# of the sample fabric, a second apart: kept, listed, shown and diffed alike
python3 - "$tmp" <<'PY'
import json, sys
T = 1700000000 * 10**9
ports = [(s, p) for s in ("spine1", "spine2") for p in ("leaf1", "leaf2")]
ports += [("leaf1", "spine1"), ("leaf1", "spine2"), ("leaf1", "h1")]
for name, dt, more in (("one", 0, 0), ("two", 10**9, 500000)):
    out = []
    for k, (sw, p) in enumerate(ports):
        tx = 10**6 + (more * 2 if (sw, p) == ("leaf1", "spine1") else more)
        out.append({"switch": sw, "port": p, "read_ns": T + dt + 1000 * k,
                    "rx_packets": tx // 1000, "rx_bytes": tx, "rx_drops": 0,
                    "tx_packets": tx // 1000, "tx_bytes": tx, "tx_drops": 0,
                    "backlog_bytes": 3000 if p == "h1" else None,
                    "backlog_packets": 2 if p == "h1" else None})
    doc = {"snapshot_ns": T + dt, "switches": 3, "ports": out}
    open("%s/%s" % (sys.argv[1], name), "w").write(json.dumps(doc) + "\n")
PY
printf '#!/bin/sh\ncat "$FAKE_SNAP"\n' >"$tmp/driver"
chmod +x "$tmp/driver"
export HOPSCOPE_DRIVER="$tmp/driver"
for snap in one two; do
	FAKE_SNAP=$tmp/$snap
	export FAKE_SNAP
	same "snapshot take ($snap)" --topo "$TOPO" -c 'snapshot take'
done
same "snapshot show" -c 'snapshot show 1; snapshot show 2'
hs --db "$url" -c 'snapshot show 1 --json'
ports=$(python3 -c 'import json, sys
print(" ".join(c["port"] for c in json.load(open(sys.argv[1]))["counters"]))' "$tmp/out")
check "the ports are read back, in the driver's order ($ports)" \
	[ "$ports" = "leaf1 leaf2 leaf1 leaf2 spine1 spine2 h1" ]
same "snapshot diff" --topo "$TOPO" -c 'snapshot diff 1 2; snapshot diff 1 2 --json'
same "the counters kept" -c "sql 'select * from snapshot_counters order by snapshot, switch, port' --json"
unset HOPSCOPE_DRIVER

# --- read-only sql -----------------------------------------------------------------
ntraces=$(psql -c 'select count(*) from traces')
hs --db "$url" -c "sql 'delete from traces'"
check "sql refuses a write" eval 'failed_cleanly && has "refused: the history is read-only here" "$tmp/err"'
check "and the rows are all there" [ "$(psql -c 'select count(*) from traces')" = "$ntraces" ]
hs --db "$url" -c "sql 'select 1 as a; select 2 as b'"
check "sql runs one statement" eval 'failed_cleanly && has "one statement at a time" "$tmp/err"'
hs --db "$url" -c "sql 'select count(*) as n from nosuchtable'"
check "a query on no table: the server's reason" \
	eval 'failed_cleanly && has "relation \"nosuchtable\" does not exist" "$tmp/err"'

# every read of the history runs as the user's query does: a read of the
# verbs' own that would write (here through a view of the heartbeats that
# logs its readers, as an audit might) is refused by the server and writes
# nothing, and it runs under the statement timeout
psql -c 'create table reads (timeout text)' \
	-c "create function audited() returns boolean language plpgsql as \$\$ begin
		insert into reads values (current_setting('statement_timeout')); return true;
	    end \$\$" \
	-c 'alter table analyzers rename to analyzers_kept' \
	-c 'create view analyzers as select * from analyzers_kept where audited()'
hs --db "$url" --topo "$TOPO" -c drops
check "a read of drops that would write is refused by the server" eval 'failed_cleanly &&
	has "drops: cannot read history .*: cannot execute INSERT in a read-only transaction" "$tmp/err"'
check "and it wrote nothing" [ "$(psql -c 'select count(*) from reads')" = 0 ]
psql -c "create or replace function audited() returns boolean language plpgsql as \$\$ begin
		raise exception 'read with statement_timeout %', current_setting('statement_timeout');
	    end \$\$"
hs --db "$url" --topo "$TOPO" -c drops
check "a read of drops runs with a statement timeout of 30 s" \
	has "drops: cannot read history .*: read with statement_timeout 30s$" "$tmp/err"
check "a failed read names the history once" [ "$(grep -o "'postgresql://" "$tmp/err" | wc -l)" = 1 ]
psql -c 'drop view analyzers' -c 'alter table analyzers_kept rename to analyzers' \
	-c 'drop function audited()' -c 'drop table reads'
# the history as the error names it: a password in its URI hidden
psql -c 'alter table mirror_sources rename to mirror_sources_kept'
hs --db "postgresql://hopscope:secretpw@/hopscope?host=$sock" -c 'history traces'
check "a failed read: one error, naming the history once, its password hidden" eval 'failed_cleanly &&
	[ "$(wc -l <"$tmp/err")" = 1 ] && hasnt secretpw "$tmp/err" &&
	has "^-c:1: error: cannot read history .postgresql://hopscope:\.\.\.@/hopscope?host=[^ ]*.: relation \"mirror_sources\" does not exist$" "$tmp/err"'
psql -c 'alter table mirror_sources_kept rename to mirror_sources'

# a query without end: Ctrl-C cancels it on the server, at once
sleeping() { psql -c "select count(*) from pg_stat_activity where query like '%pg_sleep(30)%'
	and pid <> pg_backend_pid() ${1-}"; }
"$HS" --db "$url" -c "sql 'select pg_sleep(30) as s'; help quit" >"$tmp/out" 2>"$tmp/err" </dev/null &
qpid=$!
# once the server runs it (the console may take a while to get there)
waitfor '[ "$(sleeping "and state = '"'active'"'")" = 1 ]'
t0=$(date +%s%N)
kill -INT "$qpid"
wait "$qpid"
st=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "SIGINT stops a query on the server with status 130 (status $st, ${ms}ms)" \
	eval '[ "$st" -eq 130 ] && [ "$ms" -lt 1000 ]'
check "SIGINT: sql says it was interrupted" has '^-c:1: error: sql: interrupted$' "$tmp/err"
# the backend may outlive the console's connection for a moment, its last
# query still listed (idle): what matters is that none runs it
check "SIGINT: the server runs it no more" [ "$(sleeping "and state = 'active'")" = 0 ]

# --- traces by day, retention by the day -----------------------------------------------
# a trace is kept in the table of its day of capture (UTC), made with the
# next day's before its rows were sent: hs-synth's captures are of
# 2023-11-14
days=$(psql -c "select string_agg(c.relname, ' ' order by c.relname) from pg_inherits i
	join pg_class c on c.oid = i.inhrelid where i.inhparent = 'traces'::regclass")
in_day="select count(*) from traces where tableoid::regclass::text <>
	'traces_' || to_char(to_timestamp(first_ts / 1000000000) at time zone 'UTC', 'YYYYMMDD')"
check "the traces' days, made as they came, the next one ahead ($days)" eval '
	echo "$days" | grep -q "traces_20231114 traces_20231115 " &&
	[ "$(psql -c "select count(*) from traces_20231115")" = 0 ]'
check "every trace is in its day" eval '[ "$(psql -c "$in_day")" = 0 ] &&
	[ "$(psql -c "select count(*) from traces_undated")" = 0 ]'
# a day made ahead that rows then come to: its next day is made ahead in turn
for d in 14 15; do
	"$top_builddir/tests/tools/hs-synth" --flows 20 --seed 3 --start $((1700000000 + (d - 14) * 86400)) \
		-w "$tmp/day$d.pcap" -t "$tmp/day.topo" 2>"$tmp/synth.err" ||
		hard "hs-synth failed: $(cat "$tmp/synth.err")"
done
psql -c 'create database ahead'
hs --db "postgresql://hopscope@/ahead?host=$sock" --topo "$tmp/day.topo" \
	-c "set history all; capture start $tmp/day14.pcap; capture start $tmp/day15.pcap"
check "rows of the day made ahead: the day after it made ahead too" eval '[ "$st" -eq 0 ] &&
	[ "$(psql -d ahead -c "select count(*) from traces_20231115")" -gt 0 ] &&
	[ "$(psql -d ahead -c "select count(*) from traces_20231116")" = 0 ]'
plan=$(psql -c "explain select count(*) from traces where first_ts >= 1699920000000000000
	and first_ts < 1699920000000000000 + 3600000000000")
check "a time range reads its day only" eval 'echo "$plan" | grep -q "on traces_20231114" &&
	! echo "$plan" | grep -q "traces_20231115\|traces_undated"'
# in a database of its own: a week kept, hs-synth's day is long gone
psql -c 'create database kept'
kept="postgresql://hopscope@/kept?host=$sock"
hs --db "$kept" -r "$tmp/lossy.pcap" --topo "$tmp/lossy.topo" -c 'set retention 7d; history sessions'
check "set retention is kept on PostgreSQL" eval '[ "$st" -eq 0 ] &&
	has "^retention: 1w" "$tmp/out" &&
	[ "$(psql -d kept -c "select value from settings where name = '"'retention_age_ns'"'")" = 604800000000000 ]'
hs --db "$kept" -c 'history prune; history sessions'
check "history prune drops the days past the bound" eval '[ "$st" -eq 0 ] &&
	has "^removed [1-9][0-9]* traces, [1-9][0-9]* flows, " "$tmp/out" &&
	[ "$(psql -d kept -c "select count(*) from pg_class where relname like '"'traces_2023%'"'")" = 0 ] &&
	[ "$(psql -d kept -c "select count(*) from traces")" = 0 ]'
check "history says what the pass removed" has "^retention: 1w .*removed [1-9]" "$tmp/out"
hs --db "$kept" -c "set retention off; set history all; capture start $tmp/sctp.pcap"
check "traces of a day dropped before go to the day made again" eval '[ "$st" -eq 0 ] &&
	[ "$(psql -d kept -c "select count(*) from traces_20231114")" -gt 0 ] &&
	[ "$(psql -d kept -c "select count(*) from traces_undated")" = 0 ]'

# --- what is refused: one error each, nothing else written -------------------------------
mkdir "$tmp/cwd"
refused() { # refused DESCRIPTION URL EXPECTED
	why=$3
	(cd "$tmp/cwd" && hs --db "$2" -c 'history traces'; echo "$st" >"$tmp/st")
	st=$(cat "$tmp/st")
	check "$1: refused" eval 'failed_cleanly && has "$why" "$tmp/err"'
	check "$1: the error names the history" has "error: .*'postgresql://" "$tmp/err"
	check "$1: one line" [ "$(wc -l <"$tmp/err")" = 1 ]
	check "$1: no other history instead" eval '[ -z "$(ls "$tmp/cwd")" ]'
}
refused "server down" "postgresql://hopscope@/hopscope?host=$tmp/nowhere" \
	"cannot connect to 'postgresql://hopscope@/hopscope?host=$tmp/nowhere': .*No such file"
(cd "$tmp/cwd" && hs --db "postgresql://hopscope@/hopscope?host=$tmp/nowhere" -r "$PCAP" -c traces)
check "server down: a capture goes on, without history, and says so" \
	eval 'has "cannot connect to" "$tmp/err" && has "capturing without history" "$tmp/err" &&
		has "10.1.1.11:54275 > 10.1.4.12:5001" "$tmp/out"'
check "server down: no other history instead" eval '[ -z "$(ls "$tmp/cwd")" ]'
refused "wrong password" "postgresql://hs_pw:wrongpass@/hopscope?host=$sock" \
	'password authentication failed for user "hs_pw"'
check "wrong password: the password is not shown" hasnt wrongpass "$tmp/err"
refused "missing database" "postgresql://hopscope@/nosuchdb?host=$sock" \
	'database "nosuchdb" does not exist'
# libpq is loaded when a PostgreSQL history is named, not at every start
check "hopscope starts without libpq: it is not linked with it" \
	eval 'readelf -d "$HS" >"$tmp/dyn" && has NEEDED "$tmp/dyn" && hasnt libpq "$tmp/dyn"'
export HOPSCOPE_TEST_LIBPQ="$tmp/nolibpq.so.5"
refused "libpq missing" "$url" \
	"cannot load the PostgreSQL client library: $tmp/nolibpq.so.5: cannot open shared object file"
HOPSCOPE_TEST_LIBPQ=libc.so.6
refused "a libpq without a function the store uses" "$url" \
	"cannot load the PostgreSQL client library: .*undefined symbol: PQ"
unset HOPSCOPE_TEST_LIBPQ

version=$(psql -c 'select version from hopscope_schema')
psql -c 'update hopscope_schema set version = 99'
refused "newer schema" "$url" "is from a newer hopscope (schema version 99, this one knows"
check "newer schema: left as it was" [ "$(psql -c 'select version from hopscope_schema')" = 99 ]
psql -c "update hopscope_schema set version = $version"

# a history of schema 14 is upgraded in place: a flow's analyzer was its
# row's, and goes (its session's row names it); a probe was keyed by its
# number, and takes its analyzer into its key, its hops their probe's
# (and its traces were found by no index of their time)
psql -c "insert into probes(probe_id, seq, kind, sent, outcome, analyzer)
		values (77, 0, 'probe', 1, 'delivered', 'pa1'), (78, 0, 'probe', 1, 'lost', '')" \
	-c "insert into probe_hops(probe_id, seq, idx, switch, analyzer)
		values (77, 0, 0, 'leaf1', 'pa1'), (77, 0, 1, 'spine1', 'pa1'), (78, 0, 0, 'leaf2', '')" \
	-c 'alter table probe_hops drop column analyzer' \
	-c 'alter table probe_hops add primary key (probe_id, seq, idx)' \
	-c 'alter table probes drop constraint probes_pkey' \
	-c 'alter table probes add primary key (probe_id, seq)' \
	-c 'alter table probes alter analyzer drop not null, alter analyzer drop default' \
	-c "update probes set analyzer = null where analyzer = ''" \
	-c 'alter table flows add column analyzer text' \
	-c 'alter table analyzers drop column newest, drop column history' \
	-c 'drop index traces_by_first_ts' \
	-c 'update hopscope_schema set version = 14'
nflows=$(psql -c 'select count(*) from flows')
hs --db "$url" -c 'history probes'
check "schema 14: upgraded, with a notice" \
	eval '[ "$st" -eq 0 ] && has "upgrading history .* from schema 14 to $version" "$tmp/err"'
check "schema 14: its traces are found by their time (an index on first_ts)" \
	[ "$(psql -c "select count(*) from pg_indexes where indexname = 'traces_by_first_ts'")" = 1 ]
check "schema 14: a flow names no analyzer, and every flow stays" \
	[ "$(psql -c "select count(*) from information_schema.columns where table_name = 'flows'
		and column_name = 'analyzer'") $(psql -c 'select count(*) from flows')" = "0 $nflows" ]
check "schema 14: a probe's hops take its analyzer, '' for none" \
	[ "$(psql -c "select string_agg(analyzer || ':' || probe_id || '/' || switch, ','
		order by probe_id, idx) from probe_hops where probe_id in (77, 78)")" = \
	  "pa1:77/leaf1,pa1:77/spine1,:78/leaf2" ]
check "schema 14: a probe is keyed by its analyzer" \
	[ "$(psql -c "select pg_get_constraintdef(oid) from pg_constraint
		where conname = 'probe_hops_pkey'") $(psql -c "select count(*) from probes
		where probe_id = 78 and analyzer = ''")" = "PRIMARY KEY (analyzer, probe_id, seq, idx) 1" ]
psql -c 'delete from probe_hops where probe_id in (77, 78)' \
	-c 'delete from probes where probe_id in (77, 78)'

# a history of schema 11 is upgraded in place: its rows stay, of no
# analyzer named, and each table takes its analyzer's name; its traces,
# one table checking each row's session, are kept a day a table
ntraces=$(psql -c 'select count(*) from traces')
psql -c 'drop view hops' -c 'drop table analyzers' \
	-c 'alter table sessions drop column analyzer' -c 'alter table traces drop column analyzer' \
	-c 'alter table probes drop column analyzer' -c 'alter table probe_hops drop column analyzer' \
	-c 'alter table probes add primary key (probe_id, seq)' \
	-c 'alter table probe_hops add primary key (probe_id, seq, idx)' \
	-c 'alter table events drop column analyzer' -c 'alter table control drop column analyzer' \
	-c 'create table traces_plain (like traces including defaults)' \
	-c 'insert into traces_plain select * from traces' \
	-c 'alter table traces_plain alter id drop default' -c 'drop table traces' \
	-c 'alter table traces_plain rename to traces' \
	-c 'alter table traces alter id add generated by default as identity' \
	-c "select setval(pg_get_serial_sequence('traces', 'id'), max(id)) from traces" \
	-c 'alter table traces add primary key (id)' \
	-c 'create index traces_by_session on traces(session, trace_no)' \
	-c 'alter table traces add foreign key (session) references sessions(id)' \
	-c 'alter table flows add foreign key (session) references sessions(id)' \
	-c "create view hops(trace, idx, switch, addr, ts, hw_ts, ttl, tos, session) as
	    select t.id, h.n - 1, m.switch, m.addr, coalesce(t.first_ts, 0) + (h.v->>1)::bigint,
	    t.first_hw_ts + (h.v->>2)::bigint, (h.v->>3)::bigint, (h.v->>4)::bigint,
	    (h.v->>5)::bigint from traces t cross join lateral
	    json_array_elements(t.hop_list::json) with ordinality as h(v, n)
	    left join mirror_sources m on m.id = (h.v->>0)::bigint" \
	-c 'update hopscope_schema set version = 11'
check "schema 11: made as it was" eval '[ "$(psql -c "select relkind from pg_class
	where relname = '"'traces'"'")" = r ] && [ "$(psql -c "select count(*) from traces")" = "$ntraces" ]'
lastid=$(psql -c 'select max(id) from traces')
hs --db "$url" -c 'history traces'
check "schema 11: upgraded, with a notice" \
	eval '[ "$st" -eq 0 ] && has "upgrading history .* from schema 11 to $version" "$tmp/err"'
check "schema 11: its version is now $version" \
	[ "$(psql -c 'select version from hopscope_schema')" = "$version" ]
check "schema 11: its traces stay, of no analyzer named" \
	[ "$(psql -c 'select count(*) from traces where analyzer is null')" = "$ntraces" ]
check "schema 11: a hop names its trace's analyzer" \
	[ "$(psql -c 'select count(*) from hops where analyzer is null')" -gt 0 ]
check "schema 11: a flow names no analyzer, a probe is keyed by its analyzer" \
	[ "$(psql -c "select (select count(*) from information_schema.columns
		where table_name = 'flows' and column_name = 'analyzer') || ',' ||
		(select pg_get_constraintdef(oid) from pg_constraint where conname = 'probes_pkey')")" = \
	  "0,PRIMARY KEY (analyzer, probe_id, seq)" ]
check "schema 11: the heartbeats' table is made" [ "$(psql -c 'select count(*) from analyzers')" = 0 ]
check "schema 11: its traces now a day a table, every one in its day" eval '
	[ "$(psql -c "select relkind from pg_class where relname = '"'traces'"'")" = p ] &&
	[ "$(psql -c "$in_day")" = 0 ] && [ "$(psql -c "select count(*) from traces_undated")" = 0 ]'
check "schema 11: no row checks its session any more" \
	[ "$(psql -c "select count(*) from pg_constraint where contype = 'f' and conrelid in
		('traces'::regclass, 'flows'::regclass)")" = 0 ]
check "schema 11: a trace written after it takes an id after theirs" \
	[ "$(psql -c "select nextval('traces_ids')")" -gt "$lastid" ]

psql -c 'create database other' && psql -d other -c 'create table theirs (x int)'
other="postgresql://hopscope@/other?host=$sock"
refused "another program's database" "$other" "is not a hopscope history (1 tables"
check "another program's database: nothing added" \
	[ "$(psql -d other -c "select count(*) from pg_tables where schemaname = 'public'")" = 1 ]

# --- the server lost mid-capture ----------------------------------------------------------
# A live capture on the loopback of a network namespace of the test's own,
# fed the sample's frames three times: the server stops after the first,
# and returns after the second.
if [ "$(id -u)" -ne 0 ] || ! unshare -n true 2>/dev/null; then
	echo "# SKIP live part: a network namespace of its own needs root"
	finish
fi
psql -c 'create database live'
live="postgresql://hopscope@/live?host=$sock"
cat >"$tmp/send.py" <<'EOF'
# the frames of a pcap file onto lo, as they are
import socket, struct, sys
d = open(sys.argv[1], 'rb').read()
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(('lo', 0))
off = 24
while off + 16 <= len(d):
    n = struct.unpack_from('<I', d, off + 8)[0]
    s.send(d[off + 16:off + 16 + n])
    off += 16 + n
EOF
cat >"$tmp/live.sh" <<'EOF'
# in a network namespace of its own: the console captures on its lo, its
# lines read from its standard input as the test writes them
set -u
rows() { "$PGS" psql "$tmp" -qtA -d live -c 'select count(*) from traces' 2>/dev/null || echo 0; }
waitfor() { _i=0; while [ $_i -lt 200 ]; do eval "$1" && return 0; sleep 0.1; _i=$((_i + 1)); done; return 1; }
ip link set lo up
mkfifo "$tmp/live.in"
"$HS" --db "$live" --json <"$tmp/live.in" >"$tmp/live.out" 2>"$tmp/live.err" &
pid=$!
exec 3>"$tmp/live.in"
# capturing once its status says so
printf 'set history all\ncapture start lo\ncapture status\n' >&3
waitfor 'grep -q "\"state\":\"running\"" "$tmp/live.out"' || echo "no capture on lo" >>"$tmp/live.log"
python3 "$tmp/send.py" "$PCAP"
waitfor '[ "$(rows)" -gt 0 ]' || echo "no rows before the stop" >>"$tmp/live.log"
"$PGS" down "$tmp"
python3 "$tmp/send.py" "$PCAP"
sleep 2
# (the server keeps no end of the console's input open: it ends at its end)
"$PGS" up "$tmp" 3>&-
python3 "$tmp/send.py" "$PCAP"
# the rows held while the server was down are written when it answers:
# the status is asked until it says none waits (20 s at most)
printf 'capture stop\n' >&3
waiting() { tail -n 1 "$tmp/live.out" | python3 -c 'import json, sys
print(json.loads(sys.stdin.read() or "{}").get("history_waiting", -1))' 2>/dev/null; }
i=0
while [ $i -lt 40 ]; do
	n=$(grep -c . "$tmp/live.out")
	printf 'capture status\n' >&3
	waitfor '[ "$(grep -c . "$tmp/live.out")" -gt "$n" ]'
	[ "$(waiting)" = 0 ] && break
	sleep 0.5
	i=$((i + 1))
done
exec 3>&-
wait $pid
echo "status $?" >>"$tmp/live.log"
EOF
export PGS HS tmp live PCAP
# (a minute may be too little beside the sanitizers' other tests: the
# server's stop and start, and the held rows written, each slowed)
timeout 150 unshare -n sh "$tmp/live.sh"
j() { python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])[sys.argv[2]])' "$tmp/live.out" "$1"; }
cp "$tmp/live.err" "$tmp/err"
check "live: the console ran to its end, its status saying the history failed" \
	has "status 1" "$tmp/live.log"
check "live: rows were written before the server stopped" \
	eval 'hasnt "no capture on lo" "$tmp/live.log" && hasnt "no rows before" "$tmp/live.log"'
# (once, in the first failed commit's words. Under load that commit may
# fail with only the server's words, 'terminating connection due to
# administrator command', before a later one says how many rows are held;
# that one is then not shown. The rows wait all the same: checked below.)
check "live: the lost server is told, once" \
	[ "$(grep -c "cannot write history 'postgresql://" "$tmp/live.err")" = 1 ]
# (in each message: 'capture status' asked in the second after the server
# returned may also warn that it could not read the analyzers, having
# tried less than PG_RETRY_NS before)
check "live: the history named once in each message" \
	[ "$(grep -c "'postgresql://.*'postgresql://" "$tmp/live.err")" = 0 ]
closed=$(j traces_closed)
check "live: the capture went on ($closed traces)" [ "$closed" -gt 1000 ]
check "live: nothing waits, nothing lost" eval '[ "$(j history_waiting)" = 0 ] && [ "$(j history_unstored)" = 0 ]'
check "live: every trace is on the server once it returned" \
	[ "$(psql -d live -c 'select count(*) from traces')" = "$closed" ]
finish
