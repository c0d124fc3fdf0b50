#!/bin/sh
# attach.sh - hopscope serve and consoles attached to it: a daemon on the
# sample capture with its own socket and history in a temporary directory;
# the same answers as a console of its own, runbooks and exit statuses,
# several consoles, one killed, interrupted or refused, bad bytes on the
# socket, a bad configuration, the daemon killed.
. "$(dirname "$0")/lib.sh"

S=$top_srcdir/share/sample
chmod 755 "$tmp"		# another user attaches below
SOCK=$tmp/hs.sock
H=$tmp/h.db

# the daemon in the background: its pid in $dpid, its log in $tmp/log
serve() { # CONFIG [ARG...]
	conf=$1
	shift
	rm -f "$tmp/d.pid"
	timeout 120 sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/d.pid" \
		"$HS" serve --config "$conf" "$@" >"$tmp/log.out" 2>"$tmp/log" </dev/null &
	i=0
	while [ ! -s "$tmp/d.pid" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
	dpid=$(cat "$tmp/d.pid")
	cleanup="$cleanup kill -9 $dpid 2>/dev/null;"
	i=0
	while ! grep -q '^info: ready' "$tmp/log" && [ $i -lt 400 ]; do
		kill -0 "$dpid" 2>/dev/null || return 1
		sleep 0.05
		i=$((i + 1))
	done
	grep -q '^info: ready' "$tmp/log"
}
att() { hs --attach "$SOCK" "$@"; }
# wait up to 15 s for one snapshot of tmux session SESSION's screen (in
# $tmp/screen) to match every ERE: a screen is written in several pieces,
# and one read between them shows part of a frame
wait_all() { # SESSION ERE...
	_s=$1
	shift
	_i=0
	while [ $_i -lt 150 ]; do
		$T capture-pane -p -t "$_s" >"$tmp/screen" 2>/dev/null
		_all=1
		for _re; do grep -Eq -- "$_re" "$tmp/screen" || { _all=0; break; }; done
		[ $_all -eq 1 ] && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}
# wait up to 15 s for the daemon's log to say ERE (what a console's frame
# made it do is logged when the daemon has read it, not when the console
# has drawn its screen)
log_wait() {
	i=0
	while ! grep -Eq -- "$1" "$tmp/log" && [ $i -lt 300 ]; do sleep 0.05; i=$((i + 1)); done
	grep -Eq -- "$1" "$tmp/log"
}
# a console in the background whose 'sleep 30' is pending in the daemon:
# its job in $aj (wait on it), its own pid in $a (signal it), its output
# in $tmp/a.out and $tmp/a.err. The line before it says when: the console
# sends 'sleep 30' as that line's answer ends, before the test can see it
pending() {
	rm -f "$tmp/hs.pid"
	timeout 60 sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/hs.pid" "$HS" --attach "$SOCK" \
		-c 'flows limit 1; sleep 30' >"$tmp/a.out" 2>"$tmp/a.err" &
	aj=$!
	a=$(sig_pid)
	i=0
	while ! grep -q "of 320 flows" "$tmp/a.out" && [ $i -lt 300 ]; do
		sleep 0.05; i=$((i + 1)); done
}
# a frame: length (4 bytes, big-endian) of what follows, type, payload
frames() { # PYTHON-EXPRESSION of bytes to send; prints what came back, repr'd
	python3 - "$SOCK" "$1" <<'EOF'
import socket, struct, sys
def fr(t, p=b''):
	return struct.pack('>IB', len(p) + 1, t) + p
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(10)
try:
	s.sendall(eval(sys.argv[2]))
except OSError:
	pass
got = b''
try:
	while True:
		b = s.recv(65536)
		if not b:
			break
		got += b
except OSError:
	pass
print(repr(got))
EOF
}
VERSION=$("$HS" --version | sed 's/^hopscope //')

# --- a bad configuration: one line, FILE:LINE, nothing touched ---------------------
cat >"$tmp/bad.conf" <<EOF
# a daemon
topo load $S/sample.topo
tracez
listen unix $SOCK
EOF
hs serve --config "$tmp/bad.conf" --db "$H"
check "a bad verb fails the configuration (status $st)" failed_cleanly
check "with one line naming the file and the line" \
	eval '[ "$(wc -l <"$tmp/err")" -eq 1 ] && has "^$tmp/bad.conf:3: error: unknown verb .tracez." "$tmp/err"'
check "before anything ran: no history, no socket" eval '[ ! -e "$H" ] && [ ! -e "$SOCK" ]'
for line in 'listen tcp 127.0.0.1:4000' 'allow no-such-user-here attach' 'allow root fly' \
	'listen unix /x group no-such-group-here' 'listen unix /x mode 0400' 'watch' 'quit' \
	'user no-such-user-here' 'user'; do
	printf '%s\n' "$line" >"$tmp/bad.conf"
	hs serve --config "$tmp/bad.conf" --db "$H"
	check "'$line' is refused at line 1 (status $st)" \
		eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
			has "^$tmp/bad.conf:1: error: " "$tmp/err" && [ ! -e "$H" ]'
done
# what only running it finds (a verb's own arguments): the same line, status 1
printf 'capture start %s bogus\nlisten unix %s\n' "$S/sample.pcap" "$SOCK" >"$tmp/bad.conf"
hs serve --config "$tmp/bad.conf" --db "$H"
check "a line that fails as it runs stops the daemon, FILE:LINE (status $st)" \
	eval 'failed_cleanly && has "^$tmp/bad.conf:1: error: capture start: " "$tmp/err" &&
		has "^info: stopped: exit status 1" "$tmp/err" && [ ! -e "$SOCK" ]'
rm -f "$H"*
hs serve --config "$tmp/none.conf"
check "a missing configuration is named (status $st)" \
	eval 'failed_cleanly && has "cannot open configuration .$tmp/none.conf." "$tmp/err"'
hs serve --bogus
check "an unknown option is a usage error (status $st)" eval '[ "$st" -eq 2 ]'

# certificates of the test's own, for consoles over TCP: a CA that signs the
# daemon's (for 127.0.0.1) and alice's; mallory's is signed by another CA
command -v openssl >/dev/null || hard "no openssl to make certificates (apt-get install openssl)"
cert() { # NAME CN SIGNER|self [EXTENSION]
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/$1.key" \
		-subj "/CN=$2" -out "$tmp/$1.csr" 2>/dev/null || return 1
	printf '%s\n' "${4:-basicConstraints=CA:FALSE}" >"$tmp/$1.ext"
	if [ "$3" = self ]; then
		openssl x509 -req -in "$tmp/$1.csr" -signkey "$tmp/$1.key" -days 2 \
			-extfile "$tmp/$1.ext" -out "$tmp/$1.pem" 2>/dev/null
	else
		openssl x509 -req -in "$tmp/$1.csr" -CA "$tmp/$3.pem" -CAkey "$tmp/$3.key" \
			-CAcreateserial -days 2 -extfile "$tmp/$1.ext" -out "$tmp/$1.pem" 2>/dev/null
	fi
}
cert ca hs-test-ca self basicConstraints=critical,CA:TRUE && cert other other-ca self basicConstraints=critical,CA:TRUE &&
	cert daemon daemon ca subjectAltName=IP:127.0.0.1 && cert alice alice ca &&
	cert mallory alice other || hard "openssl could not make the test's certificates"
printf 's3cret of the test\n' >"$tmp/secret"
cp "$tmp/secret" "$tmp/secret644"
chmod 600 "$tmp/secret"
chmod 644 "$tmp/secret644"
printf 'listen tcp 127.0.0.1:0 tls cert %s key %s secret %s\n' "$tmp/daemon.pem" "$tmp/daemon.key" \
	"$tmp/secret644" >"$tmp/bad.conf"
hs serve --config "$tmp/bad.conf" --db "$H" --check
check "a secret other users may read: a warning at its line, nothing refused (status $st)" \
	eval '[ "$st" -eq 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		has "^$tmp/bad.conf:1: warning: listen: secret .$tmp/secret644. may be read by other users" "$tmp/err"'
printf 'not the secret\n' >"$tmp/wrong"
chmod 600 "$tmp/wrong"
for line in "listen tcp 127.0.0.1:0 tls cert $tmp/daemon.pem key $tmp/daemon.key" \
	"listen tcp 127.0.0.1:0 tls cert $tmp/none.pem key $tmp/daemon.key secret $tmp/secret" \
	"listen tcp 127.0.0.1:0 tls cert $tmp/daemon.pem key $tmp/alice.key secret $tmp/secret" \
	"listen tcp 127.0.0.1:0 tls cert $tmp/daemon.pem key $tmp/daemon.key secret $tmp/none" \
	"listen tcp localhost:99999 tls cert $tmp/daemon.pem key $tmp/daemon.key secret $tmp/secret"; do
	printf '%s\n' "$line" >"$tmp/bad.conf"
	hs serve --config "$tmp/bad.conf" --db "$H"
	check "a bad 'listen tcp' is refused at line 1 (status $st):$(sed 's/.*error: listen://' "$tmp/err")" \
		eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
			has "^$tmp/bad.conf:1: error: listen: " "$tmp/err" && [ ! -e "$H" ]'
done
# OpenSSL is loaded when TLS is first asked for, not at every start
check "hopscope starts without OpenSSL: it is not linked with it" \
	eval 'readelf -d "$HS" >"$tmp/dyn" && has NEEDED "$tmp/dyn" && hasnt "libssl\|libcrypto" "$tmp/dyn"'
printf 'listen tcp 127.0.0.1:0 tls cert %s key %s secret %s\n' "$tmp/daemon.pem" "$tmp/daemon.key" \
	"$tmp/secret" >"$tmp/bad.conf"
export HOPSCOPE_TEST_LIBSSL="$tmp/nolibssl.so.3"
hs serve --config "$tmp/bad.conf" --db "$H"
check "libssl missing: 'listen tcp' is refused in one line naming it (status $st)" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -e "$H" ] &&
		has "^$tmp/bad.conf:1: error: listen: cannot load the TLS library: $tmp/nolibssl.so.3: cannot open shared object file" "$tmp/err"'
