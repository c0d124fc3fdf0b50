#!/bin/sh
# badinput.sh - a catalogue of wrong inputs, one line each: every one gets a
# one-line error naming what is wrong and where, a non-zero status from -c
# and from a runbook (FILE:LINE), no change to the history, no sanitizer report.
. "$(dirname "$0")/lib.sh"

PCAP=$top_srcdir/share/sample/sample.pcap
TOPO=$top_srcdir/share/sample/sample.topo
sane() { ! grep -q -e 'runtime error' -e 'AddressSanitizer' -e 'LeakSanitizer' "$tmp/err"; }
one_line() { [ "$(wc -l <"$tmp/err")" -eq 1 ]; }
# what was stored before: every row of every table, as one checksum
digest() { python3 -c 'import sqlite3, sys, hashlib
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
h = hashlib.sha1()
for q in ("select * from sessions where id = 1",
          "select * from flows where session = 1 order by rowid",
          "select * from traces where session = 1 order by id",
          "select * from hops where trace in (select id from traces where session = 1)"
          " order by trace, idx"):
    for row in db.execute(q):
        h.update(repr(row).encode())
print(h.hexdigest())' "$1"; }

# --- inputs the catalogue refers to -------------------------------------------------
cd "$tmp" || hard "cannot enter '$tmp'"
python3 - "$PCAP" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
e = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
open("cut.pcap", "wb").write(data[:5000])              # mid-record
open("cuthdr.pcap", "wb").write(data[:24 + 8])          # mid record header
open("garbage.pcap", "wb").write(b"these are not the packets\n" * 4)
open("empty.pcap", "wb").write(b"")
open("headonly.pcap", "wb").write(data[:12])            # half a file header
huge = bytearray(data[:24 + 16 + 64])
huge[24 + 8:24 + 12] = struct.pack(e + "I", 0x7fffffff)  # caplen beyond snaplen
open("huge.pcap", "wb").write(bytes(huge))
# valid records, damaged frames: every third frame's ethertype and IP header
out, off, n = bytearray(data[:24]), 24, 0
while off + 16 <= len(data):
    caplen = struct.unpack(e + "I", data[off + 8:off + 12])[0]
    rec = bytearray(data[off:off + 16 + caplen])
    if n % 3 == 0 and caplen > 40:
        rec[16 + 12:16 + 14] = b"\x08\x00"
        rec[16 + 14] = 0x4f if n % 2 else 0x61           # bad IHL / not IPv4
    out += rec
    off += 16 + caplen
    n += 1
open("mangled.pcap", "wb").write(bytes(out))
PY
printf 'switch a role leaf mirror 10.0.0.1 loopback 10.0.0.2\nlink a e1 b e2\n' >unknown-switch.topo
printf 'switch a role leaf mirror 10.0.0.1 loopback 10.0.0.2\nswitch a role leaf mirror 10.0.0.3 loopback 10.0.0.4\n' >dup.topo
printf 'switch a role router mirror 10.0.0.1 loopback 10.0.0.2\n' >role.topo
printf '# fabric\nswitch a role leaf mirror 10.0.0.999 loopback 10.0.0.2\n' >addr.topo
printf 'switch a role leaf mirror 10.0.0.1 loopback 10.0.0.2\nsubnet a 10.1.0.0/40\n' >prefix.topo
printf 'switch a role leaf mirror 10.0.0.1 loopback 10.0.0.2\nrouter b\n' >keyword.topo
printf 'switch a role leaf\n' >short.topo
printf 'switch a role leaf mirror 10.0.0.1\nswitch b role spine mirror 10.0.0.2\nlink a e1 b e2 speed fast\n' >speed.topo
printf 'help quit\nnosuchverb\n' >bad-inner.hs
cd - >/dev/null || hard "cannot leave '$tmp'"

# the history every case runs against
db=$tmp/h.db
hs --db "$db" -r "$PCAP" --topo "$TOPO" -c 'capture status'
[ "$st" -eq 0 ] || hard "cannot make the history (status $st): $(cat "$tmp/err")"

# --- the catalogue --------------------------------------------------------------------
# KEEP | COMMAND | EXPECTED ERROR TEXT
#   KEEP '=': the history file is byte-identical afterwards; '+': a capture may
#   append its own session, what was there before is unchanged
cat >"$tmp/catalogue" <<'EOF_CAT'
= | frobnicate | unknown verb 'frobnicate'
= | s | 's' is ambiguous: set, source, sleep, sql
= | sleep | too few arguments for 'sleep' (usage: sleep <DURATION>)
= | quit now | too many arguments for 'quit'
= | topo | too few arguments for 'topo'
= | decode a.pcap -c | decode: -c needs a count of frames
= | help "quit | unterminated quote at column 6
= | help nosuchverb | nosuchverb
= | sleep soon | sleep: bad duration 'soon'
= | sleep -1s | sleep: bad duration '-1s'
= | ecmp leaf9 | ecmp: unknown switch 'leaf9'
= | ecmp leaf1 window soon | ecmp: bad window 'soon'
= | blame --epoch soon | blame: bad epoch 'soon'
= | set trace-timeout 0 | bad trace timeout '0'
= | set trace-timeout 3 fortnights | too many arguments for 'set'
= | set history sometimes | bad history policy 'sometimes'
= | set format yaml | bad format 'yaml'
= | capture start x.pcap --for 5parsecs | bad duration '5parsecs'
= | capture start x.pcap --for | '--for' needs a duration
= | capture start /nonexistent/x.pcap | cannot open '/nonexistent/x.pcap': No such file or directory
= | capture start nosuchiface0 | cannot capture on 'nosuchiface0'
= | capture start lo buffer 0 | bad buffer size '0' (1 MiB to 1 GiB, e.g. 64M)
= | capture start lo buffer 2G | bad buffer size '2G'
= | capture start lo buffer lots | bad buffer size 'lots'
= | capture start lo buffer | 'buffer' needs a size
= | capture start cut.pcap buffer 4M | 'buffer' is for an interface, 'cut.pcap' is a file
= | capture stop | no capture is running
= | capture restart | unknown capture subcommand 'restart'
= | traces flow 10.1.1.300 | traces: bad flow '10.1.1.300'
= | traces flow 10.1.1.11:70000 | traces: bad flow '10.1.1.11:70000'
= | traces flow 10.1.1.11:-1 | traces: bad flow '10.1.1.11:-1'
= | traces show abc | traces show: bad trace id 'abc'
= | traces limit -1 | traces: bad limit '-1'
= | traces since yesterday | traces: bad duration 'yesterday'
= | traces switch leaf9 | traces: unknown switch 'leaf9'
= | traces outcome sideways | traces: bad outcome 'sideways'
= | flows limit x | flows: bad limit 'x' (a number from 1 to 100000000)
= | flows sideways | flows: unexpected 'sideways' (limit N)
= | flows limit | flows: 'limit' needs a value
= | loops limit | loops: 'limit' needs a value
= | latency limit 0 | latency: bad limit '0' (a number from 1 to 100000)
= | drops window 5s | drops: unexpected 'window' (limit N)
= | filter add tcp port | filter add: bad filter 'tcp port': can't parse filter expression: syntax error
= | filter add ip host 10.1.1. | filter add: bad filter 'ip host 10.1.1.'
= | filter add port 99999 | filter add: bad filter 'port 99999'
= | filter del 7 | filter del: no filter 7
= | probe tcp > 10.1.3.12:99999 | probe: '10.1.3.12:99999': port out of range
= | probe tcp > 10.1.3.12:5001 via leaf9 | probe: unknown switch 'leaf9'
= | probe tcp > 10.1.3.12:5001 count 0 | probe: 'count 0' out of range
= | probe udp > nowhere:53 | probe: 'nowhere:53' is not an address or a known host
= | probe tcp > 10.1.3.12:5001 ttl 300 | probe: 'ttl 300' out of range
= | probe tcp > 10.1.3.12:5001 interval soon | probe: 
= | traceroute 10.1.1.11:x > 10.1.3.12:5001 | traceroute: '10.1.1.11:x': bad port 'x'
= | mirror add on leaf9 syn | unknown switch 'leaf9'
= | mirror add session 5000 syn | invalid session '5000'
= | mirror add flow tcp 10.1.1.1 300.1.1.1 | invalid address '300.1.1.1'
= | mirror add flow tcp 10.1.1.1:99999 any | 10.1.1.1:99999
= | mirror add sometimes | unknown match 'sometimes'
= | mirror del x | invalid rule id 'x'
= | topo frob | unknown topo subcommand 'frob'
= | topo load /nonexistent.topo | cannot open '/nonexistent.topo': No such file or directory
= | topo load unknown-switch.topo | unknown-switch.topo:2:11: unknown switch 'b'
= | topo load dup.topo | dup.topo:2:
= | topo load role.topo | role.topo:1:
= | topo load addr.topo | addr.topo:2:
= | topo load prefix.topo | prefix.topo:2:
= | topo load keyword.topo | keyword.topo:2:1:
= | topo load short.topo | short.topo:1:
= | source /nonexistent.hs | cannot open '/nonexistent.hs': No such file or directory
= | source bad-inner.hs | bad-inner.hs:2: error: unknown verb 'nosuchverb'
= | history show 999999 | no stored trace 999999
= | history show x | history show needs a stored trace id
= | history controls | unknown history table 'controls' (sessions, flows, traces, probes, events, control, show ID, prune, load)
= | history control limit 0 | history: bad limit '0'
= | sql delete from flows | sql: refused: the history is read-only here
= | sql drop table hops | sql: refused: the history is read-only here
= | sql selec 1 | sql: near "selec": syntax error
= | sql 'select * from nosuch' | sql: no such table: nosuch
= | capture start garbage.pcap | cannot read 'garbage.pcap': unknown file format
= | capture start empty.pcap | 'empty.pcap': truncated dump file
= | capture start headonly.pcap | 'headonly.pcap': truncated dump file
= | decode garbage.pcap | cannot read 'garbage.pcap': unknown file format
= | decode cut.pcap | 'cut.pcap': truncated dump file
= | decode cuthdr.pcap | 'cuthdr.pcap': truncated dump file
= | decode huge.pcap | 'huge.pcap': invalid packet capture length 2147483647
= | stats by colour file x.pcap | stats: unknown field 'colour'
= | stats by src,src | stats: field 'src' given twice
= | stats window 1s | stats: 'by FIELDS' is needed
= | stats by switch window 0s | stats: bad window '0s'
= | stats by switch window soon | stats: bad window 'soon'
= | stats by switch keys 0 | stats: bad key cap '0'
= | stats by switch where tcp port file x.pcap | stats: bad filter 'tcp port': can't parse filter expression: syntax error
= | stats by switch where window 1s | stats: 'where' needs a filter expression
= | stats by switch file x.pcap for 5s | stats: 'file' and 'for' do not go together
= | stats by switch | stats: no capture is running
= | stats by switch file /nonexistent/x.pcap | cannot open '/nonexistent/x.pcap': No such file or directory
= | stats by switch file garbage.pcap | cannot read 'garbage.pcap': unknown file format
= | stats by switch file cut.pcap | 'cut.pcap': truncated dump file
= | export yaml x.out | unknown export subcommand 'yaml'
= | export ndjson /nonexistent/dir/x.ndjson | export: cannot write '/nonexistent/dir/x.ndjson': No such file or directory
= | export ndjson - outcome sideways | export: bad outcome 'sideways'
= | export ndjson - records some | export: bad records 'some'
= | export ndjson - limit 0 | export: bad limit '0'
= | export ndjson - flow 10.1.1.300 | export: bad flow '10.1.1.300'
= | export ndjson - colour red | export: unknown option 'colour'
= | export pcap x.pcapng records traces | export: unknown option 'records'
= | export pcap x.pcapng | export pcap: no capture to take packets from
= | topo load speed.topo | speed.topo:3:22: expected link speed such as 10G or 100M, got 'fast'
= | rates window 1h | rates: bad window '1h' (expected a duration from 10.000ms to 5.000s)
= | rates limit 0 | rates: bad limit '0'
= | rates sideways | rates: unexpected 'sideways' (limit N, window D)
= | alert add link leaf1-spine1 util > 80x | alert: bad threshold '80x' at column 26
= | alert add 'link leaf1-spine9 util > 80%' | alert: unknown switch in 'leaf1-spine9' at column 6
= | alert add 'link leaf1-spine1 util > 80%' | alert: no speed for 'util' at column 19: link leaf1-spine1 has none in the topology
= | alert add link leaf1-leaf2 bps > 5M | alert: no link between 'leaf1' and 'leaf2' at column 6
= | alert add drops >= 10/s | alert: expected '>' or '<' at column 7, got '>='
= | alert add retx > 5/h | alert: bad threshold '5/h' at column 8
= | alert add | alert add needs a condition
= | alert del 7 | alert: no alert 7
= | alert del x | alert: bad id 'x'
= | alert mute | unknown alert subcommand 'mute'
= | snapshot | too few arguments for 'snapshot'
= | snapshot frob | unknown snapshot subcommand 'frob'
= | snapshot take now | snapshot take: unexpected 'now'
= | snapshot list all | snapshot list: unexpected 'all'
= | snapshot show | snapshot: a snapshot id is needed
= | snapshot show x | snapshot: bad snapshot id 'x'
= | snapshot show 0 | snapshot: bad snapshot id '0'
= | snapshot show 99 | no snapshot 99 in
= | snapshot diff 1 | snapshot diff needs two snapshot ids
= | snapshot diff 1 1 | snapshot diff needs two different snapshots
= | snapshot diff -1 2 | snapshot: bad snapshot id '-1'
= | snapshot diff 1 2 3 | snapshot diff: unexpected '3'
= | snapshot diff 1 2 --threshold lots | bad threshold 'lots'
= | snapshot diff 1 2 --threshold | '--threshold' needs a value
= | snapshot diff 1 2 | no snapshot 1 in
+ | capture start cut.pcap | 'cut.pcap': truncated dump file
+ | capture start huge.pcap | 'huge.pcap': invalid packet capture length
= | control ospf | control: unexpected 'ospf' (bgp, roce, pfc, limit N, since T)
= | control bgp roce | control: 'roce' after 'bgp' (one of bgp, roce, pfc)
= | control limit 0 | control: bad limit '0' (a number from 1)
= | control limit many | control: bad limit 'many'
= | control limit | control: 'limit' needs a value
= | control since yesterday | control: bad duration 'yesterday'
= | control since -5s | control: bad duration '-5s'
= | control roce limit 5 since 1s extra | too many arguments for 'control'
EOF_CAT

before=$(cksum <"$db")
old=$(digest "$db")
ncases=0
cd "$tmp" || hard "cannot enter '$tmp'"	# the catalogue names files in $tmp
while IFS='|' read -r keep cmd want; do
	keep=$(echo $keep) cmd=$(echo "$cmd" | sed 's/^ *//; s/ *$//') want=${want# }
	case $keep in '#'*|'') continue ;; esac
	ncases=$((ncases + 1))
	# an error in a sourced file names that file and line instead
	case $want in
	*": error: "*) at_c="^$want" at_f="^$want" ;;
	*) at_c="^-c:1: error: .*$want" at_f="^rb.hs:2: error: .*$want" ;;
	esac
	# from -c: one line on stderr, "-c:1: error: ...", status 1
	hs --db "$db" --topo "$TOPO" -c "$cmd"
	ok_c=true
	[ "$st" -eq 1 ] && one_line && sane && has "$at_c" "$tmp/err" || ok_c=false
	check "-c '$cmd': status $st, error '$want'" $ok_c
	$ok_c || sed 's/^/#   got: /' "$tmp/err" | head -n 3
	# from a runbook: FILE:LINE, and the lines after it do not run
	printf 'help quit\n%s\nhelp sleep\n' "$cmd" >"$tmp/rb.hs"
	hs --db "$db" --topo "$TOPO" -f rb.hs
	ok_f=true
	[ "$st" -eq 1 ] && sane && has "$at_f" "$tmp/err" &&
		hasnt 'usage: sleep' "$tmp/out" || ok_f=false
	check "-f line 2 '$cmd': status $st, FILE:LINE" $ok_f
	if [ "$keep" = "=" ]; then
		check "'$cmd' left the history byte-identical" [ "$(cksum <"$db")" = "$before" ]
	else
		check "'$cmd' left what was stored unchanged" [ "$(digest "$db")" = "$old" ]
		before=$(cksum <"$db")
	fi
