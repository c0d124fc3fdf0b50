#!/bin/sh
# pgrange.sh - on PostgreSQL, 'history load since D' reads the hops of
# the traces of its range of time from their own rows, so it reads the
# days of that range alone: no older day is scanned (through the hops
# view every trace of every day was read to find them, and every trace
# was counted to find the newest), and the older traces change nothing
# of its answer.
. "$(dirname "$0")/lib.sh"

pg_start

lossy_fattree 60
hs --db "$url" --topo "$tmp/f.topo" -c "set history all; capture start $tmp/all.pcap"
[ "$st" -eq 0 ] || hard "the capture into PostgreSQL failed: $(cat "$tmp/err")"

load() { # the newest hour's packets, joined, and their drops
	timeout 10 "$HS" --db "$url" --topo "$tmp/f.topo" -c 'history load since 1h; drops' \
		>"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
}
load
[ "$st" -eq 0 ] || hard "history load failed: $(cat "$tmp/err")"
grep -q "dropped" "$tmp/out" || hard "the capture's drops are not found: $(cat "$tmp/out")"
cp "$tmp/out" "$tmp/before"

# the same figures from the history on PostgreSQL, a range of 50 traces
# at a time, as from one on SQLite and as from the capture in memory
verbs='drops; loops; blame; ecmp agg1'
hs --db "$tmp/mem.db" --topo "$tmp/f.topo" -c "set history off; capture start $tmp/all.pcap; $verbs"
sed 1d "$tmp/out" >"$tmp/mem.fig"
hs --db "$tmp/lite.db" --topo "$tmp/f.topo" -c "set history all; capture start $tmp/all.pcap"
HOPSCOPE_TEST_LOAD_BATCH=50 hs --db "$tmp/lite.db" --topo "$tmp/f.topo" -c "history load; $verbs"
sed 1d "$tmp/out" >"$tmp/lite.fig"
HOPSCOPE_TEST_LOAD_BATCH=50 hs --db "$url" --topo "$tmp/f.topo" -c "history load; $verbs"
sed 1d "$tmp/out" >"$tmp/pg.fig"
check "drops, loops, blame, ecmp: the same from PostgreSQL, SQLite and memory" \
	eval 'grep -q "^[1-9][0-9]* dropped of" "$tmp/mem.fig" &&
		cmp -s "$tmp/mem.fig" "$tmp/lite.fig" && cmp -s "$tmp/mem.fig" "$tmp/pg.fig"'

# the same traces a week before, in a day of their own
DAY=86400000000000
days=$(psql -c "SELECT min(first_ts) / $DAY, max(first_ts) / $DAY FROM traces") ||
	hard "cannot read the traces' days"
first=${days%|*}
last=${days#*|}
[ "$first" = "$last" ] || hard "the capture spans days $first to $last"
old=$((first - 7))
part=traces_$(date -u -d "@$((old * 86400))" +%Y%m%d)
cols=$(psql -c "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
	WHERE attrelid = 'traces'::regclass AND attnum > 0 AND NOT attisdropped AND attname <> 'id'")
shifted=$(echo "$cols" | sed "s/first_ts/first_ts - 7 * $DAY/; s/last_ts/last_ts - 7 * $DAY/")
psql -c "CREATE TABLE $part PARTITION OF traces FOR VALUES FROM ($((old * DAY))) TO ($(((old + 1) * DAY)))" \
	-c "INSERT INTO traces($cols) SELECT $shifted FROM traces" >/dev/null 2>"$tmp/err" ||
	hard "cannot copy the traces a week back: $(cat "$tmp/err")"

# the rows of each day read by scans of the whole day (sequential), and
# in all, once every session has said what it read (as it ends)
seen() {
	psql -c "SELECT relname, seq_tup_read, seq_tup_read + coalesce(idx_tup_fetch, 0)
		FROM pg_stat_user_tables WHERE relname IN ('$newest', '$part') ORDER BY relname"
}
settled() {
	_a=$(seen); _i=0
	while sleep 0.2; _b=$(seen); [ "$_a" != "$_b" ]; do
		_a=$_b; _i=$((_i + 1))
		[ $_i -lt 50 ] || hard "the server's counts of rows read do not settle"
	done
	echo "$_b"
}
newest=traces_$(date -u -d "@$((first * 86400))" +%Y%m%d)
before=$(settled)
load
check "the load of the newest hour leaves the week-old copies out" \
	eval '[ "$st" -eq 0 ] && cmp -s "$tmp/out" "$tmp/before"'
i=0
while [ "$(seen)" = "$before" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || hard "the server never counted the load's reads"
	sleep 0.05
done
after=$(settled)
scanned() { echo "$1" | grep "^$part|" | cut -d'|' -f2; }
check "the load of the newest hour scans no day of a week before" \
	[ "$(scanned "$before")" = "$(scanned "$after")" ]
echo "# rows read (day|sequential|all), before: $before; after: $after" | tr '\n' ' '
echo

# the whole history, its days a week apart, read 50 traces at a time: each
# read a range of time of 50 traces, not a range of a share of the time
# since 1970 (which held them all)
ntr=$(psql -c "SELECT count(*) FROM traces")
HOPSCOPE_TEST_LOAD_BATCH=50 hs --db "$url" --topo "$tmp/f.topo" -c 'history load --json'
check "history load reads the history in ranges of 50 traces ($ntr)" \
	eval '[ "$st" -eq 0 ] && python3 -c "import json, sys
r = json.loads(open(sys.argv[1]).read())
n = int(sys.argv[2])
assert r[\"traces\"] == r[\"stored\"] == n, r
assert r[\"ranges\"] >= n // 50 and 0 < r[\"range_stored\"] <= 50, r" "$tmp/out" "$ntr"'

finish
