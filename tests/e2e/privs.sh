#!/bin/bash
# privs.sh - started as root, hopscope becomes -Z USER (default nobody) once
# the capture and the history are open, keeping only CAP_NET_RAW: a capture
# started afterwards still counts packets, probes still send, the history is
# written, sql stays read-only; a privileged broker is left for the mirror
# driver. Run without root at all, every privileged verb gives one clear
# error and the console carries on.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to test dropping root"
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
getent passwd nobody >/dev/null || skip "no user 'nobody'"
unset HOPSCOPE_USER SUDO_UID
NOBODY=$(id -u nobody)
CAP_NET_RAW_MASK=0000000000002000

# the console's own status while it sleeps: "Uid Gid CapEff CapPrm CapBnd NoNewPrivs Groups"
status_of() {
	awk '/^Uid:/ { u = $2 "/" $3 "/" $4 "/" $5 } /^Gid:/ { g = $2 "/" $3 "/" $4 "/" $5 }
	     /^CapEff:/ { e = $2 } /^CapPrm:/ { p = $2 } /^CapBnd:/ { b = $2 }
	     /^NoNewPrivs:/ { n = $2 } /^Groups:/ { $1 = ""; gr = $0 }
	     END { print u, g, e, p, b, n, gr }' "/proc/$1/status"
}
# start the console in the background; $pid
start() {
	"$HS" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null &
	pid=$!
	for _ in $(seq 50); do
		[ "$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)" != 0 ] && break
		sleep 0.1
	done
}
wait_console() { wait "$pid"; st=$?; }

# --- -Z nobody: who it is, what it keeps ------------------------------------------
cd "$tmp" || hard "cannot enter '$tmp'"
db=$tmp/h.db
ping -q -i 0.05 -c 200 127.0.0.1 >/dev/null 2>&1 &
pinger=$!
cleanup='kill $pinger 2>/dev/null;'
start -i lo -Z nobody --db "$db" --keep-going --json -c "sleep 2; capture status; capture stop;
	capture start lo; sleep 2; capture status; sql 'select count(*) as n from sessions';
	sql 'insert into sessions (id) values (99)'; sql \"attach '$tmp/y.db' as y\";
	sql \"select load_extension('$tmp/none')\"; probe tcp 127.0.0.1:1234 > 127.0.0.1:80"
sleep 1
s=$(status_of "$pid")
echo "# running as: $s"
read -r uid gid eff prm bnd nnp groups <<<"$s"
check "-Z nobody: uid is nobody's ($uid)" [ "$uid" = "$NOBODY/$NOBODY/$NOBODY/$NOBODY" ]
check "-Z nobody: gid is nobody's ($gid)" [ "$gid" = "$(id -g nobody)/$(id -g nobody)/$(id -g nobody)/$(id -g nobody)" ]
check "-Z nobody: effective capabilities are CAP_NET_RAW only ($eff)" [ "$eff" = "$CAP_NET_RAW_MASK" ]
check "-Z nobody: permitted capabilities are CAP_NET_RAW only ($prm)" [ "$prm" = "$CAP_NET_RAW_MASK" ]
check "-Z nobody: the bounding set is empty ($bnd)" [ "$bnd" = 0000000000000000 ]
check "-Z nobody: no_new_privs is set" [ "$nnp" = 1 ]
check "-Z nobody: no root group left (groups:$groups)" sh -c "! echo ' $groups ' | grep -q ' 0 '"
broker=$(pgrep -P "$pid" -x hopscope-priv)
check "-Z nobody: one privileged helper is the console's child" [ -n "$broker" ]
[ -n "$broker" ] && check "-Z nobody: the helper keeps root" \
	[ "$(awk '/^Uid:/ { print $2 }' "/proc/$broker/status")" = 0 ]
wait_console
kill $pinger 2>/dev/null
check "-Z nobody: the runbook finished (status $st, one refusal per sql write)" [ "$st" -eq 1 ]
# the packets of each running capture's status, not its analyzers' (heartbeats)
pk=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    if line.startswith("{"):
        st = json.loads(line)
        if st.get("state") == "running":
            print(st["packets"])' "$tmp/out")
echo "# packets per capture: $(echo $pk)"
first=$(echo "$pk" | sed -n 1p) second=$(echo "$pk" | sed -n 2p)
check "-Z nobody: the capture opened as root counts packets (${first:-none})" [ "${first:-0}" -gt 0 ]
check "-Z nobody: a capture started after the drop counts packets (${second:-none})" \
	[ "${second:-0}" -gt 0 ]
check "-Z nobody: no capture error" hasnt 'cannot capture' "$tmp/err"
check "-Z nobody: sql reads the history" has '"n":2' "$tmp/out"
check "-Z nobody: sql refuses the insert and the attach" \
	[ "$(grep -c 'error: sql: refused: the history is read-only' "$tmp/err")" -eq 2 ]
