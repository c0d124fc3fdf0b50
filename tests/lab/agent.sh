#!/bin/bash
# agent.sh - hs-agent and the lab mirror driver in real namespaces: driver
# rules (checks, rollback, add/list/del), ERSPAN III mirroring, IP-in-IP
# decapsulation, counters, clean exit.
#
#   host (10.9.1.10) --- switch (lo 10.254.0.1) --- next hop (10.9.2.2)
#                           | mir0 10.255.0.1
#                        analyzer (10.255.0.254)
#
# Needs root and network namespaces; exits 77 (skipped) when it cannot make
# a namespace. Everything it makes is removed on exit, pass or fail.
set -u

top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
AGENT=${HS_AGENT:-$top_builddir/hs-agent}
DRIVER=${HS_DRIVER:-$top_srcdir/share/lab/hs-driver-lab}

# not "hs-": a lab brought up or down meanwhile leaves these alone
P="hsat$$-"
H="${P}h" SW="${P}sw1" NH="${P}nh" AN="${P}an"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hs-agent-test.XXXXXX")
made=()
pids=()
fails=0

cleanup() {
	local p ns
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	for ns in "${made[@]}"; do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}
ok() {
	echo "ok: $*"
}

if [ "$(id -u)" -ne 0 ] || ! ip netns add "$H" 2>/dev/null; then
	echo "SKIP: agent.sh needs root and network namespaces ('ip netns add' failed)" >&2
	exit 77
fi
made+=("$H")
for ns in "$SW" "$NH" "$AN"; do
	ip netns add "$ns" || { echo "FAIL: cannot add namespace '$ns'"; exit 1; }
	made+=("$ns")
done
for t in tshark tcpdump python3; do
	command -v "$t" >/dev/null || { echo "FAIL: '$t' is needed"; exit 1; }
done
[ -x "$AGENT" ] || { echo "FAIL: no agent at '$AGENT' (run make first)"; exit 1; }

set -e
ipn() { local ns=$1; shift; ip -n "$ns" "$@"; }
ex() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

ipn "$SW" link add s0 type veth peer name h0 netns "$H"
ipn "$SW" link add s1 type veth peer name n0 netns "$NH"
ipn "$SW" link add mir0 type veth peer name a0 netns "$AN"
for ns in "$H" "$SW" "$NH" "$AN"; do
	ipn "$ns" link set lo up
done
ipn "$H" addr add 10.9.1.10/24 dev h0
ipn "$H" link set h0 up
ipn "$H" route add default via 10.9.1.1
ipn "$NH" addr add 10.9.2.2/24 dev n0
ipn "$NH" link set n0 up
ipn "$NH" route add default via 10.9.2.1
ipn "$AN" addr add 10.255.0.254/24 dev a0
ipn "$AN" link set a0 up
ipn "$SW" addr add 10.9.1.1/24 dev s0
ipn "$SW" addr add 10.9.2.1/24 dev s1
ipn "$SW" addr add 10.255.0.1/24 dev mir0
ipn "$SW" addr add 10.254.0.1/32 dev lo
for l in s0 s1 mir0; do
	ipn "$SW" link set "$l" up
done
ex "$SW" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
	net.ipv4.conf.default.rp_filter=0
# the analyzer answers nothing to GRE
ex "$AN" iptables -A INPUT -p gre -j DROP
ex "$SW" iptables -t raw -N HS_MIRROR
ex "$SW" iptables -t raw -A PREROUTING -j HS_MIRROR
ex "$SW" iptables -t raw -A HS_MIRROR -i mir0 -j RETURN
set +e

# ---- the mirror driver ------------------------------------------------------
ST=$TMP/state
mkdir "$ST"
cat >"$ST/topo" <<EOF
switch sw1 role leaf mirror 10.255.0.1 loopback 10.254.0.1
switch nh role leaf mirror 10.255.0.2 loopback 10.254.0.2
analyzer 10.255.0.254
EOF
drv() { "$DRIVER" --state "$ST" --group 5 --netns-prefix "$P" "$@"; }
snapshot() { ex "$SW" iptables -t raw -S; cat "$ST/mirror.rules" 2>/dev/null; }
tagged() { ex "$SW" iptables -t raw -S HS_MIRROR | grep -cE -- "--comment \"?hs-mirror:$1\"? "; }