HOPSCOPE_TEST_LIBSSL=libc.so.6
hs serve --config "$tmp/bad.conf" --db "$H"
check "a libssl without a function TLS uses: refused in one line (status $st)" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		has "error: listen: cannot load the TLS library: .*undefined symbol: " "$tmp/err"'
unset HOPSCOPE_TEST_LIBSSL

cat >"$tmp/hs.conf" <<EOF
# the sample fabric, read once; consoles attach at a socket of the test's
topo load $S/sample.topo
alert add drops > 5/s
capture start $S/sample.pcap
listen unix $SOCK mode 0666
listen tcp 127.0.0.1:0 tls cert $tmp/daemon.pem key $tmp/daemon.key ca $tmp/ca.pem secret $tmp/secret
allow nobody attach
allow alice attach
EOF
hs serve --config "$tmp/hs.conf" --db "$H" --check
check "--check says a good configuration is good and runs nothing (status $st)" \
	eval '[ "$st" -eq 0 ] && has "is good: consoles would attach at .$SOCK. and over TCP at 127.0.0.1:0 (TLS)" "$tmp/out" &&
		[ ! -e "$H" ] && [ ! -e "$SOCK" ]'

# --- the daemon; consoles attached give what a console of its own gives --------------
serve "$tmp/hs.conf" --db "$H" || hard "the daemon did not start: $(cat "$tmp/log")"
check "the daemon listens at the socket of its configuration" eval '[ -S "$SOCK" ] &&
	[ "$(stat -c %a "$SOCK")" = 666 ]'