check "-Z nobody: attach created no file" [ ! -e "$tmp/y.db" ]
check "-Z nobody: sql refuses load_extension" has "error: sql: not authorized to use function: load_extension" "$tmp/err"
check "-Z nobody: three errors, no more" [ "$(wc -l <"$tmp/err")" -eq 3 ]
check "-Z nobody: probe still opens its raw socket" hasnt 'raw socket' "$tmp/err"
check "-Z nobody: the probe was sent" has '"sent":1' "$tmp/out"
sessions=$(sqlite3 "$db" 'select count(*) from sessions' 2>/dev/null)
check "-Z nobody: the history holds both captures ($sessions)" [ "${sessions:-0}" -eq 2 ]
check "-Z nobody: the history hopscope created belongs to nobody" [ "$(stat -c %U "$db")" = nobody ]
check "-Z nobody: no row 99 was inserted" [ "$(sqlite3 "$db" 'select count(*) from sessions where id = 99')" = 0 ]

# a history that root owns already is opened before the drop and written
db2=$tmp/root.db
"$HS" -Z root --db "$db2" -r "$top_srcdir/share/sample/sample.pcap" -c 'capture status' >/dev/null 2>&1
before=$(sqlite3 "$db2" 'select count(*) from sessions')
hs -Z nobody --db "$db2" -i lo -c 'sleep 0.5'
after=$(sqlite3 "$db2" 'select count(*) from sessions')
check "root's history: written after the drop ($before -> $after sessions, status $st)" \
	eval '[ "$st" -eq 0 ] && [ "${after:-0}" -eq $((before + 1)) ]'
check "root's history: still root's" [ "$(stat -c %U "$db2")" = root ]

# links planted beside a new history are never followed when it is given away
# (SQLite itself removes a -wal it finds beside a new history, and opens
# -wal and -shm without following a link: tests/unit/test_privs.c gives a
# history beside planted links that are still there, as code giving by
# path would follow them)
mkdir -m 775 "$tmp/grp"
echo 'root keeps this' >"$tmp/rootfile"
ln -s "$tmp/rootfile" "$tmp/grp/cap.db-wal"
hs -Z nobody --db "$tmp/grp/cap.db" -r "$top_srcdir/share/sample/sample.pcap" -c 'capture status'
check "planted -wal link: the capture ran (status $st)" [ "$st" -eq 0 ]
check "planted -wal link: its target stays root's" [ "$(stat -c %U "$tmp/rootfile")" = root ]
check "planted -wal link: its target is unchanged" [ "$(cat "$tmp/rootfile")" = 'root keeps this' ]
ln -s "$tmp/made-by-root" "$tmp/grp/link.db"
hs -Z nobody --db "$tmp/grp/link.db" -r "$top_srcdir/share/sample/sample.pcap" -c 'capture status'
check "history named by a link: the capture ran (status $st)" [ "$st" -eq 0 ]
check "history named by a link: what it points to is not given away" \
	[ "$(stat -c %U "$tmp/made-by-root")" = root ]
check "history named by a link: the warning says why" \
	has "cannot give '$tmp/grp/link.db' to 'nobody': it is a symbolic link" "$tmp/err"

# --db as root: an error once, with root's reason; a read makes no history
hs -Z nobody --db "$tmp/nodir/x.db" -r "$top_srcdir/share/sample/sample.pcap" -c 'capture status'
check "--db in a missing directory: the capture runs" has '^packets  *6741' "$tmp/out"
check "--db in a missing directory: the run fails (status $st)" [ "$st" -eq 1 ]
check "--db in a missing directory: said once" [ "$(grep -c 'nodir/x.db' "$tmp/err")" -eq 1 ]
check "--db in a missing directory: with the system's reason" \
	has "unable to open database file (No such file or directory)" "$tmp/err"
sqlite3 "$tmp/foreign.db" 'create table t(x)'
hs -Z nobody --db "$tmp/foreign.db" -c "sql 'select 1'"
check "root's foreign --db: sql fails (status $st)" failed_cleanly
check "root's foreign --db: said once, as root saw it" \
	sh -c "[ \$(wc -l <'$tmp/err') -eq 1 ] && grep -q \"^-c:1: error: '$tmp/foreign.db' is not a hopscope history\" '$tmp/err'"
hs -Z nobody --db "$tmp/made.db" -c "capture start $top_srcdir/share/sample/sample.pcap; sleep 0.3; sql 'select count(*) from sessions'"
check "root, -c capture start: runs (status $st)" [ "$st" -eq 0 ]
check "root, -c capture start: the history is made and given to nobody" \
	[ "$(stat -c %U "$tmp/made.db")" = nobody ]