refuse() {	# expected error text, driver arguments...
	local want=$1 out st before
	shift
	before=$(snapshot)
	out=$(drv "$@" 2>&1); st=$?
	if [ $st -ne 2 ] || [ "$(printf '%s\n' "$out" | wc -l)" -ne 1 ] ||
		! printf '%s' "$out" | grep -qF -- "$want"; then
		fail "driver $* exited $st: $out"
	fi
	[ "$(snapshot)" = "$before" ] || fail "driver $* changed something"
}
refuse "invalid session '1024'" add --session 1024 --switches sw1 --match syn
refuse "unknown switch 'zz'" add --session 1 --switches sw1,zz --match syn
refuse "invalid switch list 'sw1;reboot'" add --session 1 --switches 'sw1;reboot' --match syn
refuse "unknown match 'bogus'" add --session 1 --switches all --match bogus
refuse "unexpected 'x' after 'syn'" add --session 1 --switches all --match syn x
refuse "invalid port in '10.0.0.1:99999'" add --session 1 --switches sw1 \
	--match flow tcp 10.0.0.1:99999 any
refuse "invalid protocol 'gre'" add --session 1 --switches sw1 --match flow gre any any
refuse "protocol 'icmp' has no ports" add --session 1 --switches sw1 \
	--match flow icmp any 10.0.0.1:80
refuse "invalid prefix '10.0.0.0/33'" add --session 1 --switches sw1 --match prefix 10.0.0.0/33
refuse "invalid address '10.0.0.256'" add --session 1 --switches sw1 \
	--match flow udp 10.0.0.256 any
refuse "IPv6 match '[2001:db8::1]:80' is not mirrored by the lab" add --session 1 --switches sw1 \
	--match flow tcp [2001:db8::1]:80 any
refuse "IPv6 match '2001:db8::/32' is not mirrored by the lab" add --session 1 --switches sw1 \
	--match prefix 2001:db8::/32
refuse "no mirror rule '9'" del --id 9
refuse "missing --session" add --switches sw1 --match syn
ok "bad driver rules are refused and change nothing"

# a failure on the second switch (it has no mirror chain) undoes the first
before=$(snapshot)
out=$(drv add --session 3 --switches sw1,nh --match default 2>&1); st=$?
[ $st -eq 1 ] && printf '%s' "$out" | grep -q "cannot add rule 1 in switch 'nh'" \
	|| fail "add on a broken switch exited $st: $out"
[ "$(snapshot)" = "$before" ] && ok "a failed add is rolled back" \
	|| fail "a failed add left rules behind"

id=$(drv add --session 7 --switches sw1 --match syn) || fail "cannot add the syn rule"
[ "$id" = '{"id":1}' ] || fail "first rule's answer '$id', want {\"id\":1}"
[ "$(tagged 1)" = 2 ] || fail "syn rule is $(tagged 1) iptables rules, want 2 (NFLOG, RETURN)"
ex "$SW" iptables -t raw -S HS_MIRROR | grep -qE -- '--tcp-flags SYN SYN .*hs-mirror:1"? -j NFLOG --nflog-prefix "?hs:7"? --nflog-group 5$' \
	|| fail "syn rule not as expected: $(ex "$SW" iptables -t raw -S HS_MIRROR)"
id=$(drv add --session 1 --switches all --match flow udp 10.9.1.10 10.9.2.2:9999 2>/dev/null)
[ "$id" = "" ] || fail "a rule on all switches (one broken) was accepted: $id"
id=$(drv add --session 1 --switches sw1 --match flow udp 10.9.1.10 10.9.2.2:9999) \
	|| fail "cannot add the flow rule"