done <"$tmp/catalogue"
check "the catalogue ran ($ncases cases)" [ "$ncases" -ge 60 ]

# --- on the command line: -r with a damaged file, bad options -----------------------------
for f in garbage empty cut huge; do
	hs --db "$db" -r "$f.pcap" -c 'capture status'
	check "-r $f.pcap: fails cleanly (status $st)" failed_cleanly
	check "-r $f.pcap: the error names the file" has "'$f.pcap'" "$tmp/err"
	check "-r $f.pcap: no sanitizer report" sane
done
check "-r: what was stored before is unchanged" [ "$(digest "$db")" = "$old" ]
cd - >/dev/null || hard "cannot leave '$tmp'"
hs --db "$db" --topo "$tmp/unknown-switch.topo" -c 'help quit'
check "--topo with a bad file: status $st" [ "$st" -eq 1 ]
check "--topo with a bad file: FILE:LINE:COL" has "unknown-switch.topo:2:11: unknown switch 'b'" "$tmp/err"
# a probe whose topology's analyzer interface is not there: said before
# anything is opened or sent
sed 's/^analyzer \(.*\) iface .*/analyzer \1 iface hs-nosuch0/' "$TOPO" >"$tmp/noiface.topo"
hs --db "$db" --topo "$tmp/noiface.topo" -c 'probe tcp > 10.1.3.12:5001 count 1'
check "probe without the analyzer's interface: status $st, one line" eval '[ "$st" -eq 1 ] && one_line && sane'
check "probe without the analyzer's interface: named, and why it is wanted" \
	has "^-c:1: error: probe: no interface 'hs-nosuch0', where the topology's analyzer takes the mirrored copies (is the fabric up" "$tmp/err"