check "its log: levels first; an alert that fired, once; the capture's start and end" \
	eval '[ "$(grep -c "^warning: alert 1: drops > 5/s (" "$tmp/log")" -eq 1 ] &&
		has "^info: capture started on .$S/sample.pcap." "$tmp/log" &&
		has "^info: capture of .$S/sample.pcap. ended: end of file" "$tmp/log" &&
		! grep -Ev "^(info|warning|error): " "$tmp/log"'
hs --db "$tmp/own.db" -r "$S/sample.pcap" --topo "$S/sample.topo" -c 'traces limit 20; flows limit 5; drops'
cp "$tmp/out" "$tmp/own.out"
att -c 'traces limit 20; flows limit 5; drops'
i=0
while ! grep -q "^info: client 1 .* detached" "$tmp/log" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check "attached, traces, flows and drops are those of a console of its own (status $st)" \
	eval '[ "$st" -eq 0 ] && [ -s "$tmp/out" ] && cmp -s "$tmp/out" "$tmp/own.out"'
check "the daemon logs who attached, and who left" \
	eval 'has "^info: client 1 (user=root uid=0 pid=[0-9]*) attached" "$tmp/log" &&
		has "^info: client 1 .* detached" "$tmp/log"'
att --json -c 'traces limit 2'
check "--json: one document, as the console's own" \
	eval '[ "$st" -eq 0 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] &&
		python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d[\"traces\"]) == 2" "$tmp/out"'
att traces limit 1 --json
check "a verb as words, JSON by the verb's own --json" eval '[ "$st" -eq 0 ] && has "^{\"traces\":\[" "$tmp/out"'
att -c 'set format json; traces limit 1'
check "a console's settings are its own: json for it" has '^{"traces":' "$tmp/out"
att -c 'traces limit 1'
check "and text for the next" eval 'hasnt "^{" "$tmp/out" && has "^id " "$tmp/out"'

att -c 'flows limit 1; tracez; flows limit 2'
check "a failed line: status 1, its error after -c's place, the rest not run" \
	eval '[ "$st" -eq 1 ] && has "^-c:2: error: unknown verb .tracez." "$tmp/err" &&
		[ "$(grep -c "^10\." "$tmp/out")" -eq 1 ]'
printf 'flows limit 1\n\ntraces show 99999\nflows\n' >"$tmp/rb.hs"
att -f "$tmp/rb.hs"
check "a runbook stops at its failing line, FILE:LINE: before the daemon's error" \
	eval '[ "$st" -eq 1 ] && has "^$tmp/rb.hs:3: error: " "$tmp/err" && [ "$(grep -c "^10\." "$tmp/out")" -eq 1 ]'
att --keep-going -f "$tmp/rb.hs"
check "--keep-going carries on, still status 1" eval '[ "$st" -eq 1 ] && has "50 of 320 flows" "$tmp/out"'
printf 'traces limit 1\nsource %s\nquit\nflows\n' "$tmp/rb.hs" | { timeout 60 "$HS" --attach "$SOCK" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/st"; }
check "lines on standard input; 'source' reads the console's file; 'quit' leaves" \
	eval '[ "$(cat "$tmp/st")" -eq 1 ] && has "^$tmp/rb.hs:3: error: " "$tmp/err" && hasnt "50 of 320 flows" "$tmp/out"'

# a daemon at the default socket: a console with nothing of its own attaches
HOPSCOPE_SOCKET=$SOCK hs -c 'traces limit 20; flows limit 5; drops'
check "where a daemon answers, the console attaches by itself and says so first (status $st)" \
	eval '[ "$st" -eq 0 ] && cmp -s "$tmp/out" "$tmp/own.out" &&
		[ "$(head -n 1 "$tmp/err")" = "attached to the daemon at '"'$SOCK'"' (hopscope serve); -r, -i, --lab or --db open a console of its own" ]'
HOPSCOPE_SOCKET=$SOCK hs --db "$tmp/own2.db" -c 'traces limit 20'
check "with --db it is a console of its own" eval '[ "$st" -eq 0 ] && hasnt "attached" "$tmp/err" && hasnt "^1:" "$tmp/out"'
HOPSCOPE_SOCKET=$tmp/none.sock hs --db "$tmp/own2.db" -c 'traces limit 1'
check "no daemon: a console of its own, silently" eval '[ "$st" -eq 0 ] && [ ! -s "$tmp/err" ]'

# detach and attach again: the history and the traces are the daemon's
att -c 'history sessions'
check "attached again later, the history is there" eval '[ "$st" -eq 0 ] && has "sample.pcap" "$tmp/out"'

# --- consoles at once: one holds a pending verb, one is killed, one interrupted --------
pending
kill -9 "$a"
t0=$(date +%s)
att -c 'traces limit 1'
t1=$(date +%s)
check "a console killed with its verb pending: the next console's line runs at once (status $st)" \
	eval '[ "$st" -eq 0 ] && [ $((t1 - t0)) -lt 10 ] && has "^1:" "$tmp/out"'
check "the daemon lives on and logs the departure" \
	eval 'kill -0 $dpid && has "pid=$a) detached" "$tmp/log"'

pending
# a second console queues behind the pending one
timeout 60 "$HS" --attach "$SOCK" -c 'flows limit 1' >"$tmp/b.out" 2>&1 &
b=$!
sleep 0.5
check "a second console waits while another's verb is pending" eval 'kill -0 $b && [ ! -s "$tmp/b.out" ]'
kill -INT "$a"
wait "$aj"
ast=$?
wait "$b"
bst=$?
check "Ctrl-C ends the interrupted console (status $ast), the other's line then runs (status $bst)" \
	eval '[ "$ast" -eq 130 ] && [ "$bst" -eq 0 ] && has "^10\." "$tmp/b.out"'

# --- refused: another version, another user, bad bytes ---------------------------------
frames 'fr(1, b"\x02\x00" + b"0.0.0-other")' >"$tmp/got"
check "a console of another version is refused, both versions named" \
	eval 'has "the console is hopscope 0.0.0-other (protocol 2), the daemon hopscope $VERSION (protocol 2)" "$tmp/got" &&
		has "refused: the console is hopscope 0.0.0-other" "$tmp/log"'
frames 'fr(1, b"\x01\x00" + b"'"$VERSION"'")' >"$tmp/got"
check "and one of another protocol" has "(protocol 1), the daemon" "$tmp/got"
frames 'struct.pack(">IB", 0x7fffffff, 2) + b"x" * 100' >"$tmp/got"
check "an oversized frame closes the connection, logged in one line" \
	eval 'has "^warning: client [0-9]* .* closed: a frame of 2147483647 bytes" "$tmp/log"'
frames 'b"\x00\x00\x00\x00\x07garbage"' >"$tmp/got"
frames 'fr(2, b"traces")' >"$tmp/got"
check "malformed bytes and a line before hello close the connection, logged" \
	eval 'has "closed: a frame of 0 bytes" "$tmp/log" && has "closed: a line frame before hello" "$tmp/log"'
att -c 'traces limit 1'
check "and the daemon serves on" eval '[ "$st" -eq 0 ] && has "^1:" "$tmp/out"'

# --- a daemon that cannot be wedged: a silent connection, a console that never reads ----
# one that never says hello is closed after a few seconds (measured meanwhile):
# silent.py SOCKET|PORT prints how long the daemon kept it open
cat >"$tmp/silent.py" <<'EOF'
import socket, sys, time
if sys.argv[1].isdigit():
	s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
else:
	s = socket.socket(socket.AF_UNIX)
	s.connect(sys.argv[1])
s.settimeout(30)
t = time.time()
try:
	while s.recv(4096):
		pass
except OSError:
	pass
print(round(time.time() - t))
EOF
python3 "$tmp/silent.py" "$SOCK" >"$tmp/silent" &
silent=$!
# a line of about 11 MB of results: all of it reaches a console that reads
big='sql WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)'
big="$big SELECT x, hex(zeroblob(50)) FROM c"
att -c "$big"
check "a console that reads takes a verb's output of 11 MB whole (status $st)" \
	eval '[ "$st" -eq 0 ] && [ "$(grep -c "^[0-9]* | 0\{100\}$" "$tmp/out")" -eq 100000 ]'
# one sends it twice, and reads none of it
python3 - "$SOCK" "$VERSION" "$big" <<'EOF' &
import socket, struct, sys, time
def fr(t, p=b''):
	return struct.pack('>IB', len(p) + 1, t) + p
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(fr(1, b"\x02\x00" + sys.argv[2].encode()))
s.sendall(fr(2, sys.argv[3].encode()) * 2)
time.sleep(30)
EOF
mute=$!
cleanup="$cleanup kill $mute 2>/dev/null;"
sleep 1
att -c 'traces limit 1'
check "another console is answered meanwhile (status $st)" eval '[ "$st" -eq 0 ] && has "^1:" "$tmp/out"'
i=0
while ! grep -q "closed: it took none of its output" "$tmp/log" && [ $i -lt 300 ]; do
	sleep 0.05; i=$((i + 1)); done
check "past 4 MiB not taken its lines wait; none taken for 10 s, it is closed, logged" \
	has "^warning: client [0-9]* (user=root .* closed: it took none of its output for 10 s (more than 4 MiB waiting)" "$tmp/log"
kill "$mute" 2>/dev/null
wait "$silent"
check "a connection that never says hello is closed after 5 s ($(cat "$tmp/silent") s), logged" \
	eval '[ "$(cat "$tmp/silent")" -ge 4 ] && [ "$(cat "$tmp/silent")" -le 8 ] &&
		has "^warning: client [0-9]* .* closed: no hello in 5 s" "$tmp/log"'

# --- over TCP, with TLS: a secret or a certificate its CA signed --------------------
ADDR=$(sed -n 's/^info: ready: .* over TCP at \(127\.0\.0\.1:[0-9]*\) (TLS)$/\1/p' "$tmp/log" | tail -n 1)
check "the daemon listens over TCP too, on the port the kernel chose, and says where" \
	eval '[ -n "$ADDR" ] && [ "${ADDR#127.0.0.1:}" -gt 0 ]'
tatt() { hs --attach "$ADDR" --tls-ca "$tmp/ca.pem" "$@"; }
# a TCP connection that never says anything (measured meanwhile)
python3 "$tmp/silent.py" "${ADDR#127.0.0.1:}" >"$tmp/silent_tcp" &
silent=$!
tatt --secret "$tmp/secret" -c 'traces limit 20; flows limit 5; drops'
check "the right secret, which is the right to attach: the same answers as a console of its own (status $st)" \
	eval '[ "$st" -eq 0 ] && cmp -s "$tmp/out" "$tmp/own.out" &&
		has "^info: client [0-9]* (peer 127.0.0.1:[0-9]* user=secret) attached" "$tmp/log"'
tatt --secret "$tmp/wrong" -c 'traces limit 1'
check "a wrong secret is refused in one line (status $st), logged with the peer's address" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -s "$tmp/out" ] &&
		has "^error: the secret is not this daemon.s" "$tmp/err" &&
		has "^warning: client [0-9]* (peer 127.0.0.1:[0-9]* user=-) refused: the secret is not this daemon.s" "$tmp/log"'
tatt -c 'traces limit 1'
check "neither a secret nor a certificate: refused, saying what the daemon takes (status $st)" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] && has "certificate its CA signed, or its secret" "$tmp/err"'
tatt --tls-cert "$tmp/alice.pem" --tls-key "$tmp/alice.key" -c 'traces limit 1; probe tcp > 10.1.4.12:5001 via leaf1'
check "a certificate the CA signed: its name is the user, the allow lines its rights (status $st)" \
	eval '[ "$st" -eq 1 ] && has "^1:" "$tmp/out" && has "probe tcp: user .alice. may not do this here" "$tmp/err" &&
		has "^info: client [0-9]* (peer 127.0.0.1:[0-9]* user=alice) attached" "$tmp/log"'
