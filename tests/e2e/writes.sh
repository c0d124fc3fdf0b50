#!/bin/sh
# writes.sh - a file a verb writes (export ndjson, export pcap) is never the
# open history, one of its side files or an input being read; an existing
# file or a symbolic link is replaced only with --force, a link never written
# through; a write that fails leaves what was there; FIFOs and standard
# output still stream.
. "$(dirname "$0")/lib.sh"

PCAP=$top_srcdir/share/sample/sample.pcap
command -v sqlite3 >/dev/null 2>&1 || skip "sqlite3 (the shell) is missing"

db=$tmp/h.db
cp "$PCAP" "$tmp/in.pcap"
hs --db "$db" -r "$tmp/in.pcap" -c 'capture status'
[ "$st" -eq 0 ] || hard "the first capture failed: $(cat "$tmp/err")"
sessions() { sqlite3 "$db" 'select count(*) from sessions' 2>/dev/null; }

# --- the open history, by any name ------------------------------------------------
cd "$tmp" || hard "cannot enter '$tmp'"
ln h.db also.db
before=$(cksum <h.db)
hs --db h.db -c 'export ndjson h.db'
check "export onto the history, no capture: refused (status $st)" [ "$st" -eq 1 ]
check "export onto the history, no capture: byte-identical" [ "$(cksum <h.db)" = "$before" ]
hs --db h.db -r in.pcap -c 'export pcap h.db'
check "export pcap onto the history: refused (status $st)" [ "$st" -eq 1 ]
check "export pcap onto the history: it is still a history" \
	[ "$(sqlite3 h.db 'pragma integrity_check' 2>/dev/null)" = ok ]
# --force replaces a file, never one of these
for fmt in ndjson pcap; do
	for name in h.db also.db h.db-wal h.db-journal; do
		nsess=$(sessions)
		hs --db h.db -r in.pcap -c "export $fmt $name --force"
		check "export $fmt onto $name: refused (status $st)" [ "$st" -eq 1 ]
		check "export $fmt onto $name: says why" \
			has "export: will not write '$name': it is .*open history" "$tmp/err"
		check "export $fmt onto $name: nothing exported" hasnt 'exported' "$tmp/out"
		# sound, and holding what it held and the session of this run
		check "export $fmt onto $name: the history is intact" \
			[ "$(sqlite3 h.db 'pragma integrity_check' 2>/dev/null)" = ok ] &&
			[ "$(sessions)" = $((nsess + 1)) ]
	done
done
cd / || hard "cannot leave '$tmp'"
check "no side file was made by an export" [ ! -e "$tmp/h.db-journal" ]

# --- the capture being read, a runbook being run ----------------------------------
for fmt in ndjson pcap; do
	hs --db "$db" -r "$tmp/in.pcap" -c "export $fmt $tmp/in.pcap --force"
	check "export $fmt onto the capture being read: refused (status $st)" [ "$st" -eq 1 ]
	check "export $fmt onto the capture being read: says so" \
		has "will not write '$tmp/in.pcap': it is the capture file being read" "$tmp/err"
	check "export $fmt onto the capture being read: it is intact" cmp -s "$PCAP" "$tmp/in.pcap"
done
printf 'traces limit 1\nexport ndjson %s --force\n' "$tmp/rb.hs" >"$tmp/rb.hs"
cp "$tmp/rb.hs" "$tmp/rb.orig"
hs --db "$db" -r "$tmp/in.pcap" -f "$tmp/rb.hs"
check "export onto the runbook being run: refused (status $st)" [ "$st" -eq 1 ]
check "export onto the runbook being run: says so" has "it is a runbook being run" "$tmp/err"
check "export onto the runbook being run: it is intact" cmp -s "$tmp/rb.hs" "$tmp/rb.orig"
# commands read from a file on standard input, by another name
printf 'traces limit 1\nexport ndjson %s --force\n' "$tmp/stdin-also.hs" >"$tmp/stdin.hs"
ln "$tmp/stdin.hs" "$tmp/stdin-also.hs"
cp "$tmp/stdin.hs" "$tmp/stdin.orig"
timeout 60 "$HS" --db "$db" -r "$tmp/in.pcap" <"$tmp/stdin.hs" >"$tmp/out" 2>"$tmp/err"
st=$?
check "export onto the commands on standard input: refused (status $st)" [ "$st" -eq 1 ]
check "export onto the commands on standard input: says so" \
	has "^stdin:2: error: export: will not write '$tmp/stdin-also.hs': it is the file on standard input" "$tmp/err"