# a one-shot verb that does not capture leaves no history behind
mkdir "$tmp/oneshot"
(cd "$tmp/oneshot" && env -u HOPSCOPE_DB "$HS" decode "$top_srcdir/share/sample/sample.pcap" >/dev/null 2>&1)
check "root, one-shot decode: status $?, no history created" [ ! -e "$tmp/oneshot/hopscope.db" ]

# --- no -Z: root becomes nobody; -Z root keeps root -------------------------------------
start -i lo --db "$tmp/d.db" -c 'sleep 1.5'
read -r uid _ eff _ <<<"$(status_of "$pid")"
wait_console
check "no -Z: root becomes nobody ($uid)" [ "$uid" = "$NOBODY/$NOBODY/$NOBODY/$NOBODY" ]
check "no -Z: the run succeeds (status $st)" [ "$st" -eq 0 ]
check "no -Z: CAP_NET_RAW is kept ($eff)" [ "$eff" = "$CAP_NET_RAW_MASK" ]
HOPSCOPE_USER=root "$HS" -i lo --db "$tmp/d.db" -c 'sleep 1.5' >/dev/null 2>&1 &
pid=$!
sleep 0.8
read -r uid _ <<<"$(status_of "$pid")"
wait_console
check "HOPSCOPE_USER=root keeps root ($uid)" [ "$uid" = 0/0/0/0 ]
"$HS" -Z root -i lo --db "$tmp/d.db" -c 'sleep 1.5' >/dev/null 2>&1 &
pid=$!
sleep 0.8
read -r uid _ <<<"$(status_of "$pid")"
wait_console
check "-Z root keeps root ($uid)" [ "$uid" = 0/0/0/0 ]

# --- never root: one clear error per privileged verb, the console carries on ----------------
cd / || hard "cannot leave '$tmp'"
chmod 711 "$tmp"
mkdir -m 777 "$tmp/pub"
# a read makes no history where the user could have made one
hs -Z nobody --db "$tmp/pub/typo.db" -c "sql 'select 1'; history sessions"
check "root, -c sql with a mistyped --db: fails (status $st)" failed_cleanly
check "root, -c sql with a mistyped --db: says there is no history" \
	has "^-c:1: error: no history at '$tmp/pub/typo.db'" "$tmp/err"
check "root, -c sql with a mistyped --db: no history is made" [ ! -e "$tmp/pub/typo.db" ]
hs -Z nobody --db "$tmp/pub/typo.db" snapshot list
check "root, one-shot snapshot list with a mistyped --db: lists nothing (status $st)" \
	[ "$st" -eq 0 ]
check "root, one-shot snapshot list with a mistyped --db: no history is made" \
	[ ! -e "$tmp/pub/typo.db" ]
: >"$tmp/pub/empty.db"
hs -Z nobody --db "$tmp/pub/empty.db" -c 'history sessions'
check "root, history sessions on an empty --db: lists nothing (status $st)" \
	sh -c "[ $st -eq 0 ] && grep -q \"^no history at '$tmp/pub/empty.db'\" '$tmp/out'"
check "root, history sessions on an empty --db: it stays empty, nothing beside it" \
	sh -c "[ ! -s '$tmp/pub/empty.db' ] && ! ls '$tmp/pub' | grep -q 'empty.db-'"
asnobody() {
	timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$HS" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	st=$?
}
asnobody --db "$tmp/pub/n.db" --keep-going -c 'capture start lo; probe tcp 127.0.0.1:1234 > 127.0.0.1:80;
	traceroute 127.0.0.1:4000 > 127.0.0.1:80; help quit'
check "no root: the runbook ends with a failure status ($st), not a crash" failed_cleanly
check "no root: capture start says what it needs" \
	has "cannot capture on 'lo'.*needs root or the CAP_NET_RAW capability" "$tmp/err"
check "no root: probe says what it needs" has "probe: cannot open raw socket.*needs root or CAP_NET_RAW" "$tmp/err"
check "no root: traceroute says what it needs" \
	has "traceroute: cannot open raw socket.*needs root or CAP_NET_RAW" "$tmp/err"
check "no root: one line per failed verb" [ "$(wc -l <"$tmp/err")" -eq 3 ]
check "no root: the console carried on to the last command" has 'quit' "$tmp/out"
asnobody --db "$tmp/pub/n.db" -i lo -c 'help quit'
check "no root: -i lo fails cleanly (status $st)" [ "$st" -eq 1 ]
check "no root: -i lo gives one line" [ "$(wc -l <"$tmp/err")" -eq 1 ]
check "no root: the line says why" has "cannot capture on 'lo'.*CAP_NET_RAW" "$tmp/err"
asnobody --db "$tmp/pub/n.db" -Z nobody -c 'help quit'
check "no root: -Z naming oneself is accepted (status $st)" [ "$st" -eq 0 ]
finish
