#!/bin/sh
# fabric.sh - two analyzers splitting a fabric's mirror sessions, one
# shared history on PostgreSQL (a server of the test's own, from
# share/lab/hs-pgserver), one console over it: 'history load' joins the
# parts of each packet the analyzers stored apart, and the traces, drops,
# loops and latency are those of one analyzer that saw every copy; capture
# status lists each analyzer by the heartbeat it wrote.
. "$(dirname "$0")/lib.sh"

pg_start

lossy_fattree 300

# its copies split between two analyzers: by switch (odd and even mirror
# addresses; nearly every packet's copies go to both), or by pod (pods 1
# and 2 with core1 and core2, pods 3 and 4 with the rest)
cat >"$tmp/split.py" <<'PY'
import struct, sys
d, cap = sys.argv[1:]		# $tmp/CAP.pcap into $tmp/{sw,pod}{1,2}.pcap, CAP before
data = open("%s/%s.pcap" % (d, cap), "rb").read()
pre = "" if cap == "all" else cap
def by_switch(n): return n % 2
def by_pod(n):
    if n <= 4:
        return 0 if n <= 2 else 1
    pod = (n - 5) // 2 if n <= 12 else (n - 13) // 2
    return 0 if pod < 2 else 1
for name, side in (("sw", by_switch), ("pod", by_pod)):
    outs = [open("%s/%s%s%d.pcap" % (d, pre, name, i), "wb") for i in (1, 2)]
    for o in outs:
        o.write(data[:24])
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        rec = data[off:off + 16 + incl]
        outs[side(rec[16 + 29])].write(rec)   # the mirror address's last byte
        off += 16 + incl
PY
python3 "$tmp/split.py" "$tmp" all || hard "cannot split the capture"

# a trace as the set compares it: identity, outcome, hops and their times
norm() {
	python3 -c 'import json, sys
out = []
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("type") != "trace":
        continue
    out.append(json.dumps([r["src"], r["dst"], r["proto"], r.get("sport"), r.get("dport"),
                           r.get("ip_id"), r["outcome"],
                           [(h.get("switch"), h["ts_ns"], h.get("hw_ts_ns"), h["ttl"])
                            for h in r["hops"]]]))
out.sort()
print("\n".join(out))' "$1"
}

# every trace of an export names the analyzers that stored its parts, and
# some are of both
named_all() {
	python3 -c 'import json, sys
t = [json.loads(l) for l in open(sys.argv[1])]
t = [r for r in t if r.get("type") == "trace"]
by = set(r.get("analyzer") for r in t)
assert t and by <= {"an1", "an2", "an1+an2"} and "an1+an2" in by, by' "$1"
}

# one analyzer that sees every copy
hs --db "$tmp/one.db" --topo "$tmp/f.topo" \
	-c "set history all; capture start $tmp/all.pcap; export ndjson -; drops; loops"
[ "$st" -eq 0 ] || hard "one analyzer failed: $(cat "$tmp/err")"
grep '^{' "$tmp/out" >"$tmp/one.ndjson"
# (its traces are named SESSION:N; the console over the history has no session)
sed -n '/dropped of/,$p' "$tmp/out" | sed 's/trace [0-9]*:/trace /' >"$tmp/one.drops"
norm "$tmp/one.ndjson" >"$tmp/one.set"
check "one analyzer: the fabric has drops and loops" \
	eval 'has " dropped," "$tmp/out" && grep -q "\"outcome\":\"looped\"" "$tmp/one.ndjson"'