[ "$id" = '{"id":2}' ] || fail "second rule's answer '$id', want {\"id\":2}"
[ "$(tagged 2)" = 4 ] || fail "flow rule is $(tagged 2) iptables rules, want 4 (both directions)"
list=$(drv list)
[ "$list" = '{"rules":[{"id":1,"session":7,"switches":["sw1"],"match":"syn"},{"id":2,"session":1,"switches":["sw1"],"match":"flow udp 10.9.1.10 10.9.2.2:9999"}],"drift":[]}' ] ||
	fail "list printed: $list"
[ "$(drv del --id 2)" = '{"id":2,"deleted":true}' ] || fail "cannot delete rule 2"
[ "$(tagged 2)" = 0 ] || fail "rule 2 still has $(tagged 2) iptables rules"
[ "$(drv list)" = '{"rules":[{"id":1,"session":7,"switches":["sw1"],"match":"syn"}],"drift":[]}' ] ||
	fail "list after del: $(drv list)"
ok "driver add, list and del"

# ---- the console's mirror verb runs the driver -------------------------------
HOPSCOPE=$top_builddir/hopscope
if [ -x "$HOPSCOPE" ]; then
	printf '#!/bin/sh\nexec "%s" --state "%s" --group 5 --netns-prefix "%s" "$@"\n' \
		"$DRIVER" "$ST" "$P" >"$TMP/driver"
	chmod +x "$TMP/driver"
	con() { (cd "$TMP" && HOPSCOPE_DRIVER=$TMP/driver "$HOPSCOPE" --topo "$ST/topo" "$@"); }
	out=$(con -c 'mirror add on sw1 session 9 flow udp 10.9.1.10 10.9.2.2:9999' 2>&1) \
		|| fail "console mirror add failed: $out"
	[ "$out" = "mirror rule 3 added: session 9 on sw1, match flow udp 10.9.1.10 10.9.2.2:9999" ] \
		|| fail "console mirror add printed: $out"
	[ "$(tagged 3)" = 4 ] || fail "console rule 3 is $(tagged 3) iptables rules, want 4"
	out=$(con --json -c 'mirror list' 2>&1)
	printf '%s\n' "$out" | grep -qF '{"id":3,"session":9,"switches":["sw1"],"match":"flow udp 10.9.1.10 10.9.2.2:9999"}' \
		|| fail "console mirror list --json printed: $out"
	out=$(con -c 'mirror add on zz syn' 2>&1) && fail "console took an unknown switch"
	printf '%s' "$out" | grep -qF "unknown switch 'zz'" || fail "console error was: $out"
	out=$(con -c 'mirror del 42' 2>&1) && fail "console deleted a rule that is not there"
	printf '%s' "$out" | grep -qF "no mirror rule '42'" || fail "console error was: $out"
	con -c 'mirror del 3' >/dev/null 2>&1 || fail "console mirror del failed"
	[ "$(tagged 3)" = 0 ] || fail "console rule 3 still has $(tagged 3) iptables rules"
	ok "console mirror verb: add, list, del, errors"
else
	echo "note: no '$HOPSCOPE' yet: the console part is not run"
fi

# ---- the agent's argument checks ------------------------------------------
bad() {
	local want=$1; shift
	out=$("$AGENT" "$@" 2>&1); st=$?
	if [ $st -ne 2 ] || ! printf '%s' "$out" | grep -q -- "$want"; then
		fail "hs-agent $* exited $st: $out"
	fi
}
base=(--switch sw1 --group 5 --mirror-src 10.255.0.1 --analyzer 10.255.0.254 --loopback 10.254.0.1)
bad "invalid --group '70000'" --switch sw1 --group 70000 --mirror-src 10.255.0.1 \
	--analyzer 10.255.0.254 --loopback 10.254.0.1
bad "invalid --analyzer '10.255.0'" --switch sw1 --group 5 --mirror-src 10.255.0.1 \
	--analyzer 10.255.0 --loopback 10.254.0.1
bad "invalid --erspan '1'" "${base[@]}" --erspan 1
bad "invalid --switch 'a;b'" --switch 'a;b' --group 5 --mirror-src 10.255.0.1 \
	--analyzer 10.255.0.254 --loopback 10.254.0.1