hs --db "$db" --frobnicate
check "an unknown option is a usage error (status $st)" [ "$st" -eq 2 ]
check "an unknown option is named" has "unknown option '--frobnicate'" "$tmp/err"
hs --db "$db" -c
check "an option without its value is a usage error (status $st)" [ "$st" -eq 2 ]
hs --db "$db" -Z nosuchuser -c help
check "-Z with an unknown user: status $st" [ "$st" -eq 2 ]
check "-Z with an unknown user: one error line" one_line
check "-Z with an unknown user: the user is named" has "no user 'nosuchuser'" "$tmp/err"
check "-Z with an unknown user: nothing ran" [ ! -s "$tmp/out" ]
hs --db "$db" -Z '' -c help
check "-Z with an empty user: a usage error (status $st)" [ "$st" -eq 2 ]
check "-Z with an empty user: said so" has "hopscope: -Z needs a user" "$tmp/err"

# --- frames that are wrong inside a sound file: counted and skipped ---------------------------
hs --db "$tmp/m.db" --json -r "$tmp/mangled.pcap" --topo "$TOPO" -c 'capture status'
check "mangled frames: the capture runs (status $st)" [ "$st" -eq 0 ]
check "mangled frames: no sanitizer report" sane
derr=$(sed -n 's/.*"decode_errors":\([0-9]*\).*/\1/p' "$tmp/out" | tail -n 1)
check "mangled frames: counted as decode errors (${derr:-none})" [ "${derr:-0}" -gt 0 ]
hs -c "decode $tmp/mangled.pcap"
check "mangled frames: decode prints every frame (status $st)" [ "$st" -eq 0 ]
check "mangled frames: decode names the reasons" has 'bad-ip-header\|not-ip\|truncated' "$tmp/out"
finish