tatt --tls-cert "$tmp/mallory.pem" --tls-key "$tmp/mallory.key" --secret "$tmp/secret" -c 'traces limit 1'
check "a certificate of another CA is refused, even with the secret (status $st), logged" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] && has "^error: cannot attach to .$ADDR.: .*unknown ca" "$tmp/err" &&
		has "^warning: client [0-9]* (peer 127.0.0.1:[0-9]* user=-) refused: TLS handshake failed: certificate verify failed" "$tmp/log"'
hs --attach "$ADDR" --tls-ca "$tmp/other.pem" --secret "$tmp/secret" -c 'traces limit 1'
check "a daemon whose certificate the console's CA did not sign: the console goes (status $st)" \
	eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] && has "cannot attach to .$ADDR.: the daemon.s certificate: " "$tmp/err"'
python3 - "${ADDR#127.0.0.1:}" >"$tmp/got" <<'EOF'
import socket, sys
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
s.settimeout(10)
s.sendall(b'GET / HTTP/1.0\r\n\r\n' + b'\x00\x00\x00\x07\x02traces')
got = b''
try:
	while True:
		b = s.recv(4096)
		if not b:
			break
		got += b
except OSError:
	pass
print('closed', repr(got[:40]))
EOF
check "plaintext to the TLS port: closed, nothing answered in clear, logged" \
	eval 'has "^closed " "$tmp/got" && hasnt "traces\|error" "$tmp/got" &&
		has "refused: TLS handshake failed: http request" "$tmp/log"'