bad "missing --loopback" --switch sw1 --group 5 --mirror-src 10.255.0.1 --analyzer 10.255.0.254
bad "unknown option '--bogus'" "${base[@]}" --bogus
bad "option '--stats' needs a value" "${base[@]}" --stats
ok "bad arguments are refused"

# ---- start ----------------------------------------------------------------
ip netns exec "$AN" tcpdump -i a0 -U -n -w "$TMP/mirror.pcap" proto gre 2>"$TMP/tcpdump-an.err" &
pids+=($!)
ip netns exec "$NH" tcpdump -i n0 -U -n -w "$TMP/nexthop.pcap" udp port 9999 2>"$TMP/tcpdump-nh.err" &
pids+=($!)
ip netns exec "$H" tcpdump -i h0 -U -n -w "$TMP/host.pcap" 'tcp[tcpflags] & tcp-syn != 0' \
	2>"$TMP/tcpdump-h.err" &
pids+=($!)

ip netns exec "$SW" "$AGENT" "${base[@]}" --log "$TMP/agent.log" --pidfile "$TMP/agent.pid" \
	--stats "$TMP/agent.stats" &
agent=$!
for _ in $(seq 50); do
	[ -s "$TMP/agent.pid" ] && grep -q listening "$TMP/tcpdump-an.err" \
		&& grep -q listening "$TMP/tcpdump-nh.err" && grep -q listening "$TMP/tcpdump-h.err" \
		&& break
	sleep 0.1
done
[ -s "$TMP/agent.pid" ] || { fail "agent did not start: $(cat "$TMP/agent.log")"; exit 1; }
[ "$(cat "$TMP/agent.pid")" = "$agent" ] || fail "pidfile holds $(cat "$TMP/agent.pid"), not $agent"
ex "$SW" ip link show hs-tun >/dev/null 2>&1 || fail "no hs-tun device in the switch"

# ---- three SYNs through the switch (refused by the next hop) ----------------
before=$(date +%s.%N)
for port in 81 82 83; do
	ex "$H" python3 -c '
import socket, sys
s = socket.socket(); s.settimeout(1)
try: s.connect(("10.9.2.2", int(sys.argv[1])))
except OSError: pass
' "$port"
done

# ---- an IP-in-IP packet to the switch loopback ----------------------------
ex "$H" python3 - <<'EOF'
import socket, struct
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
payload = b"hopscope-ipip-probe"
udp = struct.pack("!HHHH", 40000, 9999, 8 + len(payload), 0) + payload
hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0x04, 20 + len(udp), 0x4242, 0, 9, 17, 0,
                  socket.inet_aton("10.9.1.10"), socket.inet_aton("10.9.2.2"))
hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_IPIP)
s.sendto(hdr + udp, ("10.254.0.1", 0))
# one for somebody else's loopback: routed on, never decapsulated here
s.sendto(hdr + udp, ("10.9.2.2", 0))
EOF
after=$(date +%s.%N)
sleep 0.5

# ---- counters on SIGUSR1 ----------------------------------------------------
kill -USR1 "$agent"
sleep 0.3
stat() { awk -v k="$1" '$1 == k { print $2 }' "$TMP/agent.stats"; }
[ "$(stat mirrored)" = 3 ] || fail "mirrored $(stat mirrored), want 3"
[ "$(stat decapsulated)" = 1 ] || fail "decapsulated $(stat decapsulated), want 1"
[ "$(stat dropped)" = 0 ] || fail "dropped $(stat dropped), want 0"
[ "$(stat switch)" = sw1 ] || fail "stats switch '$(stat switch)', want sw1"
drv del --id 1 || fail "cannot delete rule 1"
[ "$(ex "$SW" iptables -t raw -S HS_MIRROR | wc -l)" = 2 ] \
	|| fail "rules left after del: $(ex "$SW" iptables -t raw -S HS_MIRROR)"