for split in sw pod; do
	psql -c 'drop schema public cascade' -c 'create schema public' 2>/dev/null
	for i in 1 2; do
		hs --db "$url" --topo "$tmp/f.topo" \
			-c "set analyzer an$i; set history all; capture start $tmp/$split$i.pcap"
		[ "$st" -eq 0 ] || hard "analyzer an$i failed: $(cat "$tmp/err")"
		sed -n 's/.*ended (end of file): \([0-9]*\) packets.*/\1/p' "$tmp/out" >"$tmp/n$i"
	done
	check "$split: each analyzer stored its part, named by it" \
		[ "$(psql -c 'select count(distinct analyzer) from traces')" = 2 ]
	hs --db "$url" -c 'capture status'
	check "$split: capture status over the history lists both analyzers' heartbeats" \
		eval '[ "$st" -eq 0 ] && has "no capture yet" "$tmp/out" &&
			has "^  an1 .* seen .* ago, $(cat "$tmp/n1") packets" "$tmp/out" &&
			has "^  an2 .* seen .* ago, $(cat "$tmp/n2") packets" "$tmp/out"'
	hs --db "$url" -c 'capture status --json'
	check "$split: capture status --json: the analyzers' rows" \
		eval 'python3 -c "import json, sys
a = json.load(open(sys.argv[1]))[\"analyzers\"]
assert [r[\"name\"] for r in a] == [\"an1\", \"an2\"], a
assert [r[\"packets\"] for r in a] == [int(sys.argv[2]), int(sys.argv[3])], a
assert all(r[\"session\"] is None for r in a), a" "$tmp/out" "$(cat "$tmp/n1")" "$(cat "$tmp/n2")"' 
	hs --db "$url" --topo "$tmp/f.topo" -c 'history load; export ndjson -; traces show 1; drops; loops'
	check "$split: history load joins the parts" \
		eval '[ "$st" -eq 0 ] && has "traces loaded from .* stored (.* joined" "$tmp/out"'
	grep '^{' "$tmp/out" >"$tmp/fab.ndjson"
	sed -n '/dropped of/,$p' "$tmp/out" >"$tmp/fab.drops"
	norm "$tmp/fab.ndjson" >"$tmp/fab.set"
	check "$split: the traces are those one analyzer gives ($(wc -l <"$tmp/one.set"))" \
		cmp -s "$tmp/one.set" "$tmp/fab.set"
	check "$split: each loaded trace names the analyzers that stored its parts" \
		eval 'named_all "$tmp/fab.ndjson" && has "^trace 1: .*, stored by an[0-9a-z+]*$" "$tmp/out"'
	check "$split: drops and loops read the same" cmp -s "$tmp/one.drops" "$tmp/fab.drops"
	# a time bound, read a range of time at a time (100 traces a query):
	# the packets first seen in the last 2 s before the newest
	HOPSCOPE_TEST_LOAD_BATCH=100 hs --db "$url" --topo "$tmp/f.topo" \
		-c 'history load since 2s; export ndjson -'
	grep '^{' "$tmp/out" >"$tmp/fab.ndjson"
	norm "$tmp/fab.ndjson" >"$tmp/fab.set"
	python3 -c 'import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in rows if r.get("type") == "trace"]
first = lambda r: min(h["ts_ns"] for h in r["hops"])
head = max(first(r) for r in rows)
for r in rows:
    if first(r) >= head - 2000000000:
        print(json.dumps(r))' "$tmp/one.ndjson" >"$tmp/one.last.ndjson"
	norm "$tmp/one.last.ndjson" >"$tmp/one.last"
	check "$split: history load since 2s, in batches: one analyzer's traces of the last 2 s ($(wc -l <"$tmp/one.last") of $(wc -l <"$tmp/one.set"))" \
		eval '[ "$st" -eq 0 ] && has "traces loaded .*, the last 2.000s" "$tmp/out" &&
			[ -s "$tmp/one.last" ] && ! cmp -s "$tmp/one.last" "$tmp/one.set" &&
			cmp -s "$tmp/one.last" "$tmp/fab.set"'

	# with the default history on PostgreSQL each analyzer keeps every
	# trace, those of packets whose copies all came to it too: the
	# traces, and the drops' crossings of each link, are those of one
	# analyzer
	psql -c 'drop schema public cascade' -c 'create schema public' 2>/dev/null
	for i in 1 2; do
		hs --db "$url" --topo "$tmp/f.topo" \
			-c "set analyzer an$i; capture start $tmp/$split$i.pcap"
	done
	hs --db "$url" --topo "$tmp/f.topo" -c 'history load; export ndjson -; drops; loops'
	grep '^{' "$tmp/out" >"$tmp/fab.ndjson"
	sed -n '/dropped of/,$p' "$tmp/out" >"$tmp/fab.drops"
	norm "$tmp/fab.ndjson" >"$tmp/fab.set"
	check "$split, default history: the traces one analyzer gives, drops and loops read the same" \
		eval 'cmp -s "$tmp/one.set" "$tmp/fab.set" && cmp -s "$tmp/one.drops" "$tmp/fab.drops"'
	[ $split = sw ] || continue
	# a console following the history says what it holds of the others',
	# by the history their heartbeats say they keep
	hs --db "$url" -c 'set analyzer an0; set view fabric; sleep 1.5; capture status'
	check "view fabric over analyzers with the default history on PostgreSQL: every trace" \
		has "^               every trace of the other analyzers: they keep .set history all.$" "$tmp/out"
	# as analyzers keeping only parts tell it (on a file, or of before)
	psql -c "update analyzers set history = 'default'"
	hs --db "$url" -c 'set analyzer an0; set view fabric; sleep 1.5; capture status'
	check "view fabric over analyzers keeping only parts: said exactly" \
		has "^               the other analyzers. traces as they store them: only drops, loops, probes, matches and partial paths (none keeps .set history all.)$" "$tmp/out"
	psql -c "update analyzers set history = 'all' where name = 'an2'"
	hs --db "$url" -c 'set analyzer an0; set view fabric; sleep 1.5; capture status --json'
	check "view fabric, one of two others keeping every trace: said exactly" \
		eval 'has "\"view_others\":2,\"view_others_all\":1," "$tmp/out" &&
			has "\"name\":\"an2\",.*\"history\":\"all\"" "$tmp/out"'
	hs --db "$url" -c 'set analyzer an0; set view fabric; sleep 1.5; capture status'
	check "view fabric, one of two others keeping every trace: the note says which" \
		has "^               the other analyzers. traces as they store them: every one of the 1 that keeps .set history all., only drops, loops, probes, matches and partial paths of the 1 that does not$" "$tmp/out"
done

# one console attached to ONE of two daemons answers for the fabric: the
# daemon follows the history the other writes, and watches see what it adds
psql -c 'drop schema public cascade' -c 'create schema public' 2>/dev/null
VERSION=$("$HS" --version | sed 's/^hopscope //')
# daemon an1 capturing $1 (topology $2), its socket $tmp/an1.sock
an1_start() {
	printf 'set analyzer an1\nset history all\ntopo load %s\ncapture start %s\nlisten unix %s\n' \
		"$2" "$1" "$tmp/an1.sock" >"$tmp/an1.conf"
	# emptied here: the daemon's own redirection comes after the loop
	# below may have read the log of the one before
	: >"$tmp/an1.log"
	timeout 120 "$HS" serve --config "$tmp/an1.conf" --db "$url" \
		>"$tmp/an1.out" 2>"$tmp/an1.log" </dev/null &
	dpid=$!
	cleanup="$cleanup kill -9 $dpid 2>/dev/null;"
	i=0
	while ! grep -q '^info: ready' "$tmp/an1.log" && kill -0 $dpid 2>/dev/null &&
		[ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
	grep -q '^info: ready' "$tmp/an1.log" ||
		hard "daemon an1 did not start in $((i / 20)) s ($(kill -0 $dpid 2>/dev/null &&
			echo running || echo ended)): $(cat "$tmp/an1.log"); the server's sessions:
$(psql -c "select pid, state, wait_event_type, wait_event, left(query, 80)
	from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()")"
}
an1_start "$tmp/sw1.pcap" "$tmp/f.topo"
# a watching console's feed (the attach protocol's trace frames): what it
# holds, as a console keeps them (an empty trace forgets those before),
# until told to stop; how many of those are a packet held twice, and how
# many name the analyzers that stored them (after its hops: a length and
# the names), which a console is sent when its hello asks (flags 0x08)
cat >"$tmp/watch.py" <<'PY'
import os, socket, struct, sys, time
sock, version, d, flags, tag = sys.argv[1:]
def fr(t, p=b''):
	return struct.pack('>IB', len(p) + 1, t) + p
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
s.sendall(fr(1, b'\x02' + bytes([int(flags)]) + version.encode()) + fr(9))	# hello, watch
s.settimeout(0.2)
got, t0 = b'', time.time()
while time.time() - t0 < 90 and not os.path.exists(d + "/fed.stop"):
	try:
		b = s.recv(1 << 20)
	except socket.timeout:
		if time.time() - t0 > 1:
			open(d + "/fed.ready." + tag, "w").close()	# the recent traces are read
		continue
	if not b:
		break
	got += b
def names(p):
	off = 68 + 1 + 4 * p[68] + 2
	off += 1 + 43 * p[off]
	return p[off + 1:].decode() if off < len(p) else None
held, off = [], 0
while off + 5 <= len(got):
	n, t = struct.unpack('>IB', got[off:off + 5])
	if t == 11:
		# after the id: the addresses, ports, protocol, IP ID, sequence
		# number, TCP flags and length: the packet
		p = got[off + 5:off + 4 + n]
		held = held + [(p[8:58], names(p))] if n > 1 else []
	off += 4 + n
named = sorted(set(a for _, a in held if a is not None))
print(len(held), len(held) - len(set(k for k, _ in held)),
      sum(1 for _, a in held if a is not None), " ".join(named))
PY
python3 "$tmp/watch.py" "$tmp/an1.sock" "$VERSION" "$tmp" 0 old >"$tmp/fed" 2>&1 &
fj=$!
python3 "$tmp/watch.py" "$tmp/an1.sock" "$VERSION" "$tmp" 8 new >"$tmp/fed.new" 2>&1 &
fn=$!
i=0
while { [ ! -e "$tmp/fed.ready.old" ] || [ ! -e "$tmp/fed.ready.new" ]; } && [ $i -lt 200 ]; do
	sleep 0.05; i=$((i + 1)); done
hs --attach "$tmp/an1.sock" -c 'export ndjson -'
norm "$tmp/out" >"$tmp/own.set"
check "attached before the other analyzer stored: the daemon's own traces only" \
	eval '[ "$st" -eq 0 ] && [ -s "$tmp/own.set" ] && ! cmp -s "$tmp/one.set" "$tmp/own.set"'
hs --db "$url" --topo "$tmp/f.topo" -c "set analyzer an2; set history all; capture start $tmp/sw2.pcap"
[ "$st" -eq 0 ] || hard "analyzer an2 failed: $(cat "$tmp/err")"
# up to 30 s for the daemon's capture status to say $1
status_says() {
	i=0
	while [ $i -lt 60 ]; do
		hs --attach "$tmp/an1.sock" -c 'capture status'
		has "$1" "$tmp/out" && break
		sleep 0.5; i=$((i + 1))
	done
}
# the view settles: nothing captures any more, all of the history is in
status_says '^view .*no capture runs: all of it'
cp "$tmp/out" "$tmp/status"
# following costs the history no read of its traces while nothing is
# stored: the newest stored trace is the heartbeats' to say (the server
# counts a connection's reads when it next ends a statement a second after
# it counted them last: the view's own, each second)
scans() { psql -c "select coalesce(sum(seq_scan), 0) from pg_stat_user_tables
	where relname like 'traces%'"; }
sleep 3
s1=$(scans)
sleep 4
s2=$(scans)
check "a settled view reads no traces to follow the history ($s1 then $s2 scans of them)" \
	[ "$s1" = "$s2" ]
check "capture status: the view follows the other analyzer, not behind" \
	has '^view           auto: [1-9][0-9]* traces from the history (1 other analyzer), 0ns behind' \
	"$tmp/status"
# what the view holds of the others' traces is theirs to say, as their
# heartbeats tell the history they keep: said where the traces are counted
hs --attach "$tmp/an1.sock" -c 'traces limit 1'
check "capture status and traces: the other analyzer keeps every trace, and the view says so" \
	eval 'has "^               every trace of the other analyzer: it keeps .set history all.$" "$tmp/status" &&
		has "^(the fabric view: every trace of the other analyzer: it keeps .set history all.)$" "$tmp/out" &&
		has "^  an2 .* not stored, history all$" "$tmp/status"'
hs --attach "$tmp/an1.sock" -c 'export ndjson -; drops; loops'
grep '^{' "$tmp/out" >"$tmp/att.ndjson"
norm "$tmp/att.ndjson" >"$tmp/att.set"
sed -n '/dropped of/,$p' "$tmp/out" | sed 's/trace [0-9]*:[0-9]*/trace N/' >"$tmp/att.drops"
sed 's/trace [0-9]*/trace N/' "$tmp/one.drops" >"$tmp/one.drops.n"
check "attached to one daemon: the traces are those one analyzer gives ($(wc -l <"$tmp/one.set"))" \
	eval '[ "$st" -eq 0 ] && cmp -s "$tmp/one.set" "$tmp/att.set"'
check "attached to one daemon: drops and loops read as one analyzer's" \
	cmp -s "$tmp/one.drops.n" "$tmp/att.drops"
# the rates count each packet once too: the daemon's own parts it counted
# before the view turned on are not counted again joined
hs --db "$tmp/one-rates.db" --topo "$tmp/f.topo" -c "capture start $tmp/all.pcap; rates"
grep "^rates over" "$tmp/out" >"$tmp/one.rates"
hs --attach "$tmp/an1.sock" -c 'rates'
grep "^rates over" "$tmp/out" >"$tmp/att.rates"
check "attached to one daemon: the rates read as one analyzer's ($(cat "$tmp/att.rates"))" \
	eval '[ "$st" -eq 0 ] && has "drops" "$tmp/one.rates" && cmp -s "$tmp/one.rates" "$tmp/att.rates"'
# the traces the view took name who stored them; its own do not
hs --attach "$tmp/an1.sock" --json -c 'traces limit 10000'
python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["traces"]
by = sorted(set(r["analyzer"] for r in t if "analyzer" in r))
print(sum(1 for r in t if "analyzer" in r), len(t), " ".join(by))' "$tmp/out" >"$tmp/named"
read -r named all by <"$tmp/named"
check "traces --json attached: a trace another analyzer stored part of names them ($named of $all: $by)" \
	eval '[ "$st" -eq 0 ] && [ "${named:-0}" -gt 0 ] && [ "$named" -lt "$all" ] &&
		{ [ "$by" = "an1+an2 an2" ] || [ "$by" = "an1+an2" ]; }'
touch "$tmp/fed.stop"
wait $fj $fn
read -r fed twice wnamed wby <"$tmp/fed"
check "a watch of a console that did not ask is sent no analyzers' names" [ "${wnamed:-1}" -eq 0 ]
read -r nfed ntwice wnamed wby <"$tmp/fed.new"
check "a watch that asked is sent them ($wnamed of $nfed traces: $wby)" \
	eval '[ "${wnamed:-0}" -gt 0 ] && { [ "$wby" = "an1+an2 an2" ] || [ "$wby" = "an1+an2" ]; }'
# what it was not sent, being behind, the daemon says as it stops
i=0
while ! grep -q "pid=$fj) stopped watching" "$tmp/an1.log" && [ $i -lt 100 ]; do
	sleep 0.05; i=$((i + 1)); done
missed=$(sed -n "s/.*pid=$fj) stopped watching: \([0-9]*\) traces not sent.*/\1/p" \
	"$tmp/an1.log")
missed=${missed:-0}
took=$(sed -n 's/^view .*: \([0-9]*\) traces from the history.*/\1/p' "$tmp/status")
kept=$(sed -n 's/^traces .* open, \([0-9]*\) closed.*/\1/p' "$tmp/status")
check "a watch of the daemon holds each packet once, as the daemon: its own that the view did not take back and the $took it took ($fed held, $twice twice, $missed not sent, of $kept)" \
	eval '[ "${fed:-0}" -gt 0 ] && [ "${twice:-1}" -eq 0 ] && [ $((fed + missed)) -eq "${kept:-0}" ]'
# the history lost and back: the view says since when it could not read
# it (what it said before is of its last read), and catches up when it
# answers, each packet still once
"$PGS" down "$tmp" >/dev/null 2>&1 || hard "cannot stop the PostgreSQL server"
status_says '^view .* (the history unread for'
check "the history lost: the view says since when it is unread, and why" \
	eval 'has "^view .* behind at its last read (the history unread for [^)]*)$" "$tmp/out" &&
		hasnt "all of it" "$tmp/out" &&
		has "warning: cannot follow the history: cannot \(reach\|read\) " "$tmp/err"'
"$PGS" up "$tmp" >/dev/null 2>&1 || hard "cannot start the PostgreSQL server again"
status_says '^view .*no capture runs: all of it'
hs --attach "$tmp/an1.sock" -c 'capture status; export ndjson -'
norm "$tmp/out" >"$tmp/back.set"
check "the history back: the view reads it again, its traces those one analyzer gives" \
	eval '[ "$st" -eq 0 ] && has "^view .*, 0ns behind (no capture runs: all of it)" "$tmp/out" &&
		[ ! -s "$tmp/err" ] && cmp -s "$tmp/one.set" "$tmp/back.set"'
kill -TERM $dpid
wait $dpid

# a capture of minutes, split by switch: the daemon's view reads all of
# the other analyzer's part, however long it spans, and holds what one
# analyzer that saw it all holds
"$top_builddir/tests/tools/hs-synth" --shape fattree:4 --flows 60 --seed 5 --duration 240 \
	-w "$tmp/long.pcap" -t "$tmp/long.topo" 2>"$tmp/synth.err" ||
	hard "hs-synth failed: $(cat "$tmp/synth.err")"
python3 "$tmp/split.py" "$tmp" long || hard "cannot split the capture"
hs --db "$tmp/long.db" --topo "$tmp/long.topo" -c "capture start $tmp/long.pcap; export ndjson -"
norm "$tmp/out" >"$tmp/long.set"
psql -c 'drop schema public cascade' -c 'create schema public' 2>/dev/null
an1_start "$tmp/longsw1.pcap" "$tmp/long.topo"
hs --db "$url" --topo "$tmp/long.topo" -c "set analyzer an2; set history all; capture start $tmp/longsw2.pcap"
status_says '^view .*no capture runs: all of it'
hs --attach "$tmp/an1.sock" -c 'export ndjson -'
norm "$tmp/out" >"$tmp/att.set"
check "a capture of 4 minutes: the view holds what one analyzer does ($(wc -l <"$tmp/long.set"))" \
	eval '[ "$st" -eq 0 ] && [ -s "$tmp/long.set" ] && cmp -s "$tmp/long.set" "$tmp/att.set"'
kill -TERM $dpid
wait $dpid
# a view too far behind reads the newest batch of traces (100 here, for
# the test; 100,000 else) and says about how many older it did not read
psql -c 'drop schema public cascade' -c 'create schema public' 2>/dev/null
export HOPSCOPE_TEST_LOAD_BATCH=100
an1_start "$tmp/longsw1.pcap" "$tmp/long.topo"
unset HOPSCOPE_TEST_LOAD_BATCH
hs --db "$url" --topo "$tmp/long.topo" -c "set analyzer an2; set history all; capture start $tmp/longsw2.pcap"
status_says '^view .*no capture runs: all of it'
check "too far behind: the view says about how many older traces it did not read" \
	has '^view           auto: [1-9][0-9]* traces from the history (about [1-9][0-9]* older not read: too many at once) (1 other analyzer)' \
	"$tmp/out"
kill -TERM $dpid

# A 'stats' of the daemon's running capture, there before its view turns
# on, counts each dropped packet once: the daemon's own dropped parts,
# counted as they closed, are taken back when the view takes them from the
# history joined with the other analyzer's. The daemon captures the
# loopback of a network namespace of its own, where its half of the
# copies (by switch) is sent now, as they were timed; the other half,
# given the times it would have been sent at, the other analyzer reads
# from a file once the daemon's traces closed.
if unshare -n true 2>/dev/null && command -v nsenter >/dev/null 2>&1; then
	psql -c 'drop schema public cascade' -c 'create schema public' 2>/dev/null
	cat >"$tmp/resend.py" <<'PY'
import socket, struct, sys, time
a, b, out = sys.argv[1:]	# a's frames onto the loopback, b's into out, timed alike
recs = []
for side, name in ((0, a), (1, b)):
    d = open(name, "rb").read()	# nanosecond pcaps (hs-synth's)
    off = 24
    while off + 16 <= len(d):
        sec, ns, incl = struct.unpack_from("<III", d, off)
        recs.append((sec * 10**9 + ns, side, d[off + 16:off + 16 + incl]))
        off += 16 + incl
recs.sort(key=lambda r: r[0])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("lo", 0))
o = open(out, "wb")
o.write(open(b, "rb").read()[:24])
t0, w0 = recs[0][0], time.time_ns() + 10**8
for ts, side, frame in recs:
    while time.time_ns() < w0 + ts - t0:
        pass
    if side == 0:
        s.send(frame)
    else:
        now = time.time_ns()
        o.write(struct.pack("<IIII", now // 10**9, now % 10**9, len(frame), len(frame)) + frame)
PY
	printf 'set analyzer an1\ntopo load %s\ncapture start lo\nlisten unix %s\n' \
		"$tmp/f.topo" "$tmp/an1.sock" >"$tmp/an1.conf"
	: >"$tmp/an1.log"
	unshare -n sh -c 'ip link set lo up && exec "$0" "$@"' "$HS" serve \
		--config "$tmp/an1.conf" --db "$url" >"$tmp/an1.out" 2>"$tmp/an1.log" </dev/null &
	dpid=$!
	cleanup="$cleanup kill -9 $dpid 2>/dev/null;"
	i=0
	while ! grep -q '^info: ready' "$tmp/an1.log" && kill -0 $dpid 2>/dev/null &&
		[ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
	grep -q '^info: ready' "$tmp/an1.log" || hard "daemon an1 did not start: $(cat "$tmp/an1.log")"
	# one window holds every copy: windows start on whole multiples of
	# their length (since the epoch), so the length is an hour or a
	# little more, whichever next ends three minutes from now or later
	# (the stats below ends in 22 s, and its wait for the view in 10 s more)
	now=$(date +%s) w=3600
	while [ $((w - now % w)) -lt 180 ]; do w=$((w + 60)); done
	# (while it is pending, the daemon runs no other console's line: the
	# view, on its timer, reads the history in the meantime, all of it two
	# trace timeouts and a heartbeat after the other analyzer stored, which
	# may be after the 22 s: the copies sent and the other analyzer's parts
	# stored before then, stats waits at its end for the view to read them)
	"$HS" --attach "$tmp/an1.sock" --json -c "stats by switch window ${w}s for 22s" \
		>"$tmp/stats.out" 2>"$tmp/stats.err" </dev/null &
	sj=$!
	sleep 0.5
	nsenter -t $dpid -n python3 "$tmp/resend.py" "$tmp/sw1.pcap" "$tmp/sw2.pcap" \
		"$tmp/sw2.now.pcap" || hard "cannot send the copies on the loopback"
	sleep 2
	hs --db "$url" --topo "$tmp/f.topo" -c "set analyzer an2; capture start $tmp/sw2.now.pcap"
	[ "$st" -eq 0 ] || hard "analyzer an2 failed: $(cat "$tmp/err")"
	wait $sj
	counted=$(python3 -c 'import json, sys
print(sum(json.loads(l).get("drops", 0) for l in open(sys.argv[1]) if l.startswith("{")))' \
		"$tmp/stats.out")
	status_says '^view .*, 0ns behind'
	hs --attach "$tmp/an1.sock" --json -c 'traces outcome dropped limit 100000'
	held=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["total"])' "$tmp/out")
	check "stats running as the view turns on: each dropped packet counted once ($counted, the view holds ${held:-?})" \
		eval '[ "${held:-0}" -gt 0 ] && [ "$counted" = "$held" ]'
	kill -TERM $dpid
	wait $dpid
fi

# history load while a capture runs (a live one, on the loopback of a
# network namespace of its own: nothing to read): refused, with what to do
# instead; where the capture's view follows the history, that it does
if unshare -n true 2>/dev/null; then
	for view in local fabric; do
		timeout 60 unshare -n sh -c 'ip link set lo up; exec "$0" "$@"' "$HS" --db "$url" \
			-c "set view $view; capture start lo; sleep 1.5; history load; capture stop" \
			>"$tmp/out" 2>"$tmp/err" </dev/null
		st=$?
		case $view in
		local) said="a capture runs, whose traces are the console's (capture stop first; or set view fabric before the capture" ;;
		fabric) said="a capture runs, and its view already joins every analyzer's stored traces into its own" ;;
		esac
		check "history load while a capture runs, view $view: refused, said what instead" \
			eval 'failed_cleanly && has "^-c:4: error: history load: $said" "$tmp/err"'
	done
fi

# what is refused
while IFS='|' read -r args said; do
	hs --db "$url" -c "history load $args"
	check "history load $args: refused, said" eval 'failed_cleanly && has "$said" "$tmp/err"'
done <<'EOF'
extra|history load: unexpected .extra.
since soon|bad duration .soon. (e.g. 10m, 1h, 7d)
since|history load since needs a duration
since 1h extra|history load: unexpected .extra.
EOF
hs --db "$tmp/nothing.db" -c 'set view fabric; sleep 1.5; capture status'
check "set view fabric where there is no history: none is made for it" \
	eval '[ "$st" -eq 0 ] && has "^view           fabric (not following yet)" "$tmp/out" &&
		[ ! -e "$tmp/nothing.db" ]'
hs --db "$tmp/nothing.db" -c 'history load'
check "history load of no history: said, none made" \
	eval 'failed_cleanly && has "no history at" "$tmp/err" && [ ! -e "$tmp/nothing.db" ]'

# A probe's copies another analyzer stored are the probe's when the view
# reads them, but another analyzer's own probe given the same number (and
# so the same IP ID) is not: its copies were seen before this one was
# sent. The probe goes to this host's loopback with no capture, so only
# the view's traces can be its copies: a UDP probe is known by its IP ID,
# the number's (probe.c: the upper half of the number times 2654435761,
# plus the packet's sequence number).
hs --db "$tmp/probe.db" -c "set analyzer other; capture start $top_srcdir/share/sample/sample.pcap"
[ "$st" -eq 0 ] || hard "cannot make the probe's history: $(cat "$tmp/err")"
ipid=$(python3 -c 'print((4242 * 2654435761 % 2**32 >> 16) % 65536)')
stored() { # stored NO FIRST_NS: a copy of probe 4242's packet that 'other' stored
	sqlite3 "$tmp/probe.db" "insert into traces(session, trace_no, src, dst, proto, sport,
		dport, ip_id, tcp_flags, len, first_ts, last_ts, outcome, nhops, flags, probe_id,
		hop_list, analyzer) select 1, $1, '127.0.0.1', '127.0.0.1', 17, 5000, 9, $ipid, 0,
		60, $2, $2, 'delivered', 1, 1, 4242, '[[' || min(id) || ',0,null,64,0,1]]', 'other'
		from mirror_sources; update analyzers set newest = $2 where name = 'other'"
}
probe4242() {
	HOPSCOPE_TEST_PROBE_ID=4242 hs --db "$tmp/probe.db" -c 'set analyzer me; set view fabric;
		history sessions; probe udp 127.0.0.1:5000 > 127.0.0.1:9 count 1 timeout 3s'
}
stored 100001 $(($(date +%s%N) - 30000000000))
probe4242
check "another analyzer's probe of the same number, seen before this one was sent, is not its copy" \
	eval '[ "$st" -eq 0 ] && has "^probe 4242 seq 0: lost (no copy seen)$" "$tmp/out"'
stored 100002 $(($(date +%s%N) + 1500000000))
probe4242
check "a copy of this console's probe that another analyzer stored is its copy" \
	eval '[ "$st" -eq 0 ] && has "^probe 4242 seq 0: seen  10.255.0.3" "$tmp/out"'
finish