tatt --secret "$tmp/secret" -c "$big"
check "and the daemon answers on, 11 MB through TLS whole (status $st)" \
	eval '[ "$st" -eq 0 ] && [ "$(grep -c "^[0-9]* | 0\{100\}$" "$tmp/out")" -eq 100000 ]'
HOPSCOPE_TEST_LIBSSL="$tmp/nolibssl.so.3"
export HOPSCOPE_TEST_LIBSSL
tatt --secret "$tmp/secret" -c 'traces limit 1'
unset HOPSCOPE_TEST_LIBSSL
check "libssl missing: the console says so in one line, naming it (status $st)" \
	eval '[ "$st" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -s "$tmp/out" ] &&
		has "^error: cannot attach to .$ADDR.: cannot load the TLS library: $tmp/nolibssl.so.3: cannot open shared object file" "$tmp/err"'
hs --attach "$ADDR" --tls-ca "$tmp/ca.pem" --secret "$tmp/none" -c 'traces limit 1'
check "a secret file that is not there is named (status $st)" \
	eval 'failed_cleanly && has "cannot open secret .$tmp/none." "$tmp/err"'
tatt --secret "$tmp/secret644" -c 'traces limit 1'
check "a secret other users may read: the console refuses it in one line, as the daemon words it (status $st)" \
	eval '[ "$st" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -s "$tmp/out" ] &&
		has "^error: cannot attach to .$ADDR.: secret .$tmp/secret644. may be read by other users (chmod 600 it)$" "$tmp/err"'
hs --attach "$SOCK" --secret "$tmp/secret" -c 'traces limit 1'
check "TLS options go with HOST:PORT only (status $st)" eval '[ "$st" -eq 2 ]'
wait "$silent"
check "a TCP connection that never says anything is closed after 5 s ($(cat "$tmp/silent_tcp") s), logged" \
	eval '[ "$(cat "$tmp/silent_tcp")" -ge 4 ] && [ "$(cat "$tmp/silent_tcp")" -le 8 ] &&
		has "^warning: client [0-9]* (peer 127.0.0.1:[0-9]* user=-) closed: no hello in 5 s" "$tmp/log"'

# nobody may attach (allow nobody attach) but not probe; another user may not attach
if setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$HS" --attach "$SOCK" \
		-c 'traces limit 1; probe tcp > 10.1.4.12:5001 via leaf1' >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
	check "an allowed user attaches; a probe needs its right (status $st)" \
		eval '[ "$st" -eq 1 ] && has "^1:" "$tmp/out" &&
			has "error: probe tcp: user .nobody. may not do this here" "$tmp/err" &&
			has "user=nobody .* refused: .probe tcp. needs the right .probe." "$tmp/log"'
	# what names a file of the daemon's machine, or changes everyone's settings
	for line in "export ndjson $tmp/nobody.ndjson" "decode $S/sample.pcap" 'set tz local' \
		"topo load $S/sample.topo" 'filter add tcp' "stats by switch file $S/sample.pcap"; do
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$HS" --attach "$SOCK" \
			-c "$line" >"$tmp/out" 2>"$tmp/err" </dev/null
		st=$?
		check "'$line' needs the right 'configure' (status $st)" \
			eval 'failed_cleanly && has "user .nobody. may not do this here .*allow USER configure" "$tmp/err" &&
				[ ! -e "$tmp/nobody.ndjson" ]'
	done
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$HS" --attach "$SOCK" \
		-c 'export ndjson - limit 1; set format json; flows limit 1' >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
	check "export to the console itself and its own format need none (status $st)" \
		eval '[ "$st" -eq 0 ] && has "^{\"flows\":" "$tmp/out"'
	if id daemon >/dev/null 2>&1; then
		setpriv --reuid=daemon --regid=daemon --clear-groups "$HS" --attach "$SOCK" \
			-c 'traces' >"$tmp/out" 2>"$tmp/err" </dev/null
		st=$?
		check "a user not allowed is refused in one line and logged (status $st)" \
			eval 'failed_cleanly && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
				has "user .daemon. may not attach" "$tmp/err" &&
				has "^warning: client .*user=daemon.* refused: user .daemon. may not attach" "$tmp/log"'
	fi