# ---- SIGTERM: clean exit --------------------------------------------------
kill -TERM "$agent"
wait "$agent"
st=$?
[ $st -eq 0 ] && ok "agent exits 0 on SIGTERM" || fail "agent exited $st on SIGTERM"
[ -e "$TMP/agent.pid" ] && fail "pidfile left behind"
ex "$SW" ip link show hs-tun >/dev/null 2>&1 && fail "hs-tun left behind"
grep -q "stopped: mirrored 3, decapsulated 1, dropped 0" "$TMP/agent.log" \
	|| fail "log lacks the final counters: $(tail -3 "$TMP/agent.log")"

sleep 0.3
for p in "${pids[@]}"; do
	kill -INT "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
pids=()

# ---- what the analyzer received, dissected by tshark ------------------------
tshark -r "$TMP/mirror.pcap" -T fields -E separator=' ' -E occurrence=f \
	-e frame.time_epoch -e ip.src -e ip.dst -e gre.proto -e gre.sequence_number \
	-e erspan.version -e erspan.spanid -e erspan.truncated -e erspan.gra -e erspan.o \
	-e erspan.platid -e erspan.timestamp -e erspan.pid3.timestamp \
	>"$TMP/outer.txt" 2>"$TMP/tshark.err"
tshark -r "$TMP/mirror.pcap" -T fields -E separator=' ' -E occurrence=l \
	-e eth.src -e ip.src -e ip.dst -e ip.ttl -e tcp.dstport -e tcp.flags.syn \
	>"$TMP/inner.txt" 2>>"$TMP/tshark.err"
