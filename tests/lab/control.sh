#!/bin/bash
# control: BGP and RoCEv2 between two hosts of the lab, mirrored by the
# default rules (tcp/179, udp/4791), are listed by 'control' at the switches
# they crossed. h1 (behind leaf1) opens a BGP session to h8 (behind leaf4)
# and sends OPEN and KEEPALIVE; h8 answers with a NOTIFICATION (cease). h1
# sends a RoCEv2 RC send-only asking for an ack; h8 answers with a NAK
# (PSN sequence error).
set -euo pipefail
. "${top_srcdir:-.}/tests/lab/lib.sh"
lab_init
need_built hopscope hs-agent
command -v python3 >/dev/null 2>&1 || hard "python3 is missing"

lab up >/dev/null 2>&1 || fail "lab up failed"
h1=$(host_addr h1)
h8=$(host_addr h8)
[ -n "$h1" ] && [ -n "$h8" ] || fail "no h1 or h8 in the lab's topology"

cat >"$LAB_STATE/ctl.py" <<'PY'
import socket, struct, sys, time

def bgp(t, body=b""):
    return b"\xff" * 16 + struct.pack("!HB", 19 + len(body), t) + body

OPEN = bgp(1, struct.pack("!BHHIB", 4, 65001, 90, 0x0a000001, 0))
KEEPALIVE = bgp(4)
NOTIFICATION = bgp(3, b"\x06\x02")

def bth(op, qp, ackreq, psn):
    return struct.pack("!BBHII", op, 0x40, 0xffff, qp, (0x80000000 if ackreq else 0) | psn)

role = sys.argv[1]
if role == "speaker":	# h8: accept, read, answer with a NOTIFICATION
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 179))
    s.listen(1)
    s.settimeout(10)
    c, _ = s.accept()
    c.settimeout(5)
    got = b""
    while len(got) < len(OPEN) + len(KEEPALIVE):
        d = c.recv(4096)
        if not d:
            break
        got += d
    c.sendall(NOTIFICATION)
    time.sleep(0.3)
    c.close()
elif role == "peer":	# h1: connect, OPEN, then KEEPALIVE
    dst = sys.argv[2]
    for _ in range(50):
        try:
            c = socket.create_connection((dst, 179), timeout=2)
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("cannot connect to %s:179" % dst)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c.sendall(OPEN)
    time.sleep(0.2)
    c.sendall(KEEPALIVE)
    c.settimeout(5)
    c.recv(4096)
    c.close()
elif role == "requester":	# h1: RC send-only, ack requested
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", 52000))
    u.sendto(bth(0x04, 0x12, True, 1001) + b"\x00" * 32 + b"\x5e\xed\x00\x00", (sys.argv[2], 4791))
elif role == "responder":	# h8: NAK, PSN sequence error
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("0.0.0.0", 61000))
    aeth = struct.pack("!I", 0x60 << 24 | 7)
    u.sendto(bth(0x11, 0x34, False, 1001) + aeth + b"\x5e\xed\x00\x01", (sys.argv[2], 4791))
PY

out=$LAB_STATE/control.json
# (12 s of capture: the exchanges below start four Python programs in turn,
# which on a loaded machine took long enough that the NAK, the last, came
# after a 5 s capture had stopped)
"$HOPSCOPE" --db "$LAB_STATE/h.db" --lab --state "$LAB_STATE" --json \
	-c "sleep 12; capture stop; control limit 1000" >"$out" 2>"$LAB_STATE/err" </dev/null &
pid=$!
sleep 1.5
ip netns exec hs-h8 python3 "$LAB_STATE/ctl.py" speaker &
spk=$!
ip netns exec hs-h1 python3 "$LAB_STATE/ctl.py" peer "$h8" || fail "the BGP peer on h1 failed"
wait "$spk" || fail "the BGP speaker on h8 failed"
ip netns exec hs-h1 python3 "$LAB_STATE/ctl.py" requester "$h8" || fail "the RoCEv2 send failed"
ip netns exec hs-h8 python3 "$LAB_STATE/ctl.py" responder "$h1" || fail "the RoCEv2 NAK failed"
wait "$pid" || { cat "$LAB_STATE/err" >&2; fail "hopscope exited non-zero"; }

python3 - "$out" "$h1" "$h8" <<'PY' || fail "control did not list the BGP and RoCEv2 messages at their switches"
import json, sys
path, h1, h8 = sys.argv[1:4]
recs = [r for l in open(path) if l.startswith("{") for r in json.loads(l).get("messages", [])]
recs = [r for r in recs if r.get("proto") in ("bgp", "roce", "pfc")]
bad = []

def at(sel, what):
    sw = sorted({r["switch"] for r in recs if sel(r)})
    ok = "leaf1" in sw and "leaf4" in sw and any(s.startswith("spine") for s in sw)
    print("%s: seen at %s" % (what, ", ".join(sw) or "nothing"))
    if not ok:
        bad.append("%s not seen at leaf1, a spine and leaf4" % what)

at(lambda r: r.get("bgp_type") == "open" and r["src"] == h1 and r["dst"] == h8 and r["dport"] == 179
   and r["as"] == 65001 and r["hold"] == 90 and r["bgp_id"] == "10.0.0.1", "BGP OPEN h1 > h8")
at(lambda r: r.get("bgp_type") == "keepalive" and r["src"] == h1, "BGP KEEPALIVE h1 > h8")
at(lambda r: r.get("bgp_type") == "notification" and r["src"] == h8 and r["sport"] == 179
   and (r["error_code"], r["error_subcode"]) == (6, 2), "BGP NOTIFICATION h8 > h1")
at(lambda r: r.get("roce_op") == "rc-send-only" and r["src"] == h1 and r["qp"] == 0x12
   and r["psn"] == 1001 and r["ackreq"], "RoCEv2 send h1 > h8")
at(lambda r: r.get("nak") == "psn-sequence-error" and r["src"] == h8 and r["qp"] == 0x34
   and r["psn"] == 1001 and r["msn"] == 7, "RoCEv2 NAK h8 > h1")
if any(r["switch"] is None for r in recs):
    bad.append("a record without its mirroring switch")
for b in bad:
    print("FAIL:", b)
if bad:
    for r in recs[:12]:
        print("  ", json.dumps(r))
sys.exit(1 if bad else 0)
PY
ok "control lists the BGP OPEN, KEEPALIVE, NOTIFICATION and the RoCEv2 send and NAK at leaf1, a spine and leaf4"
echo "1..1"