fi

# --- the daemon killed: the console says so in one line, status 1; history intact --------
pending
kill -9 "$dpid"
wait "$aj"
ast=$?
check "the console lost the daemon: one line, status 1 (status $ast)" \
	eval '[ "$ast" -eq 1 ] && [ "$(wc -l <"$tmp/a.err")" -eq 1 ] &&
		has "^error: lost the daemon at .$SOCK.: the connection closed" "$tmp/a.err"'
check "the history is intact" eval '[ "$(sqlite3 "$H" "pragma integrity_check")" = ok ] &&
	[ "$(sqlite3 "$H" "select count(*) from sessions")" -eq 1 ]'
att -c 'traces'
check "no daemon: attaching says so (status $st)" \
	eval 'failed_cleanly && has "cannot attach to .$SOCK.: Connection refused" "$tmp/err"'

# --- SIGTERM: capture and session end, consoles told, the socket removed ----------------
serve "$tmp/hs.conf" --db "$H" || hard "the daemon did not start again: $(cat "$tmp/log")"
check "a stale socket left by a killed daemon is taken over" eval '[ -S "$SOCK" ]'
pending
kill -TERM "$dpid"
wait "$aj"
ast=$?
i=0
while kill -0 "$dpid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check "SIGTERM stops the daemon cleanly, the socket removed" \
	eval '! kill -0 $dpid 2>/dev/null && has "^info: stopped: exit status 0" "$tmp/log" && [ ! -e "$SOCK" ]'
check "its console hears it is stopping (status $ast)" \
	eval '[ "$ast" -eq 1 ] && has "lost the daemon at .$SOCK.: the daemon is stopping" "$tmp/a.err"'
check "the session was ended" eval '[ "$(sqlite3 "$H" "select count(*) from sessions where ended is null")" -eq 0 ]'

# --- -Z: root goes once it captures and listens; CAP_NET_RAW stays --------------------
hs serve --config "$tmp/hs.conf" --db "$tmp/z.db" -Z no-such-user-here
check "-Z with an unknown user is a usage error, nothing touched (status $st)" \
	eval '[ "$st" -eq 2 ] && has "no-such-user-here" "$tmp/err" && [ ! -e "$tmp/z.db" ]'
if id nobody >/dev/null 2>&1; then
	# its socket in a directory that is not there yet: made, and given to nobody
	ZSOCK=$tmp/run/hs.sock
	sed "s|^listen unix $SOCK |listen unix $ZSOCK |" "$tmp/hs.conf" >"$tmp/z.conf"
	serve "$tmp/z.conf" --db "$tmp/z.db" -Z nobody || hard "the daemon did not start with -Z: $(cat "$tmp/log")"
	check "the socket's directory it made is nobody's, and the log says so" \
		eval '[ -S "$ZSOCK" ] && [ "$(stat -c "%U %a" "$tmp/run")" = "nobody 755" ] &&
			has "^info: made the socket.s directory .$tmp/run., given to user .nobody." "$tmp/log"'
	check "-Z nobody: it runs as nobody, CAP_NET_RAW its only capability, and says so" \
		eval 'has "^info: running as user .nobody. (uid $(id -u nobody)), keeping CAP_NET_RAW only" "$tmp/log" &&
			grep -q "^Uid:[[:space:]]*$(id -u nobody)[[:space:]]*$(id -u nobody)[[:space:]]*$(id -u nobody)" /proc/$dpid/status &&
			grep -q "^CapEff:[[:space:]]*0*2000$" /proc/$dpid/status'
	hs --attach "$ZSOCK" -c 'traces limit 1; history sessions'
	check "its history, made as root and given to nobody, is written and answered (status $st)" \
		eval '[ "$st" -eq 0 ] && has "^1:" "$tmp/out" && has "sample.pcap" "$tmp/out" &&
			[ "$(stat -c %U "$tmp/z.db")" = nobody ]'
	kill -TERM "$dpid"
	i=0
	while kill -0 "$dpid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
	check "and it stops cleanly, its session ended, its socket removed" \
		eval 'has "^info: stopped: exit status 0" "$tmp/log" && [ ! -e "$ZSOCK" ] &&
			[ "$(sqlite3 "$tmp/z.db" "select count(*) from sessions where ended is null")" -eq 0 ]'
	# the directory it made, which nobody may not remove from where it
	# is, goes once the daemon ended (by the process kept for it)
	i=0
	while [ -e "$tmp/run" ] && [ $i -lt 40 ]; do sleep 0.05; i=$((i + 1)); done
	check "the socket's directory it made is removed after it stopped" [ ! -e "$tmp/run" ]
fi

# --- watch in an attached console: the daemon's feed -------------------------------------
# a daemon that captures nothing yet: what the view shows arrives while it is up
cat >"$tmp/feed.conf" <<EOF
topo load $S/sample.topo
listen unix $SOCK
listen tcp 127.0.0.1:0 tls cert $tmp/daemon.pem key $tmp/daemon.key ca $tmp/ca.pem secret $tmp/secret
EOF
rm -f "$H" "$H-wal" "$H-shm"
serve "$tmp/feed.conf" --db "$H" || hard "the fed daemon did not start: $(cat "$tmp/log")"
check "tmux is there for the attached view" command -v tmux
rm -f "$tmp/hs.pid"
term_start 160 45 "sh -c 'echo \$\$ >$tmp/hs.pid; exec $HS --attach $SOCK'"
a=$(sig_pid)
wait_for '^hopscope>' || true
$T send-keys -t hs 'traces switch sp' Tab
wait_for 'traces switch spine' || true
check "TAB completes a switch name from the daemon's topology" has 'hopscope> traces switch spine$' "$tmp/screen"
$T send-keys -t hs C-u 'watch' Enter
wait_all hs 'no closed traces yet' 'Traces 0' 'no capture' || true
# the view draws before the daemon has read its watch frame: wait for that
log_wait "pid=$a\\) watches" || true
check "watch comes up attached, on the daemon's (empty) feed" \
	eval 'has "Traces 0" "$tmp/screen" && has "no capture" "$tmp/screen" && has "pid=$a) watches" "$tmp/log"'