n=$(wc -l <"$TMP/outer.txt")
[ "$n" -eq 3 ] || fail "analyzer got $n ERSPAN frames, want 3"
hmac=$(ip -n "$H" -o link show h0 | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
python3 - "$before" "$after" "$hmac" "$TMP/outer.txt" "$TMP/inner.txt" <<'EOF' || fails=$((fails + 1))
import sys
before, after, hmac = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
outer = [l.split() for l in open(sys.argv[4])]
inner = [l.split() for l in open(sys.argv[5])]
bad = 0
def check(cond, what):
    global bad
    if not cond:
        print("FAIL:", what); bad += 1
seqs = []
for i, (o, n) in enumerate(zip(outer, inner)):
    t, src, dst, proto, seq, ver, span, trunc, gra, obit, plat, lo, hi = o
    check((src, dst) == ("10.255.0.1", "10.255.0.254"), f"frame {i}: outer {src} > {dst}")
    check(int(proto, 0) == 0x22EB, f"frame {i}: GRE protocol {proto}")
    check(ver == "2", f"frame {i}: ERSPAN version {ver}, want 2 (type III)")
    check(span == "7", f"frame {i}: session {span}, want 7")
    check(trunc in ("0", "False"), f"frame {i}: truncated bit {trunc}")
    check(gra == "2" and obit in ("1", "True") and plat == "3",
          f"frame {i}: gra {gra} o {obit} platform {plat}")
    ns = (int(hi, 0) << 32) | int(lo, 0)
    check(before - 0.01 <= ns / 1e9 <= after + 0.01,
          f"frame {i}: switch time {ns / 1e9:.9f} not within [{before}, {after}]")
    check(abs(ns / 1e9 - float(t)) < 0.5, f"frame {i}: switch time {ns} vs capture {t}")
    seqs.append(int(seq))
    esrc, isrc, idst, ttl, dport, syn = n
    check(esrc == hmac, f"frame {i}: inner source MAC {esrc}, want {hmac}")
    check((isrc, idst) == ("10.9.1.10", "10.9.2.2"), f"frame {i}: inner {isrc} > {idst}")
    check(ttl == "64", f"frame {i}: inner TTL {ttl}, want 64 as received")
    check(dport == str(81 + i) and syn in ("1", "True"), f"frame {i}: port {dport} syn {syn}")
check(len(seqs) == 3 and seqs == list(range(seqs[0], seqs[0] + 3)),
      f"GRE sequence numbers {seqs} do not count up by one")
sys.exit(1 if bad else 0)
EOF

# the inner packets are byte for byte what the host sent
python3 - "$TMP/host.pcap" "$TMP/mirror.pcap" <<'EOF' || fails=$((fails + 1))
import struct, sys
def frames(path):
    d = open(path, "rb").read()
    off, out = 24, []
    while off + 16 <= len(d):
        incl = struct.unpack_from("<I", d, off + 8)[0]
        out.append(d[off + 16: off + 16 + incl]); off += 16 + incl
    return out
sent = [f[14:] for f in frames(sys.argv[1])]
# Ethernet 14 + IPv4 20 + GRE 8 + ERSPAN III 12 + platform 8 + Ethernet 14
got = [f[76:] for f in frames(sys.argv[2])]
if len(sent) != 3 or sent != got:
    print("FAIL: mirrored inner packets differ from the packets the host sent")
    sys.exit(1)
print("ok: inner packets intact")
EOF

n=$(tshark -r "$TMP/nexthop.pcap" -Y 'udp.dstport == 9999 && !ip.proto == 4' 2>/dev/null | wc -l)
[ "$n" -eq 1 ] && ok "ip-in-ip packet decapsulated and forwarded" \
	|| fail "next hop saw $n decapsulated probes, want 1"
ttl=$(tshark -r "$TMP/nexthop.pcap" -T fields -e ip.ttl -Y 'udp.dstport == 9999 && !ip.proto == 4' 2>/dev/null | head -1)
[ "$ttl" = 8 ] || fail "decapsulated probe has TTL '$ttl', want 8 (9 less the switch hop)"

# ---- an agent that fell behind goes on mirroring ----------------------------
# Stopped while a flood of SYNs passes, it loses copies in the kernel (the
# netlink socket overruns and reports ENOBUFS, which libuv sees as a socket
# error); resumed, it must count them and mirror what comes after.
id=$(drv add --session 7 --switches sw1 --match syn) || fail "cannot add the syn rule again"
[[ $id =~ ^\{\"id\":([0-9]+)\}$ ]] || fail "add answered '$id'"
id=${BASH_REMATCH[1]}
ip netns exec "$SW" "$AGENT" "${base[@]}" --log "$TMP/agent2.log" --pidfile "$TMP/agent2.pid" \
	--stats "$TMP/agent2.stats" &
agent=$!
pids+=("$agent")
for _ in $(seq 50); do
	[ -s "$TMP/agent2.pid" ] && break
	sleep 0.1
done
stat2() {	# the agent's counter $1, written on SIGUSR1
	kill -USR1 "$agent"
	sleep 0.3
	awk -v k="$1" '$1 == k { print $2 }' "$TMP/agent2.stats"
}
syns() {	# $1 TCP SYNs from the host through the switch, sent raw
	ex "$H" python3 - "$1" <<'EOF2'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
for i in range(int(sys.argv[1])):
    # ports 20000 up, SYN, no checksum: the switch forwards it as it is
    s.sendto(struct.pack("!HHIIBBHHH", 20000 + i % 40000, 7, i, 0, 5 << 4, 0x02, 1024, 0, 0),
             ("10.9.2.2", 0))
EOF2
}
kill -STOP "$agent"
syns 40000
kill -CONT "$agent"
sleep 1
over=$(stat2 dropped_overrun)
m1=$(stat2 mirrored)
syns 50
sleep 0.5
m2=$(stat2 mirrored)
if [ "${over:-0}" -gt 0 ] && [ $((m2 - m1)) -eq 50 ]; then
	ok "an agent that overran ($over overruns) mirrors what follows"
else
	fail "after the flood: overruns ${over:-none}, then $((m2 - m1)) of 50 SYNs mirrored"
fi
kill -TERM "$agent"
wait "$agent" 2>/dev/null
drv del --id "$id" >/dev/null || fail "cannot delete rule $id"

if [ $fails -ne 0 ]; then
	echo "--- agent log"; cat "$TMP/agent.log"
	echo "--- stats"; cat "$TMP/agent.stats"
	exit 1
fi
echo "PASS: agent.sh"
exit 0