check "export onto the commands on standard input: it is intact" cmp -s "$tmp/stdin.hs" "$tmp/stdin.orig"

# --- an existing file, a symbolic link ---------------------------------------------
echo 'keep me' >"$tmp/old.ndjson"
hs --db "$db" -r "$tmp/in.pcap" -c "export ndjson $tmp/old.ndjson"
check "existing file: refused without --force (status $st)" [ "$st" -eq 1 ]
check "existing file: says how to replace it" \
	has "will not write '$tmp/old.ndjson': it exists (--force replaces it)" "$tmp/err"
check "existing file: unchanged" [ "$(cat "$tmp/old.ndjson")" = 'keep me' ]
hs --db "$db" -r "$tmp/in.pcap" -c "export ndjson $tmp/old.ndjson --force"
check "existing file, --force: succeeds (status $st)" [ "$st" -eq 0 ]
check "existing file, --force: replaced" has '"type":"trace"' "$tmp/old.ndjson"

echo 'not yours' >"$tmp/target"
ln -s "$tmp/target" "$tmp/link.pcapng"
hs --db "$db" -r "$tmp/in.pcap" -c "export pcap $tmp/link.pcapng"
check "symbolic link: refused without --force (status $st)" [ "$st" -eq 1 ]
check "symbolic link: says so" has "'$tmp/link.pcapng': it is a symbolic link" "$tmp/err"
check "symbolic link: what it points to is unchanged" [ "$(cat "$tmp/target")" = 'not yours' ]
ln -s "$tmp/nowhere" "$tmp/dangling"
hs --db "$db" -r "$tmp/in.pcap" -c "export ndjson $tmp/dangling"
check "dangling link: refused (status $st)" [ "$st" -eq 1 ]
check "dangling link: nothing made where it points" [ ! -e "$tmp/nowhere" ]
hs --db "$db" -r "$tmp/in.pcap" -c "export pcap $tmp/link.pcapng --force"
check "symbolic link, --force: succeeds (status $st)" [ "$st" -eq 0 ]
check "symbolic link, --force: the link is replaced by a file" \
	eval '[ ! -L "$tmp/link.pcapng" ] && [ -s "$tmp/link.pcapng" ]'
check "symbolic link, --force: what it pointed to is unchanged" \
	[ "$(cat "$tmp/target")" = 'not yours' ]

# --- a write that fails keeps what was there ----------------------------------------
# files larger than 64 KiB cannot be written (EFBIG; the signal ignored)
echo 'the last good export' >"$tmp/big.ndjson"
(trap '' XFSZ; ulimit -f 128
 exec "$HS" --db "$tmp/off.db" -c "set history off; capture start $tmp/in.pcap;
	export ndjson $tmp/big.ndjson --force" >"$tmp/out" 2>"$tmp/err" </dev/null)
st=$?
check "a write that fails: the export fails (status $st)" [ "$st" -eq 1 ]
check "a write that fails: says why" has "cannot write '$tmp/big.ndjson': File too large" "$tmp/err"
check "a write that fails: the file before is kept" [ "$(cat "$tmp/big.ndjson")" = 'the last good export' ]
check "a write that fails: no temporary file is left" \
	[ -z "$(find "$tmp" -name '.big.ndjson.*')" ]

# --- streams: a FIFO, standard output, a device -------------------------------------
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.out" &
reader=$!
hs --db "$db" -r "$tmp/in.pcap" -c "export ndjson $tmp/fifo records traces"
wait "$reader"
check "FIFO: streamed (status $st)" eval '[ "$st" -eq 0 ] && has "\"type\":\"trace\"" "$tmp/fifo.out"'
check "FIFO: still a FIFO" [ -p "$tmp/fifo" ]
hs --db "$db" -r "$tmp/in.pcap" -c 'export ndjson - records traces'
check "standard output: streamed (status $st)" eval '[ "$st" -eq 0 ] && has "\"type\":\"trace\"" "$tmp/out"'
hs --db "$db" -r "$tmp/in.pcap" -c 'export ndjson /dev/null'
check "/dev/null: written (status $st)" eval '[ "$st" -eq 0 ] && [ -c /dev/null ]'
hs --db "$db" -r "$tmp/in.pcap" -c "export ndjson $tmp"
check "a directory: refused (status $st)" eval '[ "$st" -eq 1 ] && has "Is a directory" "$tmp/err"'

finish