att -c "capture start $S/sample.pcap"
wait_all hs 'sample.pcap \(ended\)' 'Traces 589' 'leaf1 .* spine1 .* leaf4 .*delivered' \
	"capture of .$S/sample.pcap. ended" || true
check "the traces another console's capture closes arrive in the view" \
	eval 'has "Traces 589" "$tmp/screen" && has "leaf1 .* spine1 .* leaf4 .*delivered" "$tmp/screen" &&
		has "sample.pcap .ended." "$tmp/screen" && has "capture of .$S/sample.pcap. ended" "$tmp/screen"'
# the Links pane's load: what 'rates' gives the link, sent by the daemon
cp "$tmp/screen" "$tmp/view"
att -c 'rates'
load=$(awk '$1 == "spine2" && $2 == ">" && $3 == "leaf1" { print $4; exit }' "$tmp/out")
wait_all hs "spine2 > leaf1 .* $load│" || true
check "the Links pane's load column is the daemon's rates ('spine2 > leaf1' $load)" \
	eval '[ -n "$load" ] && has "spine2 > leaf1 .* $load│" "$tmp/screen"'
$T send-keys -t hs ':' 'flows limit 1' Enter
wait_for "done: 'flows limit 1' finished" || true
check "a ':' line runs in the daemon, its output in the events pane" has '(1 of 320 flows' "$tmp/screen"
$T send-keys -t hs q
wait_for '^hopscope> ?$' || true
log_wait "pid=$a\\) stopped watching$" || true
check "q gives the prompt back and the daemon stops feeding it" \
	eval 'has "^hopscope> *$" "$tmp/screen" && has "pid=$a) stopped watching$" "$tmp/log"'
# trace ids complete as in a console of its own: asked of the daemon
$T send-keys -t hs 'traces show 1:58' Tab
wait_for '^1:589  1:588  1:587 .* 1:580  1:58$' || true
check "TAB completes the ids of the daemon's traces in memory" \
	has '^1:589  1:588  1:587  1:586  1:585  1:584  1:583  1:582  1:581  1:580  1:58$' "$tmp/screen"
$T send-keys -t hs C-u 'history show 1:58' Tab
wait_for '^1:588  1:587  1:58$' || true
check "and those of the traces its history kept" has '^1:588  1:587  1:58$' "$tmp/screen"
$T send-keys -t hs C-u 'watch' Enter
wait_for 'Traces 589' || true
check "watch again: the recent traces come first" has 'Traces 589' "$tmp/screen"
# the same over TCP and TLS, in a second terminal
ADDR=$(sed -n 's/^info: ready: .* over TCP at \(127\.0\.0\.1:[0-9]*\) (TLS)$/\1/p' "$tmp/log" | tail -n 1)
$T new-session -d -s tls -x 160 -y 45 \
	"$HS --attach $ADDR --tls-ca $tmp/ca.pem --secret $tmp/secret -c watch"
wait_all tls 'sample.pcap \(ended\)' 'Traces 589' 'leaf1 .* spine1 .* leaf4 .*delivered' || true
check "a console over TLS watches the same feed" \
	eval 'has "Traces 589" "$tmp/screen" && has "leaf1 .* spine1 .* leaf4 .*delivered" "$tmp/screen"'
$T kill-session -t tls
kill -9 "$a"
i=0
while ! grep -q "pid=$a) detached" "$tmp/log" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
att -c 'traces limit 1'
# (1:588 is the sample's newest trace by its first hop's time)
check "the watching console killed: the daemon lives on and answers (status $st)" \
	eval '[ "$st" -eq 0 ] && kill -0 $dpid && has "^1:588 " "$tmp/out" && has "pid=$a) detached" "$tmp/log"'

# the optional frames of protocol 2: a console that asks for none (an older
# one) is sent none; one that asks for them is told so and sent the load
# frames.py: what the scripts below share (a frame; what a socket gives in
# some seconds; the frames in it, as (type, payload))
cat >"$tmp/frames.py" <<'PY'
import socket, struct, time
def fr(t, p=b''):
	return struct.pack('>IB', len(p) + 1, t) + p
def one_console(path):
	"""a stand-in daemon at path: the first console that connects (30 s)"""
	srv = socket.socket(socket.AF_UNIX)
	srv.bind(path)
	srv.listen(1)
	srv.settimeout(30)
	return srv.accept()[0]
def read_for(s, seconds):
	s.settimeout(0.5)
	got, t0 = b'', time.time()
	while time.time() - t0 < seconds:
		try:
			b = s.recv(1 << 20)
		except socket.timeout:
			continue
		if not b:
			break
		got += b
	return got
def frames(got):
	off = 0
	while off + 5 <= len(got):
		n, t = struct.unpack('>IB', got[off:off + 5])
		yield t, got[off + 5:off + 4 + n]
		off += 4 + n
PY
cat >"$tmp/flags.py" <<'PY'
import socket, sys
from frames import fr, read_for, frames
sock, version, flags = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
s.sendall(fr(1, bytes([2, flags]) + version.encode()) + fr(9))	# hello, watch
types, hello = set(), None
for t, p in frames(read_for(s, 2.5)):
	if t == 1 and hello is None:
		hello = p[1]
	types.add(t)
print(hello, ' '.join(str(t) for t in sorted(types)))
PY
# (the two at once: each reads what it is sent for 2.5 s)
python3 "$tmp/flags.py" "$SOCK" "$VERSION" 0 >"$tmp/flags0" &
f0=$!
python3 "$tmp/flags.py" "$SOCK" "$VERSION" 6 >"$tmp/flags6"
wait $f0
check "a console whose hello lists no optional frame is sent none ($(cat "$tmp/flags0"))" \
	eval 'read -r h types <"$tmp/flags0" && [ "$h" = 0 ] && echo " $types " | grep -q " 13 " &&
		! echo " $types " | grep -q " 1[56] "'
check "one that lists them has them kept in the daemon's hello, and is sent the load ($(cat "$tmp/flags6"))" \
	eval 'read -r h types <"$tmp/flags6" && [ "$h" = 6 ] && echo " $types " | grep -q " 16 "'

# a daemon of protocol 2 that knows none of them (an older one): it closes
# on a frame it does not know; the console asks it for no names
cat >"$tmp/old.py" <<'PY'
import struct, sys
from frames import fr, one_console
path, version, log = sys.argv[1:]
c = one_console(path)
out, buf = open(log, 'w'), b''
while True:
	b = c.recv(65536)
	if not b:
		break
	buf += b
	while len(buf) >= 5 and len(buf) >= 4 + struct.unpack('>I', buf[:4])[0]:
		n, t = struct.unpack('>IB', buf[:5])
		p, buf = buf[5:4 + n], buf[4 + n:]
		if t == 1:
			c.sendall(fr(1, b'\x02\x00' + version.encode()) + fr(14))
		elif t == 2:
			c.sendall(fr(3, b'answered: ' + p + b'\n') + fr(5, b'\x00'))
		elif t > 14:
			out.write('a frame of unknown type %d\n' % t)
			out.flush()
			c.close()
			sys.exit(0)
PY
python3 "$tmp/old.py" "$tmp/old.sock" "$VERSION" "$tmp/old.log" &
oldd=$!
cleanup="$cleanup kill $oldd 2>/dev/null;"
i=0
while [ ! -S "$tmp/old.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
$T new-session -d -s old -x 160 -y 45 "$HS --attach $tmp/old.sock"
wait_all old '^hopscope>' || true
$T send-keys -t old 'traces show 1' Tab
$T send-keys -t old C-u 'flows' Enter
wait_all old '^answered: flows$' || true
check "attached to an older daemon: TAB asks it nothing, its lines run" \
	eval 'has "^answered: flows$" "$tmp/screen" && [ ! -s "$tmp/old.log" ]'
$T kill-session -t old

# a daemon that ends before it read the console's line (the socket is
# reset, not ended): the console says it lost it as when it ended
cat >"$tmp/gone.py" <<'PY'
import select, sys
from frames import fr, one_console
path, version = sys.argv[1:]
c = one_console(path)
c.recv(65536)					# the console's hello
c.sendall(fr(1, b'\x02\x00' + version.encode()) + fr(14))
select.select([c], [], [], 30)			# its line has come: gone, unread
c.close()
PY
python3 "$tmp/gone.py" "$tmp/gone.sock" "$VERSION" &
gonej=$!
i=0
while [ ! -S "$tmp/gone.sock" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
hs --attach "$tmp/gone.sock" -c 'flows'
wait $gonej
check "a daemon gone with the console's line unread: the same one line (status $st)" \
	eval '[ "$st" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
		has "^error: lost the daemon at .$tmp/gone.sock.: the connection closed" "$tmp/err"'

# a console that does not read: the traces it is not sent are counted, the daemon goes on
"$top_builddir/tests/tools/hs-synth" --packets 40000 --seed 2 -w "$tmp/big.pcap" -t "$tmp/big.topo" \
	>/dev/null 2>&1 || hard "hs-synth failed"
cat >"$tmp/slow.py" <<'PY'
import socket, struct, sys, time
from frames import fr, read_for, frames
sock, version, log, pcap = sys.argv[1:]
s = socket.socket(socket.AF_UNIX)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(sock)
s.sendall(fr(1, b'\x02\x00' + version.encode()) + fr(9))	# hello, watch
# not reading while the capture runs
t0 = time.time()
while not any(pcap in l and 'ended' in l for l in open(log)) and time.time() - t0 < 60:
	time.sleep(0.1)
traces, missed, fresh = 0, -1, False
for t, p in frames(read_for(s, 3)):
	if t == 11 and not p:	# an empty trace: a new capture began
		fresh, traces = True, 0
	elif t == 11:
		traces += 1
	elif t == 13 and fresh:	# status: the traces not sent after the flags and 7 counters
		missed = struct.unpack('>Q', p[57:65])[0]
print(traces, missed)
PY
python3 "$tmp/slow.py" "$SOCK" "$VERSION" "$tmp/log" "$tmp/big.pcap" >"$tmp/slow" 2>&1 &
pj=$!
i=0
while ! grep -q "pid=$pj) watches" "$tmp/log" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
t0=$(date +%s)
att -c "capture start $tmp/big.pcap"
i=0
while ! grep -q "capture of .*big.pcap.* ended" "$tmp/log" && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
att -c 'traces limit 1'
t1=$(date +%s)
wait $pj
read -r sent missed <"$tmp/slow"
check "a console that does not read does not hold the daemon up (status $st, $((t1 - t0)) s)" \
	eval '[ "$st" -eq 0 ] && has "^2:40589 " "$tmp/out" && [ $((t1 - t0)) -lt 30 ]'
check "it is told how many traces it was not sent; with those sent, all of them ($sent sent, $missed not)" \
	eval '[ "${missed:-0}" -gt 0 ] && [ $((sent + missed)) -eq 40000 ]'
kill -TERM "$dpid"

finish
